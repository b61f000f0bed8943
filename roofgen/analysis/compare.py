"""Before and after: speedups against the first variant, their noise, the movement on
the chart, and the end-to-end projection by Amdahl's law. Pure.

* A **speedup** is the baseline's time over the variant's. It is **significant** only
  when the two timing intervals do not overlap (interquartile range, else the
  confidence interval, else a mean plus and minus one standard deviation, else
  min..max); without any interval the noise
  is unknown. The speedup's own interval is base.low / new.high .. base.high / new.low.
* **Amdahl's law** projects the end-to-end speedup from the baseline's shares: launch
  i takes the share ``s_i`` of the baseline's end-to-end time and gets faster by
  ``k_i``, so the whole gets faster by ``1 / (1 - sum s_i + sum s_i / k_i)``.
* A **sweep's** speedup is time-weighted: the ratio of the weighted total times,
  ``sum w_j t_base_j / sum w_j t_new_j`` with the baseline's production weights. That
  is the harmonic mean of the per-shape speedups weighted by each shape's share of the
  baseline time (Amdahl over shapes); an arithmetic mean of speedups would count a
  fast cheap shape as much as a slow expensive one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Literal

from roofgen.model import Case, Launch, Machine, TimeStats, Variant
from roofgen.units import fmt_percent, fmt_ratio, fmt_time

if TYPE_CHECKING:  # annotations only: the case result keeps its comparison (one way)
    from roofgen.analysis.analyse import CaseResult, LaunchResult, VariantResult

__all__ = [
    "E2E_TOLERANCE",
    "AmdahlTerm",
    "CaseComparison",
    "EndToEnd",
    "Interval",
    "LaunchComparison",
    "Movement",
    "PointComparison",
    "Speedup",
    "VariantComparison",
    "amdahl",
    "compare_case",
    "interval",
    "speedup",
]

#: Measured and projected end-to-end speedups within this fraction agree.
E2E_TOLERANCE = 0.02
Noise = Literal["significant", "within noise", "unknown noise"]
_SOURCES = (
    ("q1_s", "q3_s", "q1..q3"),
    ("ci_low_s", "ci_high_s", "ci_low..ci_high"),
    ("min_s", "max_s", "min..max"),
)


@dataclass(frozen=True)
class Interval:
    """Where the time of one call lies (s), and which statistics say so."""

    low_s: float
    high_s: float
    source: str  # "q1..q3", "ci_low..ci_high", "mean-std..mean+std" or "min..max"


def interval(t: TimeStats) -> Interval | None:
    """The timing interval, in order of preference: q1..q3, ci_low..ci_high, a mean
    plus and minus one standard deviation, min..max."""
    for low, high, source in _SOURCES:
        lo, hi = getattr(t, low), getattr(t, high)
        if lo is not None and hi is not None:
            return Interval(lo, hi, source)
        if source == "ci_low..ci_high" and t.statistic == "mean" and t.std_s is not None:
            return Interval(t.value_s - t.std_s, t.value_s + t.std_s, "mean-std..mean+std")
    return None


def _scaled(iv: Interval | None, factor: float) -> Interval | None:
    return None if iv is None else Interval(iv.low_s * factor, iv.high_s * factor, iv.source)


def _summed(parts: Sequence[Interval | None]) -> Interval | None:
    """The interval of a sum of times (launches in order): the sum of the bounds."""
    if not parts or any(p is None for p in parts):
        return None
    known = [p for p in parts if p is not None]
    sources = {p.source for p in known}
    source = sources.pop() if len(sources) == 1 else "mixed"
    return Interval(sum(p.low_s for p in known), sum(p.high_s for p in known), source)


@dataclass(frozen=True)
class Speedup:
    """The baseline's time over this time, with its interval and its noise verdict."""

    value: float
    low: float | None
    high: float | None
    noise: Noise
    source: str | None  # the intervals compared

    @property
    def significant(self) -> bool | None:
        """True or False against the noise; None when the noise is unknown."""
        return None if self.noise == "unknown noise" else self.noise == "significant"


def speedup(
    base_s: float, new_s: float, base: Interval | None = None, new: Interval | None = None
) -> Speedup:
    """``base_s / new_s``, significant only when the two intervals do not overlap."""
    value = base_s / new_s
    if base is None or new is None:
        return Speedup(value, None, None, "unknown noise", None)
    low, high = base.low_s / new.high_s, base.high_s / new.low_s
    apart = new.high_s < base.low_s or new.low_s > base.high_s
    source = base.source if base.source == new.source else f"{base.source} / {new.source}"
    return Speedup(value, low, high, "significant" if apart else "within noise", source)


def amdahl(shares: Sequence[float], speedups: Sequence[float]) -> float:
    """End-to-end speedup when parts with ``shares`` of the time get ``speedups``:
    ``1 / (1 - sum s_i + sum s_i / k_i)``."""
    kept = 1.0 - sum(shares)
    return 1.0 / (kept + sum(s / k for s, k in zip(shares, speedups, strict=True)))


@dataclass(frozen=True)
class Movement:
    """How a launch or variant moved on the chart between the baseline and a variant."""

    binding_from: str | None
    binding_to: str | None
    class_from: str
    class_to: str
    efficiency_from: float | None
    efficiency_to: float | None
    intensity_from: float | None  # FLOP/B at device memory
    intensity_to: float | None

    @property
    def binding_changed(self) -> bool:
        return self.binding_from != self.binding_to

    def text(self, names: Mapping[str, str] | None = None) -> str:
        """``from HBM-bound to L2-bound`` (or ``still HBM-bound``)."""
        names = names or {}

        def bound(resource: str | None, klass: str) -> str:
            if resource is None or klass == "insufficient-data":
                return "insufficient data"
            name = names.get(resource, resource)
            return (
                f"below all roofs (nearest {name})" if klass == "below-roofs" else f"{name}-bound"
            )

        before, after = (
            bound(self.binding_from, self.class_from),
            bound(self.binding_to, self.class_to),
        )
        return f"still {after}" if before == after else f"from {before} to {after}"


@dataclass(frozen=True)
class PointComparison:
    label: str
    speedup: Speedup


@dataclass(frozen=True)
class LaunchComparison:
    """A variant's launch against the baseline's launch of the same kernel (by order)."""

    kernel: str
    index: int
    base_index: int
    speedup: Speedup  # per call
    movement: Movement
    points: tuple[PointComparison, ...] = ()  # per shape of a sweep, matched by label
    weighted_speedup: float | None = None  # time-weighted over the sweep's shapes


@dataclass(frozen=True)
class AmdahlTerm:
    kernel: str  # the kernel, or "all kernels" when launches do not match one to one
    index: int | None
    share: float  # of the baseline's end-to-end time
    speedup: float


@dataclass(frozen=True)
class EndToEnd:
    """Measured and projected end-to-end speedup of one variant, and why they differ."""

    variant: str
    measured: float
    projected: float | None
    kernel_share: float  # the baseline kernels' share of the baseline's end-to-end time
    limit: float | None  # the most any speedup of these kernels can give: 1 / (1 - share)
    terms: tuple[AmdahlTerm, ...]
    agree: bool | None
    reason: str


@dataclass(frozen=True)
class VariantComparison:
    variant: str
    baseline: str
    speedup: Speedup
    movement: Movement
    launches: tuple[LaunchComparison | None, ...]  # one per launch of the variant


@dataclass(frozen=True)
class CaseComparison:
    case: str
    baseline: str
    variants: tuple[VariantComparison, ...]  # every variant after the baseline
    end_to_end: tuple[EndToEnd, ...]
    tolerance: float = E2E_TOLERANCE  # measured and projected end-to-end speedups agree within
    # (variant, kernel) -> the kernel's time per step in the first variant that launches it
    # over its time in this variant (1 in that first variant)
    kernel_speedups: Mapping[tuple[str, str], float] = field(default_factory=dict)

    def variant(self, variant_id: str) -> VariantComparison | None:
        return self._by_id.get(variant_id)

    @cached_property
    def _by_id(self) -> dict[str, VariantComparison]:
        """Each variant by id, made once: a lookup per variant stays linear in a case."""
        return {v.variant: v for v in self.variants}

    def launch(self, variant_id: str, index: int) -> LaunchComparison | None:
        v = self.variant(variant_id)
        return v.launches[index] if v is not None and index < len(v.launches) else None


# --------------------------------------------------------------------------- building


def _device_intensity(r: LaunchResult, machine: Machine | None) -> float | None:
    device = _device_level(machine)
    return None if device is None else r.intensity_flop_per_byte.get(device)


def _device_level(machine: Machine | None) -> str | None:
    level = None if machine is None else machine.device_level
    return None if level is None else level.id


def _variant_intensity(v: VariantResult, machine: Machine | None) -> float | None:
    device = _device_level(machine)
    if device is None or any(r.flop is None or device not in r.bytes_b for r in v.launches):
        return None
    moved = sum(r.calls * r.bytes_b[device] for r in v.launches)
    work = sum(r.calls * (r.flop or 0.0) for r in v.launches)
    return work / moved if moved else None


def _launch_movement(a: LaunchResult, b: LaunchResult, machine: Machine | None) -> Movement:
    return Movement(
        a.binding,
        b.binding,
        a.klass,
        b.klass,
        a.efficiency,
        b.efficiency,
        _device_intensity(a, machine),
        _device_intensity(b, machine),
    )


def _points(base: Launch, new: Launch) -> tuple[tuple[PointComparison, ...], float | None]:
    from roofgen.operators.sweep import label, normalised_weights

    if not base.sweep or not new.sweep:
        return (), None
    weights = dict(zip((label(p) for p in base.sweep), normalised_weights(base.sweep), strict=True))
    before = {label(p): p for p in base.sweep}
    out = []
    total_base = total_new = 0.0
    for point in new.sweep:
        name = label(point)
        old = before.get(name)
        if old is None:
            continue
        tb, tn = old.measurement.time, point.measurement.time
        out.append(
            PointComparison(name, speedup(tb.value_s, tn.value_s, interval(tb), interval(tn)))
        )
        total_base += weights[name] * tb.value_s
        total_new += weights[name] * tn.value_s
    weighted = total_base / total_new if out and total_new > 0 else None
    return tuple(out), weighted


def _launches(
    by_id: Mapping[str, Variant], base: VariantResult, new: VariantResult, machine: Machine | None
) -> tuple[LaunchComparison | None, ...]:
    base_launches = by_id[base.variant].launches
    new_launches = by_id[new.variant].launches
    where = {(r.kernel, r.occurrence): i for i, r in enumerate(base.launches)}
    out: list[LaunchComparison | None] = []
    for j, key in enumerate((r.kernel, r.occurrence) for r in new.launches):
        i = where.get(key)
        if i is None:
            out.append(None)
            continue
        a, b = base.launches[i], new.launches[j]
        ta, tb = base_launches[i].measurement.time, new_launches[j].measurement.time
        points, weighted = _points(base_launches[i], new_launches[j])
        out.append(
            LaunchComparison(
                kernel=key[0],
                index=j,
                base_index=i,
                speedup=speedup(a.time_s, b.time_s, interval(ta), interval(tb)),
                movement=_launch_movement(a, b, machine),
                points=points,
                weighted_speedup=weighted,
            )
        )
    return tuple(out)


def _variant_interval(by_id: Mapping[str, Variant], v: VariantResult) -> Interval | None:
    launches = by_id[v.variant].launches
    return _summed([_scaled(interval(x.measurement.time), x.calls) for x in launches])


def _variant(
    by_id: Mapping[str, Variant],
    base: VariantResult,
    new: VariantResult,
    machines: Mapping[str, Machine],
) -> VariantComparison:
    machine = machines.get(new.machine)
    return VariantComparison(
        variant=new.variant,
        baseline=base.variant,
        speedup=speedup(
            base.time_s, new.time_s, _variant_interval(by_id, base), _variant_interval(by_id, new)
        ),
        movement=Movement(
            base.binding,
            new.binding,
            base.klass,
            new.klass,
            base.efficiency,
            new.efficiency,
            _variant_intensity(base, machines.get(base.machine)),
            _variant_intensity(new, machine),
        ),
        launches=_launches(by_id, base, new, machine),
    )


def _terms(
    base: VariantResult, new: VariantResult, comparison: VariantComparison, e2e_s: float
) -> tuple[AmdahlTerm, ...]:
    """One term per launch when every launch has its match in the baseline, with the same
    calls; none otherwise (then the kernels count as one part)."""
    matched = [x for x in comparison.launches if x is not None]
    if len(matched) != len(comparison.launches) or sorted(x.base_index for x in matched) != list(
        range(len(base.launches))
    ):
        return ()
    if any(new.launches[x.index].calls != base.launches[x.base_index].calls for x in matched):
        return ()
    return tuple(
        AmdahlTerm(
            x.kernel,
            x.index,
            base.launches[x.base_index].calls * base.launches[x.base_index].time_s / e2e_s,
            x.speedup.value,
        )
        for x in matched
    )


def _end_to_end(
    case: Case, base: VariantResult, new: VariantResult, comparison: VariantComparison
) -> EndToEnd | None:
    e2e_base, e2e_new = case.end_to_end_s.get(base.variant), case.end_to_end_s.get(new.variant)
    if not e2e_base or not e2e_new:
        return None
    measured = e2e_base / e2e_new
    share = base.time_s / e2e_base
    if share >= 1.0 or new.time_s >= e2e_new:
        return EndToEnd(
            new.variant,
            measured,
            None,
            share,
            None,
            (),
            None,
            "no projection: the kernels take as long as the end-to-end time or longer, "
            "so kernel and end-to-end timings are mixed (see the measurement quality)",
        )
    terms = _terms(base, new, comparison, e2e_base)
    if not terms:
        terms = (AmdahlTerm("all kernels", None, share, base.time_s / new.time_s),)
    projected = amdahl([t.share for t in terms], [t.speedup for t in terms])
    limit = 1.0 / (1.0 - share)
    agree = abs(measured / projected - 1.0) <= E2E_TOLERANCE
    return EndToEnd(
        new.variant,
        measured,
        projected,
        share,
        limit,
        terms,
        agree,
        _reason(agree, measured, projected, share, limit, e2e_base, e2e_new, base, new),
    )


def _reason(
    agree: bool,
    measured: float,
    projected: float,
    share: float,
    limit: float,
    e2e_base: float,
    e2e_new: float,
    base: VariantResult,
    new: VariantResult,
) -> str:
    small = (
        f"; the kernels were {fmt_percent(share)} of the baseline's end-to-end time, so even "
        f"kernels that took no time would give at most {fmt_ratio(limit)}"
        if share < 0.5
        else ""
    )
    if agree:
        return (
            f"measured {fmt_ratio(measured)} agrees with the projected {fmt_ratio(projected)} "
            f"(within {E2E_TOLERANCE:.0%}){small}"
        )
    other_base, other_new = e2e_base - base.time_s, e2e_new - new.time_s
    if measured < projected:
        return (
            f"measured {fmt_ratio(measured)} is below the projected {fmt_ratio(projected)}: "
            f"the time outside these kernels grew from {fmt_time(other_base)} to "
            f"{fmt_time(other_new)}, a new bottleneck or added preparation cost (layout "
            f"conversion, extra copies, synchronisation){small}"
        )
    return (
        f"measured {fmt_ratio(measured)} is above the projected {fmt_ratio(projected)}: the "
        f"time outside these kernels shrank from {fmt_time(other_base)} to "
        f"{fmt_time(other_new)}: other changes rode along, or the kernels run differently "
        f"inside the workload (warm caches, overlap){small}"
    )


def compare_case(case: CaseResult, machines: Mapping[str, Machine] | None = None) -> CaseComparison:
    """Every variant after the first against the first (the baseline)."""
    machines = machines or {}
    base = case.variants[0]
    by_id = {v.id: v for v in case.case.variants}
    variants = tuple(_variant(by_id, base, v, machines) for v in case.variants[1:])
    ends = []
    for v, comparison in zip(case.variants[1:], variants, strict=True):
        end = _end_to_end(case.case, base, v, comparison)
        if end is not None:
            ends.append(end)
    return CaseComparison(
        case.case.id, base.variant, variants, tuple(ends), kernel_speedups=_kernel_speedups(case)
    )


def _kernel_speedups(case: CaseResult) -> dict[tuple[str, str], float]:
    """Each kernel's speedup in each variant that launches it, against the first variant
    that does (the case's baseline, unless the kernel is new in a later variant)."""
    first: dict[str, float] = {}
    out: dict[tuple[str, str], float] = {}
    for v in case.variants:
        for kernel, time_s in v.kernel_time_s.items():
            out[(v.variant, kernel)] = first.setdefault(kernel, time_s) / time_s
    return out
