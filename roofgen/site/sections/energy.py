"""The energy roofline (Choi, Bedard, Fowler, Vuduc)."""

from __future__ import annotations

from collections.abc import Mapping

from roofgen.analysis.analyse import CaseResult
from roofgen.analysis.energy import EnergyResult, StepEnergy
from roofgen.charts.roofline_inputs import (
    EnergyInput,
    EnergyModel,
    EnergyPoint,
)
from roofgen.model import Machine
from roofgen.site.sections.base import (
    Item,
    Section,
    Table,
    launch_items,
    slot,
)
from roofgen.units import fmt_frequency, fmt_si, work_unit


def energy_model(machine: Machine, precision: str) -> EnergyModel | None:
    """The energy roofline's coefficients for ``precision`` at device memory, if the machine
    states them all (energy per FLOP and per byte, constant power)."""
    power = machine.power
    device = machine.device_level
    if power is None or device is None:
        return None
    units = [u for u in machine.compute if precision in u.peaks]
    if not units:
        return None
    # The unit with the highest peak for the precision: its own coefficient (what `fit
    # energy` writes), else the machine's for the precision.
    unit = max(units, key=lambda u: u.peaks[precision].value())
    e_flop = power.energy_per_flop(unit, precision.removesuffix("-sparse"))
    e_byte = power.energy_per_byte_j.get(device.id)
    if e_flop is None or e_byte is None or power.constant_w is None:
        return None
    return EnergyModel(
        precision,
        e_flop,
        e_byte,
        power.constant_w,
        unit.peaks[precision].value(),
        device.bandwidth.value(),
    )


def _main_precision(items: list[Item]) -> str | None:
    work: dict[str, float] = {}
    for item in items:
        for by_precision in (item.launch.measurement.flops or {}).values():
            for precision, amount in by_precision.items():
                if work_unit(precision) == "FLOP":
                    work[precision] = work.get(precision, 0.0) + amount * item.result.calls
    return max(sorted(work), key=lambda p: work[p]) if work else None


def energy_section(
    case: CaseResult, machine: Machine, names: Mapping[str, str], n: int
) -> Section | None:
    if machine.power is None:
        return None
    items = list(launch_items(case, machine.id))
    results = {id(i): i.result.get(EnergyResult) for i in items}
    if not any(e.energy_j is not None for e in results.values()):
        return None
    precision = _main_precision(items)
    model = energy_model(machine, precision) if precision else None
    points = []
    notes = []
    for item in items:
        e = results[id(item)]
        m = item.launch.measurement
        moved = e.device_bytes
        if e.flop_per_j and moved and e.flop:
            points.append(
                EnergyPoint(
                    item.key,
                    e.flop / moved,
                    e.flop_per_j,
                    e.average_power_w,
                    "measured" if e.measured_j is not None else "model",
                    e.power_limited,
                )
            )
        if e.power_limited and m.sm_clock_hz and e.average_power_w:
            notes.append(
                f"{item.key.label} is power-limited: the SM clock ran at "
                f"{fmt_frequency(m.sm_clock_hz)}, below the {fmt_frequency(machine.sm_clock_hz)} "
                f"the roofs assume, while the board drew {e.average_power_w:.0f} W of its "
                f"{machine.power.limit.value('datasheet'):.0f} W limit."
            )
    note = (
        ""
        if model
        else (
            f"No published energy coefficients for {machine.name}: measured energy only; the "
            "power-limit roof is unknown."
        )
    )
    if note:
        notes.append(note)
    title = f"Energy roofline of {case.case.title} on {machine.name}"
    inp = EnergyInput(
        title,
        "Energy = e_flop x FLOPs + e_byte x bytes + constant power x time",
        machine.power.limit.value("datasheet"),
        machine.power.constant_w,
        model,
        note,
        tuple(points),
    )
    return Section(
        id="energy",
        title="Energy",
        intro=(
            "The energy roofline (Choi, Bedard, Fowler, Vuduc, IPDPS 2013): energy = e_flop "
            "x FLOPs + e_byte x bytes + constant power x time, FLOP/J (= FLOP/s per watt) against "
            "intensity. The power limit is a roof on time: time >= dynamic energy / (limit - "
            "constant power). Measured energy divided by the limit can never bind (an enforced "
            "limit caps average power); a power-bound launch shows instead by its clock, below "
            "the roofs' clock while average power sits at the limit."
        ),
        charts=(slot(f"case:{case.case.id}:{machine.id}:energy", f"energy-{n}", title, inp),),
        tables=(_energy_table(case, machine),),
        notes=tuple(notes),
    )


def _energy_table(case: CaseResult, machine: Machine) -> Table:
    rows = []
    for v in case.variants:
        if v.machine != machine.id:
            continue
        step = v.get(StepEnergy)
        rows.append(
            (
                v.variant,
                fmt_si(step.measured_j, "J"),
                fmt_si(step.modelled_j, "J"),
                fmt_si(step.flop_per_j, "FLOP/J"),
                fmt_si(step.average_power_w, "W"),
                ", ".join(step.power_limited) or "none",
            )
        )
    return Table(
        "Energy to solution (one step)",
        ("Variant", "Measured", "Model", "FLOP/J", "Average power", "Power-limited"),
        tuple(rows),
        (False, True, True, True, True, False),
    )
