"""Analysis of cases: per launch, per variant, per machine. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

from roofgen.analysis.bounds import BASES, Bounds, Thresholds, clock_scale, launch_bounds, resources
from roofgen.analysis.classify import (
    Class,
    classify,
    classify_ranked,
    rank_variant,
    variant_verdict,
    verdict,
)
from roofgen.analysis.facts import fact_note, launch_facts, variant_facts
from roofgen.analysis.inputs import LaunchInputs, LaunchKindT, VariantInputs, VariantKindT, work
from roofgen.analysis.instruction import InstructionCeilings, instruction_ceilings
from roofgen.analysis.prepare import Prepared, kernel_model, prepare
from roofgen.analysis.runtime import RuntimeResult
from roofgen.model import Basis, Case, Launch, Machine, Specs, Variant
from roofgen.operators.models import ModelOutcome, OpModel

if TYPE_CHECKING:
    from roofgen.analysis.compare import CaseComparison


@dataclass(frozen=True)
class Coverage:
    covered: tuple[str, ...]
    unknown: tuple[str, ...]


@dataclass(frozen=True)
class LaunchResult:
    """One launch of a variant, analysed: its bounds, binding roof, class and efficiency.

    Every roofline kind of the launch (:mod:`roofgen.analysis.kinds`) is read with
    :meth:`get`, computed on first use from ``inputs`` and kept.
    """

    case: str
    kernel: str
    variant: str
    machine: str
    index: int  # position in the variant
    occurrence: int  # the how-manyth launch of its kernel in the variant (from 1)
    calls: int
    time_s: float  # time of one call: the median, or the mean (``time_statistic``)
    flop: float | None  # floating-point work of one call (FLOP)
    ops: float | None  # integer and transcendental work (OP)
    achieved_flop_per_s: float | None
    intensity_flop_per_byte: dict[str, float]  # level -> FLOP/byte
    bound_s: dict[str, float]  # resource -> s (measured basis where present)
    bounds_datasheet_s: dict[str, float]
    lower_bound_s: float | None
    serial_bound_s: float | None
    binding: str | None
    runner_up: str | None
    klass: Class
    efficiency: float | None
    efficiency_by_basis: dict[str, float | None]
    headroom: float | None
    attainable_flop_per_s: float | None
    attainable_by_level_flop_per_s: dict[str, float]
    roof_basis: dict[str, Basis]
    coverage: Coverage
    clock_scale: float
    verdict: str
    share_of_variant: float  # fraction of the variant's measured time
    inputs: LaunchInputs = field(compare=False, repr=False)  # what the kinds are computed from
    facts: tuple[str, ...] = ()  # launch-bound, power-limited, communication-serial, sparse
    model: OpModel | None = None  # the operator model (model FLOPs, compulsory bytes)
    model_reason: str = ""  # why there is no model
    modelled: tuple[str, ...] = ()  # values taken from the model: "flops", "bytes.<level>"
    bytes_b: dict[str, float] = field(default_factory=dict)  # level -> bytes (with modelled)
    sweep: tuple[SweepPointResult, ...] = ()  # per shape, for a launch measured over a sweep
    time_statistic: str = "median"  # what time_s (and so the efficiency) is: median or mean

    def get(self, kind: type[LaunchKindT]) -> LaunchKindT:
        """This launch's result of the roofline ``kind`` (e.g. ``EnergyResult``)."""
        return self.inputs.get(kind)

    @property
    def launch(self) -> Launch:
        """The launch as analysed: the operator model's values filled in where the
        measurement left them out (see ``modelled``)."""
        return self.inputs.launch


@dataclass(frozen=True)
class SweepPointResult:
    """One shape of a sweep, analysed as a launch of its own."""

    label: str
    shape: dict[str, int | str | bool]
    weight: float  # normalised: a sweep's weights sum to 1
    result: LaunchResult


@dataclass(frozen=True)
class VariantResult:
    """One variant (a step: its launches in order x calls), analysed. Its roofline kinds
    (:mod:`roofgen.analysis.kinds`) are read with :meth:`get`."""

    case: str
    variant: str
    machine: str
    launches: tuple[LaunchResult, ...]
    time_s: float  # the step's time: its inputs' (calls x median, summed over launches)
    lower_bound_s: float | None  # sum of the launches' bounds (launches run in order)
    serial_bound_s: float | None
    bound_s: dict[str, float]  # per resource, summed over launches x calls
    binding: str | None
    runner_up: str | None
    klass: Class
    efficiency: float | None
    efficiency_by_basis: dict[str, float | None]
    headroom: float | None
    achieved_flop_per_s: float | None
    speedup_vs_first: float  # first variant's time / this one's
    end_to_end_s: float | None
    end_to_end_speedup_vs_first: float | None
    coverage: Coverage
    verdict: str
    inputs: VariantInputs = field(compare=False, repr=False)  # what the kinds are computed from
    facts: tuple[str, ...] = ()  # launch-bound: the step's launch costs nearly fill its time
    # binding resource -> fraction of the step's bound time in the launches it binds
    binding_shares: dict[str, float] = field(default_factory=dict)
    # kernel -> its time per step: calls x time of one call, summed over its launches
    kernel_time_s: dict[str, float] = field(default_factory=dict)

    def get(self, kind: type[VariantKindT]) -> VariantKindT:
        """This step's result of the roofline ``kind`` (e.g. ``RuntimeResult``)."""
        return self.inputs.get(kind)


@dataclass(frozen=True)
class MachineResult:
    """A machine's roofs as the analysis reads them: ridge points, resources, and the
    instruction roofline's ceilings."""

    machine: Machine
    ridge_flop_per_byte: dict[
        str, dict[str, float]
    ]  # compute.<unit>.<precision> -> level -> FLOP/B

    @cached_property
    def resources(self) -> tuple[str, ...]:
        """Every resource name of the machine, in a fixed order."""
        return tuple(resources(self.machine))

    @cached_property
    def instruction_ceilings(self) -> InstructionCeilings | None:
        """The instruction roofline's ceilings (measured bandwidths where present);
        ``None`` without an ``issue`` section."""
        return instruction_ceilings(self.machine)


@dataclass(frozen=True)
class CaseResult:
    """A case, analysed: its variants in order (the first is the baseline), and the
    results of the machines they ran on."""

    case: Case
    variants: tuple[VariantResult, ...]
    machines: Mapping[str, MachineResult] = field(default_factory=dict, compare=False, repr=False)

    @property
    def best_speedup(self) -> float:
        return max((v.speedup_vs_first for v in self.variants), default=1.0)

    @cached_property
    def comparison(self) -> CaseComparison:
        """Every variant after the first against the first: speedups with their noise,
        the movement on the chart, the end-to-end projection."""
        from roofgen.analysis.compare import compare_case

        return compare_case(self, {k: r.machine for k, r in self.machines.items()})

    @cached_property
    def kernel_models(self) -> dict[str, ModelOutcome]:
        """The operator model of each kernel at its own shape (or why it has none)."""
        return {k.id: kernel_model(k) for k in self.case.kernels}


@dataclass(frozen=True)
class Analysis:
    thresholds: Thresholds
    machines: tuple[MachineResult, ...]
    cases: tuple[CaseResult, ...]


def analyse(specs: Specs, thresholds: Thresholds | None = None) -> Analysis:
    t = thresholds or Thresholds()
    machines = tuple(machine_result(m) for _, m in sorted(specs.machines.items()))
    by_id = {r.machine.id: r for r in machines}
    cases = tuple(case_result(c, by_id, t) for c in sorted(specs.cases, key=lambda c: c.id))
    return Analysis(t, machines, cases)


def machine_result(machine: Machine) -> MachineResult:
    ridges: dict[str, dict[str, float]] = {}
    for unit in machine.compute:
        for precision, peak in unit.peaks.items():
            ridges[f"compute.{unit.id}.{precision}"] = {
                level.id: peak.value() / level.bandwidth.value() for level in machine.memory
            }
    return MachineResult(machine, ridges)


def case_result(case: Case, machines: Mapping[str, MachineResult], t: Thresholds) -> CaseResult:
    variants: list[VariantResult] = []
    for variant in case.variants:
        first = variants[0] if variants else None
        machine = machines[variant.machine].machine
        variants.append(variant_result(case, variant, machine, t, first))
    used = {v.machine: machines[v.machine] for v in variants}
    return CaseResult(case, tuple(variants), used)


def _sum_bounds(launches: list[tuple[Bounds, int]]) -> dict[str, float]:
    total: dict[str, float] = {}
    for bounds, calls in launches:
        for resource, seconds in bounds.seconds.items():
            total[resource] = total.get(resource, 0.0) + calls * seconds
    return total


def variant_result(
    case: Case,
    variant: Variant,
    machine: Machine,
    t: Thresholds,
    first: VariantResult | None,
) -> VariantResult:
    prepared = [prepare(machine, case.kernel(x.kernel), x) for x in variant.launches]
    variant = replace(variant, launches=tuple(p.launch for p in prepared))
    per_basis = {
        b: [launch_bounds(machine, x, b, _units(case, x.kernel)) for x in variant.launches]
        for b in BASES
    }
    inputs = VariantInputs(
        machine,
        variant,
        tuple(
            LaunchInputs(machine, x, case.kernel(x.kernel), measured, datasheet)
            for x, measured, datasheet in zip(
                variant.launches, per_basis["measured"], per_basis["datasheet"], strict=True
            )
        ),
        t,
    )
    time_s = inputs.time_s
    numbers = _occurrences(variant)
    results = tuple(
        launch_result(case, variant, i, x, t, time_s, numbers[i])
        for i, x in enumerate(inputs.launches)
    )
    results = tuple(_attach(r, p, case, variant, t) for r, p in zip(results, prepared, strict=True))
    calls = [x.calls for x in variant.launches]
    lower = _variant_bound(results, calls, "lower_bound_s")
    serial = _variant_bound(results, calls, "serial_bound_s")
    totals = _sum_bounds(list(zip(per_basis["measured"], calls, strict=True)))
    unknown = tuple(sorted({u for b in per_basis["measured"] for u in b.unknown} - set(totals)))
    # The variant's binding resource is the one that binds most of the step's bound time
    # (launches run in order), not the largest sum of per-resource times: a resource
    # that limits no launch must not be named. The runner-up is what would bind were
    # it infinitely fast, so launches each cleanly bound by a different resource do not
    # make the variant co-bound.
    ranking = rank_variant([(r.calls, r.bound_s, r.binding, r.lower_bound_s) for r in results])
    enough = all(r.klass != "insufficient-data" for r in results)
    efficiency = lower / time_s if lower is not None and enough else None
    by_basis: dict[str, float | None] = {}
    for b in BASES:
        bs = [x.bound_s for x in per_basis[b]]
        by_basis[b] = (
            sum(c * s for c, s in zip(calls, bs, strict=True) if s is not None) / time_s
            if enough and all(s is not None for s in bs)
            else None
        )
    klass = classify_ranked(ranking.ranked(), efficiency, t) if enough else "insufficient-data"
    binding, runner_up = ranking.binding, ranking.runner_up
    if klass == "insufficient-data":
        text = verdict(klass, Bounds({}, unknown, {}), efficiency, t)
    else:
        text = variant_verdict(klass, ranking, efficiency, t)
    if len(results) == 1:  # one launch: the variant is that launch
        only = results[0]
        klass, text = only.klass, only.verdict
        binding, runner_up = only.binding, only.runner_up
    flop = [r.flop for r in results]
    achieved = (
        sum(c * f for c, f in zip(calls, flop, strict=True) if f is not None) / time_s
        if all(f is not None for f in flop)
        else None
    )
    e2e = case.end_to_end_s.get(variant.id)
    first_e2e = case.end_to_end_s.get(first.variant) if first else e2e
    facts = variant_facts(inputs.get(RuntimeResult).floor)
    if "launch-bound" in facts and "launch-bound" not in text:
        text += "; the step is launch-bound (launch and sync costs fill its time)"
    return VariantResult(
        case=case.id,
        variant=variant.id,
        machine=machine.id,
        launches=results,
        time_s=time_s,
        lower_bound_s=lower,
        serial_bound_s=serial,
        bound_s=totals,
        binding=binding,
        runner_up=runner_up,
        klass=klass,
        efficiency=efficiency,
        efficiency_by_basis=by_basis,
        headroom=1.0 / efficiency if efficiency else None,
        achieved_flop_per_s=achieved,
        speedup_vs_first=(first.time_s if first else time_s) / time_s,
        end_to_end_s=e2e,
        end_to_end_speedup_vs_first=first_e2e / e2e if e2e and first_e2e else None,
        coverage=Coverage(tuple(sorted(totals)), unknown),
        verdict=text,
        inputs=inputs,
        facts=facts,
        binding_shares=ranking.shares,
        kernel_time_s=_kernel_times(results),
    )


def _attach(
    r: LaunchResult, p: Prepared, case: Case, variant: Variant, t: Thresholds
) -> LaunchResult:
    """``r`` with its operator model, what was modelled, and its sweep's shapes."""
    units = r.inputs.kernel.units if r.inputs.kernel is not None else ()
    points = tuple(
        SweepPointResult(
            point.label,
            point.shape,
            point.weight,
            replace(
                launch_result(
                    case,
                    variant,
                    r.index,
                    LaunchInputs(
                        r.inputs.machine,
                        point.launch,
                        r.inputs.kernel,
                        launch_bounds(r.inputs.machine, point.launch, "measured", units),
                        launch_bounds(r.inputs.machine, point.launch, "datasheet", units),
                    ),
                    t,
                    point.launch.calls * point.launch.measurement.time.value_s,
                    r.occurrence,
                ),
                model=point.model,
                modelled=point.modelled,
                bytes_b=dict(point.launch.measurement.bytes or {}),
            ),
        )
        for point in p.points
    )
    return replace(
        r,
        model=p.model,
        model_reason=p.model_reason,
        modelled=p.modelled,
        bytes_b=dict(p.launch.measurement.bytes or {}),
        sweep=points,
    )


def _occurrences(variant: Variant) -> list[int]:
    """Each launch's number among the launches of its kernel (from 1, in launch order):
    launches are paired across variants, and named on the site, by (kernel, number)."""
    seen: dict[str, int] = {}
    numbers = []
    for x in variant.launches:
        seen[x.kernel] = seen.get(x.kernel, 0) + 1
        numbers.append(seen[x.kernel])
    return numbers


def _kernel_times(results: tuple[LaunchResult, ...]) -> dict[str, float]:
    """Each kernel's time per step: calls x time of one call over its launches, in order."""
    times: dict[str, float] = {}
    for r in results:
        times[r.kernel] = times.get(r.kernel, 0.0) + r.calls * r.time_s
    return times


def _units(case: Case, kernel_id: str) -> tuple[str, ...]:
    """The compute units a kernel declares it runs on (none declared: ``()``)."""
    kernel = case.kernel(kernel_id)
    return kernel.units if kernel is not None else ()


def _variant_bound(results: tuple[LaunchResult, ...], calls: list[int], attr: str) -> float | None:
    values = [getattr(r, attr) for r in results]
    if any(v is None for v in values):
        return None
    return sum(c * v for c, v in zip(calls, values, strict=True))


def launch_result(
    case: Case,
    variant: Variant,
    index: int,
    inputs: LaunchInputs,
    t: Thresholds,
    variant_time_s: float,
    occurrence: int,
) -> LaunchResult:
    launch, machine, bounds = inputs.launch, inputs.machine, inputs.bounds
    datasheet = inputs.datasheet
    m = launch.measurement
    time_s = m.time.value_s
    flop = work(m, integer=False)
    lower = bounds.bound_s
    efficiency = lower / time_s if lower is not None else None
    klass = classify(bounds, efficiency, t)
    if klass == "insufficient-data":
        efficiency = None
    ranked = bounds.ranked()
    intensity: dict[str, float] = {}
    attainable_by_level: dict[str, float] = {}
    compute_s = max(
        (s for r, s in bounds.seconds.items() if r.startswith("compute.")), default=None
    )
    if flop and m.bytes:
        for level in machine.memory:
            moved = m.bytes.get(level.id)
            if not moved:
                continue
            intensity[level.id] = flop / moved
            level_s = bounds.seconds[f"memory.{level.id}"]
            # min(peak of the units, bandwidth x intensity) = FLOPs / max(t_compute, t_level)
            attainable_by_level[level.id] = flop / max(compute_s or 0.0, level_s)
    facts = launch_facts(inputs, t)
    text = verdict(klass, bounds, efficiency, t)
    note = fact_note(facts, bounds, m)
    return LaunchResult(
        time_statistic=m.time.statistic,
        case=case.id,
        kernel=launch.kernel,
        variant=variant.id,
        machine=machine.id,
        index=index,
        occurrence=occurrence,
        calls=launch.calls,
        time_s=time_s,
        flop=flop,
        ops=work(m, integer=True),
        achieved_flop_per_s=flop / time_s if flop is not None else None,
        intensity_flop_per_byte=intensity,
        bound_s=dict(bounds.seconds),
        bounds_datasheet_s=dict(datasheet.seconds),
        lower_bound_s=lower,
        serial_bound_s=bounds.serial_s,
        binding=ranked[0][0] if ranked else None,
        runner_up=ranked[1][0] if len(ranked) > 1 else None,
        klass=klass,
        efficiency=efficiency,
        efficiency_by_basis={
            "measured": efficiency,
            "datasheet": datasheet.bound_s / time_s
            if datasheet.bound_s is not None and efficiency is not None
            else None,
        },
        headroom=1.0 / efficiency if efficiency else None,
        attainable_flop_per_s=flop / lower if flop is not None and lower else None,
        attainable_by_level_flop_per_s=attainable_by_level,
        roof_basis=dict(bounds.basis),
        coverage=Coverage(tuple(sorted(bounds.seconds)), bounds.unknown),
        clock_scale=clock_scale(machine, m).sm,
        verdict=f"{text}; {note}" if note else text,
        share_of_variant=launch.calls * time_s / variant_time_s,
        inputs=inputs,
        facts=facts,
    )


__all__ = [
    "Analysis",
    "CaseResult",
    "Coverage",
    "LaunchResult",
    "MachineResult",
    "Thresholds",
    "VariantResult",
    "analyse",
    "resources",
]
