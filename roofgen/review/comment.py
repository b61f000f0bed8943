"""The pull-request comment of `roofgen diff`, read in five seconds.

First line: the verdict at kernel level, naming the kernels that got faster or slower and
by how much, with the threshold (:mod:`roofgen.review.verdict`). Second: the commits
compared (short object names, which GitHub links to the commits), the threshold and what
decided the numbers (roofgen's version, the machines and their library versions). Then the
per-kernel table, visible when short, whose text bars (``▲ █████``) carry the verdict on
any renderer; optionally a Mermaid bar chart of the speedups (drawn by github.com in
comments and job summaries); variants, roof changes and new or removed cases below. The
same text is the job summary on GitHub Actions.

Everything quoted from the specs or the settings is untrusted (a pull request writes it):
it goes through :mod:`roofgen.report.mdtext` (no mention, no markup, no link injected),
and Mermaid labels are cut down to letters, digits and ``._/-``. The comment stays under
GitHub's 65,536-character limit: tables are cut to fit, saying how many rows were left out.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from roofgen.report.mdtext import cell, code, url
from roofgen.review.diff import Change, Diff
from roofgen.review.gate import ContextChange, Reason
from roofgen.review.verdict import DEFAULT_THRESHOLD, KernelChange, kernels, verdict_line
from roofgen.units import fmt_percent, fmt_si, fmt_time
from roofgen.version import __version__

MARKER = "<!-- roofgen-diff -->"
COMMENT_LIMIT = 65_536
BUDGET = 60_000  # leave room for what a bot adds around the report
#: A table of at most this many rows is shown open; a longer one is folded.
OPEN_ROWS = 20
_BAR_STEP = math.log(1.05)  # one block per 5% (on a log scale: 2x and 0.5x match)
_BAR_MAX = 20


@dataclass(frozen=True)
class Side:
    """One side of the diff: as the user named it, and the commit a ``git:REV`` names."""

    name: str
    commit: str | None = None

    def shown(self) -> str:
        """``abc1234567`` for a commit named by its object name; `` `main` (abc1234567)``
        for a branch; `` `specs` `` for a folder."""
        if self.commit is None:
            return code(self.name)
        short = self.commit[:10]
        if re.fullmatch(r"git:[0-9a-f]{7,64}", self.name) and self.commit.startswith(self.name[4:]):
            return short
        return f"{code(self.name)} ({short})"


@dataclass(frozen=True)
class Options:
    threshold: float = DEFAULT_THRESHOLD
    site_url: str | None = None
    preview_url: str | None = None
    mermaid: bool = False
    charts: str | None = None  # where the static charts were written, as shown to the reader
    version: str = __version__
    context: tuple[ContextChange, ...] = ()  # settings, rules or machine files changed
    gate: tuple[Reason, ...] | None = None  # with --fail-on-regression: every reason
    limit: float | None = None  # --fail-on-regression's PCT


def time(seconds: float | None) -> str:
    """A time in plain words: ``1.2 ms``, ``850 µs``; an em dash for none."""
    if seconds is None:
        return "—"
    return fmt_time(seconds).replace(" us", " µs")


def bar(k: KernelChange) -> str:
    """``▲ █████`` (faster), ``▼ ██`` (slower): one block per 5% on a log scale, so the
    table carries the verdict where nothing but text is drawn; light blocks (``▼ ░░``) for
    a move that does not count (under the threshold, or of unknown noise); ``≈`` within
    noise."""
    s = k.change.speedup
    if s is None or s.value <= 0 or k.change.status != "changed":
        return ""
    counts = k.kind in ("faster", "slower")
    if not counts and k.change.verdict not in ("faster", "regression", "unknown noise"):
        return "≈"
    blocks = round(abs(math.log(s.value)) / _BAR_STEP)
    if blocks == 0 and not counts:
        return "≈"
    blocks = max(blocks, 1)
    arrow = "▲" if s.value > 1 else "▼"
    more = "…" if blocks > _BAR_MAX else ""
    return f"{arrow} {('█' if counts else '░') * min(blocks, _BAR_MAX)}{more}"


def _link(case: str, site_url: str | None) -> str:
    if not site_url:
        return code(case, in_table=True)
    return f"[{code(case, in_table=True)}]({url(site_url.rstrip('/'))}/cases/{case}/index.html)"


def _speedup(c: Change) -> str:
    s = c.speedup
    if s is None:
        return "—"
    if s.low is None or s.high is None:
        return f"{s.value:.2f}x"
    return f"{s.value:.2f}x ({s.low:.2f}–{s.high:.2f})"


_VERDICT_WORDS = {"faster": "faster", "slower": "**slower**", "unknown": "unknown noise",
                  "added": "added", "removed": "removed"}  # fmt: skip


def _verdict(k: KernelChange) -> str:
    c = k.change
    if k.kind == "unchanged":
        word = "within noise" if c.verdict in ("within noise", "unchanged") else "under threshold"
        if c.verdict == "unknown noise":
            word = "unknown noise"
    else:
        word = _VERDICT_WORDS[k.kind]
    return word + (" (roofs moved)" if c.roofs_moved else "")


def _bound(c: Change, d: Diff) -> str:
    if c.movement is None:
        return "—"
    return cell(c.movement.text(d.names.get(c.machine, {})))


def _efficiency(c: Change) -> str:
    if c.status == "added":
        return fmt_percent(c.head_efficiency)
    if c.status == "removed":
        return fmt_percent(c.base_efficiency)
    return f"{fmt_percent(c.base_efficiency)} → {fmt_percent(c.head_efficiency)}"


def kernel_row(k: KernelChange, d: Diff, site_url: str | None) -> str:
    """One kernel's row; an added kernel has no base time, a removed one no head time,
    and neither a speedup."""
    c = k.change
    who = code(c.kernel, in_table=True) + (f" #{c.occurrence}" if c.occurrence > 1 else "")
    where = f"{_link(c.case, site_url)} / {code(c.variant, in_table=True)}"
    cells = [who, where, time(c.base_s), time(c.head_s), _speedup(c), bar(k), _verdict(k),
             _bound(c, d), _efficiency(c)]  # fmt: skip
    return "| " + " | ".join(cells) + " |"


def variant_row(c: Change, site_url: str | None) -> str:
    cells = [_link(c.case, site_url), code(c.variant, in_table=True), time(c.base_s),
             time(c.head_s), _speedup(c), c.verdict if c.status == "changed" else c.status,
             _efficiency(c)]  # fmt: skip
    return "| " + " | ".join(cells) + " |"


def stamp(d: Diff, base: Side, head: Side, opts: Options) -> str:
    """The line under the verdict: commits, threshold, versions."""
    machines = ", ".join(
        f"{code(m)} v{v} (library)" if v is not None else f"{code(m)} (the specs' own)"
        for m, v in d.machines
    )
    parts = [f"{base.shown()} → {head.shown()}", f"threshold {opts.threshold * 100:g}%",
             f"roofgen {opts.version}"]  # fmt: skip
    if machines:
        parts.append(f"machines: {machines}")
    return " · ".join(parts)


_MERMAID_LABEL = re.compile(r"[^A-Za-z0-9._/ -]")


def mermaid_label(text: str) -> str:
    """A label Mermaid reads as plain text: letters, digits, ``._/-`` and spaces only (no
    quote, bracket, ``%%`` directive or backtick that could end the block), 30 at most."""
    return _MERMAID_LABEL.sub("_", text)[:30]


def mermaid(ks: list[KernelChange], limit: int = 30) -> list[str]:
    """A Mermaid bar chart of the changed kernels' speedups (one series), or nothing."""
    shown = [k for k in ks if k.change.speedup is not None and k.change.status == "changed"]
    shown = shown[:limit]
    if not shown:
        return []
    values = [k.change.speedup.value for k in shown if k.change.speedup is not None]
    top = max(1.0, *values) * 1.1
    labels = ", ".join(f'"{mermaid_label(k.label)}"' for k in shown)
    return ["```mermaid", "xychart-beta", '  title "Speedup per kernel (base time / head time)"',
            f"  x-axis [{labels}]", f'  y-axis "speedup (x)" 0 --> {top:.2f}',
            f"  bar [{', '.join(f'{v:.3f}' for v in values)}]", "```", ""]  # fmt: skip


def markdown(d: Diff, base: Side, head: Side, opts: Options | None = None) -> str:
    """The comment (and job summary) for the change from ``base`` to ``head``."""
    opts = opts or Options()
    ks = kernels(d, opts.threshold)
    # The marker first (invisible once rendered), as bots find their comment by it.
    lines = [MARKER, f"**roofgen diff**: {verdict_line(d, opts.threshold)}", "",
             stamp(d, base, head, opts), ""]  # fmt: skip
    if opts.preview_url:
        lines += [f"Preview of the site: <{url(opts.preview_url)}>", ""]
    lines += gate_lines(opts)
    if ks:
        rows = [kernel_row(k, d, opts.site_url) for k in ks]
        header = (
            "| kernel | case / variant | base | head | speedup (interval) | change "
            "| verdict | bound by | efficiency |\n|---|---|---|---|---:|---|---|---|---|"
        )
        folded = len(rows) > OPEN_ROWS
        title = (f"<details><summary>Kernels ({len(rows)} changed)</summary>" if folded
                 else f"#### Kernels ({len(rows)} changed)")  # fmt: skip
        lines += _table(title, header, rows, lines, "kernels",
                        close="</details>" if folded else None)  # fmt: skip
    if opts.mermaid:
        lines += mermaid(ks)
    if d.cases_added or d.cases_removed:
        if d.cases_added:
            lines.append("New cases: " + ", ".join(_link(c, opts.site_url) for c in d.cases_added))
        if d.cases_removed:
            lines.append("Removed cases: " + ", ".join(code(c) for c in d.cases_removed))
        lines.append("")
    if d.roofs:
        rows = [f"| {code(r.machine, in_table=True)} | {cell(r.roof)} | {fmt_si(r.base, r.unit)} "
                f"| {fmt_si(r.head, r.unit)} |" for r in d.roofs]  # fmt: skip
        lines += _table("#### Roof changes (machines, not kernels)",
                        "| machine | roof | base | head |\n|---|---|---|---|",
                        rows, lines, "roof changes")  # fmt: skip
    if d.variants:
        lines += _table(f"<details><summary>Variants, each a whole step "
                        f"({len(d.variants)} changed)</summary>",
                        "| case | variant | base | head | speedup (interval) | verdict "
                        "| efficiency |\n|---|---|---|---|---:|---|---|",
                        [variant_row(c, opts.site_url) for c in d.variants], lines,
                        "variants", close="</details>")  # fmt: skip
    if not (ks or d.roofs or d.cases_added or d.cases_removed):
        lines += ["No kernel or roof changed.", ""]
    if opts.charts:
        lines += [f"Roofline charts of the changed kernels (base hollow, head filled): "
                  f"{code(opts.charts)}, in this job's files.", ""]  # fmt: skip
    lines.append(
        f"A kernel counts as faster or slower when it moved by more than the threshold "
        f"({opts.threshold * 100:g}%) and its timing intervals (interquartile range, else the "
        "confidence interval of the median, else min..max) do not overlap."
    )
    return _capped("\n".join(lines) + "\n")


def gate_lines(opts: Options) -> list[str]:
    """The gate's verdict and each reason in words (the ones allowed on the command line
    too, with the option that allowed them); without the gate, the changes of context."""
    if opts.gate is None:
        if not opts.context:
            return []
        return ["**Context changed** (the times are judged by other files than at base): "
                + "; ".join(cell(c.what) for c in opts.context), ""]  # fmt: skip
    failed = [r for r in opts.gate if not r.allowed]
    head = (f"**Gate (--fail-on-regression {opts.limit:g}%): "
            f"{'fails' if failed else 'passes'}**")  # fmt: skip
    if failed:
        head += f", {len(failed)} reason{'s' if len(failed) > 1 else ''}:"
    out = [head, ""]
    for r in opts.gate:
        allow = ""
        if r.allow:
            allow = f"; allowed by {code(r.allow)}" if r.allowed else f"; to allow: {code(r.allow)}"
        out.append(f"- {code(r.subject)}: {cell(r.what)}{allow}")
    return out + ([""] if opts.gate else [])


def _table(title: str, header: str, rows: list[str], above: list[str], what: str,
           close: str | None = None) -> list[str]:  # fmt: skip
    """A titled table of as many ``rows`` as fit in what the comment has left after
    ``above``, and a line saying how many were left out."""
    budget = BUDGET - sum(len(line) + 1 for line in above) - len(title) - len(header) - 1200
    kept, omitted = _fit(rows, budget)
    out = [title, "", header, *kept]
    if omitted:
        out.append(f"\n{omitted} more {what} omitted to fit a comment: see the JSON report.")
    out.append("")
    if close is not None:
        out += [close, ""]
    return out


def _capped(text: str) -> str:
    """``text`` cut at a line to the budget with a line saying so:
    the tables fit already, but long quoted names could still overflow."""
    if len(text) <= BUDGET:
        return text
    cut = text.rfind("\n", 0, BUDGET - 200) + 1
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
