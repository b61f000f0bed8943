"""The ``.gitlab-ci.yml`` ``roofgen init --ci gitlab`` writes.

- ``roofgen-check``: on merge requests and the default branch; the findings go to
  GitLab's Code Quality report (shown on the merge request) and the job fails on an
  error.
- ``roofgen-diff``: on merge requests; the comment is an artifact, exposed on the
  merge request (``expose_as``).
- ``roofgen-site``: on the default branch, the site as an artifact; ``pages`` only
  with ``--pages``.
- ``roofgen-note`` (only with ``--gitlab-notes``): posts the comment as a note with a
  project access token. The token is readable by every job of every pipeline that can
  read the variable, so the file says what that risks.
"""

from __future__ import annotations

from dataclasses import dataclass

from roofgen.scaffold.install import CI_EXTRAS, CONSTRAINTS_FILE, InstallSource

__all__ = ["GitlabCi", "gitlab_ci"]

ARTIFACT = "roofgen-comment"
NOTE_TOKEN = "ROOFGEN_NOTE_TOKEN"


@dataclass(frozen=True)
class GitlabCi:
    source: InstallSource
    python: str
    output: str
    pages: bool = False
    notes: bool = False


#: Posts the comment as a merge-request note, or edits the note it posted before (a
#: note by the token's own user that starts with the marker). Standard library only.
NOTE_SCRIPT = """\
import json, os, urllib.request
api = os.environ["CI_API_V4_URL"]
notes = (f"{api}/projects/{os.environ['CI_PROJECT_ID']}/merge_requests/"
         f"{os.environ['CI_MERGE_REQUEST_IID']}/notes")
token = {"PRIVATE-TOKEN": os.environ["%(token)s"]}
def call(url, method="GET", data=None):
    body = None if data is None else json.dumps(data).encode()
    headers = {**token, "Content-Type": "application/json"}
    with urllib.request.urlopen(urllib.request.Request(url, body, headers, method=method)) as r:
        return json.load(r)
marker = "<!-- roofgen-diff -->"
body = open("%(artifact)s/comment.md", encoding="utf-8").read()[:1000000]
if not body.startswith(marker):
    body = marker + "\\n" + body
me = call(f"{api}/user")["id"]
mine = [n for n in call(f"{notes}?per_page=100&sort=asc")
        if n["author"]["id"] == me and n["body"].startswith(marker)]
if mine:
    call(f"{notes}/{mine[0]['id']}", "PUT", {"body": body})
else:
    call(notes, "POST", {"body": body})
"""


def _install(ci: GitlabCi, extras: tuple[str, ...]) -> str:
    return f"    - {ci.source.pip_line(extras, CONSTRAINTS_FILE)}\n"


def gitlab_ci(ci: GitlabCi) -> str:
    private = (
        "# The address looks private: the jobs need a read credential to install roofgen,\n"
        "# and merge requests from forks run without the project's variables.\n"
        if ci.source.private
        else ""
    )
    text = f"""\
# Written by `roofgen init --ci gitlab`. roofgen is installed from
# {ci.source.url}
# ({ci.source.origin}), never by its bare name: roofgen is not on the public package
# index. Its dependencies are pinned by {CONSTRAINTS_FILE}. No job restores a
# cache: a cache another branch wrote must not decide what the check or the site shows.
{private}stages: [check, review, publish]

roofgen-check:
  stage: check
  image: python:{ci.python}
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH
  script:
{_install(ci, ())}\
    # The findings go to the merge request's Code Quality report, and to the log.
    - roofgen check --format gitlab -o gl-code-quality-report.json
  artifacts:
    when: always
    reports:
      codequality: gl-code-quality-report.json

roofgen-diff:
  stage: review
  image: python:{ci.python}
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
  variables:
    GIT_DEPTH: "0"  # roofgen diff reads the merge base from git's history
  script:
{_install(ci, CI_EXTRAS)}\
    - git fetch --quiet origin "$CI_MERGE_REQUEST_TARGET_BRANCH_NAME"
    - mkdir -p {ARTIFACT}
    - roofgen diff "git:$CI_MERGE_REQUEST_DIFF_BASE_SHA" "git:$CI_COMMIT_SHA" --format markdown -o {ARTIFACT}/comment.md
  artifacts:
    when: always
    expose_as: roofgen diff
    paths: [{ARTIFACT}/]
    expire_in: 1 week

roofgen-site:
  stage: publish
  image: python:{ci.python}
  rules:
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH
  script:
{_install(ci, CI_EXTRAS)}\
    # A cold build: --no-cache reads and writes no cache. As strict as the check (add
    # --strict to both to fail on warnings): what the check lets through, builds.
    - roofgen build --no-cache
  artifacts:
    paths: [{ci.output}/]
"""  # noqa: E501
    if ci.pages:
        text += f"""
# --pages: GitLab Pages serves the site. Pages may be public even when the project is
# private, unless Pages access control is on: check before the first push.
pages:
  stage: publish
  image: python:{ci.python}
  needs: [roofgen-site]
  rules:
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH
  script:
    - rm -rf public && cp -r {ci.output} public
  artifacts:
    paths: [public]
"""
    if ci.notes:
        script = NOTE_SCRIPT % {"token": NOTE_TOKEN, "artifact": ARTIFACT}
        body = "".join(
            f"      {line}" if line.strip() else line for line in script.splitlines(True)
        )
        text += f"""
# --gitlab-notes: posts the diff as a note on the merge request, with a project access
# token (role Reporter, scope api, an expiry date) in the masked CI/CD variable
# {NOTE_TOKEN}. The risk: every job of a pipeline that can read the variable can use
# the token, and a pipeline's jobs come from the branch's own .gitlab-ci.yml. Anyone
# who can push a branch can read it (unless the variable is protected, and then only
# protected branches post), and a fork's merge request gets it when a maintainer runs
# its pipeline in this project: read a fork's change before you run its pipeline.
# Without the variable the job does nothing; the diff stays an artifact.
roofgen-note:
  stage: publish
  image: python:{ci.python}
  needs: [roofgen-diff]
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event" && ${NOTE_TOKEN}
  script:
    - |
      python - <<'EOF'
{body}      EOF
"""
    return text
