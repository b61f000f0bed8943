"""The communication roofline: link traffic and collectives."""

from __future__ import annotations

from collections.abc import Mapping

from roofgen.analysis.analyse import CaseResult
from roofgen.analysis.communication import CommunicationResult
from roofgen.charts.roofline_inputs import (
    CollectivePoint,
    CommPoint,
    CommunicationInput,
    LinkRoof,
)
from roofgen.model import Machine
from roofgen.site.sections.base import (
    Item,
    Section,
    Table,
    launch_items,
    precision_name,
    slot,
)
from roofgen.units import fmt_si, fmt_time, work_unit


def comm_section(
    case: CaseResult, machine: Machine, names: Mapping[str, str], n: int
) -> Section | None:
    items = [
        i
        for i in launch_items(case, machine.id)
        if i.launch.measurement.collectives or i.launch.measurement.link_bytes
    ]
    if not items or not machine.links:
        return None
    points = []
    collectives = []
    rows = []
    notes = []
    peak, peak_label = _comm_peak(items, machine)
    for item in items:
        result = item.result.get(CommunicationResult)
        for traffic in result.links:
            if traffic.intensity_flop_per_byte is not None and traffic.flop_per_s is not None:
                points.append(
                    CommPoint(
                        item.key, traffic.link, traffic.intensity_flop_per_byte, traffic.flop_per_s
                    )
                )
        for c in result.collectives:
            measured = c.measured_s
            if c.bus_b > 0:
                collectives.append(
                    CollectivePoint(
                        item.key,
                        c.kind,
                        c.ranks,
                        c.topology,
                        c.link,
                        c.bus_b,
                        c.bound_s,
                        measured,
                        c.regime or "unknown (no link latency)",
                    )
                )
            rows.append(
                (
                    item.key.variant,
                    item.key.kernel,
                    c.kind,
                    fmt_si(c.size_b, "B"),
                    str(c.ranks),
                    c.topology or "n/a",
                    c.link,
                    f"{c.factor:.3g}",
                    fmt_si(c.bus_b, "B"),
                    f"{c.steps} x {fmt_time(c.latency_s / c.steps)}"
                    if c.latency_s is not None and c.steps
                    else "unknown",
                    fmt_time(c.bound_s) if c.latency_s is not None else f">= {fmt_time(c.bound_s)}",
                    fmt_time(measured),
                    c.regime or "unknown (no link latency)",
                )
            )
        notes += _overlap_notes(item, machine)
    title = f"Communication roofline of {case.case.title} on {machine.name}"
    inp = CommunicationInput(
        title=title,
        subtitle=(
            "Link bandwidth per direction (curves: one latency step); collectives cost "
            "steps x latency + bus bytes / bandwidth"
        ),
        links=tuple(
            LinkRoof(k.id, k.name, k.bandwidth_per_direction.value(), k.latency_s)
            for k in machine.links
        ),
        compute_label=peak_label,
        compute_peak=peak,
        points=tuple(points),
        collectives=tuple(collectives),
    )
    header = (
        "Variant",
        "Kernel",
        "Collective",
        "Size",
        "Ranks",
        "Topology",
        "Link",
        "Bus factor",
        "Bus bytes",
        "Latency (steps x link latency)",
        "Bound",
        "Measured",
        "Regime",
    )
    return Section(
        id="communication",
        title="Communication",
        intro=(
            "Bytes over NVLink, PCIe or the network, per direction (datasheets print NVLink "
            "as the two-way total). A collective costs one link latency per step of its "
            "algorithm (ring all-reduce 2(n-1); ring reduce-scatter, all-gather, broadcast "
            "and reduce n-1; tree all-reduce 2 ceil(log2 n); in-network all-reduce 2) plus "
            "its bus bytes over the bandwidth; bus bytes are the size times the nccl-tests "
            "bus-bandwidth factor (all-reduce 2(n-1)/n; reduce-scatter, all-gather and "
            "all-to-all (n-1)/n; broadcast and reduce 1; an in-network reduction its own). "
            "Small messages are latency-bound, large ones bandwidth-bound; without a link "
            "latency the regime is unknown and the bound counts the bandwidth alone. "
            "Communication that overlaps the rest of the work joins the max over resources; "
            "communication that does not adds to it."
        ),
        charts=(
            slot(
                f"case:{case.case.id}:{machine.id}:communication", f"communication-{n}", title, inp
            ),
        ),
        tables=(
            Table(
                "Collectives",
                header,
                tuple(rows),
                (False,) * 4 + (True,) + (False,) * 2 + (True,) * 5 + (False,),
            ),
        )
        if rows
        else (),
        notes=tuple(dict.fromkeys(notes)),
    )


def _comm_peak(items: list[Item], machine: Machine) -> tuple[float | None, str]:
    best: tuple[float, str] | None = None
    for item in items:
        for unit_id, by_precision in (item.launch.measurement.flops or {}).items():
            unit = machine.unit(unit_id)
            for precision, work in by_precision.items():
                if unit is None or work <= 0 or work_unit(precision) != "FLOP":
                    continue
                value = unit.peaks[precision].value()
                if best is None or value > best[0]:
                    best = (value, f"{unit.name} {precision_name(precision)}")
    return (best[0], best[1]) if best else (None, "")


def _overlap_notes(item: Item, machine: Machine) -> list[str]:
    m = item.launch.measurement
    if not m.collectives:
        return []
    if "communication-serial" in item.result.facts:
        return [
            f"{item.key.label}: communication does not overlap compute; its link time "
            "adds to the bound of the other resources."
        ]
    taken = sum(c.sms or 0 for c in m.collectives)
    if taken and machine.issue is not None and item.result.flop:
        left = max(machine.issue.sms - taken, 0)
        return [
            f"{item.key.label}: communication overlaps compute, but the collective kernel "
            f"occupies {taken} of {machine.issue.sms} SMs, so the compute roofs are scaled "
            f"to {left}/{machine.issue.sms} of their peak."
        ]
    return []
