"""The CI recipes in the Guide: safe for forks, and the roofgen commands they run work."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from roofgen.cli import main

PAGE = Path(__file__).resolve().parent.parent / "templates" / "guide" / "ci.md"
MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"


def blocks() -> list[dict]:
    text = PAGE.read_text(encoding="utf-8")
    return [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", text, re.S)]


def github() -> tuple[dict, dict, dict]:
    pr, comment, site = blocks()[:3]
    return pr, comment, site


def test_the_untrusted_job_reads_the_pull_request_with_a_read_only_token():
    pr, _, _ = github()
    assert pr[True] == "pull_request"  # YAML 1.1 reads the key `on` as True
    assert pr["permissions"] == {"contents": "read"}
    steps = pr["jobs"]["report"]["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@")
    assert steps[0]["with"]["fetch-depth"] == 0


def test_the_trusted_job_never_checks_out_or_runs_pull_request_code():
    _, comment, _ = github()
    assert "pull_request_target" not in str(comment[True])
    assert comment[True]["workflow_run"]["workflows"] == ["roofgen PR"]
    steps = comment["jobs"]["comment"]["steps"]
    assert not any("checkout" in s.get("uses", "") for s in steps)
    assert not any("pip install" in s.get("run", "") for s in steps)
    script = steps[-1]["run"]
    assert "*[!0-9]*" in script  # the PR number from the artifact is validated
    assert "<!-- roofgen-diff -->" in script  # one comment updated per push


def test_no_recipe_uses_pull_request_target():
    assert "pull_request_target:" not in PAGE.read_text(encoding="utf-8").replace(
        "Never use\n`pull_request_target`", ""
    )


def test_the_gitlab_recipe_fetches_the_whole_history():
    gitlab = blocks()[3]
    assert gitlab["variables"]["GIT_DEPTH"] == 0
    assert gitlab["pages"]["artifacts"]["paths"] == ["public"]


def _roofgen_commands() -> list[list[str]]:
    commands = []
    pr, _, site = github()
    for workflow in (pr, site):
        for job in workflow["jobs"].values():
            for step in job["steps"]:
                for line in step.get("run", "").replace("\\\n", " ").splitlines():
                    line = line.strip()
                    if line.startswith("roofgen "):
                        commands.append(shlex.split(line)[1:])
    return commands


def test_every_recipe_builds_with_a_cold_cache():
    """A cache restored in CI may have been written by another branch: no recipe
    restores one, and every build reads none."""
    builds = [c for c in _roofgen_commands() if c[0] == "build"]
    builds += [shlex.split(b)[1:] for b in re.findall(r"- (roofgen build[^\n]*)", _gitlab())]
    assert len(builds) == 3
    assert all("--no-cache" in argv for argv in builds)
    text = PAGE.read_text(encoding="utf-8")
    assert "actions/cache" not in text
    gitlab = blocks()[3]
    assert "cache" not in gitlab
    assert not any("cache" in job for job in gitlab.values() if isinstance(job, dict))


def _gitlab() -> str:
    text = PAGE.read_text(encoding="utf-8")
    return text[text.index("## GitLab CI") :]


@pytest.mark.slow  # git history, a build and a diff: ~7 s
def test_the_recipes_roofgen_commands_run_on_a_repository(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "repo"
    shutil.copytree(MINIMAL, repo / "specs")

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                       check=True, capture_output=True)  # fmt: skip

    git("init", "-q", "-b", "main")
    git("add", ".")
    git("commit", "-qm", "specs")
    git("branch", "-q", "base")
    git("update-ref", "refs/remotes/origin/main", "base")
    monkeypatch.chdir(repo)
    commands = _roofgen_commands()
    assert [c[0] for c in commands] == ["check", "diff", "diff", "build", "build"]
    for argv in commands:
        argv = [a.replace("${{ github.base_ref }}", "main") for a in argv]
        assert main(argv) == 0, (argv, capsys.readouterr().err)
    assert (repo / "report" / "diff.md").read_text().startswith("<!-- roofgen-diff -->")
    assert (repo / "report" / "site" / "index.html").is_file()
