"""The GitHub Actions workflows ``roofgen init --ci github`` writes.

- ``roofgen.yml``: the check on every pull request and push (annotations on the
  changed lines and a table in the job summary), and the site on the default branch,
  kept as an artifact; published to GitHub Pages only with ``--pages``.
- ``roofgen-pr.yml``: the untrusted half of the review. It runs the pull request's
  code with a read-only token, writes the diff comment and uploads it with the pull
  request's number.
- ``roofgen-comment.yml``: the trusted half (``workflow_run``). It never checks out
  or runs the pull request's code; it downloads the comment, takes the number as
  digits only, and posts only on that pull request if it is open and its head commit
  and repository are the ones the run was for; it edits only its own comment.

Hardening: every action pinned to a commit (:mod:`roofgen.scaffold.actions`),
checkouts without persisted credentials, no ``${{ }}`` inside a ``run:`` (values
come in through ``env:``), no cache anywhere (a cache another branch wrote must not
decide what the gate or the site shows), and no settings value in any file: the site
is built into the constant folder ``_site``. The files are written from data by a
YAML dumper (:mod:`roofgen.scaffold.ci_yaml`), never pasted together as text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from roofgen.scaffold.actions import uses
from roofgen.scaffold.ci_yaml import SITE_DIR, Block, Note, block, dump, seq
from roofgen.scaffold.install import CI_EXTRAS, CONSTRAINTS_FILE, InstallSource

__all__ = ["COMMENT_MARKER", "GithubCi", "comment_workflow", "dependabot", "main_workflow",
           "pr_workflow"]  # fmt: skip

#: The first line of roofgen's pull-request comment; the comment job edits only its own
#: comment that starts with it.
COMMENT_MARKER = "<!-- roofgen-diff -->"
PR_WORKFLOW_NAME = "roofgen PR"
ARTIFACT = "roofgen-comment"
READ_ONLY = block(("contents", "read", "read the repository; nothing else"))


@dataclass(frozen=True)
class GithubCi:
    """What the workflows are made of: none of it is read from the settings."""

    source: InstallSource
    python: str  # e.g. "3.11": the Python the constraints were written on
    branch: str  # the default branch (checked to be plain characters)
    pages: bool = False


def _setup(ci: GithubCi, extras: tuple[str, ...], what: str,
           fetch_all: bool = False) -> list[Any]:  # fmt: skip
    """The steps every job starts with: checkout, Python, roofgen."""
    checkout: list[tuple[Any, ...]] = [("persist-credentials", False)]
    if fetch_all:
        checkout.append(("fetch-depth", 0, "the base commit must be in the clone"))
    private = [Note("The address looks private: this step needs a read credential, and pull\n"
                    "requests from forks get no secrets (see the Guide's CI page).")]  # fmt: skip
    return [
        block(uses("checkout"), ("with", block(*checkout))),
        block(uses("setup-python"), ("with", block(("python-version", ci.python)))),
        *(private if ci.source.private else []),
        block(
            ("name", f"Install roofgen ({what})"),
            ("run", ci.source.pip_line(extras, CONSTRAINTS_FILE)),
        ),
    ]


HEADER = """\
Written by `roofgen init --ci github`. roofgen is installed from
{url}
({origin}), never by its bare name: roofgen is not on the public package index.
Its dependencies are pinned by {constraints}. Actions are pinned to
commits, the tag in the comment beside each; .github/dependabot.yml keeps them current.
"""


def _header(ci: GithubCi, about: str) -> str:
    head = HEADER.format(url=ci.source.url, origin=ci.source.origin, constraints=CONSTRAINTS_FILE)
    return f"{head}\n{about}"


PAGES_NOTE = {
    True: " and published to GitHub Pages",
    False: " (`roofgen init --pages` publishes it to GitHub Pages)",
}
#: One comment job at a time per pull-request branch, so that two pushes never race to
#: create two comments.
COMMENT_GROUP = (
    "roofgen-comment-${{ github.event.workflow_run.head_repository.id }}-"
    "${{ github.event.workflow_run.head_branch }}"
)


def _job(name: str, permissions: Block, steps: list[Any], *extra: Any) -> Block:
    return block(("name", name), *extra, ("runs-on", "ubuntu-latest"),
                 ("permissions", permissions), ("steps", seq(*steps)))  # fmt: skip


def _upload(name: str, path: str, *extra: tuple[Any, ...]) -> Block:
    return block(uses("upload-artifact"), ("with", block(
        ("name", name), ("path", path), ("if-no-files-found", "error"), *extra)))  # fmt: skip


def main_workflow(ci: GithubCi) -> str:
    """The check on every pull request and push; the site on the default branch."""
    check = _job("roofgen check", READ_ONLY, [
        *_setup(ci, (), "light core"),
        Note("Add --strict here and to the site's build to fail on warnings too."),
        block(("name", "Check the specs"), ("run", "roofgen check --format github")),
    ])  # fmt: skip
    site_steps = [
        *_setup(ci, CI_EXTRAS, "with the site"),
        Note("A cold build: --no-cache reads and writes no cache. Never restore roofgen's\n"
             "cache from a CI cache: another branch may have written it. As strict as the\n"
             "check above: what the check lets through to the default branch, builds.\n"
             f"The site goes to {SITE_DIR}, whatever the settings' output says."),
        block(("name", "Build the site"), ("run", f"roofgen build --no-cache -o {SITE_DIR}")),
        _upload("roofgen-site", f"{SITE_DIR}/"),
    ]  # fmt: skip
    jobs: list[tuple[Any, ...]] = [("check", check)]
    if ci.pages:
        site_steps += [
            Note("--pages: published to GitHub Pages. Pages of a private repository are public\n"
                 "unless the organisation restricts them: check before the first push."),
            block(uses("upload-pages-artifact"), ("with", block(("path", f"{SITE_DIR}/")))),
        ]  # fmt: skip
    site = _job("roofgen site", READ_ONLY, site_steps,
                ("if", "github.event_name == 'push'"), ("needs", "check"))  # fmt: skip
    jobs.append(("site", site))
    if ci.pages:
        jobs.append(("pages", _pages_job()))
    about = f"""\
The check runs on every pull request and push: errors and warnings become
annotations on the lines they concern, and a table in the job summary. On
{ci.branch} the site is built with a cold cache and kept as the artifact
roofgen-site{PAGES_NOTE[ci.pages]}.
"""
    return dump(block(
        ("name", "roofgen"),
        ("on", block(("pull_request", None),
                     ("push", block(("branches", seq(ci.branch, flow=True)))))),
        ("permissions", block()),
        ("concurrency", block(
            ("group", "roofgen-${{ github.ref }}"),
            ("cancel-in-progress", "${{ github.event_name == 'pull_request' }}"))),
        ("jobs", block(*jobs)),
    ), _header(ci, about))  # fmt: skip


def _pages_job() -> Block:
    permissions = block(
        ("pages", "write", "deploy the site"),
        ("id-token", "write", "deploy-pages proves the deployment came from this workflow"),
    )
    return _job(
        "publish to GitHub Pages", permissions,
        [block(("id", "deployment"), uses("deploy-pages"))],
        ("needs", "site"),
        ("environment", block(("name", "github-pages"),
                              ("url", "${{ steps.deployment.outputs.page_url }}"))),
        ("concurrency", block(("group", "pages"), ("cancel-in-progress", False))),
    )  # fmt: skip


#: The pull-request job's script: every value it uses comes in through ``env:``.
DIFF_SCRIPT = f"""\
BASE_SHA="$(git merge-base "$PR_BASE_SHA" "$HEAD_SHA")"
mkdir -p {ARTIFACT}
printf '%s\\n' "$PR_NUMBER" > {ARTIFACT}/pr-number
roofgen diff "git:$BASE_SHA" "git:$HEAD_SHA" --format markdown -o {ARTIFACT}/comment.md
"""


def pr_workflow(ci: GithubCi) -> str:
    """The untrusted half: reads the pull request, writes the comment, uploads it."""
    env = block(
        ("PR_NUMBER", "${{ github.event.pull_request.number }}"),
        ("PR_BASE_SHA", "${{ github.event.pull_request.base.sha }}"),
        ("HEAD_SHA", "${{ github.event.pull_request.head.sha }}"),
    )
    report = _job("roofgen diff", READ_ONLY, [
        *_setup(ci, CI_EXTRAS, "with the site", fetch_all=True),
        block(("name", "Diff the pull request against its merge base"), ("env", env),
              ("run", DIFF_SCRIPT)),
        _upload(ARTIFACT, f"{ARTIFACT}/", ("retention-days", 7)),
    ])  # fmt: skip
    about = """\
The untrusted half of the pull-request review: it runs the pull request's code (a
fork's too) with a read-only token and no secrets, writes the comment and uploads
it; roofgen-comment.yml posts it. The comment also goes to this job's summary
(visible on forks' pull requests, with no write token at all).
"""
    return dump(block(
        ("name", PR_WORKFLOW_NAME),
        ("on", block(("pull_request", None))),
        ("permissions", block()),
        ("concurrency", block(("group", "roofgen-pr-${{ github.event.pull_request.number }}"),
                              ("cancel-in-progress", True))),
        ("jobs", block(("report", report))),
    ), _header(ci, about))  # fmt: skip


#: The comment job's script (actions/github-script). Everything it reads from the
#: artifact is the pull request's: a number it checks, and a text it posts as a value.
COMMENT_SCRIPT = """\
const fs = require('fs');
const path = require('path');
const dir = process.env.ARTIFACT_DIR;
const regular = (name) => {
  const file = path.join(dir, name);
  const stat = fs.lstatSync(file, {throwIfNoEntry: false});
  if (!stat || !stat.isFile() || stat.size > 1000000) {
    throw new Error(`${name}: not a regular file under 1 MB in the artifact`);
  }
  return fs.readFileSync(file, 'utf8');
};
const raw = regular('pr-number').trim();
if (!/^[0-9]{1,10}$/.test(raw)) {
  core.setFailed(`pr-number: not a pull request number: ${JSON.stringify(raw.slice(0, 40))}`);
  return;
}
const number = Number(raw);
const {owner, repo} = context.repo;
// GET /repos/{owner}/{repo}/pulls/{n}: the pull request as GitHub knows it.
const {data: pr} = await github.rest.pulls.get({owner, repo, pull_number: number});
if (pr.state !== 'open') {
  core.notice(`pull request #${number} is ${pr.state}: no comment`);
  return;
}
if (pr.head.sha !== process.env.HEAD_SHA) {
  core.notice(`pull request #${number} is at ${pr.head.sha}, the run was for ` +
              `${process.env.HEAD_SHA}: no comment`);
  return;
}
if (!pr.head.repo || String(pr.head.repo.id) !== process.env.HEAD_REPO_ID) {
  core.setFailed(`pull request #${number} does not come from the repository the run was for`);
  return;
}
const MARKER = '%(marker)s';
let body = regular('comment.md');
if (!body.startsWith(MARKER)) body = `${MARKER}\\n${body}`;
if (body.length > 65000) body = body.slice(0, 65000) + '\\n\\n(cut at 65,000 characters)';
const comments = await github.paginate(github.rest.issues.listComments,
                                       {owner, repo, issue_number: number, per_page: 100});
const mine = comments.find((c) => c.user && c.user.login === 'github-actions[bot]' &&
                                  c.user.type === 'Bot' && (c.body || '').startsWith(MARKER));
if (mine) {
  await github.rest.issues.updateComment({owner, repo, comment_id: mine.id, body});
} else {
  await github.rest.issues.createComment({owner, repo, issue_number: number, body});
}
"""


COMMENT_HEADER = f"""\
Written by `roofgen init --ci github`: the trusted half of the pull-request review.
It runs when "{PR_WORKFLOW_NAME}" completes, with the right to comment, and never
checks out or runs the pull request's code: it downloads the comment (untrusted
data) into the runner's temporary folder, takes the pull request's number from it as
digits only, and posts only if that pull request is open and its head commit and
repository are the ones the run was for. It edits only a comment that
github-actions[bot] wrote and that starts with {COMMENT_MARKER}.

GitHub starts workflow_run workflows only from the default branch: the pull request
that adds this file gets no comment; the ones after it do.
"""


def comment_workflow(ci: GithubCi) -> str:
    """The trusted half: posts the comment the untrusted half uploaded."""
    folder = f"${{{{ runner.temp }}}}/{ARTIFACT}"
    download = block(uses("download-artifact"), ("with", block(
        ("name", ARTIFACT), ("path", folder), ("run-id", "${{ github.event.workflow_run.id }}"),
        ("github-token", "${{ github.token }}"))))  # fmt: skip
    post = block(
        ("name", "Post or update roofgen's comment"),
        uses("github-script"),
        ("env", block(
            ("ARTIFACT_DIR", folder),
            ("HEAD_SHA", "${{ github.event.workflow_run.head_sha }}"),
            ("HEAD_REPO_ID", "${{ github.event.workflow_run.head_repository.id }}"))),
        ("with", block(("script", COMMENT_SCRIPT % {"marker": COMMENT_MARKER}))),
    )  # fmt: skip
    permissions = block(
        ("actions", "read", "download the artifact of the run that triggered this one"),
        ("pull-requests", "write", "post and edit roofgen's comment"),
    )
    job = _job("post roofgen's comment", permissions, [download, post],
               ("if", "github.event.workflow_run.event == 'pull_request' && "
                      "github.event.workflow_run.conclusion == 'success'"))  # fmt: skip
    trigger = block(
        Note("zizmor: ignore[dangerous-triggers] the run only downloads data and posts it as "
             "a value"),
        ("workflow_run", block(("workflows", seq(PR_WORKFLOW_NAME, flow=True)),
                               ("types", seq("completed", flow=True)))),
    )  # fmt: skip
    return dump(block(
        ("name", "roofgen comment"),
        ("on", trigger),
        ("permissions", block()),
        ("concurrency", block(("group", COMMENT_GROUP), ("cancel-in-progress", False))),
        ("jobs", block(("comment", job))),
    ), COMMENT_HEADER)  # fmt: skip


DEPENDABOT_HEADER = """\
Written by `roofgen init --ci github`: keeps the actions the workflows pin to commits
current (Dependabot updates the commit and the version in the comment beside it).
"""


def dependabot() -> str:
    return dump(block(
        ("version", 2),
        ("updates", seq(block(
            ("package-ecosystem", "github-actions"),
            ("directory", "/"),
            ("schedule", block(("interval", "weekly"))),
            ("cooldown", block(("default-days", 7))),
            ("groups", block(("actions", block(("patterns", seq("*", flow=True)))))),
        ))),
    ), DEPENDABOT_HEADER)  # fmt: skip
