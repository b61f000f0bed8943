"""Output for CI systems: `check --format github|gitlab`, and the job summary that
`check` and `diff` add to on GitHub Actions (``$GITHUB_STEP_SUMMARY``)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from roofgen.commands.common import json_text, say, write_output


def append_step_summary(markdown: str) -> bool:
    """Add ``markdown`` to the job summary when ``$GITHUB_STEP_SUMMARY`` names its file
    (what was there stays: other steps write to it too). Whether it was written."""
    from roofgen.files import write_file

    target = os.environ.get("GITHUB_STEP_SUMMARY", "")
    if not target:
        return False
    path = Path(target)
    try:
        before = path.read_text(encoding="utf-8") if path.is_file() else ""
    except (OSError, UnicodeDecodeError) as exc:
        say(f"$GITHUB_STEP_SUMMARY: cannot read {target}: {exc}; no summary written")
        return False
    gap = "\n" if before and not before.endswith("\n\n") else ""
    write_file(path, before + gap + markdown, root=path.parent)
    return True


def write_ci_report(fmt: str, result: Any, output: str, force: bool, verbose: bool,
                    strict: bool = False) -> None:  # fmt: skip
    """`check`'s problems as GitHub workflow commands (and the job summary) or as a
    GitLab Code Quality report, to ``output``. File names are made relative to the
    repository's root when the CI system names it. Under ``strict`` a warning is an
    error, as the check's status says."""
    from roofgen.problems import Severity
    from roofgen.report import ci

    problems = list(result.problems)
    if strict:
        problems = [replace(p, severity=Severity.ERROR) if p.severity is Severity.WARNING
                    else p for p in problems]  # fmt: skip
    if fmt == "github":
        problems = ci.rebased(problems, os.getcwd(), os.environ.get("GITHUB_WORKSPACE"))
        lines, left = ci.github_commands(problems, notes=verbose)
        write_output("".join(line + "\n" for line in lines), output, force)
        append_step_summary(ci.github_summary(problems, len(result.files), left))
    else:
        problems = ci.rebased(problems, os.getcwd(), os.environ.get("CI_PROJECT_DIR"))
        write_output(json_text(ci.gitlab_issues(problems, notes=verbose)), output, force)
