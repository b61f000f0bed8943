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
from roofgen.analysis.bounds import Thresholds
from roofgen.analysis.resources import ResourceUse, ResourceView
from roofgen.model import Launch, Machine, Specs
from roofgen.resources import resource_names

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
    # the kernel's time in the first variant that launches it / this one's
    speedup_vs_first: float | None


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
    speedups = case.comparison.kernel_speedups
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
        out.append(
            VariantExplanation(
                v, launches, v.kernel_time_s[kernel], speedups.get((v.variant, kernel))
            )
        )
    if variant is not None and not out:
        raise ExplainError(f"variant {variant!r} of case {case_id!r} does not launch {kernel!r}")
    return Explanation(case, kernel, variant, tuple(out), tuple(absent), analysis.thresholds)


def _launch(r: LaunchResult, machine: Machine, launch: Launch, names: Mapping[str, str],
            advice: Advice) -> LaunchExplanation:  # fmt: skip
    rows = tuple(_row(use, names) for use in r.get(ResourceView).resources)
    return LaunchExplanation(
        r, machine, launch, rows, advice.for_launch(r.case, r.variant, r.index)
    )


#: The analysis's role of a resource (:class:`ResourceUse`) in explain's words.
_ROLES = {"binding": "binds", "runner-up": "runner-up", "": ""}


def _row(use: ResourceUse, names: Mapping[str, str]) -> ResourceRow:
    resource = use.resource
    return ResourceRow(
        resource=resource,
        name=names.get(resource, resource),
        demand=use.demand,
        demand_unit=use.demand_unit,
        capacity=use.capacity,
        capacity_unit=use.capacity_unit,
        seconds=use.seconds,
        datasheet_seconds=use.datasheet_seconds,
        share_of_measured=use.share_of_measured,
        role=_ROLES[use.role],
        note=use.note if use.known else use.why_unknown,
    )
