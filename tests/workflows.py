"""Reading the CI files `roofgen init` writes, and running their shell steps locally on a
git repository with two commits."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from roofgen.cli import main

ROOT = Path(__file__).resolve().parent.parent
MARKER = "<!-- roofgen-diff -->"
#: The workflow command (annotation) of the noisy case's warning.
WARNING = re.compile(r"^::warning [^\n]*file=specs/cases/noisy-add\.yaml[,:]", re.M)

GITHUB_FILES = (
    ".github/workflows/roofgen.yml",
    ".github/workflows/roofgen-pr.yml",
    ".github/workflows/roofgen-comment.yml",
)
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@dataclass
class Step:
    file: str
    job: str
    name: str
    script: str  # the shell script of a `run:` (GitLab: the script lines joined)
    env: dict[str, str] = field(default_factory=dict)


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), path
    return data


def github_steps(root: Path) -> list[Step]:
    steps = []
    for relative in GITHUB_FILES:
        for job_id, job in load(root / relative)["jobs"].items():
            for i, step in enumerate(job["steps"]):
                if "run" in step:
                    name = step.get("name", f"step {i}")
                    steps.append(Step(relative, job_id, name, step["run"], step.get("env", {})))
    return steps


def gitlab_steps(root: Path) -> list[Step]:
    steps = []
    for job_id, job in load(root / ".gitlab-ci.yml").items():
        if isinstance(job, dict) and "script" in job:
            script = "\n".join(job["script"]) + "\n"
            steps.append(Step(".gitlab-ci.yml", job_id, job_id, script, job.get("variables", {})))
    return steps


def github_uses(root: Path) -> list[str]:
    return [
        step["uses"]
        for relative in GITHUB_FILES
        for job in load(root / relative)["jobs"].values()
        for step in job["steps"]
        if "uses" in step
    ]


def run_github_step(step: Step, cwd: Path, context: dict[str, str], env: dict[str, str]) -> Any:
    """Run a `run:` as the runner does (`bash -e -o pipefail`), its `env:` expressions
    replaced by the values of ``context`` (every expression must be one it knows)."""

    def known(m: re.Match[str]) -> str:
        assert m.group(1) in context, f"{step.file}: {step.name}: unknown {m.group(0)}"
        return context[m.group(1)]

    values = {key: EXPRESSION.sub(known, str(value)) for key, value in step.env.items()}
    return _bash(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step.script], cwd,
                 {**env, **values})  # fmt: skip


def run_gitlab_step(step: Step, cwd: Path, env: dict[str, str]) -> Any:
    """Run a job's script lines as the runner does: each line in one bash, stopping at
    the first that fails."""
    script = "set -eo pipefail\n" + step.script
    return _bash(["bash", "--noprofile", "--norc", "-c", script], cwd, {**step.env, **env})


def _bash(argv: list[str], cwd: Path, env: dict[str, str]) -> Any:
    base = {k: v for k, v in os.environ.items() if k in ("HOME", "LANG", "TMPDIR")}
    return subprocess.run(argv, cwd=cwd, env={**base, **env}, capture_output=True, text=True)


# --------------------------------------------------------------------------- a review


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                          check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip


def faster(text: str) -> str:
    """The example case with its measured time 10% lower (median, q1, q3)."""

    def scaled(m: re.Match[str]) -> str:
        return f"{m[1]}{float(m[2]) * 0.9:.4g} {m[3]}"

    new, n = re.subn(r"\b(median: |q1: |q3: )([0-9.]+) (ms|us)", scaled, text)
    assert n == 3, text
    return new


def two_commits(repo: Path, init_args: list[str]) -> tuple[str, str]:
    """A repository set up by `roofgen init`, then a commit that makes the example
    faster and adds a case with a warning; returns (base, head) commits."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    assert main(["init", str(repo), "-q", *init_args]) == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "roofgen init")
    case = repo / "specs/cases/example-vector-add.yaml"
    text = case.read_text("utf-8")
    case.write_text(faster(text), encoding="utf-8")
    # A new case whose timing spread (q1 to q3: about half the median) earns a warning,
    # which the check reports without failing.
    noisy = re.sub(r"\bq3: ([0-9.]+) (ms|us)", lambda m: f"q3: {float(m[1]) * 1.5:.4g} {m[2]}",
                   text.replace("id: example-vector-add", "id: noisy-add", 1))  # fmt: skip
    (repo / "specs/cases/noisy-add.yaml").write_text(noisy, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a faster vector add, and a noisy one")
    return git(repo, "rev-parse", "HEAD~1"), git(repo, "rev-parse", "HEAD")


def roofgen_here(folder: Path) -> Path:
    """A `roofgen` executable that runs this source tree's roofgen."""
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "roofgen"
    entry = "'from roofgen.cli import entry; entry()'"
    exe.write_text(f"#!/bin/sh\nPYTHONPATH='{ROOT}' exec '{sys.executable}' -c {entry} \"$@\"\n",
                   encoding="utf-8")  # fmt: skip
    exe.chmod(0o755)
    return folder


def has_ci_formats() -> bool:
    """Whether `roofgen check` has the CI formats (github, gitlab) yet."""
    result = subprocess.run([sys.executable, "-c", "from roofgen.cli import entry; entry()",
                             "check", "--help"], capture_output=True, text=True,
                            cwd=ROOT, env={"PYTHONPATH": str(ROOT)})  # fmt: skip
    return "github" in result.stdout and "gitlab" in result.stdout


def fallback(script: str, ci_formats: bool) -> str:
    """Until `check --format github|gitlab` exists, the step runs with the text/JSON
    report instead, so the rest of it is still tested."""
    if ci_formats:
        return script
    return script.replace("--format github", "--format text").replace(
        "--format gitlab", "--format json"
    )


def run_github_review(repo: Path, base: str, head: str, bin_dir: Path,
                      ci_formats: bool) -> dict[str, str]:  # fmt: skip
    """Run the check job's and the pull-request job's roofgen steps; return the job
    summary each wrote (keyed by job)."""
    context = {
        "github.event.pull_request.number": "7",
        "github.event.pull_request.base.sha": base,
        "github.event.pull_request.head.sha": head,
    }
    summaries = {}
    steps = [s for s in github_steps(repo) if "pip install" not in s.script]
    ran = []
    for step in steps:
        if step.job == "site":
            continue  # the site build: tests/test_install_source.py
        summary = repo.parent / f"summary-{step.job}.md"
        summary.write_text("", encoding="utf-8")
        env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "CI": "true", "GITHUB_ACTIONS": "true",
               "GITHUB_STEP_SUMMARY": str(summary), "NO_COLOR": "1"}  # fmt: skip
        step.script = fallback(step.script, ci_formats)
        result = run_github_step(step, repo, context, env)
        assert result.returncode == 0, (step.name, step.script, result.stdout, result.stderr)
        summaries[step.job] = summary.read_text("utf-8")
        summaries[f"{step.job} output"] = result.stdout + result.stderr
        ran.append((step.job, step.script.split()[0:2]))
    assert [job for job, _ in ran] == ["check", "report"]
    return summaries


def assert_comment(repo: Path, head: str) -> str:
    folder = repo / "roofgen-comment"
    assert (folder / "pr-number").read_text("utf-8") == "7\n"
    body = (folder / "comment.md").read_text("utf-8")
    assert body.startswith(MARKER)
    assert "example-vector-add" in body and "noisy-add" in body and head[:7] in body
    assert (folder / "comment-charts" / "example-vector-add.svg").is_file()
    return body
