"""Before and after on the case pages: speedups against the baseline with their noise,
the movement on the chart, the end-to-end projection by Amdahl's law, and the shape
sweeps. Numbers are formatted here; the template only lays them out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from roofgen.analysis.analyse import CaseResult, LaunchResult, VariantResult
from roofgen.analysis.compare import EndToEnd, LaunchComparison, Movement, Speedup
from roofgen.units import fmt_percent, fmt_ratio, fmt_si, fmt_time

__all__ = [
    "BeforeAfter",
    "ProjectionRow",
    "SpeedupRow",
    "SweepRow",
    "SweepTable",
    "before_after",
    "fmt_speedup",
    "sweep_tables",
]

NamesByMachine = Mapping[str, Mapping[str, str]]


@dataclass(frozen=True)
class SpeedupRow:
    variant: str
    what: str  # "whole variant" or the kernel
    before: str
    after: str
    speedup: str  # "4.97x (4.95x to 5.00x)"
    noise: str  # significant, within noise, unknown noise
    movement: str  # "from HBM3-bound to Tensor cores-bound"
    efficiency: str  # "84% -> 78%"
    intensity: str  # at device memory


@dataclass(frozen=True)
class ProjectionRow:
    variant: str
    share: str  # the baseline kernels' share of the baseline's end-to-end time
    terms: str  # "decode 20% at 2.05x; ..." or "all kernels 36% at 4.97x"
    projected: str
    measured: str
    limit: str
    reason: str


@dataclass(frozen=True)
class SweepRow:
    label: str
    weight: str
    time: str
    flop_rate: str
    bound: str
    binding: str
    efficiency: str
    speedup: str
    noise: str


@dataclass(frozen=True)
class SweepTable:
    variant: str
    kernel: str
    rows: tuple[SweepRow, ...]
    weighted: str  # the time-weighted speedup against the baseline, "" without one


@dataclass(frozen=True)
class BeforeAfter:
    baseline: str
    rows: tuple[SpeedupRow, ...]
    projections: tuple[ProjectionRow, ...]
    tolerance: str


def fmt_speedup(s: Speedup | None) -> str:
    if s is None:
        return "n/a"
    if s.low is None or s.high is None:
        return fmt_ratio(s.value)
    return f"{fmt_ratio(s.value)} ({fmt_ratio(s.low)} to {fmt_ratio(s.high)})"


def _arrow(a: float | None, b: float | None, fmt: str) -> str:
    def one(x: float | None) -> str:
        if fmt == "percent":
            return fmt_percent(x)
        return fmt_si(x, "FLOP/B")

    if a is None and b is None:
        return "n/a"
    return f"{one(a)} → {one(b)}"


def _row(variant: str, what: str, before: float, after: float, s: Speedup, m: Movement,
         names: Mapping[str, str]) -> SpeedupRow:  # fmt: skip
    return SpeedupRow(
        variant=variant,
        what=what,
        before=fmt_time(before),
        after=fmt_time(after),
        speedup=fmt_speedup(s),
        noise=s.noise,
        movement=m.text(names),
        efficiency=_arrow(m.efficiency_from, m.efficiency_to, "percent"),
        intensity=_arrow(m.intensity_from, m.intensity_to, "intensity"),
    )


def _launch_rows(
    base: VariantResult, new: VariantResult, launches: tuple[LaunchComparison | None, ...],
    names: Mapping[str, str],
) -> list[SpeedupRow]:  # fmt: skip
    rows = []
    for x in launches:
        if x is None:
            continue
        a, b = base.launches[x.base_index], new.launches[x.index]
        rows.append(_row(new.variant, x.kernel, a.time_s, b.time_s, x.speedup, x.movement, names))
    return rows


def _projection(e: EndToEnd) -> ProjectionRow:
    terms = "; ".join(
        f"{t.kernel} {fmt_percent(t.share)} at {fmt_ratio(t.speedup)}" for t in e.terms
    )
    return ProjectionRow(
        variant=e.variant,
        share=fmt_percent(e.kernel_share),
        terms=terms or "n/a",
        projected=fmt_ratio(e.projected),
        measured=fmt_ratio(e.measured),
        limit=fmt_ratio(e.limit),
        reason=e.reason,
    )


def before_after(case: CaseResult, names: NamesByMachine) -> BeforeAfter | None:
    """The before/after tables of a case with several variants (None with one)."""
    if len(case.variants) < 2:
        return None
    comparison = case.comparison
    base = case.variants[0]
    rows: list[SpeedupRow] = []
    by_id = {x.variant: x for x in case.variants}
    for vc in comparison.variants:
        v = by_id[vc.variant]
        shown = names.get(v.machine, {})
        rows.append(
            _row(v.variant, "whole variant", base.time_s, v.time_s, vc.speedup, vc.movement, shown)
        )
        rows += _launch_rows(base, v, vc.launches, shown)
    return BeforeAfter(
        baseline=base.variant,
        rows=tuple(rows),
        projections=tuple(_projection(e) for e in comparison.end_to_end),
        tolerance=f"{comparison.tolerance:.0%}",
    )


def _sweep_rows(
    r: LaunchResult, cmp: LaunchComparison | None, names: Mapping[str, str]
) -> tuple[SweepRow, ...]:
    speedups = {p.label: p.speedup for p in cmp.points} if cmp is not None else {}
    rows = []
    for p in r.sweep:
        s = speedups.get(p.label)
        x = p.result
        rows.append(
            SweepRow(
                label=p.label,
                weight=fmt_percent(p.weight),
                time=fmt_time(x.time_s),
                flop_rate=fmt_si(x.achieved_flop_per_s, "FLOP/s"),
                bound=fmt_time(x.lower_bound_s),
                binding=names.get(x.binding, x.binding) if x.binding else "n/a",
                efficiency=fmt_percent(x.efficiency),
                speedup=fmt_speedup(s),
                noise=s.noise if s is not None else "n/a",
            )
        )
    return tuple(rows)


def sweep_tables(case: CaseResult, names: NamesByMachine) -> tuple[SweepTable, ...]:
    """One table per launch measured over a shape sweep."""
    comparison = case.comparison
    out = []
    for v in case.variants:
        for r in v.launches:
            if not r.sweep:
                continue
            cmp = comparison.launch(v.variant, r.index)
            weighted = (
                fmt_ratio(cmp.weighted_speedup)
                if cmp is not None and cmp.weighted_speedup is not None
                else ""
            )
            rows = _sweep_rows(r, cmp, names.get(v.machine, {}))
            out.append(SweepTable(v.variant, r.kernel, rows, weighted))
    return tuple(out)
