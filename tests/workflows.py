"""Reading the CI files `roofgen init` writes, and running their shell steps locally."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

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
