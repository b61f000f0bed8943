"""`roofgen init --ci github|gitlab`: the review set-up it writes is hardened (zizmor,
the bundled workflow schemas, shellcheck), fork-safe by construction, and its roofgen
steps run on a real git repository."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import workflows
import yaml
from workflows import GITHUB_FILES

from roofgen.cli import main
from roofgen.scaffold.actions import ACTIONS
from roofgen.scaffold.ci_github import COMMENT_SCRIPT

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
COMMIT = "0123456789abcdef0123456789abcdef01234567"
INSTALL = f"git+https://github.com/example/roofgen@{COMMIT}"


@pytest.fixture(autouse=True)
def _no_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")


def init(project: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    status = main(["init", str(project), *args])
    err = capsys.readouterr().err
    assert status == 0, err
    return err


def tool(name: str) -> str:
    found = shutil.which(name) or (str(BIN / name) if (BIN / name).is_file() else None)
    if found is None:
        why = f"{name} is not installed (the test extra and .ci/run install it)"
        if os.environ.get("CI"):  # CI installs every tool: missing there is a failure
            pytest.fail(why)
        pytest.skip(why)
    return found


VARIANTS = {
    "github": ["--ci", "github"],
    "github-pages": ["--ci", "github", "--pages"],
    "github-private": [
        "--ci",
        "github",
        "--install",
        f"git+ssh://git@git.corp.example/tools/roofgen@{COMMIT}",
    ],  # fmt: skip
}


def written(tmp_path: Path, capsys: pytest.CaptureFixture[str], variant: str) -> Path:
    args = VARIANTS[variant]
    if "--install" not in args:
        args = [*args, "--install", INSTALL]
    init(tmp_path, capsys, "-q", *args)
    return tmp_path


# --------------------------------------------------------------------------- GitHub


def test_the_github_set_up_installs_roofgen_from_its_source_with_constraints(tmp_path, capsys):
    err = init(tmp_path, capsys, "--install", INSTALL)
    assert f"CI installs roofgen from {INSTALL} (--install)" in err
    lines = [s.script.strip() for s in workflows.github_steps(tmp_path) if "pip" in s.script]
    core = f"python -m pip install -c roofgen-constraints.txt 'roofgen @ {INSTALL}'"
    site = f"python -m pip install -c roofgen-constraints.txt 'roofgen[site] @ {INSTALL}'"
    assert lines == [core, site, site]  # check job; site job; pull-request job
    for relative in (*GITHUB_FILES, "roofgen-constraints.txt"):
        text = (tmp_path / relative).read_text("utf-8")
        assert "index-url" not in text and "pip install roofgen" not in text, relative


def test_every_action_is_pinned_to_the_commit_of_a_release_tag(tmp_path, capsys):
    root = written(tmp_path, capsys, "github-pages")
    pinned = {f"{a.repo}@{a.commit}" for a in ACTIONS.values()}
    uses = workflows.github_uses(root)
    assert {u for u in uses} <= pinned and len(uses) >= 9
    for relative in GITHUB_FILES:
        for line in (root / relative).read_text("utf-8").splitlines():
            if "uses:" in line:
                match = re.search(r"uses: ([\w/-]+)@([0-9a-f]{40}) # (v\d+\.\d+\.\d+)$", line)
                assert match, line
                assert ACTIONS[match[1].split("/")[1]].tag == match[3]
    dependabot = yaml.safe_load((root / ".github/dependabot.yml").read_text("utf-8"))
    assert dependabot["updates"][0]["package-ecosystem"] == "github-actions"


def test_no_expression_inside_a_run_and_no_persisted_credentials(tmp_path, capsys):
    root = written(tmp_path, capsys, "github-pages")
    for step in workflows.github_steps(root):
        assert "${{" not in step.script, (step.file, step.name)
    for relative in GITHUB_FILES:
        data = workflows.load(root / relative)
        assert data["permissions"] == {}, relative  # each job asks for what it needs
        for job in data["jobs"].values():
            for step in job["steps"]:
                if "actions/checkout@" in step.get("uses", ""):
                    assert step["with"]["persist-credentials"] is False
                assert "cache" not in str(step.get("with", {})), step  # a cold gate
        assert "actions/cache" not in (root / relative).read_text("utf-8")


def test_the_untrusted_half_has_a_read_only_token_and_uploads_the_comment(tmp_path, capsys):
    root = written(tmp_path, capsys, "github")
    pr = workflows.load(root / ".github/workflows/roofgen-pr.yml")
    assert pr["name"] == "roofgen PR"
    assert pr[True] == {"pull_request": None}  # YAML 1.1 reads the key `on` as True
    job = pr["jobs"]["report"]
    assert job["permissions"] == {"contents": "read"}
    assert job["steps"][0]["with"]["fetch-depth"] == 0
    upload = job["steps"][-1]
    assert upload["uses"].startswith("actions/upload-artifact@")
    assert upload["with"]["name"] == "roofgen-comment"
    assert upload["with"]["path"] == "roofgen-comment/"


def test_the_trusted_half_runs_no_pull_request_code(tmp_path, capsys):
    root = written(tmp_path, capsys, "github")
    text = (root / ".github/workflows/roofgen-comment.yml").read_text("utf-8")
    comment = yaml.safe_load(text)
    assert comment[True]["workflow_run"] == {"workflows": ["roofgen PR"], "types": ["completed"]}
    job = comment["jobs"]["comment"]
    assert job["permissions"] == {"actions": "read", "pull-requests": "write"}
    assert "workflow_run.event == 'pull_request'" in job["if"]
    download, post = job["steps"]
    assert download["uses"].startswith("actions/download-artifact@")
    assert download["with"]["path"] == "${{ runner.temp }}/roofgen-comment"
    assert download["with"]["run-id"] == "${{ github.event.workflow_run.id }}"
    assert post["uses"].startswith("actions/github-script@")
    assert post["env"]["HEAD_SHA"] == "${{ github.event.workflow_run.head_sha }}"
    assert "${{" not in post["with"]["script"]  # values come in through env
    assert not any("run" in s or "checkout" in s.get("uses", "") for s in job["steps"])
    assert "pull_request_target" not in text
    # The one zizmor exception in all the files, with its reason.
    every = "".join(
        (root / f).read_text("utf-8") for f in (*GITHUB_FILES, ".github/dependabot.yml")
    )
    assert every.count("zizmor:") == 1
    ignores = re.findall(r"zizmor: ignore\[([^\]]+)\] (.+)", text)
    assert ignores == [("dangerous-triggers", ignores[0][1])] and len(ignores[0][1]) > 20
    assert "only from the default branch" in text


def test_the_site_is_an_artifact_and_pages_only_on_request(tmp_path, capsys):
    plain = written(tmp_path / "plain", capsys, "github")
    main_wf = workflows.load(plain / ".github/workflows/roofgen.yml")
    assert set(main_wf["jobs"]) == {"check", "site"}
    assert "pages" not in (plain / ".github/workflows/roofgen.yml").read_text("utf-8").replace(
        "--pages` publishes it to GitHub Pages", ""
    )
    steps = main_wf["jobs"]["site"]["steps"]
    # As strict as the check: a warning that passes the check does not fail the site.
    # Built into a constant folder, whatever the settings' output is.
    assert "roofgen build --no-cache -o _site" in [s.get("run") for s in steps]
    check = main_wf["jobs"]["check"]["steps"]
    assert "roofgen check --format github" in [s.get("run") for s in check]
    assert steps[-1]["with"] == {"name": "roofgen-site", "path": "_site/",
                                 "if-no-files-found": "error"}  # fmt: skip
    pages = written(tmp_path / "pages", capsys, "github-pages")
    text = (pages / ".github/workflows/roofgen.yml").read_text("utf-8")
    jobs = yaml.safe_load(text)["jobs"]
    assert jobs["pages"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert "Pages of a private repository are public" in text


def test_the_branch_is_the_repositorys_own(tmp_path, capsys):
    subprocess.run(["git", "init", "-q", "-b", "master", str(tmp_path)], check=True)
    root = written(tmp_path, capsys, "github")
    wf = workflows.load(root / ".github/workflows/roofgen.yml")
    assert wf[True]["push"] == {"branches": ["master"]}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_zizmor_finds_nothing_in_the_github_set_up(variant, tmp_path, capsys):
    zizmor = tool("zizmor")
    root = written(tmp_path, capsys, variant)
    for persona in ("regular", "auditor"):
        result = subprocess.run([zizmor, "--offline", "--no-progress", f"--persona={persona}",
                                 "--format=json", ".github"], cwd=root, capture_output=True,
                                text=True)  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr
        assert json.loads(result.stdout) == [], result.stdout


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_github_set_up_matches_the_bundled_schemas(variant, tmp_path, capsys):
    checker = tool("check-jsonschema")
    root = written(tmp_path, capsys, variant)
    for schema, files in (("vendor.github-workflows", list(GITHUB_FILES)),
                          ("vendor.dependabot", [".github/dependabot.yml"])):  # fmt: skip
        result = subprocess.run([checker, "--builtin-schema", schema, *files], cwd=root,
                                capture_output=True, text=True)  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr


def _shellcheck(steps: list[workflows.Step], tmp_path: Path) -> None:
    shellcheck = tool("shellcheck")
    assert steps
    for i, step in enumerate(steps):
        script = tmp_path / f"step{i}.sh"
        script.write_text("#!/bin/bash\n" + step.script, encoding="utf-8")
        result = subprocess.run([shellcheck, "--severity=style", str(script)],
                                capture_output=True, text=True)  # fmt: skip
        assert result.returncode == 0, f"{step.file} {step.job}: {step.name}\n{result.stdout}"


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_github_run_script_passes_shellcheck(variant, tmp_path, capsys):
    _shellcheck(workflows.github_steps(written(tmp_path / "p", capsys, variant)), tmp_path)


def test_a_private_source_is_flagged(tmp_path, capsys):
    err = init(tmp_path, capsys, *VARIANTS["github-private"])
    assert "looks private" in err and "forks get no secrets" in err
    text = (tmp_path / ".github/workflows/roofgen-pr.yml").read_text("utf-8")
    assert "The address looks private" in text
    assert "ssh://git@git.corp.example/tools/roofgen@" in text  # ssh's user kept: no secret


@pytest.mark.parametrize("args, message", [
    (["--gitlab-notes"], "--gitlab-notes needs --ci gitlab"),
    (["--ci", "none", "--pages"], "--pages needs --ci github or gitlab"),
])  # fmt: skip
def test_options_that_need_another_ci_are_usage_errors(args, message, tmp_path, capsys):
    assert main(["init", str(tmp_path / "p"), "--install", INSTALL, *args]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "p").exists()


# --------------------------------------------------------------------------- GitLab

GITLAB = ["--ci", "gitlab", "--install", INSTALL]


@pytest.mark.parametrize("extra", [[], ["--pages", "--gitlab-notes"]])
def test_the_gitlab_set_up(extra, tmp_path, capsys):
    init(tmp_path, capsys, "-q", *GITLAB, *extra)
    assert not (tmp_path / ".github").exists()
    text = (tmp_path / ".gitlab-ci.yml").read_text("utf-8")
    ci = yaml.safe_load(text)
    check = ci["roofgen-check"]
    assert check["artifacts"]["reports"]["codequality"] == "gl-code-quality-report.json"
    assert "roofgen check --format gitlab -o gl-code-quality-report.json" in check["script"][1]
    diff = ci["roofgen-diff"]
    assert diff["artifacts"]["expose_as"] == "roofgen diff"
    assert diff["artifacts"]["paths"] == ["roofgen-comment/"]
    assert diff["variables"] == {"GIT_DEPTH": "0"}
    assert "cache" not in ci and not any("cache" in job for job in ci.values()
                                         if isinstance(job, dict))  # fmt: skip
    assert "index-url" not in text
    assert ("pages" in ci) is ("--pages" in extra)
    assert ("roofgen-note" in ci) is ("--gitlab-notes" in extra)
    if "--gitlab-notes" in extra:
        assert "The risk:" in text and "$ROOFGEN_NOTE_TOKEN" in str(ci["roofgen-note"]["rules"])
        script = ci["roofgen-note"]["script"][0]
        body = script.split("<<'EOF'\n", 1)[1].rsplit("EOF", 1)[0]
        compile(body, "roofgen-note", "exec")  # the note poster is valid Python
    checker = tool("check-jsonschema")
    result = subprocess.run([checker, "--builtin-schema", "vendor.gitlab-ci", ".gitlab-ci.yml"],
                            cwd=tmp_path, capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    _shellcheck(workflows.gitlab_steps(tmp_path), tmp_path)


# --------------------------------------------------------------------------- the comment job


NODE_HARNESS = r"""
const fs = require('fs');
const [script, scenario] = [fs.readFileSync(process.argv[2], 'utf8'),
                            JSON.parse(fs.readFileSync(process.argv[3], 'utf8'))];
const calls = [];
const record = (name) => async (args) => { calls.push([name, args]); return {data: {}}; };
const github = {
  rest: {
    pulls: {get: async (args) => { calls.push(['pulls.get', args]); return {data: scenario.pr}; }},
    issues: {listComments: 'listComments', updateComment: record('updateComment'),
             createComment: record('createComment')},
  },
  paginate: async (what, args) => { calls.push(['paginate', what, args]);
                                    return scenario.comments; },
};
const core = {failed: null, setFailed(m) { this.failed = m; }, notice() {}, info() {}};
const context = {repo: {owner: 'team', repo: 'perf'}};
const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
new AsyncFunction('require', 'github', 'context', 'core', script)(require, github, context, core)
  .then(() => console.log(JSON.stringify({calls, failed: core.failed})))
  .catch((e) => console.log(JSON.stringify({calls, failed: String(e.message)})));
"""

HEAD = "c" * 40
OPEN_PR = {"state": "open", "head": {"sha": HEAD, "repo": {"id": 42}}}
BOT = {"type": "Bot", "login": "github-actions[bot]"}


def _comment_job(tmp_path: Path, number: str, pr: dict, comments: list,
                 link: Path | None = None) -> tuple[list[str], list, str | None]:  # fmt: skip
    """Run the comment job's script under node with a stand-in GitHub client; returns
    the names of the API calls, the calls, and the failure message (None: none)."""
    node = tool("node")
    artifact = tmp_path / "artifact"
    artifact.mkdir()
    (artifact / "pr-number").write_text(number, encoding="utf-8")
    if link is None:
        (artifact / "comment.md").write_text("hi\n", encoding="utf-8")
    else:
        (artifact / "comment.md").symlink_to(link)
    script = tmp_path / "script.js"
    script.write_text(COMMENT_SCRIPT % {"marker": "<!-- roofgen-diff -->"}, encoding="utf-8")
    harness = tmp_path / "harness.js"
    harness.write_text(NODE_HARNESS, encoding="utf-8")
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"pr": pr, "comments": comments}), encoding="utf-8")
    env = {"ARTIFACT_DIR": str(artifact), "HEAD_SHA": HEAD, "HEAD_REPO_ID": "42"}
    result = subprocess.run([node, str(harness), str(script), str(scenario)], env=env,
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    return [c[0] for c in out["calls"]], out["calls"], out["failed"]


def test_the_comment_job_posts_once_on_the_open_pull_request(tmp_path):
    names, calls, failed = _comment_job(tmp_path, "17\n", OPEN_PR, [])
    assert failed is None
    assert names == ["pulls.get", "paginate", "createComment"]
    assert calls[0][1] == {"owner": "team", "repo": "perf", "pull_number": 17}
    assert calls[2][1]["issue_number"] == 17
    assert calls[2][1]["body"] == "<!-- roofgen-diff -->\nhi\n"


def test_the_comment_job_edits_only_its_own_marker_comment(tmp_path):
    comments = [
        {"id": 1, "user": {"type": "User", "login": "mallory"}, "body": "<!-- roofgen-diff -->x"},
        {"id": 2, "user": BOT, "body": "another bot comment"},
        {"id": 3, "user": BOT, "body": "<!-- roofgen-diff -->\nold"},
    ]
    names, calls, failed = _comment_job(tmp_path, "17", OPEN_PR, comments)
    assert failed is None and names[-1] == "updateComment"
    assert calls[-1][1]["comment_id"] == 3


@pytest.mark.parametrize("number", ["17; rm -rf /", "../17", "1e3", "-1", "", "0x11",
                                    "123456789012"])  # fmt: skip
def test_the_comment_job_takes_digits_only(number, tmp_path):
    names, _, failed = _comment_job(tmp_path, number, OPEN_PR, [])
    assert names == [] and "not a pull request number" in failed


@pytest.mark.parametrize("pr, why", [
    ({**OPEN_PR, "state": "closed"}, None),
    ({**OPEN_PR, "head": {"sha": "d" * 40, "repo": {"id": 42}}}, None),
    ({**OPEN_PR, "head": {"sha": HEAD, "repo": {"id": 7}}}, "does not come from"),
    ({**OPEN_PR, "head": {"sha": HEAD, "repo": None}}, "does not come from"),
])  # fmt: skip
def test_the_comment_job_posts_nothing_on_another_pull_request(pr, why, tmp_path):
    names, _, failed = _comment_job(tmp_path, "17", pr, [])
    assert names == ["pulls.get"]
    assert failed is None if why is None else why in failed


def test_the_comment_job_reads_no_link_from_the_artifact(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("a runner's file", encoding="utf-8")
    names, _, failed = _comment_job(tmp_path, "17", OPEN_PR, [], link=secret)
    assert "comment.md: not a regular file" in failed
    assert "createComment" not in names and "updateComment" not in names
