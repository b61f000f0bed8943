"""``roofgen diff`` as one library call: both sides found and checked under the base's
policy, the diff, the changes of context, the gate's reasons and the static charts
(:func:`compare`), and the report in each format (:meth:`Comparison.report`)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from roofgen.config import Settings
from roofgen.report.jsontext import dumps
from roofgen.review.charts import ChartsUnavailable, Roofs, changed_charts
from roofgen.review.comment import Options, Side, markdown
from roofgen.review.diff import Diff, diff
from roofgen.review.gate import ContextChange, Policy, Reason, failures, reasons
from roofgen.review.report import json_doc, text
from roofgen.review.revision import context_changes
from roofgen.review.sides import SideError, check_side, shown_rev, source

__all__ = ["Comparison", "SideError", "compare"]

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Comparison:
    """What ``roofgen diff`` found: the diff of two checked sides, the changes of
    settings, rules and machine files, the gate's reasons (None without a limit) and the
    static charts by file (empty when none were asked for or none could be drawn)."""

    diff: Diff
    base: Side
    head: Side
    context: tuple[ContextChange, ...]
    gate: tuple[Reason, ...] | None
    threshold: float
    limit: float | None  # --fail-on-regression's percent
    charts: dict[Path, str]
    charts_unavailable: bool = False

    def report(
        self,
        fmt: str,
        *,
        site_url: str | None = None,
        preview_url: str | None = None,
        mermaid: bool = False,
        charts_link: str | None = None,
    ) -> str:
        """The report as ``markdown`` (a pull-request comment: ``charts_link`` names the
        charts' folder as the reader sees it), ``json`` or ``text``."""
        d, base, head = self.diff, self.base, self.head
        if fmt == "markdown":
            opts = Options(
                self.threshold,
                site_url,
                preview_url,
                mermaid,
                charts_link,
                context=self.context,
                gate=self.gate,
                limit=self.limit,
            )
            return markdown(d, base, head, opts)
        if fmt == "json":
            doc = json_doc(d, base, head, self.threshold, self.context, self.gate, self.limit)
            return dumps(doc, 2) + "\n"
        return text(d, base, head, self.threshold, self.context, self.gate)

    def failures(self) -> list[str]:
        """One line per reason that fails the gate, naming what allows it if intended."""
        lines = []
        for r in failures(list(self.gate or ())):
            allow = f" (if intended, pass {r.allow})" if r.allow else ""
            at, subject = shown_rev(self.head.name), shown_rev(r.subject)
            lines.append(f"the gate fails at {at}: {subject}: {r.what}{allow}")
        return lines


def compare(
    base: str,
    head: str,
    settings: Settings,
    *,
    threshold_pct: float | None = None,
    fail_pct: float | None = None,
    allow_removed: frozenset[str] = frozenset(),
    allow_noise: frozenset[str] = frozenset(),
    allow_context: frozenset[str] = frozenset(),
    charts: Path | None = None,
    roofs: Roofs | None = None,
    progress: Progress | None = None,
) -> Comparison:
    """Compare the specs of ``base`` and ``head`` (folders or ``git:REV``; ``settings``:
    the working tree's). Both sides are judged by the base's thresholds and rules, never
    the head's; a kernel counts as changed beyond ``threshold_pct`` (default
    ``fail_pct``, else 5); with ``fail_pct`` the gate's reasons are found, the
    ``allow_*`` names excusing theirs. With ``charts`` and ``roofs``, the SVGs of the
    changed cases are drawn for that folder. Raises :class:`SideError` for a side that
    cannot be read or whose specs are invalid."""
    pct = threshold_pct if threshold_pct is not None else fail_pct if fail_pct is not None else 5
    with tempfile.TemporaryDirectory(prefix="roofgen-diff-") as folder:
        scratch = Path(folder)
        base_src = source(base, settings, scratch / "base")
        head_src = source(head, settings, scratch / "head")
        policy = base_src.settings  # never the head's
        base_specs, base_analysis = check_side(base_src, policy, progress)
        head_specs, head_analysis = check_side(head_src, policy, progress)
    d = diff(base_specs, base_analysis, head_specs, head_analysis)
    context = context_changes(base_src.context, head_src.context, d.machines_changed)
    allowed = Policy((fail_pct or 0) / 100.0, allow_removed, allow_noise, allow_context)
    gate = None if fail_pct is None else tuple(reasons(d, context, allowed))
    svgs: dict[Path, str] = {}
    unavailable = False
    if charts is not None and roofs is not None:
        try:
            svgs = changed_charts(d, head_specs, head_analysis, base_analysis, charts, roofs)
        except ChartsUnavailable:
            unavailable = True
    return Comparison(
        d, base_src.side, head_src.side, context, gate, pct / 100.0, fail_pct, svgs, unavailable
    )
