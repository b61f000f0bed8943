"""`roofgen diff` reports: Markdown for a pull-request comment, JSON, and text.

The Markdown works as text alone (a PR comment shows no CI artifact and no
inline SVG): a verdict line first, a table of changed variants, launch details
folded in ``<details>``, links to the case pages when the site's URL is known,
and a hidden marker so a bot can update one comment instead of adding one.
It stays under GitHub's 65,536-character limit for a comment.
"""

from __future__ import annotations

from typing import Any

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


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;")


def _link(case: str, site_url: str | None) -> str:
    if not site_url:
        return f"`{case}`"
    return f"[`{case}`]({site_url.rstrip('/')}/cases/{case}/index.html)"


def _row(c: Change, site_url: str | None, kernel: bool) -> str:
    who = [_link(c.case, site_url), f"`{c.variant}`"]
    if kernel:
        who.append(f"`{c.kernel}`" + (f" #{c.occurrence}" if c.occurrence > 1 else ""))
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
    lines = [MARKER, f"**roofgen diff** `{_cell(base)}` → `{_cell(head)}`: {verdict_line(d)}", ""]
    if preview_url:
        lines += [f"Preview of the site: {preview_url}", ""]
    if d.cases_added or d.cases_removed:
        if d.cases_added:
            lines.append("New cases: " + ", ".join(_link(c, site_url) for c in d.cases_added))
        if d.cases_removed:
            lines.append("Removed cases: " + ", ".join(f"`{c}`" for c in d.cases_removed))
        lines.append("")
    if d.roofs:
        lines += ["### Roof changes (machines, not kernels)", "",
                  "| machine | roof | base | head |", "|---|---|---|---|"]  # fmt: skip
        for r in d.roofs:
            values = f"{fmt_si(r.base, r.unit)} | {fmt_si(r.head, r.unit)}"
            lines.append(f"| `{r.machine}` | {r.roof} | {values} |")
        lines.append("")
    if d.variants:
        lines += ["### Variants", "",
                  "| case | variant | time | speedup (interval) | verdict | binding | efficiency |",
                  "|---|---|---|---|---|---|---|"]  # fmt: skip
        lines += [_row(c, site_url, kernel=False) for c in d.variants]
        lines.append("")
    if d.launches:
        head_text = "\n".join(lines)
        rows = [_row(c, site_url, kernel=True) for c in d.launches]
        kept, omitted = _fit(rows, _BUDGET - len(head_text) - 400)
        lines += [f"<details><summary>Launches ({len(d.launches)} changed)</summary>", "",
                  "| case | variant | kernel | time | speedup (interval) | verdict | binding "
                  "| efficiency |", "|---|---|---|---|---|---|---|---|", *kept]  # fmt: skip
        if omitted:
            lines.append(
                f"\n{omitted} more launches omitted to fit a comment: see the JSON report."
            )
        lines += ["", "</details>", ""]
    if not (d.variants or d.roofs or d.cases_added or d.cases_removed):
        lines += ["No kernel or roof changed.", ""]
    lines.append(
        "A speedup counts only when the timing intervals (interquartile range, else the "
        "confidence interval of the median, else min..max) do not overlap."
    )
    return "\n".join(lines) + "\n"


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
