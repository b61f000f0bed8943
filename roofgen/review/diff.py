"""Compare two sets of specs, as a pull request changes them. Pure: no I/O.

Launches are paired by (case, variant, kernel, occurrence of that kernel in the
variant). A speedup is the base time over the head time; it counts as faster or
as a regression only when it clears the measurement noise (the two timing
intervals do not overlap: see :mod:`roofgen.analysis.compare`); otherwise it is
within noise, or of unknown noise when either side has no interval. Roof changes
of a machine are reported apart from kernel changes: a launch whose time did not
move but whose bound did moved because its roofs moved.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from roofgen.analysis.analyse import Analysis, LaunchResult, VariantResult
from roofgen.analysis.compare import Interval, Movement, Speedup, interval, speedup
from roofgen.model import Machine, Roof, Specs
from roofgen.resources import resource_names
from roofgen.spec.library import DISPLAY_ROOT as LIBRARY_ROOT

Status = Literal["changed", "added", "removed"]
Verdict = Literal["faster", "regression", "within noise", "unknown noise", "unchanged"]


@dataclass(frozen=True)
class Change:
    """One launch or one variant, before and after."""

    case: str
    variant: str
    kernel: str  # "" for a variant
    occurrence: int  # nth launch of this kernel in the variant (1-based); 0 for a variant
    status: Status
    base_s: float | None
    head_s: float | None
    speedup: Speedup | None
    movement: Movement | None
    base_efficiency: float | None
    head_efficiency: float | None
    roofs_moved: bool  # the bound changed while the time did not
    machine: str = ""  # the machine it ran on (at head; at base for a removed one)
    base_interval: Interval | None = None  # the timing intervals compared
    head_interval: Interval | None = None

    @property
    def verdict(self) -> Verdict:
        s = self.speedup
        if s is None:
            return "unchanged"
        if s.noise == "unknown noise":
            return "unknown noise"
        if s.noise == "within noise":
            return "within noise"
        return "faster" if s.value > 1 else "regression"

    def slowdown(self) -> float:
        """How much slower the head is, as a fraction (0.1 for 10% slower)."""
        if self.base_s is None or self.head_s is None:
            return 0.0
        return self.head_s / self.base_s - 1.0


@dataclass(frozen=True)
class RoofChange:
    machine: str
    roof: str  # e.g. "compute.tensor.bf16 (measured)", "memory.hbm (datasheet)"
    base: float | None
    head: float | None
    unit: str


@dataclass(frozen=True)
class Diff:
    variants: tuple[Change, ...]
    launches: tuple[Change, ...]
    roofs: tuple[RoofChange, ...]
    cases_added: tuple[str, ...]
    cases_removed: tuple[str, ...]
    #: Display names of each machine's resources (``memory.hbm`` -> ``HBM2``), head's
    #: where a machine is on both sides.
    names: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: Kernel display names by (case, kernel id), head's where on both sides.
    kernel_names: Mapping[tuple[str, str], str] = field(default_factory=dict)
    #: The machines the changes ran on: (id, library version or None for a team's file).
    machines: tuple[tuple[str, int | None], ...] = ()
    #: Machines that a case on both sides runs on and whose file differs (or is missing
    #: on one side): the roofs the times are judged against changed.
    machines_changed: tuple[str, ...] = ()

    def counts(self) -> dict[str, int]:
        """Verdicts over the changed variants (the unit a reviewer reads)."""
        out = {"faster": 0, "within noise": 0, "regression": 0, "unknown noise": 0}
        for change in self.variants:
            if change.status == "changed" and change.verdict in out:
                out[change.verdict] += 1
        return out

    def regressions(self, threshold: float = 0.0) -> list[Change]:
        """Significant regressions slower than ``threshold`` (a fraction)."""
        return [
            c
            for c in (*self.variants, *self.launches)
            if c.verdict == "regression" and c.slowdown() > threshold
        ]


def _variant_interval(
    v: VariantResult, launches: dict[tuple[str, int], Interval | None]
) -> Interval | None:
    parts = []
    for r, key in zip(v.launches, _keys(v), strict=True):
        iv = launches.get(key)
        if iv is None:
            return None
        parts.append((r.calls, iv))
    return Interval(
        sum(c * iv.low_s for c, iv in parts), sum(c * iv.high_s for c, iv in parts), "summed"
    )


def _keys(v: VariantResult) -> list[tuple[str, int]]:
    return [(r.kernel, r.occurrence) for r in v.launches]


def _movement(a: LaunchResult | VariantResult, b: LaunchResult | VariantResult) -> Movement:
    return Movement(a.binding, b.binding, a.klass, b.klass, a.efficiency, b.efficiency, None, None)


def _intervals(specs: Specs) -> dict[tuple[str, str, str, int], Interval | None]:
    """Timing interval of every launch, by (case, variant, kernel, occurrence)."""
    out: dict[tuple[str, str, str, int], Interval | None] = {}
    for case in specs.cases:
        for variant in case.variants:
            seen: dict[str, int] = {}
            for launch in variant.launches:
                seen[launch.kernel] = seen.get(launch.kernel, 0) + 1
                key = (case.id, variant.id, launch.kernel, seen[launch.kernel])
                out[key] = interval(launch.measurement.time)
    return out


def _index(analysis: Analysis) -> dict[tuple[str, str], VariantResult]:
    return {(c.case.id, v.variant): v for c in analysis.cases for v in c.variants}


def _same(a: LaunchResult, b: LaunchResult) -> bool:
    return a.time_s == b.time_s and a.bound_s == b.bound_s and a.binding == b.binding


def diff(base: Specs, base_analysis: Analysis, head: Specs, head_analysis: Analysis) -> Diff:
    """What changed from ``base`` to ``head``."""
    base_iv, head_iv = _intervals(base), _intervals(head)
    base_v, head_v = _index(base_analysis), _index(head_analysis)
    variants: list[Change] = []
    launches: list[Change] = []
    for key in sorted(set(base_v) | set(head_v)):
        case_id, variant_id = key
        a, b = base_v.get(key), head_v.get(key)
        if a is None or b is None:
            kept = a or b
            assert kept is not None
            status: Status = "added" if a is None else "removed"
            variants.append(_lone(case_id, variant_id, "", 0, status, kept))
            continue
        changed = list(_launch_changes(case_id, variant_id, a, b, base_iv, head_iv))
        launches += changed
        if not changed:
            continue
        a_iv = _variant_interval(a, {k[2:]: v for k, v in base_iv.items() if k[:2] == key})
        b_iv = _variant_interval(b, {k[2:]: v for k, v in head_iv.items() if k[:2] == key})
        variants.append(
            Change(
                case_id,
                variant_id,
                "",
                0,
                "changed",
                a.time_s,
                b.time_s,
                speedup(a.time_s, b.time_s, a_iv, b_iv),
                _movement(a, b),
                a.efficiency,
                b.efficiency,
                a.time_s == b.time_s and a.lower_bound_s != b.lower_bound_s,
                b.machine,
                a_iv,
                b_iv,
            )  # fmt: skip
        )
    base_cases = {c.id for c in base.cases}
    head_cases = {c.id for c in head.cases}
    machines = base.machines | head.machines
    kernel_names = {(c.id, k.id): k.name for specs in (base, head) for c in specs.cases
                    for k in c.kernels}  # fmt: skip
    used = sorted({c.machine for c in (*variants, *launches) if c.machine in machines})
    return Diff(
        tuple(variants),
        tuple(launches),
        tuple(roof_changes(base.machines, head.machines)),
        tuple(sorted(head_cases - base_cases)),
        tuple(sorted(base_cases - head_cases)),
        {ident: resource_names(m) for ident, m in machines.items()},
        kernel_names,
        tuple((m, _library_version(machines[m])) for m in used),
        machine_changes(base, base_analysis, head, head_analysis),
    )


def machine_changes(
    base: Specs, base_analysis: Analysis, head: Specs, head_analysis: Analysis
) -> tuple[str, ...]:
    """The machines a case present on both sides runs on (on either side) whose content
    differs between the sides, or that one side lacks; where the file lies is no
    change (a moved specs folder moves it)."""
    both = {c.case.id for c in base_analysis.cases} & {c.case.id for c in head_analysis.cases}
    used = {v.machine for analysis in (base_analysis, head_analysis) for c in analysis.cases
            if c.case.id in both for v in c.variants}  # fmt: skip

    def content(m: Machine | None) -> Machine | None:
        return None if m is None else replace(m, file="")

    changed = (m for m in used if content(base.machines.get(m)) != content(head.machines.get(m)))
    return tuple(sorted(changed))


def _library_version(machine: Machine) -> int | None:
    """The version of a machine from roofgen's library; None for a team's own file."""
    return machine.version if machine.file.startswith(LIBRARY_ROOT + "/") else None


def _lone(
    case: str, variant: str, kernel: str, n: int, status: Status, r: LaunchResult | VariantResult
) -> Change:
    t = r.time_s
    eff = r.efficiency
    base_s, head_s = (None, t) if status == "added" else (t, None)
    base_e, head_e = (None, eff) if status == "added" else (eff, None)
    return Change(
        case,
        variant,
        kernel,
        n,
        status,
        base_s,
        head_s,
        None,
        None,
        base_e,
        head_e,
        False,
        r.machine,
    )


def _launch_changes(
    case_id: str,
    variant_id: str,
    a: VariantResult,
    b: VariantResult,
    base_iv: dict[tuple[str, str, str, int], Interval | None],
    head_iv: dict[tuple[str, str, str, int], Interval | None],
) -> Iterator[Change]:
    before = dict(zip(_keys(a), a.launches, strict=True))
    after = dict(zip(_keys(b), b.launches, strict=True))
    for kernel, n in sorted(set(before) | set(after)):
        x, y = before.get((kernel, n)), after.get((kernel, n))
        if x is None or y is None:
            kept = x or y
            assert kept is not None
            yield _lone(case_id, variant_id, kernel, n, "added" if x is None else "removed", kept)
            continue
        if _same(x, y):
            continue
        full = (case_id, variant_id, kernel, n)
        yield Change(
            case_id, variant_id, kernel, n, "changed", x.time_s, y.time_s,
            speedup(x.time_s, y.time_s, base_iv.get(full), head_iv.get(full)),
            _movement(x, y), x.efficiency, y.efficiency,
            x.time_s == y.time_s and x.bound_s != y.bound_s, y.machine,
            base_iv.get(full), head_iv.get(full),
        )  # fmt: skip


def _roofs(machine: Machine) -> dict[str, tuple[float | None, str]]:
    out: dict[str, tuple[float | None, str]] = {}

    def put(name: str, roof: Roof, unit: str) -> None:
        out[f"{name} (datasheet)"] = (roof.datasheet, unit)
        out[f"{name} (measured)"] = (roof.measured, unit)

    for u in machine.compute:
        for precision, roof in u.peaks.items():
            integer = precision.startswith("int") or precision == "transcendental"
            put(f"compute.{u.id}.{precision}", roof, "OP/s" if integer else "FLOP/s")
    for level in machine.memory:
        put(f"memory.{level.id}", level.bandwidth, "B/s")
    for link in machine.links:
        put(f"link.{link.id}", link.bandwidth_per_direction, "B/s")
    out["clocks.sm"] = (machine.sm_clock_hz, "Hz")
    return out


def roof_changes(base: dict[str, Machine], head: dict[str, Machine]) -> Iterator[RoofChange]:
    for ident in sorted(set(base) & set(head)):
        a, b = _roofs(base[ident]), _roofs(head[ident])
        for roof in sorted(set(a) | set(b)):
            (va, unit), (vb, _) = a.get(roof, (None, "")), b.get(roof, (None, ""))
            if va != vb:
                yield RoofChange(ident, roof, va, vb, unit or b.get(roof, (None, ""))[1])
