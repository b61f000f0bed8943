"""The home page and the cross-case index pages (by tag, by operator kind, by binding
resource): one row per case or per launch."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from roofgen.charts.speedups import SpeedupsInput
from roofgen.model import Machine
from roofgen.site.listing import CaseListing
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
    machine_path,
)

__all__ = [
    "all_cases_page",
    "bindings_page",
    "classes_page",
    "home_page",
    "machines_index_page",
    "operators_page",
    "speedups_input",
    "tags_page",
]

RECENT_COUNT = 5
WINS_COUNT = 5


def _by_date(cases: Sequence[CaseListing]) -> list[CaseRow]:
    """The rows of ``cases``, newest first (of one date, by id)."""
    ordered = sorted((c.row for c in cases), key=lambda r: r.id)
    return sorted(ordered, key=lambda r: r.date, reverse=True)


def speedups_input(cases: Sequence[CaseListing]) -> tuple[SpeedupsInput, int]:
    """The home chart's input: per case with a comparison, the speedup of its fastest
    variant against the baseline (interval and noise from the comparison) and that
    variant's measured end-to-end speedup; and how many of those kernel speedups are
    significant."""
    found = [(c.id, s) for c in cases if (s := c.speedups) is not None]
    found.sort(key=lambda cs: (-cs[1].value, cs[0]))
    rows = tuple(row for _, s in found for row in s.rows)
    significant = sum(1 for _, s in found if s.significant)
    subtitle = (
        "Each case's fastest variant against its baseline; a bar is the speedup's interval. "
        "Grey: within the noise, or no interval to tell."
    )
    return SpeedupsInput("Speedup of every case", subtitle, rows), significant


def home_page(
    name: str,
    description: str,
    cases: Sequence[CaseListing],
    machines: Sequence[Machine],
) -> HomePage:
    ordered = _by_date(cases)
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
        (r for r in ordered if r.end_to_end_value is not None and r.end_to_end_value > 1.0),
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


def tags_page(cases: Sequence[CaseListing]) -> IndexPage:
    groups: dict[str, list[IndexRow]] = defaultdict(list)
    for c in cases:
        for tag in c.tags:
            groups[tag].append(IndexRow(c.link, (c.row.date, c.row.summary)))
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


def operators_page(cases: Sequence[CaseListing]) -> IndexPage:
    groups: dict[str, list[IndexRow]] = defaultdict(list)
    for c in cases:
        for kernel in c.kernels:
            groups[kernel.operator].append(kernel.row)
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


def bindings_page(cases: Sequence[CaseListing]) -> IndexPage:
    groups: dict[str, list[IndexRow]] = defaultdict(list)
    labels: dict[str, set[str]] = defaultdict(set)
    for c in cases:
        for launch in c.launches:
            labels[launch.binding].add(launch.label)
            groups[launch.binding].append(launch.row)
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


def all_cases_page(cases: Sequence[CaseListing]) -> IndexPage:
    """Every case, newest first, with its owners and status."""
    listed = tuple(
        IndexRow(Link(r.title, r.path), (r.date, r.owners, r.status, r.summary))
        for r in _by_date(cases)
    )
    return IndexPage(
        path=ALL_CASES_PATH,
        title="All cases",
        intro="Every case, newest first.",
        columns=("Date", "Owners", "Status", "Summary"),
        groups=(IndexGroup("all", "All cases", "all-cases", listed),) if listed else (),
    )


def machines_index_page(cases: Sequence[CaseListing], machines: Sequence[Machine]) -> IndexPage:
    """The cases of each machine (a case that ran on several is under each)."""
    ordered = _by_date(cases)
    groups = []
    for m in machines:
        path = machine_path(m.id)
        listed = tuple(
            IndexRow(Link(r.title, r.path), (r.date, r.binding, r.best_speedup))
            for r in ordered
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


def classes_page(cases: Sequence[CaseListing]) -> IndexPage:
    """The cases by the class of their fastest variant (memory-bound, compute-bound...)."""
    groups: dict[str, list[IndexRow]] = defaultdict(list)
    for r in _by_date(cases):
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
