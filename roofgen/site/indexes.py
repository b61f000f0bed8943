"""The home page and the cross-case index pages (by tag, by operator kind, by binding
resource): one row per case or per launch."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from roofgen.analysis.analyse import CaseResult, VariantResult
from roofgen.charts.speedups import CaseSpeedup, SpeedupsInput
from roofgen.model import Case, Machine
from roofgen.site.casepage import kernel_rows
from roofgen.site.links import html_link
from roofgen.site.names import display_name, resource_names
from roofgen.site.pagetypes import (
    ALL_CASES_PATH,
    BINDINGS_PATH,
    BY_CLASS_PATH,
    BY_MACHINE_PATH,
    HOME_PATH,
    METHOD_PATH,
    OPERATORS_PATH,
    TAGS_PATH,
    CaseRow,
    ChartSlot,
    HomePage,
    IndexGroup,
    IndexPage,
    IndexRow,
    Link,
    anchor,
    case_path,
    machine_path,
)
from roofgen.units import fmt_percent, fmt_ratio

__all__ = [
    "all_cases_page",
    "bindings_page",
    "case_row",
    "classes_page",
    "home_page",
    "machines_index_page",
    "operators_page",
    "speedups_input",
    "tags_page",
]

RECENT_COUNT = 5
WINS_COUNT = 5


def _best_variant(case: CaseResult) -> VariantResult:
    """The fastest variant (the first of equals)."""
    return max(case.variants, key=lambda v: (v.speedup_vs_first, -case.variants.index(v)))


def _best_e2e(case: CaseResult) -> float | None:
    values = [v.end_to_end_speedup_vs_first for v in case.variants[1:]]
    known = [v for v in values if v is not None]
    return max(known) if known else None


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
        binding=display_name(names, best.binding),
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


def speedups_input(cases: Sequence[CaseResult]) -> tuple[SpeedupsInput, int]:
    """The home chart's input: per case with a comparison, the speedup of its fastest
    variant against the baseline (interval and noise from the comparison) and that
    variant's measured end-to-end speedup; and how many of those kernel speedups are
    significant."""
    from roofgen.site.verdict import best_comparison

    found = [(c, best) for c in cases if (best := best_comparison(c)) is not None]
    found.sort(key=lambda cb: (-cb[1].speedup.value, cb[0].case.id))
    rows: list[CaseSpeedup] = []
    for c, best in found:
        href = html_link(HOME_PATH, case_path(c.case.id))
        s = best.speedup
        rows.append(
            CaseSpeedup(c.case.id, c.case.title, href, "kernel", s.value, s.low, s.high, s.noise)
        )
        e2e = next((e for e in c.comparison.end_to_end if e.variant == best.variant), None)
        if e2e is not None:
            rows.append(
                CaseSpeedup(
                    c.case.id, c.case.title, href, "end-to-end", e2e.measured, None, None,
                    "unknown noise",
                )
            )  # fmt: skip
    significant = sum(1 for _, best in found if best.speedup.noise == "significant")
    subtitle = (
        "Each case's fastest variant against its baseline; a bar is the speedup's interval. "
        "Grey: within the noise, or no interval to tell."
    )
    return SpeedupsInput("Speedup of every case", subtitle, tuple(rows)), significant


def home_page(
    name: str,
    description: str,
    rows: Sequence[CaseRow],
    machines: Sequence[Machine],
    cases: Sequence[CaseResult] = (),
) -> HomePage:
    ordered = _by_date(rows)
    speedups, significant = speedups_input(cases)
    chart = None
    if speedups.rows:
        chart = ChartSlot(
            key="home:speedups",
            spec_id="speedups-1",
            caption=(
                "Best kernel speedup (circle) and end-to-end speedup (diamond) of every case "
                "with more than one variant; click a mark to open its case"
            ),
            input=speedups,
        )
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
            Link("All cases", ALL_CASES_PATH),
            Link("Cases by machine", BY_MACHINE_PATH),
            Link("Cases by class", BY_CLASS_PATH),
            Link("By tag", TAGS_PATH),
            Link("By operator kind", OPERATORS_PATH),
            Link("By binding resource", BINDINGS_PATH),
            Link("Methods by pattern", "methods/patterns/index.md"),
            Link("Methods by bottleneck", "methods/bottlenecks/index.md"),
            Link("Methods by operator", "methods/operators/index.md"),
        ),
        method=Link("How to read these pages", METHOD_PATH),
        chart=chart,
        significant=significant if chart is not None else None,
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
        for _id, name, operator, shape, dtypes in kernel_rows(c.case):
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
                labels[key].add(
                    display_name(names, r.binding) if r.binding else "Insufficient data"
                )
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


def all_cases_page(rows: Sequence[CaseRow]) -> IndexPage:
    """Every case, newest first, with its owners and status."""
    listed = tuple(
        IndexRow(Link(r.title, r.path), (r.date, r.owners, r.status, r.summary))
        for r in _by_date(rows)
    )
    return IndexPage(
        path=ALL_CASES_PATH,
        title="All cases",
        intro="Every case, newest first.",
        columns=("Date", "Owners", "Status", "Summary"),
        groups=(IndexGroup("all", "All cases", "all-cases", listed),) if listed else (),
    )


def machines_index_page(rows: Sequence[CaseRow], machines: Sequence[Machine]) -> IndexPage:
    """The cases of each machine (a case that ran on several is under each)."""
    groups = []
    for m in machines:
        path = machine_path(m.id)
        listed = tuple(
            IndexRow(Link(r.title, r.path), (r.date, r.binding, r.best_speedup))
            for r in _by_date(rows)
            if any(link.path == path for link in r.machines)
        )
        groups.append(IndexGroup(m.id, m.name, anchor("machine", m.id), listed))
    return IndexPage(
        path=BY_MACHINE_PATH,
        title="Cases by machine",
        intro="Every case under each machine it ran on; each machine's own page has its roofs.",
        columns=("Date", "Binding resource", "Best speedup"),
        groups=tuple(groups),
    )


def classes_page(rows: Sequence[CaseRow]) -> IndexPage:
    """The cases by the class of their fastest variant (memory-bound, compute-bound...)."""
    groups: dict[str, list[IndexRow]] = defaultdict(list)
    for r in _by_date(rows):
        groups[r.klass].append(IndexRow(Link(r.title, r.path), (r.binding, r.efficiency)))
    return IndexPage(
        path=BY_CLASS_PATH,
        title="Cases by class",
        intro="Every case under the class of its fastest variant.",
        columns=("Binding resource", "Efficiency"),
        groups=tuple(
            IndexGroup(k, k, anchor("class", k), tuple(v)) for k, v in sorted(groups.items())
        ),
    )
