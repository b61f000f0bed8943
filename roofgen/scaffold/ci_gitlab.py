"""The ``.gitlab-ci.yml`` ``roofgen init --ci gitlab`` writes.

- ``roofgen-check``: on merge requests and the default branch; the findings go to
  GitLab's Code Quality report (shown on the merge request) and the job fails on an
  error.
- ``roofgen-diff``: on merge requests; the comment is an artifact, exposed on the
  merge request (``expose_as``).
- ``roofgen-site``: on the default branch, the site (built into the constant folder
  ``_site``, never the settings' ``output``) as an artifact; ``pages`` only with
  ``--pages``.
- ``roofgen-note`` (only with ``--gitlab-notes``): posts the comment as a note with a
  project access token. The token is readable by every job of every pipeline that can
  read the variable, so the file says what that risks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from roofgen.scaffold.ci_yaml import SITE_DIR, Block, Note, block, dump, seq
from roofgen.scaffold.install import CI_EXTRAS, CONSTRAINTS_FILE, InstallSource

__all__ = ["GitlabCi", "gitlab_ci"]

ARTIFACT = "roofgen-comment"
NOTE_TOKEN = "ROOFGEN_NOTE_TOKEN"


@dataclass(frozen=True)
class GitlabCi:
    """What the file is made of: none of it is read from the settings."""

    source: InstallSource
    python: str
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
    return ci.source.pip_line(extras, CONSTRAINTS_FILE)


def _job(ci: GitlabCi, stage: str, rules: list[str], script: list[Any],
         *extra: tuple[Any, ...], needs: str = "") -> Block:  # fmt: skip
    """A job in CI's Python image; ``rules``: the ``if:`` of each rule."""
    return block(
        ("stage", stage), ("image", f"python:{ci.python}"),
        *([("needs", seq(needs, flow=True))] if needs else []),
        ("rules", seq(*(block(("if", rule)) for rule in rules))),
        *[entry for entry in extra if entry[0] == "variables"],
        ("script", seq(*script)),
        *[entry for entry in extra if entry[0] != "variables"],
    )  # fmt: skip


MR = '$CI_PIPELINE_SOURCE == "merge_request_event"'
DEFAULT = "$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH"

HEADER = """\
Written by `roofgen init --ci gitlab`. roofgen is installed from
{url}
({origin}), never by its bare name: roofgen is not on the public package
index. Its dependencies are pinned by {constraints}. No job restores a
cache: a cache another branch wrote must not decide what the check or the site shows.
The site is built into {site}, whatever the settings' output says.
"""
PRIVATE = """\
The address looks private: the jobs need a read credential to install roofgen,
and merge requests from forks run without the project's variables.
"""


def gitlab_ci(ci: GitlabCi) -> str:
    """The whole file, written from data (no settings value in it)."""
    check = _job(ci, "check", [MR, DEFAULT], [
        _install(ci, ()),
        Note("The findings go to the merge request's Code Quality report, and to the log."),
        "roofgen check --format gitlab -o gl-code-quality-report.json",
    ], ("artifacts", block(("when", "always"), ("reports", block(
        ("codequality", "gl-code-quality-report.json"))))))  # fmt: skip
    diff = _job(ci, "review", [MR], [
        _install(ci, CI_EXTRAS),
        'git fetch --quiet origin "$CI_MERGE_REQUEST_TARGET_BRANCH_NAME"',
        f"mkdir -p {ARTIFACT}",
        'roofgen diff "git:$CI_MERGE_REQUEST_DIFF_BASE_SHA" "git:$CI_COMMIT_SHA" '
        f"--format markdown -o {ARTIFACT}/comment.md",
    ], ("variables", block(("GIT_DEPTH", "0", "roofgen diff reads the merge base from git's "
                                              "history"))),
        ("artifacts", block(("when", "always"), ("expose_as", "roofgen diff"),
                            ("paths", seq(f"{ARTIFACT}/", flow=True)),
                            ("expire_in", "1 week"))))  # fmt: skip
    site = _job(ci, "publish", [DEFAULT], [
        _install(ci, CI_EXTRAS),
        Note("A cold build: --no-cache reads and writes no cache. As strict as the check (add\n"
             "--strict to both to fail on warnings): what the check lets through, builds."),
        f"roofgen build --no-cache -o {SITE_DIR}",
    ], ("artifacts", block(("paths", seq(f"{SITE_DIR}/", flow=True)))))  # fmt: skip
    jobs: list[Any] = [
        ("stages", seq("check", "review", "publish", flow=True)),
        ("roofgen-check", check),
        ("roofgen-diff", diff),
        ("roofgen-site", site),
    ]
    if ci.pages:
        jobs += [Note(PAGES_NOTE), ("pages", _job(
            ci, "publish", [DEFAULT], [f"rm -rf public && cp -r {SITE_DIR} public"],
            ("artifacts", block(("paths", seq("public", flow=True)))),
            needs="roofgen-site"))]  # fmt: skip
    if ci.notes:
        script = NOTE_SCRIPT % {"token": NOTE_TOKEN, "artifact": ARTIFACT}
        jobs += [Note(NOTES_NOTE), ("roofgen-note", _job(
            ci, "publish", [f"{MR} && ${NOTE_TOKEN}"],
            [f"python - <<'EOF'\n{script}EOF\n"], needs="roofgen-diff"))]  # fmt: skip
    header = HEADER.format(url=ci.source.url, origin=ci.source.origin,
                           constraints=CONSTRAINTS_FILE, site=SITE_DIR)  # fmt: skip
    return dump(block(*jobs), header + (PRIVATE if ci.source.private else ""))


PAGES_NOTE = """\
--pages: GitLab Pages serves the site. Pages may be public even when the project is
private, unless Pages access control is on: check before the first push."""
NOTES_NOTE = f"""\
--gitlab-notes: posts the diff as a note on the merge request, with a project access
token (role Reporter, scope api, an expiry date) in the masked CI/CD variable
{NOTE_TOKEN}. The risk: every job of a pipeline that can read the variable can use
the token, and a pipeline's jobs come from the branch's own .gitlab-ci.yml. Anyone
who can push a branch can read it (unless the variable is protected, and then only
protected branches post), and a fork's merge request gets it when a maintainer runs
its pipeline in this project: read a fork's change before you run its pipeline.
Without the variable the job does nothing; the diff stays an artifact."""
