"""Typed page contexts, built in one place from the analysis.

Every page of the site is one frozen dataclass here; the templates only lay them
out. Numbers are formatted here (with their units); user strings are kept as they
are and escaped by the templates' filters. Links between pages are docs paths
(``cases/vector-add/index.md``); the templates make them relative to the page.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from roofgen.advice import Advice
from roofgen.analysis.analyse import Analysis, CaseResult, LaunchResult, VariantResult
from roofgen.analysis.findings import Finding
from roofgen.model import Case, Machine, Roof
from roofgen.site.advice import advice_groups, variant_advice
from roofgen.site.charts import (
    case_chart_inputs,
    is_float_precision,
    machine_chart_input,
    precision_label,
)
from roofgen.site.comparison import before_after, sweep_tables
from roofgen.site.guide import GUIDE_NAV
from roofgen.site.opmodel import kernel_models
from roofgen.site.pagetypes import (
    BINDINGS_PATH,
    HOME_PATH,
    METHOD_PATH,
    OPERATORS_PATH,
    TAGS_PATH,
    CasePage,
    CaseRow,
    ChartSlot,
    EndToEndRow,
    HomePage,
    IndexGroup,
    IndexPage,
    IndexRow,
    LaunchRow,
    Link,
    MachinePage,
    MeasurementRow,
    NavEntry,
    RoofRow,
    SiteContext,
    VariantSection,
    anchor,
    case_path,
    machine_path,
)
from roofgen.site.quality import mark_rows, quality_items
from roofgen.site.sections import case_sections, machine_sections
from roofgen.units import fmt_frequency, fmt_percent, fmt_ratio, fmt_si, fmt_time

__all__ = [
    "CasePage",
    "CaseRow",
    "ChartSlot",
    "HomePage",
    "IndexPage",
    "MachinePage",
    "NavEntry",
    "SiteContext",
    "build_context",
    "case_path",
    "machine_path",
    "resource_names",
]

RECENT_COUNT = 5
WINS_COUNT = 5

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
SPECIAL_RESOURCES = {
    "issue": "Instruction issue",
    "power": "Power limit",
    "launch": "Launch overhead",
}


def resource_names(machine: Machine) -> dict[str, str]:
    """Display names of a machine's resources: ``memory.hbm`` -> ``HBM2``."""
    names = {f"compute.{u.id}": u.name for u in machine.compute}
    names |= {f"memory.{m.id}": m.name for m in machine.memory}
    names |= {f"link.{k.id}": k.name for k in machine.links}
    return names | SPECIAL_RESOURCES


# --------------------------------------------------------------------------- pieces


# --------------------------------------------------------------------------- pages


# --------------------------------------------------------------------------- builders


def _best_variant(case: CaseResult) -> VariantResult:
    """The fastest variant (the first of equals)."""
    return max(case.variants, key=lambda v: (v.speedup_vs_first, -case.variants.index(v)))


def _best_e2e(case: CaseResult) -> float | None:
    values = [v.end_to_end_speedup_vs_first for v in case.variants[1:]]
    known = [v for v in values if v is not None]
    return max(known) if known else None


def _name(names: Mapping[str, str], resource: str | None) -> str:
    if resource is None:
        return "n/a"
    return names.get(resource, resource)


def case_row(case: CaseResult, machines: Mapping[str, Machine]) -> CaseRow:
    c = case.case
    best = _best_variant(case)
    names = resource_names(machines[best.machine])
    e2e = _best_e2e(case)
    machine_ids = dict.fromkeys(v.machine for v in case.variants)
    return CaseRow(
        id=c.id,
        title=c.title,
        path=case_path(c.id),
        owners=", ".join(c.owners),
        date=c.date,
        status=c.status,
        summary=c.summary,
        machines=tuple(Link(machines[m].name, machine_path(m)) for m in machine_ids),
        binding=_name(names, best.binding),
        klass=best.klass,
        efficiency=fmt_percent(best.efficiency),
        best_speedup=fmt_ratio(case.best_speedup),
        end_to_end_speedup=fmt_ratio(e2e),
        best_speedup_value=case.best_speedup,
        end_to_end_value=e2e,
    )


def _by_date(rows: Sequence[CaseRow]) -> list[CaseRow]:
    ordered = sorted(rows, key=lambda r: r.id)
    return sorted(ordered, key=lambda r: r.date, reverse=True)


def home_page(
    name: str, description: str, rows: Sequence[CaseRow], machines: Sequence[Machine]
) -> HomePage:
    ordered = _by_date(rows)
    wins = sorted(
        (r for r in rows if r.end_to_end_value is not None and r.end_to_end_value > 1.0),
        key=lambda r: (-(r.end_to_end_value or 0.0), r.id),
    )
    return HomePage(
        path=HOME_PATH,
        title=name,
        description=description,
        recent=tuple(ordered[:RECENT_COUNT]),
        wins=tuple(wins[:WINS_COUNT]),
        cases=tuple(ordered),
        machines=tuple(Link(m.name, machine_path(m.id)) for m in machines),
        indexes=(
            Link("By tag", TAGS_PATH),
            Link("By operator kind", OPERATORS_PATH),
            Link("By binding resource", BINDINGS_PATH),
            Link("Methods by pattern", "methods/patterns/index.md"),
            Link("Methods by bottleneck", "methods/bottlenecks/index.md"),
            Link("Methods by operator", "methods/operators/index.md"),
        ),
        method=Link("How to read these pages", METHOD_PATH),
    )


def _intensities(r: LaunchResult, machine: Machine) -> tuple[str, ...]:
    out = []
    for level in machine.memory:
        value = r.intensity_flop_per_byte.get(level.id)
        out.append("n/a" if value is None else fmt_si(value, "FLOP/B"))
    return tuple(out)


def _unknown(resources: Sequence[str], names: Mapping[str, str]) -> str:
    return ", ".join(_name(names, x) for x in resources) or "none"


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
        binding=_name(names, r.binding),
        runner_up=_name(names, r.runner_up),
        klass=r.klass,
        efficiency=fmt_percent(r.efficiency),
        efficiency_datasheet=fmt_percent(r.efficiency_by_basis.get("datasheet")),
        headroom=fmt_ratio(r.headroom),
        covered=_unknown(r.coverage.covered, names),
        unknown=_unknown(r.coverage.unknown, names),
        verdict=r.verdict,
        modelled=", ".join(r.modelled),
    )


def _statistics(case: Case, variant_id: str, index: int) -> tuple[str, str, str, str]:
    variant = next(v for v in case.variants if v.id == variant_id)
    m = variant.launches[index].measurement
    t = m.time
    parts = [f"median {fmt_time(t.median_s)}"]
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
        binding=_name(names, v.binding),
        runner_up=_name(names, v.runner_up),
        klass=v.klass,
        efficiency=fmt_percent(v.efficiency),
        efficiency_datasheet=fmt_percent(v.efficiency_by_basis.get("datasheet")),
        headroom=fmt_ratio(v.headroom),
        flop_rate=fmt_si(v.achieved_flop_per_s, "FLOP/s"),
        unknown=_unknown(v.coverage.unknown, names),
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


def _kernels(case: Case) -> tuple[tuple[str, str, str, str, str], ...]:
    rows = []
    for k in case.kernels:
        shape = ", ".join(f"{key}={value}" for key, value in k.operator.shape.items())
        extra = [x for x in (k.operator.phase, "causal" if k.operator.causal else None) if x]
        dtypes = ", ".join(f"{key}: {value}" for key, value in k.dtypes.items())
        rows.append((k.id, k.name, " ".join([k.operator.kind, *extra]), shape, dtypes))
    return tuple(rows)


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
        kernels=_kernels(c),
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
    )


def _roof_row(resource: str, name: str, detail: str, roof: Roof, unit: str) -> RoofRow:
    sources = [s for s in (roof.source, roof.measured_source) if s]
    return RoofRow(
        resource=resource,
        name=name,
        detail=detail,
        datasheet=fmt_si(roof.datasheet, unit) if roof.datasheet is not None else "n/a",
        measured=fmt_si(roof.measured, unit) if roof.measured is not None else "n/a",
        used=roof.basis,
        source="; ".join(sources),
    )


def _machine_roofs(m: Machine) -> list[RoofRow]:
    rows = []
    for u in m.compute:
        for precision, roof in u.peaks.items():
            unit = "FLOP/s" if is_float_precision(precision) else "OP/s"
            rows.append(
                _roof_row(f"compute.{u.id}", u.name, precision_label(precision), roof, unit)
            )
        for ceiling in u.ceilings:
            rows.append(
                _roof_row(
                    f"compute.{u.id}",
                    ceiling.name,
                    f"sub-ceiling, {precision_label(ceiling.precision)}",
                    ceiling.value,
                    "FLOP/s",
                )
            )
    for level in m.memory:
        rows.append(_roof_row(f"memory.{level.id}", level.name, level.role, level.bandwidth, "B/s"))
    for link in m.links:
        rows.append(
            _roof_row(
                f"link.{link.id}",
                link.name,
                f"{link.kind}, per direction",
                link.bandwidth_per_direction,
                "B/s",
            )
        )
    if m.power is not None:
        rows.append(_roof_row("power", "Power limit", "board", m.power.limit, "W"))
    return rows


def _machine_other(m: Machine) -> tuple[tuple[str, str], ...]:
    other = []
    if m.issue is not None:
        rate = m.issue.rate_per_s(m.sm_clock_hz)
        other.append(
            (
                "Instruction issue",
                f"{m.issue.sms} SMs x {m.issue.schedulers_per_sm} schedulers = "
                f"{fmt_si(rate, 'warp instructions/s')}",
            )
        )
    if m.runtime is not None:
        rt = m.runtime
        for label, value in (
            ("Launch overhead", rt.launch_overhead_s),
            ("Graph launch overhead", rt.graph_launch_overhead_s),
            ("PDL launch overhead", rt.pdl_launch_overhead_s),
            ("Synchronisation overhead", rt.sync_overhead_s),
        ):
            if value is not None:
                other.append((label, fmt_time(value)))
    for level in m.memory:
        if level.capacity_b is not None:
            other.append((f"{level.name} capacity", fmt_si(level.capacity_b, "B")))
    return tuple(other)


def machine_page(m: Machine, analysis: Analysis, cases: Sequence[CaseResult]) -> MachinePage:
    result = next(r for r in analysis.machines if r.machine.id == m.id)
    levels = tuple(level.name for level in m.memory)
    ridges = []
    for u in m.compute:
        for precision in u.peaks:
            key = f"compute.{u.id}.{precision}"
            by_level = result.ridge_flop_per_byte.get(key, {})
            values = tuple(
                fmt_si(by_level[level.id], "FLOP/B") if level.id in by_level else "n/a"
                for level in m.memory
            )
            ridges.append((f"{u.name} {precision_label(precision)}", values))
    clocks = [("SM clock (roofs stated at)", fmt_frequency(m.sm_clock_hz))]
    if m.base_sm_clock_hz:
        clocks.append(("Base SM clock", fmt_frequency(m.base_sm_clock_hz)))
    if m.memory_clock_hz:
        clocks.append(("Memory clock", fmt_frequency(m.memory_clock_hz)))
    using = [c for c in cases if any(v.machine == m.id for v in c.variants)]
    return MachinePage(
        path=machine_path(m.id),
        id=m.id,
        name=m.name,
        vendor=m.vendor,
        version=str(m.version) if m.version is not None else "",
        description=m.description,
        file=m.file,
        clocks=tuple(clocks),
        roofs=tuple(_machine_roofs(m)),
        ridge_levels=levels,
        ridges=tuple(ridges),
        other=_machine_other(m),
        chart=ChartSlot(
            key=f"machine:{m.id}",
            spec_id="roofline-1",
            caption=f"Roofs of {m.name}",
            input=machine_chart_input(m),
        ),
        cases=tuple(Link(c.case.title, case_path(c.case.id)) for c in using),
        sections=machine_sections(result),
    )


def _case_link(case: Case) -> Link:
    return Link(case.title, case_path(case.id))


def tags_page(cases: Sequence[CaseResult]) -> IndexPage:
    groups: dict[str, list[IndexRow]] = defaultdict(list)
    for c in cases:
        for tag in c.case.tags:
            groups[tag].append(IndexRow(_case_link(c.case), (c.case.date, c.case.summary)))
    return IndexPage(
        path=TAGS_PATH,
        title="Cases by tag",
        intro="Every case under each of its tags.",
        columns=("Date", "Summary"),
        groups=tuple(
            IndexGroup(tag, tag, anchor("tag", tag), tuple(rows))
            for tag, rows in sorted(groups.items())
        ),
    )


def operators_page(cases: Sequence[CaseResult]) -> IndexPage:
    groups: dict[str, list[IndexRow]] = defaultdict(list)
    for c in cases:
        for _id, name, operator, shape, dtypes in _kernels(c.case):
            kind = operator.split(" ", 1)[0]
            groups[kind].append(IndexRow(_case_link(c.case), (name, shape, dtypes)))
    return IndexPage(
        path=OPERATORS_PATH,
        title="Kernels by operator kind",
        intro="Every kernel of every case, grouped by the operator it computes.",
        columns=("Kernel", "Shape", "Data types"),
        groups=tuple(
            IndexGroup(kind, kind, anchor("operator", kind), tuple(rows))
            for kind, rows in sorted(groups.items())
        ),
    )


def bindings_page(cases: Sequence[CaseResult], machines: Mapping[str, Machine]) -> IndexPage:
    groups: dict[str, list[IndexRow]] = defaultdict(list)
    labels: dict[str, set[str]] = defaultdict(set)
    for c in cases:
        for v in c.variants:
            names = resource_names(machines[v.machine])
            for r in v.launches:
                key = r.binding or "insufficient-data"
                labels[key].add(_name(names, r.binding) if r.binding else "Insufficient data")
                groups[key].append(
                    IndexRow(
                        _case_link(c.case),
                        (
                            r.variant,
                            r.kernel,
                            machines[v.machine].name,
                            r.klass,
                            fmt_percent(r.efficiency),
                        ),
                    )
                )
    return IndexPage(
        path=BINDINGS_PATH,
        title="Launches by binding resource",
        intro=(
            "Every launch under the resource whose roof bounds it (the binding roof). "
            "Resources are named by their id; the display names of each machine follow."
        ),
        columns=("Variant", "Kernel", "Machine", "Class", "Efficiency"),
        groups=tuple(
            IndexGroup(
                key,
                f"{key} ({', '.join(sorted(labels[key]))})",
                anchor("binding", key),
                tuple(rows),
            )
            for key, rows in sorted(groups.items())
        ),
    )


def _nav(
    cases: Sequence[CasePage],
    machines: Sequence[MachinePage],
    extra: Sequence[NavEntry],
    methods: Sequence[NavEntry] = (),
) -> tuple[NavEntry, ...]:
    sections = [
        NavEntry("Home", HOME_PATH),
        NavEntry("Cases", children=tuple(NavEntry(c.title, c.path) for c in cases)),
        NavEntry("Machines", children=tuple(NavEntry(m.name, m.path) for m in machines)),
        NavEntry(
            "Indexes",
            children=(
                NavEntry("By tag", TAGS_PATH),
                NavEntry("By operator kind", OPERATORS_PATH),
                NavEntry("By binding resource", BINDINGS_PATH),
            ),
        ),
        NavEntry("Methods", children=tuple(methods)),
        NavEntry("Method", METHOD_PATH),
        NavEntry("Guide", children=tuple(NavEntry(t, p) for t, p in GUIDE_NAV)),
        *extra,
    ]
    return tuple(s for s in sections if s.path is not None or s.children)


def build_context(
    analysis: Analysis,
    machines: Mapping[str, Machine],
    *,
    name: str,
    description: str = "",
    extra_nav: Sequence[NavEntry] = (),
    findings: Sequence[Finding] = (),
    advice: Advice | None = None,
) -> SiteContext:
    """Every page's context, from the analysis and the machines it refers to (with the
    plausibility ``findings`` and the rules' ``advice`` where the check produced them)."""
    from roofgen.site.methods import method_nav, method_pages

    used_machines = [machines[m.machine.id] for m in analysis.machines]
    rows = [case_row(c, machines) for c in analysis.cases]
    by_case: dict[str, list[Finding]] = {}
    for finding in findings:  # grouped once: each case page reads its own
        by_case.setdefault(finding.case, []).append(finding)
    cases = tuple(
        case_page(c, machines, analysis, by_case.get(c.case.id, ()), advice) for c in analysis.cases
    )
    machine_pages = tuple(machine_page(m, analysis, analysis.cases) for m in used_machines)
    dates = [c.case.date for c in analysis.cases if c.case.date]
    return SiteContext(
        name=name,
        home=home_page(name, description, rows, used_machines),
        cases=cases,
        machines=machine_pages,
        indexes=(
            tags_page(analysis.cases),
            operators_page(analysis.cases),
            bindings_page(analysis.cases, machines),
            *method_pages(analysis.cases, machines),
        ),
        method_path=METHOD_PATH,
        nav=_nav(cases, machine_pages, extra_nav, method_nav()),
        newest_date=max(dates) if dates else "",
    )
