"""What the pages of every case show of one case: its :class:`CaseListing`.

The home page (its rows and its chart of speedups), the index pages (all cases, by
machine, by class, by tag, by operator kind, by binding resource), the method library
and the machine pages read a case only through its listing, made from its analysis by
:func:`listing`. A rebuild takes the listing of an unchanged case from the page cache
(:mod:`roofgen.site.casecache`) instead of analysing the case again: :func:`to_data`
writes a listing as JSON-ready lists, and :func:`from_data` reads it back only in
exactly that shape, every value of the type its field declares (anything else is a
miss: None).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from roofgen.analysis.analyse import CaseResult, VariantResult
from roofgen.charts.speedups import CaseSpeedup
from roofgen.model import Machine
from roofgen.resources import resource_class
from roofgen.resources import resource_names as method_names
from roofgen.site.casepage import kernel_rows
from roofgen.site.comparison import fmt_speedup
from roofgen.site.links import html_link
from roofgen.site.names import display_name, resource_names
from roofgen.site.pagetypes import HOME_PATH, CaseRow, IndexRow, Link, case_path, machine_path
from roofgen.units import fmt_percent, fmt_ratio

__all__ = ["CaseListing", "Effect", "KernelRow", "LaunchRow", "Speedups", "from_data",
           "listing", "to_data"]  # fmt: skip


@dataclass(frozen=True)
class KernelRow:
    """A kernel on the page of operator kinds, under its operator's kind."""

    operator: str
    row: IndexRow


@dataclass(frozen=True)
class LaunchRow:
    """A launch on the page of binding resources: the id of its binding resource
    (``insufficient-data`` without one), that resource's name on its machine."""

    binding: str
    label: str
    row: IndexRow


@dataclass(frozen=True)
class Speedups:
    """The case on the home page's chart: its fastest variant's speedup against the
    baseline (``value``, the order of the chart), its rows, and whether the kernel
    speedup clears the noise."""

    value: float
    rows: tuple[CaseSpeedup, ...]
    significant: bool


@dataclass(frozen=True)
class Effect:
    """The case in the method library: its fastest variant against its first (``row``),
    its patterns, the class of the resource that bound its baseline (and that
    resource's name, if it has one) and the operator kinds of its kernels."""

    row: IndexRow
    patterns: tuple[str, ...]
    bottleneck: str
    bottleneck_name: str | None
    operators: tuple[str, ...]


@dataclass(frozen=True)
class CaseListing:
    """One case as the pages of every case show it."""

    row: CaseRow
    tags: tuple[str, ...]
    kernels: tuple[KernelRow, ...]
    launches: tuple[LaunchRow, ...]
    machines: tuple[str, ...]  # the ids of the machines its variants ran on
    speedups: Speedups | None  # None: one variant, nothing compared
    effect: Effect | None  # None: one variant

    @property
    def id(self) -> str:
        return self.row.id

    @property
    def link(self) -> Link:
        return Link(self.row.title, self.row.path)


def listing(case: CaseResult, machines: Mapping[str, Machine]) -> CaseListing:
    """The listing of ``case``, from its analysis and its ``machines``."""
    link = Link(case.case.title, case_path(case.case.id))
    kernels = tuple(
        KernelRow(operator.split(" ", 1)[0], IndexRow(link, (name, shape, dtypes)))
        for _id, name, operator, shape, dtypes in kernel_rows(case.case)
    )
    return CaseListing(
        row=_case_row(case, machines),
        tags=case.case.tags,
        kernels=kernels,
        launches=_launches(case, machines, link),
        machines=tuple(dict.fromkeys(v.machine for v in case.variants)),
        speedups=_speedups(case),
        effect=_effect(case, machines, link) if len(case.variants) > 1 else None,
    )


def _fastest(case: CaseResult, start: int = 0) -> VariantResult:
    """The fastest variant from the ``start``-th on (the first of equals: by position,
    not by searching the tuple for each, which took n² comparisons of whole results)."""
    ranked = enumerate(case.variants[start:])
    return max(ranked, key=lambda iv: (iv[1].speedup_vs_first, -iv[0]))[1]


def _best_e2e(case: CaseResult) -> float | None:
    values = [v.end_to_end_speedup_vs_first for v in case.variants[1:]]
    known = [v for v in values if v is not None]
    return max(known) if known else None


def _case_row(case: CaseResult, machines: Mapping[str, Machine]) -> CaseRow:
    c = case.case
    best = _fastest(case)
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


def _launches(
    case: CaseResult, machines: Mapping[str, Machine], link: Link
) -> tuple[LaunchRow, ...]:
    rows = []
    for v in case.variants:
        machine = machines[v.machine]
        names = resource_names(machine)
        for r in v.launches:
            values = (r.variant, r.kernel, machine.name, r.klass, fmt_percent(r.efficiency))
            rows.append(
                LaunchRow(
                    r.binding or "insufficient-data",
                    display_name(names, r.binding) if r.binding else "Insufficient data",
                    IndexRow(link, values),
                )
            )
    return tuple(rows)


def _speedups(case: CaseResult) -> Speedups | None:
    """The kernel speedup of the fastest variant against the baseline (interval and
    noise from the comparison), and that variant's measured end-to-end speedup."""
    from roofgen.site.verdict import best_comparison

    best = best_comparison(case)
    if best is None:
        return None
    c = case.case
    href = html_link(HOME_PATH, case_path(c.id))
    s = best.speedup
    rows = [CaseSpeedup(c.id, c.title, href, "kernel", s.value, s.low, s.high, s.noise)]
    e2e = next((e for e in case.comparison.end_to_end if e.variant == best.variant), None)
    if e2e is not None:
        noise = "unknown noise"
        rows.append(CaseSpeedup(c.id, c.title, href, "end-to-end", e2e.measured, None, None, noise))
    return Speedups(s.value, tuple(rows), s.noise == "significant")


def _effect(case: CaseResult, machines: Mapping[str, Machine], link: Link) -> Effect:
    """The fastest variant against the first: the kernel speedup (with its noise
    verdict), the end-to-end speedup where both were timed, how the binding moved."""
    comparison = case.comparison
    best = _fastest(case, 1)
    vc = comparison.variant(best.variant)
    assert vc is not None
    e2e = next((e for e in comparison.end_to_end if e.variant == best.variant), None)
    row = IndexRow(
        link,
        (
            f"{case.variants[0].variant} → {best.variant}",
            fmt_speedup(vc.speedup),
            vc.speedup.noise,
            fmt_ratio(e2e.measured) if e2e is not None else "n/a",
            vc.movement.text(method_names(machines[best.machine])),
        ),
    )
    base = case.variants[0]
    machine = machines[base.machine]
    binding = base.binding
    return Effect(
        row,
        case.case.patterns or ("other",),
        "insufficient-data" if binding is None else resource_class(binding, machine),
        None if binding is None else method_names(machine).get(binding, binding),
        tuple(dict.fromkeys(k.operator.kind for k in case.case.kernels)),
    )


# --------------------------------------------------------------------------- as data


class _Miss(Exception):
    """A value not of the shape its field declares."""


def to_data(value: Any) -> Any:
    """A listing (or any of its parts) as JSON-ready data: a dataclass as the list of
    its fields' values, a tuple as a list."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [to_data(getattr(value, f.name)) for f in dataclasses.fields(value)]
    if isinstance(value, tuple):
        return [to_data(v) for v in value]
    return value


def from_data(data: Any) -> CaseListing | None:
    """The listing :func:`to_data` wrote as ``data``, or None when ``data`` has any
    other shape."""
    try:
        listing = _read(CaseListing, data)
    except (_Miss, ValueError, TypeError, RecursionError):  # ValueError: a type refused it
        return None
    return typing.cast(CaseListing, listing)


@functools.cache
def _fields(cls: type) -> tuple[Any, ...]:
    hints = typing.get_type_hints(cls)
    return tuple(hints[f.name] for f in dataclasses.fields(cls))


def _read(tp: Any, value: Any) -> Any:
    if tp in (str, int, float, bool):
        if type(value) is not tp:
            raise _Miss
        return value
    if tp is type(None):
        if value is not None:
            raise _Miss
        return None
    origin = typing.get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        for arm in typing.get_args(tp):
            try:
                return _read(arm, value)
            except _Miss:
                continue
        raise _Miss
    if not isinstance(value, list):
        raise _Miss
    if origin is tuple:
        item, more = typing.get_args(tp)
        assert more is Ellipsis, tp
        return tuple(_read(item, v) for v in value)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        fields = _fields(tp)
        if len(value) != len(fields):
            raise _Miss
        return tp(*(_read(f, v) for f, v in zip(fields, value, strict=True)))
    raise AssertionError(f"no reader for {tp!r}")
