"""The roofgen steps of the CI files `roofgen init` writes, run as the runner runs them
(bash, the step's env) on a real git repository with two commits: the check, the diff
that makes the pull-request comment, the job summary.

Here they run the roofgen of this source tree; tests/test_install_source.py installs
roofgen with the written install line and runs them with that."""

from __future__ import annotations

import pytest
import workflows
from workflows import (
    MARKER,
    WARNING,
    assert_comment,
    fallback,
    git,
    has_ci_formats,
    roofgen_here,
    run_github_review,
    two_commits,
)

INSTALL = "git+https://github.com/example/roofgen@" + "0123456789abcdef" * 2 + "01234567"


@pytest.mark.slow  # two git exports, three roofgen runs: ~15 s
def test_the_github_steps_run_on_a_pull_request(tmp_path):
    repo = tmp_path / "repo"
    base, head = two_commits(repo, ["--ci", "github", "--install", INSTALL])
    ci_formats = has_ci_formats()
    summaries = run_github_review(repo, base, head, roofgen_here(tmp_path / "bin"), ci_formats)
    body = assert_comment(repo, head)
    if ci_formats:  # annotations, and the job summaries (of `check` and of `diff`)
        assert WARNING.search(summaries["check output"]), summaries["check output"]
        assert "noisy-add" in summaries["check"]
        assert body.split("\n")[1].strip() in summaries["report"]


@pytest.mark.slow  # two git exports, three roofgen runs: ~15 s
def test_the_gitlab_steps_run_on_a_merge_request(tmp_path):
    repo = tmp_path / "repo"
    base, head = two_commits(repo, ["--ci", "gitlab", "--install", INSTALL])
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(origin))
    git(repo, "remote", "add", "origin", str(origin))
    ci_formats = has_ci_formats()
    env = {
        "PATH": f"{roofgen_here(tmp_path / 'bin')}:/usr/bin:/bin", "CI": "true",
        "GITLAB_CI": "true", "NO_COLOR": "1", "CI_PIPELINE_SOURCE": "merge_request_event",
        "CI_MERGE_REQUEST_DIFF_BASE_SHA": base, "CI_COMMIT_SHA": head,
        "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
    }  # fmt: skip
    jobs = {s.job: s for s in workflows.gitlab_steps(repo)}
    for job in ("roofgen-check", "roofgen-diff"):
        step = jobs[job]
        lines = [line for line in step.script.splitlines() if "pip install" not in line]
        step.script = fallback("\n".join(lines) + "\n", ci_formats)
        result = workflows.run_gitlab_step(step, repo, env)
        assert result.returncode == 0, (job, step.script, result.stdout, result.stderr)
    report = (repo / "gl-code-quality-report.json").read_text("utf-8")
    if ci_formats:
        assert report.strip().startswith("[")  # Code Quality: a list of findings
    body = (repo / "roofgen-comment" / "comment.md").read_text("utf-8")
    assert body.startswith(MARKER) and head[:7] in body
