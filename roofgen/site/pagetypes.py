"""The page types of the site: one frozen dataclass per page and per piece of a page,
and the docs paths pages link by. Built by :mod:`roofgen.site.context` and the page
builders it calls; laid out by the templates. Numbers in them are already formatted with
their units; user strings are kept as they are and escaped by the templates'
filters. Links between pages are docs paths (``cases/vector-add/index.md``); the
templates make them relative to the page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: the page types import nothing of the page builders
    from roofgen.charts.kinds import ChartInput
    from roofgen.site.advice import AdviceGroup
    from roofgen.site.comparison import BeforeAfter, SweepTable
    from roofgen.site.quality import Mark, QualityItem
    from roofgen.site.sections.base import Section

HOME_PATH = "index.md"
METHOD_PATH = "method/index.md"
TAGS_PATH = "tags/index.md"
OPERATORS_PATH = "operators/index.md"
BINDINGS_PATH = "bindings/index.md"
# beside the case and machine folders, never in them: no id can collide with them
ALL_CASES_PATH = "all-cases/index.md"
BY_MACHINE_PATH = "by-machine/index.md"
BY_CLASS_PATH = "by-class/index.md"
#: MkDocs' ``not_in_nav``: the case pages, reached through the index pages, the tags
#: and search, so that the navigation every page carries does not grow with the cases.
NOT_IN_NAV = "/cases/*/index.md"


def case_path(case_id: str) -> str:
    return f"cases/{case_id}/index.md"


def machine_path(machine_id: str) -> str:
    return f"machines/{machine_id}/index.md"


def anchor(prefix: str, key: str) -> str:
    """An HTML id for ``key`` (ids are ``[a-z0-9._-]``): unique and attr_list-safe."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c == "-") else f"_{ord(c):x}" for c in key)
    return f"{prefix}-{safe}"


@dataclass(frozen=True)
class Link:
    """A link to a page of the site (``path``) or to an http(s) URL (``url``)."""

    text: str
    path: str | None = None
    url: str | None = None
    anchor: str | None = None


@dataclass(frozen=True)
class ChartSlot:
    """Where a chart goes: ``key`` names it; the build renders ``input`` for it."""

    key: str
    spec_id: str
    caption: str
    input: ChartInput


@dataclass(frozen=True)
class CaseRow:
    """One case in a list or table."""

    id: str
    title: str
    path: str
    owners: str
    date: str
    status: str
    summary: str
    machines: tuple[Link, ...]
    binding: str
    klass: str
    efficiency: str
    best_speedup: str
    end_to_end_speedup: str
    best_speedup_value: float
    end_to_end_value: float | None


@dataclass(frozen=True)
class NavEntry:
    title: str
    path: str | None = None
    children: tuple[NavEntry, ...] = ()


@dataclass(frozen=True)
class HomePage:
    path: str
    title: str
    description: str
    recent: tuple[CaseRow, ...]
    wins: tuple[CaseRow, ...]
    cases: tuple[CaseRow, ...]
    machines: tuple[Link, ...]
    indexes: tuple[Link, ...]
    method: Link
    all_cases: str = ALL_CASES_PATH
    chart: ChartSlot | None = None  # every case's speedups
    significant: int | None = None  # cases whose best kernel speedup is beyond the noise


@dataclass(frozen=True)
class LaunchRow:
    kernel: str
    kernel_name: str
    calls: int
    time: str
    share: str
    flop_rate: str
    intensities: tuple[str, ...]  # aligned with VariantSection.levels
    bound: str
    serial_bound: str
    binding: str
    runner_up: str
    klass: str
    efficiency: str
    efficiency_datasheet: str
    headroom: str
    covered: str
    unknown: str
    verdict: str
    modelled: str = ""  # values taken from the operator model
    time_marks: tuple[Mark, ...] = ()  # measurement-quality findings that weaken the time
    bound_marks: tuple[Mark, ...] = ()  # ... and those that weaken the bound


@dataclass(frozen=True)
class MeasurementRow:
    kernel: str
    timing: str
    statistics: str
    clock: str
    clock_scale: str
    notes: str


@dataclass(frozen=True)
class VariantSection:
    id: str
    name: str
    description: str
    machine: Link
    levels: tuple[str, ...]
    time: str
    speedup: str
    bound: str
    binding: str
    runner_up: str
    klass: str
    efficiency: str
    efficiency_datasheet: str
    headroom: str
    flop_rate: str
    unknown: str
    verdict: str
    launches: tuple[LaunchRow, ...]
    measurements: tuple[MeasurementRow, ...]


@dataclass(frozen=True)
class EndToEndRow:
    variant: str
    kernel_time: str
    kernel_speedup: str
    end_to_end_time: str
    end_to_end_speedup: str
    note: str


@dataclass(frozen=True)
class Verdict:
    """The card at the top of a case page, every line read from the results."""

    variant: str  # the fastest variant, which the first two lines describe
    binding: str  # the binding resource
    klass: str  # bound, co-bound, below-roofs, ...
    distance: str  # efficiency against the roof and the headroom
    win: str  # the biggest measured speedup, its noise, end to end
    recommendation: str  # the top recommendation for the fastest variant


@dataclass(frozen=True)
class CasePage:
    path: str
    id: str
    title: str
    summary: str
    date: str
    owners: tuple[str, ...]
    status: str
    file: str
    tags: tuple[Link, ...]
    patterns: tuple[str, ...]
    machines: tuple[Link, ...]
    links: tuple[Link, ...]
    narrative: tuple[tuple[str, str], ...]  # (heading, Markdown)
    method_description: str
    method: tuple[tuple[str, str], ...]
    kernels: tuple[tuple[str, str, str, str, str], ...]  # id, name, operator, shape, dtypes
    kernel_notes: tuple[tuple[str, str], ...]  # id, description (Markdown)
    charts: tuple[ChartSlot, ...]
    variants: tuple[VariantSection, ...]
    end_to_end: tuple[EndToEndRow, ...]
    recommendations: tuple[AdviceGroup, ...]
    thresholds: str
    sections: tuple[Section, ...] = ()  # the other rooflines (resources, precision, ...)
    before_after: BeforeAfter | None = None  # speedups, movement, end-to-end projection
    sweeps: tuple[SweepTable, ...] = ()  # launches measured over shape sweeps
    quality: tuple[QualityItem, ...] = ()  # plausibility and hygiene findings
    variant_advice: tuple[AdviceGroup, ...] = ()  # recommendations per variant
    models: tuple[tuple[str, str, str, str], ...] = ()  # kernel, model FLOPs, bytes, notes
    verdict: Verdict | None = None

    @property
    def section_charts(self) -> tuple[ChartSlot, ...]:
        return tuple(c for s in self.sections for c in s.charts)


@dataclass(frozen=True)
class RoofRow:
    resource: str
    name: str
    detail: str  # precision, role...
    datasheet: str
    measured: str
    used: str  # which one the analysis uses
    source: str


@dataclass(frozen=True)
class MachinePage:
    path: str
    id: str
    name: str
    vendor: str
    version: str
    description: str
    file: str
    clocks: tuple[tuple[str, str], ...]
    roofs: tuple[RoofRow, ...]
    ridge_levels: tuple[str, ...]
    ridges: tuple[tuple[str, tuple[str, ...]], ...]  # compute roof, one value per level
    other: tuple[tuple[str, str], ...]
    chart: ChartSlot
    cases: tuple[Link, ...]
    sections: tuple[Section, ...] = ()  # compute ceilings, instruction ceilings, links, energy

    @property
    def section_charts(self) -> tuple[ChartSlot, ...]:
        return tuple(c for s in self.sections for c in s.charts)


@dataclass(frozen=True)
class IndexRow:
    case: Link
    detail: tuple[str, ...]


@dataclass(frozen=True)
class IndexGroup:
    key: str
    label: str
    anchor: str
    rows: tuple[IndexRow, ...]
    description: str = ""


@dataclass(frozen=True)
class IndexPage:
    path: str
    title: str
    intro: str
    columns: tuple[str, ...]  # after the case column
    groups: tuple[IndexGroup, ...]


@dataclass(frozen=True)
class SiteContext:
    name: str
    home: HomePage
    cases: tuple[CasePage, ...]
    machines: tuple[MachinePage, ...]
    indexes: tuple[IndexPage, ...]
    method_path: str
    nav: tuple[NavEntry, ...]
    newest_date: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def charts(self) -> tuple[ChartSlot, ...]:
        slots = [self.home.chart] if self.home.chart else []
        slots += [c for page in self.cases for c in page.charts]
        slots += [c for page in self.cases for c in page.section_charts]
        slots += [c for page in self.machines for c in (page.chart, *page.section_charts)]
        return tuple(slots)
