"""Typed page contexts, built in one place from the analysis: :func:`build_context`.

Every page of the site is one frozen dataclass (:mod:`roofgen.site.pagetypes`), built by
the module of its page (:mod:`roofgen.site.casepage`, :mod:`roofgen.site.machinepage`,
:mod:`roofgen.site.indexes`); the templates only lay them out. Numbers are formatted
there (with their units); user strings are kept as they are and escaped by the
templates' filters. Links between pages are docs paths (``cases/vector-add/index.md``);
the templates make them relative to the page.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from roofgen.advice import Advice
from roofgen.analysis.analyse import Analysis
from roofgen.analysis.findings import Finding
from roofgen.model import Machine
from roofgen.site.casepage import case_page
from roofgen.site.guide import GUIDE_NAV
from roofgen.site.indexes import (
    all_cases_page,
    bindings_page,
    classes_page,
    home_page,
    machines_index_page,
    operators_page,
    tags_page,
)
from roofgen.site.listing import CaseListing, listing
from roofgen.site.machinepage import machine_page
from roofgen.site.names import resource_names
from roofgen.site.pagetypes import (
    ALL_CASES_PATH,
    BINDINGS_PATH,
    BY_CLASS_PATH,
    BY_MACHINE_PATH,
    HOME_PATH,
    METHOD_PATH,
    OPERATORS_PATH,
    TAGS_PATH,
    CasePage,
    CaseRow,
    ChartSlot,
    HomePage,
    IndexPage,
    MachinePage,
    NavEntry,
    SiteContext,
    case_path,
    machine_path,
)

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


def _nav(
    machines: Sequence[MachinePage],
    extra: Sequence[NavEntry],
    methods: Sequence[NavEntry] = (),
) -> tuple[NavEntry, ...]:
    """The navigation every page carries: its size does not grow with the cases, which
    are reached through the index pages, the tags and search (``NOT_IN_NAV``)."""
    sections = [
        NavEntry("Home", HOME_PATH),
        NavEntry(
            "Cases",
            children=(
                NavEntry("All cases", ALL_CASES_PATH),
                NavEntry("By machine", BY_MACHINE_PATH),
                NavEntry("By class", BY_CLASS_PATH),
            ),
        ),
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
    reused: Collection[str] = (),
    listings: Sequence[CaseListing] | None = None,
) -> SiteContext:
    """Every page's context, from the analysis and the machines it refers to (with the
    plausibility ``findings`` and the rules' ``advice`` where the check produced them).

    The pages of every case (home, machines, indexes, methods) read each case's
    listing (:mod:`roofgen.site.listing`): ``listings``, every case's in the order of
    their ids, where the caller has them (a rebuild takes those of unchanged cases,
    which it did not analyse, from the page cache), else made from the analysis. The
    cases of ids ``reused`` have no page context: the build has their pages from an
    earlier build (:mod:`roofgen.site.casecache`)."""
    from roofgen.site.methods import method_nav, method_pages

    if listings is None:
        listings = [listing(c, machines) for c in analysis.cases]
    used_machines = [machines[m.machine.id] for m in analysis.machines]
    by_case: dict[str, list[Finding]] = {}
    for finding in findings:  # grouped once: each case page reads its own
        by_case.setdefault(finding.case, []).append(finding)
    cases = tuple(
        case_page(c, machines, analysis, by_case.get(c.case.id, ()), advice)
        for c in analysis.cases
        if c.case.id not in reused
    )
    machine_pages = tuple(machine_page(m, analysis, listings) for m in used_machines)
    dates = [c.row.date for c in listings if c.row.date]
    return SiteContext(
        name=name,
        home=home_page(name, description, listings, used_machines),
        cases=cases,
        machines=machine_pages,
        indexes=(
            all_cases_page(listings),
            machines_index_page(listings, used_machines),
            classes_page(listings),
            tags_page(listings),
            operators_page(listings),
            bindings_page(listings),
            *method_pages(listings),
        ),
        method_path=METHOD_PATH,
        nav=_nav(machine_pages, extra_nav, method_nav()),
        newest_date=max(dates) if dates else "",
    )
