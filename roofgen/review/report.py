"""`roofgen diff` reports: Markdown for a pull-request comment, JSON, and text.

The Markdown works as text alone (a PR comment shows no CI artifact and no
inline SVG): a verdict line first, a table of changed variants, launch details
folded in ``<details>``, links to the case pages when the site's URL is known,
and a hidden marker so a bot can update one comment instead of adding one.
It stays under GitHub's 65,536-character limit for a comment, whatever the number of
changes: tables are cut to fit, with a line saying how many rows the JSON report holds
beyond them.

A pull request can change everything the report quotes (a setting's URL, a ref's name,
and after it titles and commit subjects), so every quoted text is made inert: table
cells escape Markdown and HTML, code spans are fenced with more backticks than they
hold, URLs are percent-encoded, and an ``@name`` or ``#number`` outside code gets a word
joiner after its sign, so the comment pings no one and links no issue.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from roofgen.analysis.compare import Speedup
from roofgen.review.diff import Change, Diff
from roofgen.units import fmt_percent, fmt_ratio, fmt_si, fmt_time

MARKER = "<!-- roofgen-diff -->"
COMMENT_LIMIT = 65_536
_BUDGET = 60_000  # leave room for what a bot adds around the report


def verdict_line(d: Diff) -> str:
    c = d.counts()
    parts = [
        f"{c['faster']} significantly faster",
        f"{c['within noise']} within noise",
        f"{c['regression']} regression{'s' if c['regression'] != 1 else ''}",
    ]
    if c["unknown noise"]:
        parts.append(f"{c['unknown noise']} of unknown noise (no timing interval)")
    return ", ".join(parts)


def _speedup(s: Speedup | None) -> str:
    if s is None:
        return "n/a"
    if s.low is None or s.high is None:
        return fmt_ratio(s.value)
    return f"{fmt_ratio(s.value)} ({s.low:.2f}-{s.high:.2f})"


_MENTION = re.compile(r"([@#])(?=[\w-])")
_WORD_JOINER = "\u2060"


def neutral(text: str) -> str:
    """``text`` with its mentions (``@team``) and issue references (``#12``) broken by
    an invisible word joiner: GitHub and GitLab link neither."""
    return _MENTION.sub(lambda m: m.group(1) + _WORD_JOINER, text)


def _cell(text: str) -> str:
    """``text`` as plain text in a Markdown table cell or line: no markup, no HTML, no
    mention; one line."""
    text = " ".join(text.split())
    for char in "\\`*_[]|~":
        text = text.replace(char, "\\" + char)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return neutral(text)


def _code(text: str) -> str:
    """``text`` as one inline code span (inert: GitHub neither links nor mentions in
    code), fenced with one backtick more than the longest run it holds."""
    text = " ".join(text.split())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _url(url: str) -> str:
    """A URL as a Markdown link target: characters that could end the link or start
    markup percent-encoded."""
    return quote(url.strip(), safe=":/?&=%+,;~.-_!$'")


def _link(case: str, site_url: str | None) -> str:
    if not site_url:
        return _code(case)
    return f"[{_code(case)}]({_url(site_url.rstrip('/'))}/cases/{case}/index.html)"


def _row(c: Change, site_url: str | None, kernel: bool) -> str:
    who = [_link(c.case, site_url), _code(c.variant)]
    if kernel:
        who.append(_code(c.kernel) + (f" (launch {c.occurrence})" if c.occurrence > 1 else ""))
    if c.status != "changed":
        t = fmt_time(c.head_s if c.status == "added" else c.base_s)
        return "| " + " | ".join([*who, c.status, t, "", "", ""]) + " |"
    time = f"{fmt_time(c.base_s)} → {fmt_time(c.head_s)}"
    verdict = c.verdict + (" (roofs moved)" if c.roofs_moved else "")
    binding = c.movement.text() if c.movement else ""
    eff = f"{fmt_percent(c.base_efficiency)} → {fmt_percent(c.head_efficiency)}"
    cells = [*who, time, _speedup(c.speedup), verdict, _cell(binding), eff]
    return "| " + " | ".join(cells) + " |"


def markdown(d: Diff, base: str, head: str, site_url: str | None = None,
             preview_url: str | None = None) -> str:  # fmt: skip
    lines = [MARKER, f"**roofgen diff** {_code(base)} → {_code(head)}: {verdict_line(d)}", ""]
    if preview_url:
        lines += [f"Preview of the site: <{_url(preview_url)}>", ""]
    if d.cases_added or d.cases_removed:
        if d.cases_added:
            lines.append("New cases: " + ", ".join(_link(c, site_url) for c in d.cases_added))
        if d.cases_removed:
            lines.append("Removed cases: " + ", ".join(_code(c) for c in d.cases_removed))
        lines.append("")
    if d.roofs:
        rows = [f"| {_code(r.machine)} | {_cell(r.roof)} | {fmt_si(r.base, r.unit)} "
                f"| {fmt_si(r.head, r.unit)} |" for r in d.roofs]  # fmt: skip
        lines += _table("### Roof changes (machines, not kernels)",
                        "| machine | roof | base | head |\n|---|---|---|---|",
                        rows, lines, "roof changes")  # fmt: skip
    if d.variants:
        lines += _table("### Variants",
                        "| case | variant | time | speedup (interval) | verdict | binding "
                        "| efficiency |\n|---|---|---|---|---|---|---|",
                        [_row(c, site_url, kernel=False) for c in d.variants], lines,
                        "variants")  # fmt: skip
    if d.launches:
        lines += _table(f"<details><summary>Launches ({len(d.launches)} changed)</summary>",
                        "| case | variant | kernel | time | speedup (interval) | verdict "
                        "| binding | efficiency |\n|---|---|---|---|---|---|---|---|",
                        [_row(c, site_url, kernel=True) for c in d.launches], lines,
                        "launches", close="</details>")  # fmt: skip
    if not (d.variants or d.roofs or d.cases_added or d.cases_removed):
        lines += ["No kernel or roof changed.", ""]
    lines.append(
        "A speedup counts only when the timing intervals (interquartile range, else the "
        "confidence interval of the median, else min..max) do not overlap."
    )
    return _capped("\n".join(lines) + "\n")


def _table(title: str, header: str, rows: list[str], above: list[str], what: str,
           close: str | None = None) -> list[str]:  # fmt: skip
    """A titled table of as many ``rows`` as fit in what the comment has left after
    ``above``, and a line saying how many were left out."""
    budget = _BUDGET - sum(len(line) + 1 for line in above) - len(title) - len(header) - 600
    kept, omitted = _fit(rows, budget)
    out = [title, "", header, *kept]
    if omitted:
        out.append(f"\n{omitted} more {what} omitted to fit a comment: see the JSON report.")
    out.append("")
    if close is not None:
        out += [close, ""]
    return out


def _capped(text: str) -> str:
    """``text`` cut at a line to :data:`COMMENT_LIMIT` characters with a line saying so:
    the tables fit already, but long quoted names could still overflow."""
    if len(text) <= _BUDGET:
        return text
    cut = text.rfind("\n", 0, _BUDGET - 200) + 1
    return text[:cut] + "\n…report cut to fit a comment: see the JSON report.\n"


def _fit(rows: list[str], budget: int) -> tuple[list[str], int]:
    kept: list[str] = []
    used = 0
    for row in rows:
        if used + len(row) + 1 > budget:
            return kept, len(rows) - len(kept)
        kept.append(row)
        used += len(row) + 1
    return kept, 0


def _change_json(c: Change) -> dict[str, Any]:
    s = c.speedup
    return {
        "case": c.case,
        "variant": c.variant,
        "kernel": c.kernel or None,
        "occurrence": c.occurrence or None,
        "status": c.status,
        "base_time_s": c.base_s,
        "head_time_s": c.head_s,
        "speedup": None if s is None else {
            "value": s.value, "low": s.low, "high": s.high, "noise": s.noise,
        },
        "verdict": c.verdict,
        "binding_from": c.movement.binding_from if c.movement else None,
        "binding_to": c.movement.binding_to if c.movement else None,
        "base_efficiency": c.base_efficiency,
        "head_efficiency": c.head_efficiency,
        "roofs_moved": c.roofs_moved,
    }  # fmt: skip


def json_doc(d: Diff, base: str, head: str) -> dict[str, Any]:
    return {
        "roofgen_diff": 1,
        "base": base,
        "head": head,
        "counts": d.counts(),
        "cases_added": list(d.cases_added),
        "cases_removed": list(d.cases_removed),
        "roofs": [
            {"machine": r.machine, "roof": r.roof, "base": r.base, "head": r.head, "unit": r.unit}
            for r in d.roofs
        ],
        "variants": [_change_json(c) for c in d.variants],
        "launches": [_change_json(c) for c in d.launches],
    }


def text(d: Diff, base: str, head: str) -> str:
    lines = [f"{base} -> {head}: {verdict_line(d)}"]
    for r in d.roofs:
        lines.append(
            f"  roof {r.machine} {r.roof}: {fmt_si(r.base, r.unit)} -> {fmt_si(r.head, r.unit)}"
        )
    for c in (*d.variants, *d.launches):
        who = f"{c.case}/{c.kernel or '*'}/{c.variant}"
        if c.status != "changed":
            lines.append(f"  {who}: {c.status}")
            continue
        move = c.movement.text() if c.movement else ""
        lines.append(
            f"  {who}: {fmt_time(c.base_s)} -> {fmt_time(c.head_s)}, "
            f"{_speedup(c.speedup)}, {c.verdict}; {move}"
        )
    return "\n".join(lines) + "\n"
