"""The case page's context: narrative, kernels, launch tables per variant, charts, the
other rooflines' sections, before and after, recommendations and measurement quality."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from roofgen.advice import Advice
from roofgen.analysis.analyse import Analysis, CaseResult, LaunchResult, VariantResult
from roofgen.analysis.findings import Finding
from roofgen.model import Case, Machine, Operator
from roofgen.operators.causal import causal_alignment
from roofgen.site.advice import advice_groups, variant_advice
from roofgen.site.charts import case_chart_inputs
from roofgen.site.comparison import before_after, sweep_tables
from roofgen.site.names import display_name, display_names_of, resource_names
from roofgen.site.opmodel import kernel_models
from roofgen.site.pagetypes import (
    TAGS_PATH,
    CasePage,
    ChartSlot,
    EndToEndRow,
    LaunchRow,
    Link,
    MeasurementRow,
    VariantSection,
    anchor,
    case_path,
    machine_path,
)
from roofgen.site.quality import mark_rows, quality_items
from roofgen.site.sections import case_sections
from roofgen.site.verdict import verdict
from roofgen.units import fmt_frequency, fmt_percent, fmt_ratio, fmt_si, fmt_time

__all__ = ["case_page", "kernel_rows", "launch_row", "variant_section"]

NARRATIVE_SECTIONS = (
    ("context", "Context"),
    ("hypothesis", "Hypothesis"),
    ("change", "Change"),
    ("result", "Result"),
    ("lessons", "Lessons"),
)
METHOD_FIELDS = (
    ("gpu", "GPU"),
    ("driver", "Driver"),
    ("cuda", "CUDA / ROCm"),
    ("framework", "Framework"),
    ("clock_control", "Clock control"),
    ("cache_control", "Cache control"),
)
LINK_FIELDS = (
    ("pull_request", "Pull request"),
    ("commit", "Commit"),
    ("issue", "Issue"),
    ("code", "Code"),
)


def _intensities(r: LaunchResult, machine: Machine) -> tuple[str, ...]:
    out = []
    for level in machine.memory:
        value = r.intensity_flop_per_byte.get(level.id)
        out.append("n/a" if value is None else fmt_si(value, "FLOP/B"))
    return tuple(out)


def launch_row(r: LaunchResult, case: Case, machine: Machine) -> LaunchRow:
    names = resource_names(machine)
    kernel = case.kernel(r.kernel)
    return LaunchRow(
        kernel=r.kernel,
        kernel_name=kernel.name if kernel else r.kernel,
        calls=r.calls,
        time=fmt_time(r.time_s),
        share=fmt_percent(r.share_of_variant),
        flop_rate=fmt_si(r.achieved_flop_per_s, "FLOP/s"),
        intensities=_intensities(r, machine),
        bound=fmt_time(r.lower_bound_s),
        serial_bound=fmt_time(r.serial_bound_s),
        binding=display_name(names, r.binding),
        runner_up=display_name(names, r.runner_up),
        klass=r.klass,
        efficiency=_at_least(r.coverage.unknown, fmt_percent(r.efficiency)),
        efficiency_datasheet=_at_least(
            r.coverage.unknown, fmt_percent(r.efficiency_by_basis.get("datasheet"))
        ),
        headroom=_at_least(r.coverage.unknown, fmt_ratio(r.headroom), "at most "),
        covered=display_names_of(r.coverage.covered, names),
        unknown=display_names_of(r.coverage.unknown, names),
        verdict=r.verdict,
        modelled=", ".join(r.modelled),
    )


def _at_least(unknown: tuple[str, ...], shown: str, sign: str = "at least ") -> str:
    """``shown`` marked as a limit when an unknown compute unit or memory level could
    raise the bound: the efficiency is then at least, the headroom at most, the value."""
    partial = any(x.startswith(("compute.", "memory.")) for x in unknown)
    return f"{sign}{shown}" if partial and shown != "n/a" else shown


def _statistics(case: Case, variant_id: str, index: int) -> tuple[str, str, str, str]:
    variant = next(v for v in case.variants if v.id == variant_id)
    m = variant.launches[index].measurement
    t = m.time
    parts = [f"{t.statistic} {fmt_time(t.value_s)}"]
    if t.std_s is not None:
        parts.append(f"standard deviation {fmt_time(t.std_s)}")
    if t.q1_s is not None and t.q3_s is not None:
        parts.append(f"IQR {fmt_time(t.q1_s)} to {fmt_time(t.q3_s)}")
    if t.min_s is not None and t.max_s is not None:
        parts.append(f"range {fmt_time(t.min_s)} to {fmt_time(t.max_s)}")
    if t.ci_low_s is not None and t.ci_high_s is not None:
        parts.append(f"CI {fmt_time(t.ci_low_s)} to {fmt_time(t.ci_high_s)}")
    if t.repeats is not None:
        parts.append(f"{t.repeats} repeats")
    if t.warmup is not None:
        parts.append(f"{t.warmup} warm-up")
    clock = fmt_frequency(m.sm_clock_hz) if m.sm_clock_hz else "as datasheet"
    if m.memory_clock_hz:
        clock += f", memory {fmt_frequency(m.memory_clock_hz)}"
    return m.timing or "not stated", ", ".join(parts), clock, m.notes


def variant_section(v: VariantResult, case: Case, machine: Machine) -> VariantSection:
    names = resource_names(machine)
    variant = next(x for x in case.variants if x.id == v.variant)
    rows = []
    for r in v.launches:
        timing, stats, clock, notes = _statistics(case, v.variant, r.index)
        rows.append(
            MeasurementRow(
                kernel=r.kernel,
                timing=timing,
                statistics=stats,
                clock=clock,
                clock_scale=fmt_percent(r.clock_scale),
                notes=notes,
            )
        )
    return VariantSection(
        id=v.variant,
        name=variant.name,
        description=variant.description,
        machine=Link(machine.name, machine_path(machine.id)),
        levels=tuple(level.name for level in machine.memory),
        time=fmt_time(v.time_s),
        speedup=fmt_ratio(v.speedup_vs_first),
        bound=fmt_time(v.lower_bound_s),
        binding=display_name(names, v.binding),
        runner_up=display_name(names, v.runner_up),
        klass=v.klass,
        efficiency=_at_least(v.coverage.unknown, fmt_percent(v.efficiency)),
        efficiency_datasheet=_at_least(
            v.coverage.unknown, fmt_percent(v.efficiency_by_basis.get("datasheet"))
        ),
        headroom=_at_least(v.coverage.unknown, fmt_ratio(v.headroom), "at most "),
        flop_rate=fmt_si(v.achieved_flop_per_s, "FLOP/s"),
        unknown=display_names_of(v.coverage.unknown, names),
        verdict=v.verdict,
        launches=tuple(launch_row(r, case, machine) for r in v.launches),
        measurements=tuple(rows),
    )


def _end_to_end(case: CaseResult) -> tuple[EndToEndRow, ...]:
    c = case.case
    if not c.end_to_end_s:
        return ()
    rows = []
    for v in case.variants:
        e2e = c.end_to_end_s.get(v.variant)
        rows.append(
            EndToEndRow(
                variant=v.variant,
                kernel_time=fmt_time(v.time_s),
                kernel_speedup=fmt_ratio(v.speedup_vs_first),
                end_to_end_time=fmt_time(e2e),
                end_to_end_speedup=fmt_ratio(v.end_to_end_speedup_vs_first),
                note=c.end_to_end_notes.get(v.variant, ""),
            )
        )
    return tuple(rows)


def kernel_rows(case: Case) -> tuple[tuple[str, str, str, str, str], ...]:
    rows = []
    for k in case.kernels:
        shape = ", ".join(f"{key}={value}" for key, value in k.operator.shape.items())
        extra = [x for x in (k.operator.phase, _causal(k.operator)) if x]
        dtypes = ", ".join(f"{key}: {value}" for key, value in k.dtypes.items())
        rows.append((k.id, k.name, " ".join([k.operator.kind, *extra]), shape, dtypes))
    return tuple(rows)


def _causal(op: Operator) -> str | None:
    alignment = causal_alignment(op.causal, op.phase)
    return f"causal ({alignment})" if alignment else None


def _links(case: Case) -> tuple[Link, ...]:
    from roofgen.site.escape import safe_url

    out = []
    for key, label in LINK_FIELDS:
        value = case.links.get(key)
        if value:
            out.append(Link(f"{label}: {value}", url=safe_url(value)))
    return tuple(out)


def case_page(
    case: CaseResult,
    machines: Mapping[str, Machine],
    analysis: Analysis,
    findings: Sequence[Finding] = (),
    advice: Advice | None = None,
) -> CasePage:
    c = case.case
    slots = []
    merged: dict[str, str] = {}
    for v in case.variants:
        merged |= resource_names(machines[v.machine])
    for i, (machine, inp) in enumerate(case_chart_inputs(case, machines, merged), start=1):
        slots.append(
            ChartSlot(
                key=f"case:{c.id}:{machine.id}",
                spec_id=f"roofline-{i}",
                caption=f"Hierarchical roofline of {c.title} on {machine.name}",
                input=inp,
            )
        )
    names = {v.machine: resource_names(machines[v.machine]) for v in case.variants}
    quality = quality_items(c, findings)
    t = analysis.thresholds
    return CasePage(
        path=case_path(c.id),
        id=c.id,
        title=c.title,
        summary=c.summary,
        date=c.date,
        owners=c.owners,
        status=c.status,
        file=c.file,
        tags=tuple(Link(tag, TAGS_PATH, anchor=anchor("tag", tag)) for tag in c.tags),
        patterns=c.patterns,
        machines=tuple(
            Link(machines[m].name, machine_path(m))
            for m in dict.fromkeys(v.machine for v in case.variants)
        ),
        links=_links(c),
        narrative=tuple(
            (heading, c.narrative[key]) for key, heading in NARRATIVE_SECTIONS if key in c.narrative
        ),
        method_description=c.method.get("description", ""),
        method=tuple((label, c.method[key]) for key, label in METHOD_FIELDS if key in c.method),
        kernels=kernel_rows(c),
        kernel_notes=tuple((k.id, k.description) for k in c.kernels if k.description),
        charts=tuple(slots),
        variants=mark_rows(
            tuple(variant_section(v, c, machines[v.machine]) for v in case.variants), quality
        ),
        end_to_end=_end_to_end(case),
        recommendations=advice_groups(case, names, advice),
        thresholds=(
            f"co-bound margin {t.co_bound_margin:.0%}, "
            f"below-roofs threshold {t.below_roofs_efficiency:.0%}"
        ),
        sections=case_sections(case, machines, merged),
        before_after=before_after(case, names),
        sweeps=sweep_tables(case, names),
        quality=quality,
        variant_advice=variant_advice(case, advice),
        models=kernel_models(case),
        verdict=verdict(case, machines, advice),
    )
