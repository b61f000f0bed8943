"""``roofgen history`` as text, JSON and CSV: one entry per commit and launch.

Commit subjects (and file names) are untrusted text. In the text report every
character that is not printable (control characters, the escape that starts a
terminal sequence, bidirectional overrides) is written as its escape (``\\x1b``),
so a subject can neither colour, move nor hide anything on a terminal, nor split a
line. JSON holds them as they are, in strict JSON (escaped by the encoder, no NaN).
CSV is written printable as the text report is, and a cell a spreadsheet would take
for a formula (``=``, ``+``, ``-``, ``@``) starts with an apostrophe.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from roofgen.report.jsontext import dumps
from roofgen.review.history import History
from roofgen.units import fmt_time

__all__ = ["COLUMNS", "history_csv", "history_json", "history_rows", "history_text", "printable"]

FORMAT = 1
COLUMNS = (
    "date", "commit", "subject", "case", "kernel", "variant", "index", "status",
    "time_s", "efficiency", "binding",
)  # fmt: skip


def printable(text: str) -> str:
    """``text`` with every character that is not printable written as its escape."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


def history_rows(found: History) -> list[dict[str, Any]]:
    """One row per commit and launch (one per commit and case without launches: a
    case removed, or that failed the check at that commit)."""
    rows = []
    for commit in found.commits:
        head: dict[str, Any] = {
            "date": commit.date,
            "commit": commit.sha[:12],
            "subject": commit.subject,
        }
        for case in commit.cases:
            base: dict[str, Any] = head | {"case": case.case, "status": case.status}
            if not case.points:
                rows.append(base | {"problems": list(case.problems)})
            for p in case.points:
                rows.append(
                    base
                    | {
                        "kernel": p.kernel,
                        "variant": p.variant,
                        "index": p.index,
                        "time_s": p.time_s,
                        "efficiency": p.efficiency,
                        "binding": p.binding,
                    }
                )
    return rows


def history_json(found: History) -> dict[str, Any]:
    """The history as a JSON document (``format`` 1); times in seconds."""
    return {
        "format": FORMAT,
        "folders": list(found.folders),
        "shallow": found.shallow,
        "notes": list(found.notes),
        "commits": [
            {
                "commit": c.sha,
                "short": c.sha[:12],
                "date": c.date,
                "subject": c.subject,
                "cases": [
                    {
                        "case": k.case,
                        "file": k.file,
                        "status": k.status,
                        "problems": list(k.problems),
                        "launches": [
                            {
                                "kernel": p.kernel,
                                "variant": p.variant,
                                "index": p.index,
                                "time_s": p.time_s,
                                "efficiency": p.efficiency,
                                "binding": p.binding,
                            }
                            for p in k.points
                        ],
                    }
                    for k in c.cases
                ],
            }
            for c in found.commits
        ],
    }


def history_json_text(found: History) -> str:
    return dumps(history_json(found), indent=2) + "\n"


def history_csv(found: History) -> str:
    """CSV (RFC 4180, ``\\n`` line ends): :data:`COLUMNS`, one line per row."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in history_rows(found):
        writer.writerow([_cell(row.get(c)) for c in COLUMNS])
    return buffer.getvalue()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    text = printable(str(value))
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def history_text(found: History) -> str:
    """A line per commit (date, short SHA, subject), then a line per launch: time,
    efficiency, binding resource."""
    lines = []
    for commit in found.commits:
        lines.append(f"{commit.date[:10]} {commit.sha[:12]} {printable(commit.subject)}")
        for case in commit.cases:
            if case.status == "removed":
                lines.append(f"  {printable(case.case)}: removed")
            elif case.status == "invalid":
                lines.append(f"  {printable(case.case)}: does not pass the check")
                lines += [f"    {printable(p)}" for p in case.problems]
            for p in case.points:
                where = printable(f"{case.case}/{p.kernel}/{p.variant}")
                where += f"#{p.index + 1}" if p.index else ""
                eff = f"{p.efficiency:.1%}" if p.efficiency is not None else "unknown"
                binding = printable(p.binding) if p.binding else "unknown"
                lines.append(f"  {where}: {fmt_time(p.time_s)}, {eff} efficiency, {binding}")
    if not found.commits:
        lines.append("no commit changed the selected cases")
    return "\n".join(lines) + "\n"


def history_chart_input(found: History, title: str, case: str | None = None) -> Any:
    """The chart input of the history (of one case, or of all: then the series name
    their case too); subjects written printable."""
    from roofgen.charts.history import HistoryInput, HistoryPoint

    points = []
    cases = {k.case for c in found.commits for k in c.cases if case is None or k.case == case}
    for order, commit in enumerate(found.commits):
        for k in commit.cases:
            if k.case not in cases:
                continue
            for p in k.points:
                series = f"{p.kernel}/{p.variant}" + (f"#{p.index + 1}" if p.index else "")
                points.append(
                    HistoryPoint(
                        order,
                        commit.sha[:12],
                        commit.date,
                        printable(commit.subject),
                        series if len(cases) == 1 else f"{k.case}/{series}",
                        p.time_s,
                        p.efficiency,
                        p.binding,
                    )
                )
    return HistoryInput(printable(title), tuple(points))
