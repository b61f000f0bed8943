"""The machine page's context: its roofs with their sources, ridge points, clocks, other
capacities, its empty roofline and the sections of the other rooflines."""

from __future__ import annotations

from collections.abc import Sequence

from roofgen.analysis.analyse import Analysis
from roofgen.model import Machine, Roof
from roofgen.site.charts import machine_chart_input, precision_label
from roofgen.site.listing import CaseListing
from roofgen.site.pagetypes import ChartSlot, MachinePage, RoofRow, machine_path
from roofgen.site.sections import machine_sections
from roofgen.units import fmt_frequency, fmt_si, fmt_time, rate_unit, work_unit

__all__ = ["machine_page"]


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
            label, unit = precision_label(precision), rate_unit(precision)
            rows.append(_roof_row(f"compute.{u.id}", u.name, label, roof, unit))
        for ceiling in u.ceilings:
            rows.append(
                _roof_row(
                    f"compute.{u.id}",
                    ceiling.name,
                    f"sub-ceiling, {precision_label(ceiling.precision)}",
                    ceiling.value,
                    rate_unit(ceiling.precision),
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


def machine_page(m: Machine, analysis: Analysis, cases: Sequence[CaseListing]) -> MachinePage:
    result = next(r for r in analysis.machines if r.machine.id == m.id)
    levels = tuple(level.name for level in m.memory)
    ridges = []
    for u in m.compute:
        for precision in u.peaks:
            key = f"compute.{u.id}.{precision}"
            by_level = result.ridge_flop_per_byte.get(key, {})
            per_byte = f"{work_unit(precision)}/B"  # an OP/s peak over B/s is OP/B
            values = tuple(
                fmt_si(by_level[level.id], per_byte) if level.id in by_level else "n/a"
                for level in m.memory
            )
            ridges.append((f"{u.name} {precision_label(precision)}", values))
    clocks = [("SM clock (roofs stated at)", fmt_frequency(m.sm_clock_hz))]
    if m.base_sm_clock_hz:
        clocks.append(("Base SM clock", fmt_frequency(m.base_sm_clock_hz)))
    if m.memory_clock_hz:
        clocks.append(("Memory clock", fmt_frequency(m.memory_clock_hz)))
    using = [c for c in cases if m.id in c.machines]
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
        cases=tuple(c.link for c in using),
        sections=machine_sections(result),
    )
