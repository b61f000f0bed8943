"""The other rooflines on the case and machine pages: one section per kind that applies.

Each section has its charts (chart inputs built here from the analysis's results: each
kind read from its launch or variant result with ``result.get(Kind)``, never computed
here) and plain tables beside them. Kinds: the resource view (every case), precision (launches with
work), instruction (instructions or load/store counts on a machine with an issue rate),
communication (collectives or link bytes), energy (measured energy or power, or the
machine's energy coefficients), sparse (launches that declare 2:4 sparsity) and runtime
(launch counts on a machine with launch costs)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from roofgen.analysis.analyse import CaseResult, MachineResult
from roofgen.analysis.bounds import Thresholds
from roofgen.charts.roofline_inputs import PrecisionInput
from roofgen.model import Machine
from roofgen.site.sections.base import Section, Table, precision_name, slot
from roofgen.site.sections.communication import comm_section
from roofgen.site.sections.energy import energy_section
from roofgen.site.sections.instruction import (
    instruction_input,
    instruction_note,
    instruction_section,
)
from roofgen.site.sections.precision import machine_ceilings, precision_section
from roofgen.site.sections.resources import resource_section
from roofgen.site.sections.runtime import runtime_section
from roofgen.site.sections.sparse import sparse_section
from roofgen.units import fmt_si, fmt_time, work_unit

#: The section of each roofline kind, in page order: ``(case, machine, names, n)`` (the
#: resources' display names; the machine's number on the page) -> the section, or
#: ``None`` where the kind does not apply to the case on that machine.
SECTIONS: tuple[Callable[[CaseResult, Machine, Mapping[str, str], int], Section | None], ...] = (
    resource_section,
    precision_section,
    instruction_section,
    comm_section,
    energy_section,
    sparse_section,
    runtime_section,
)


def case_sections(
    case: CaseResult,
    machines: Mapping[str, Machine],
    names: Mapping[str, str],
    thresholds: Thresholds | None = None,
) -> tuple[Section, ...]:
    """The sections of every roofline kind that applies to ``case``, machine by machine.

    The sections read the analysis's results, computed with its own thresholds;
    ``thresholds`` is accepted for callers that still pass it."""
    out: list[Section] = []
    machine_ids = list(dict.fromkeys(v.machine for v in case.variants))
    for n, machine_id in enumerate(machine_ids, start=1):
        machine = machines[machine_id]
        found = [section(case, machine, names, n) for section in SECTIONS]
        out += [s for s in found if s is not None]
    return _merge(out)


def _merge(sections: list[Section]) -> tuple[Section, ...]:
    """One section per kind, holding the charts and tables of every machine."""
    merged: dict[str, Section] = {}
    for s in sections:
        if s.id in merged:
            prev = merged[s.id]
            merged[s.id] = Section(
                s.id,
                s.title,
                s.intro,
                prev.charts + s.charts,
                prev.tables + s.tables,
                tuple(dict.fromkeys(prev.notes + s.notes)),
            )
        else:
            merged[s.id] = s
    return tuple(merged.values())


def machine_sections(result: MachineResult) -> tuple[Section, ...]:
    """Sections of the machine page: every compute ceiling, the instruction ceilings,
    links, and the energy coefficients."""
    machine = result.machine
    out = []
    title = f"Compute ceilings of {machine.name}"
    device = machine.device_level
    precision = PrecisionInput(
        title,
        "Every precision on every unit (tensor cores unless a unit is named); the legend "
        "tells measured, datasheet and 2:4 sparse peaks apart",
        machine_ceilings(machine),
        device.name if device else "",
        device.bandwidth.value() if device else None,
        (),
        bandwidth_basis=device.bandwidth.basis if device else "datasheet",
    )
    out.append(
        Section(
            "precision",
            "Compute ceilings",
            (
                "Every compute ceiling, each precision on each unit, against device memory. "
                "Precisions on one unit share its time; different units run concurrently."
            ),
            (slot(f"machine:{machine.id}:precision", "precision-1", title, precision),),
            (),
            (),
        )
    )
    ceilings = result.instruction_ceilings
    if ceilings is not None:
        inp = instruction_input(
            machine,
            ceilings,
            f"Instruction roofline of {machine.name}",
            "Issue ceiling, transaction walls and access-pattern walls",
        )
        out.append(
            Section(
                "instructions",
                "Instruction ceilings",
                (
                    "The instruction roofline's ceilings: warp instructions per second and each "
                    "level's transactions per second."
                ),
                (slot(f"machine:{machine.id}:instruction", "instruction-1", inp.title, inp),),
                (),
                (instruction_note(machine, ceilings),),
            )
        )
    if machine.links:
        rows = tuple(
            (
                k.name,
                k.kind,
                fmt_si(k.bandwidth_per_direction.value(), "B/s"),
                fmt_time(k.latency_s),
                fmt_si(k.latency_s * k.bandwidth_per_direction.value(), "B")
                if k.latency_s
                else "n/a",
            )
            for k in machine.links
        )
        out.append(
            Section(
                "links",
                "Links",
                (
                    "Bandwidth per direction and latency of each link; messages smaller than "
                    "latency x bandwidth are latency-bound."
                ),
                (),
                (
                    Table(
                        "",
                        (
                            "Link",
                            "Kind",
                            "Bandwidth per direction",
                            "Latency",
                            "Latency x bandwidth",
                        ),
                        rows,
                        (False, False, True, True, True),
                    ),
                ),
                (),
            )
        )
    out.append(_machine_energy(machine))
    return tuple(out)


def _machine_energy(machine: Machine) -> Section:
    power = machine.power
    rows: list[tuple[str, ...]] = []
    if power is not None:
        rows.append(("Power limit", fmt_si(power.limit.value("datasheet"), "W")))
        constant = power.constant_w
        rows.append(
            ("Constant power", fmt_si(constant, "W") if constant is not None else "not stated")
        )
        rows += [
            (f"Energy per {work_unit(p)}, {precision_name(p)}", fmt_si(v, f"J/{work_unit(p)}"))
            for p, v in sorted(power.energy_per_flop_j.items())
        ]
        rows += [
            (f"Energy per byte, {lvl}", fmt_si(v, "J/B"))
            for lvl, v in sorted(power.energy_per_byte_j.items())
        ]
    has = power is not None and power.energy_per_flop_j and power.energy_per_byte_j
    note = (
        ()
        if has
        else (
            "No published energy coefficients are recorded for this machine: energy charts show "
            "measured energy only, and the power-limit roof is unknown.",
        )
    )
    return Section(
        "energy",
        "Energy",
        (
            "The energy roofline's coefficients: energy per operation and per byte moved, and "
            "constant power under load."
        ),
        (),
        (Table("", ("What", "Value"), tuple(rows), (False, True)),) if rows else (),
        note,
    )


__all__ = ["Section", "Table", "case_sections", "machine_sections"]
