"""`check`'s problems in the formats CI systems read: GitHub Actions workflow commands
and job summary, GitLab Code Quality JSON.

GitHub: each problem is a workflow command, ``::error file=F,line=L,col=C,title=T::M``,
which the runner turns into an annotation on the file. Data (the message) has ``%``, CR
and LF percent-encoded; properties (file, title) also ``:`` and ``,``, as GitHub's
toolkit does (``@actions/core`` ``escapeData`` and ``escapeProperty``), so a file named
``x%0A::warning::y`` or ``a,line=1`` cannot end the command and start another. A step
shows at most 10 error and 10 warning annotations: that many are written, and the job
summary (``$GITHUB_STEP_SUMMARY``, Markdown) lists every problem.

GitLab: a Code Quality report is a JSON array of issues, each with ``description``,
``check_name``, ``fingerprint`` (a stable hash that tells issues apart across
pipelines), ``severity`` (``info``, ``minor``, ``major``, ``critical``, ``blocker``) and
``location`` (``path``, ``lines.begin``, 1-based).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from roofgen.problems import Problem, Severity
from roofgen.report.mdtext import cell, code

__all__ = [
    "ANNOTATIONS_PER_KIND",
    "github_commands",
    "github_summary",
    "gitlab_issues",
]

#: Annotations of one kind (error, warning) GitHub shows per step.
ANNOTATIONS_PER_KIND = 10
_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}
_GITLAB_SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.NOTE: "info"}
#: The job summary's size limit is 1 MiB per step; stay well under it.
_SUMMARY_BUDGET = 512 * 1024


def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF percent-encoded."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: as data, and ``:`` and ``,`` too."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(p: Problem) -> str:
    props = [f"file={escape_property(p.file)}"]
    if p.line > 0:
        props.append(f"line={p.line}")
        if p.column > 0:
            props.append(f"col={p.column}")
    title = "roofgen check" + (f": {p.code}" if p.code else "")
    props.append(f"title={escape_property(title)}")
    message = f"{p.path}: {p.message}" if p.path else p.message
    return f"::{_COMMAND[p.severity]} {','.join(props)}::{escape_data(message)}"


def github_commands(problems: Sequence[Problem], notes: bool = False) -> tuple[list[str], int]:
    """Workflow commands for ``problems`` (notes only with ``notes``), at most
    :data:`ANNOTATIONS_PER_KIND` of each severity, and how many were left out."""
    lines: list[str] = []
    shown: dict[Severity, int] = {}
    left = 0
    for p in problems:
        if p.severity is Severity.NOTE and not notes:
            continue
        if shown.get(p.severity, 0) >= ANNOTATIONS_PER_KIND:
            left += 1
            continue
        shown[p.severity] = shown.get(p.severity, 0) + 1
        lines.append(_command(p))
    return lines, left


def github_summary(problems: Sequence[Problem], files: int, left_out: int) -> str:
    """The job summary: a verdict line and a table of every error and warning."""
    listed = [p for p in problems if p.severity is not Severity.NOTE]
    errors = sum(p.severity is Severity.ERROR for p in listed)
    warnings = len(listed) - errors
    mark = "❌" if errors else ("⚠️" if warnings else "✅")
    lines = [f"### {mark} roofgen check: {files} file(s), {errors} error(s), "
             f"{warnings} warning(s)", ""]  # fmt: skip
    if left_out:
        lines += [f"GitHub shows {ANNOTATIONS_PER_KIND} annotations of each kind per step: "
                  f"{left_out} more are listed here only.", ""]  # fmt: skip
    if not listed:
        return "\n".join(lines) + "\n"
    lines += ["| where | severity | path | problem |", "|---|---|---|---|"]
    used = sum(len(line) + 1 for line in lines)
    for n, p in enumerate(listed):
        where = p.file + (f":{p.line}:{p.column}" if p.line else "")
        path = code(p.path, in_table=True) if p.path else ""
        row = f"| {code(where, in_table=True)} | {p.severity.value} | {path} | {cell(p.message)} |"
        if used + len(row) + 1 > _SUMMARY_BUDGET:
            lines.append(f"\n{len(listed) - n} more not listed (the summary's size limit).")
            break
        lines.append(row)
        used += len(row) + 1
    return "\n".join(lines) + "\n"


def _fingerprint(p: Problem, nth: int) -> str:
    """A hash of what identifies the problem, not of where its line is: moving a problem
    down a file keeps its fingerprint, so GitLab sees the same issue, not a new one.
    ``nth`` tells apart identical problems of one file."""
    key = "\0".join([p.file, p.path, p.code, p.message, str(nth)])
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def gitlab_issues(problems: Sequence[Problem], notes: bool = False) -> list[dict[str, Any]]:
    """The GitLab Code Quality report of ``problems`` (notes only with ``notes``)."""
    out: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, str, str], int] = {}
    for p in problems:
        if p.severity is Severity.NOTE and not notes:
            continue
        key = (p.file, p.path, p.code, p.message)
        seen[key] = seen.get(key, 0) + 1
        out.append({
            "description": f"{p.path}: {p.message}" if p.path else p.message,
            "check_name": f"roofgen/{p.code or p.severity.value}",
            "fingerprint": _fingerprint(p, seen[key]),
            "severity": _GITLAB_SEVERITY[p.severity],
            "location": {"path": p.file, "lines": {"begin": max(p.line, 1)}},
        })  # fmt: skip
    return out


def rebased(problems: Sequence[Problem], cwd: str, root: str | None) -> list[Problem]:
    """``problems`` with their file names (relative to ``cwd``) made relative to the
    repository's root ``root`` (``$GITHUB_WORKSPACE``, ``$CI_PROJECT_DIR``), which is
    what annotations and Code Quality locations name; unchanged without a root or when
    ``cwd`` is outside it."""
    import os.path
    from dataclasses import replace

    if not root:
        return list(problems)
    prefix = os.path.relpath(cwd, root)
    if prefix == "." or prefix.startswith(".."):
        return list(problems)
    return [
        p
        if os.path.isabs(p.file)
        else replace(p, file=os.path.normpath(os.path.join(prefix, p.file)))
        for p in problems
    ]
