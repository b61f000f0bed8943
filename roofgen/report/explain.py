"""``roofgen explain``: the analysis of one kernel's launches, as objects.

For each launch of the kernel (in one variant, or in every variant that launches
it): what binds and how far the launch is from that roof, the runner-up, the time
every resource needs (demand / capacity beside the measured time), what is unknown,
and the recommendations the check's rules gave it. The text and the JSON are
rendered from these objects by :mod:`roofgen.report.explain_text` and
:mod:`roofgen.report.explain_json`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from roofgen.advice import Advice, Recommendation
from roofgen.analysis.analyse import Analysis, CaseResult, LaunchResult, VariantResult
from roofgen.analysis.bounds import Thresholds, dynamic_energy_j, level_bytes, resources
from roofgen.model import Launch, Machine, Measurement, Specs
from roofgen.resources import kind_of, resource_names, why_unknown
from roofgen.units import fmt_si

__all__ = [
    "ExplainError",
    "Explanation",
    "LaunchExplanation",
    "ResourceRow",
    "VariantExplanation",
    "explain",
    "parse_selector",
]


class ExplainError(Exception):
    """The selector names nothing in the specs; the message says what exists."""


@dataclass(frozen=True)
class ResourceRow:
    """One resource of one launch: its demand, its capacity and the time it needs."""

    resource: str  # memory.hbm
    name: str  # HBM2
    demand: float | None
    demand_unit: str
    capacity: float | None  # at the measurement's clocks (demand / time where both known)
    capacity_unit: str
    seconds: float | None  # demand / capacity on the roof basis used (None: unknown)
    datasheet_seconds: float | None
    share_of_measured: float | None  # seconds / the measured time
    role: str  # "binds", "runner-up" or ""
    note: str = ""  # what the demand is made of, or why it is unknown


@dataclass(frozen=True)
class LaunchExplanation:
    """One launch: its result, a row per resource, and the check's recommendations."""

    result: LaunchResult
    machine: Machine
    launch: Launch
    rows: tuple[ResourceRow, ...]
    recommendations: tuple[Recommendation, ...]  # empty: no rule applies to the launch


@dataclass(frozen=True)
class VariantExplanation:
    variant: VariantResult
    launches: tuple[LaunchExplanation, ...]
    kernel_time_s: float  # this kernel's time per step (calls x median, summed)
    speedup_vs_first: float | None  # the first variant's kernel time / this one's


@dataclass(frozen=True)
class Explanation:
    case: CaseResult
    kernel: str
    variant: str | None  # as asked; None: every variant
    variants: tuple[VariantExplanation, ...]
    absent: tuple[str, ...]  # variants that do not launch the kernel
    thresholds: Thresholds


def parse_selector(text: str) -> tuple[str, str, str | None]:
    """``CASE/KERNEL[/VARIANT]`` -> its parts; ValueError when malformed."""
    parts = text.split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise ValueError(f"{text!r}: write CASE/KERNEL or CASE/KERNEL/VARIANT")
    return parts[0], parts[1], parts[2] if len(parts) == 3 else None


def explain(
    analysis: Analysis,
    specs: Specs,
    advice: Advice,
    case_id: str,
    kernel: str,
    variant: str | None = None,
) -> Explanation:
    """Explain ``kernel``'s launches in ``case_id`` (one variant, or all of them), with
    the recommendations ``advice`` (the check's) holds for them."""
    case = next((c for c in analysis.cases if c.case.id == case_id), None)
    if case is None:
        known = ", ".join(c.case.id for c in analysis.cases) or "none"
        raise ExplainError(f"no case {case_id!r} in the specs (cases: {known})")
    if case.case.kernel(kernel) is None:
        known = ", ".join(k.id for k in case.case.kernels)
        raise ExplainError(f"case {case_id!r} has no kernel {kernel!r} (kernels: {known})")
    variants = case.variants
    if variant is not None:
        variants = tuple(v for v in variants if v.variant == variant)
        if not variants:
            known = ", ".join(v.variant for v in case.variants)
            raise ExplainError(f"case {case_id!r} has no variant {variant!r} (variants: {known})")
    out: list[VariantExplanation] = []
    absent: list[str] = []
    first_time: float | None = None
    for v in variants:
        index = [i for i, x in enumerate(case.variants) if x is v][0]
        spec_variant = case.case.variants[index]
        mine = [r for r in v.launches if r.kernel == kernel]
        if not mine:
            absent.append(v.variant)
            continue
        machine = specs.machines[v.machine]
        names = resource_names(machine, short=True)
        launches = tuple(
            _launch(r, machine, spec_variant.launches[r.index], names, advice) for r in mine
        )
        kernel_time = sum(r.calls * r.time_s for r in mine)
        first_time = kernel_time if first_time is None else first_time
        out.append(VariantExplanation(v, launches, kernel_time, first_time / kernel_time))
    if variant is not None and not out:
        raise ExplainError(f"variant {variant!r} of case {case_id!r} does not launch {kernel!r}")
    return Explanation(case, kernel, variant, tuple(out), tuple(absent), analysis.thresholds)


def _launch(r: LaunchResult, machine: Machine, launch: Launch, names: Mapping[str, str],
            advice: Advice) -> LaunchExplanation:  # fmt: skip
    rows = tuple(_row(res, r, machine, launch.measurement, names) for res in resources(machine))
    return LaunchExplanation(
        r, machine, launch, rows, advice.for_launch(r.case, r.variant, r.index)
    )


def _row(resource: str, r: LaunchResult, machine: Machine, m: Measurement,
         names: Mapping[str, str]) -> ResourceRow:  # fmt: skip
    seconds = r.bound_s.get(resource)
    demand, unit, rate_unit, note = _demand(resource, machine, m)
    capacity = None
    if resource == "launch":
        capacity = None  # launches and syncs cost different times: no single rate
    elif seconds is not None and demand is not None and demand > 0 and seconds > 0:
        capacity = demand / seconds
    elif resource.startswith("link.") and seconds is not None:
        link = machine.link(resource.removeprefix("link."))
        capacity = link.bandwidth_per_direction.value() if link else None
    role = "binds" if resource == r.binding else "runner-up" if resource == r.runner_up else ""
    if seconds is None:
        note = why_unknown(resource, machine)
    return ResourceRow(
        resource=resource,
        name=names.get(resource, resource),
        demand=demand if seconds is not None else None,
        demand_unit=unit,
        capacity=capacity,
        capacity_unit=rate_unit,
        seconds=seconds,
        datasheet_seconds=r.bounds_datasheet_s.get(resource),
        share_of_measured=seconds / r.time_s if seconds is not None and r.time_s else None,
        role=role,
        note=note,
    )


def _demand(resource: str, machine: Machine, m: Measurement) -> tuple[float | None, str, str, str]:
    """(demand, its unit, the capacity's unit, a note) of one resource."""
    kind = kind_of(resource)
    ident = resource.partition(".")[2]
    unit, rate_unit = kind.demand_unit, kind.capacity_unit
    if kind.kind == "compute":
        work = (m.flops or {}).get(ident, {})
        ints = [p for p in work if p.startswith("int") or p == "transcendental"]
        unit = "OP" if work and len(ints) == len(work) else unit
        note = ", ".join(f"{p} {fmt_si(v, 'OP' if p in ints else 'FLOP')}" for p, v in work.items())
        return sum(work.values()), unit, f"{unit}/s", note if len(work) > 1 else ""
    if kind.kind == "memory":
        level = machine.level(ident)
        return level_bytes(level, m) if level is not None else None, unit, rate_unit, ""
    if kind.kind == "link":
        out_b, in_b = (m.link_bytes or {}).get(ident, (0.0, 0.0))
        count = sum(1 for c in m.collectives if c.link == ident)
        note = f"one way; plus {count} collective(s) and the link latency" if count else "one way"
        return max(out_b, in_b), unit, rate_unit, note
    if kind.kind == "issue":
        return m.instructions, unit, rate_unit, "warp instructions"
    if kind.kind == "power":
        return (
            dynamic_energy_j(machine, m),
            unit,
            rate_unit,
            "dynamic energy over the power above idle",
        )
    count = (m.launches or 0) + (m.syncs or 0)
    return float(count), unit, rate_unit, f"{m.launches or 0} launch(es), {m.syncs or 0} sync(s)"
