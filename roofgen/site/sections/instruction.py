"""The instruction roofline (Ding and Williams)."""

from __future__ import annotations

from collections.abc import Mapping

from roofgen.analysis.analyse import CaseResult
from roofgen.analysis.instruction import InstructionCeilings, InstructionResult
from roofgen.charts.roofline_inputs import (
    InstructionInput,
    InstructionPointInput,
    TransactionWall,
)
from roofgen.model import Machine
from roofgen.site.sections.base import Section, Table, launch_items, slot
from roofgen.units import fmt_frequency, fmt_percent, fmt_si


def instruction_input(
    machine: Machine,
    ceilings: InstructionCeilings,
    title: str,
    subtitle: str,
    points: tuple[InstructionPointInput, ...] = (),
) -> InstructionInput:
    walls = tuple(
        TransactionWall(lvl.id, lvl.name, lvl.role, ceilings.transactions_per_s[lvl.id])
        for lvl in machine.memory
        if lvl.id in ceilings.transactions_per_s
    )
    return InstructionInput(
        title,
        subtitle,
        ceilings.warp_size,
        ceilings.issue_per_s,
        walls,
        ceilings.global_walls,
        ceilings.shared_walls,
        points,
    )


def instruction_section(
    case: CaseResult, machine: Machine, names: Mapping[str, str], n: int
) -> Section | None:
    ceilings = case.machines[machine.id].instruction_ceilings
    if ceilings is None:
        return None
    items = list(launch_items(case, machine.id))
    points = []
    rows = []
    for item in items:
        result = item.result.get(InstructionResult)
        found = result.points
        for p in found:
            level = machine.level(p.level)
            role = level.role if level else p.level
            name = level.name if level else f"{p.level.capitalize()} load/store"
            points.append(
                InstructionPointInput(item.key, p.level, name, role, p.intensity, p.warp_ips)
            )
        if found:
            by = {p.level: p for p in found}
            rows.append(
                (
                    item.key.variant,
                    item.key.kernel,
                    fmt_si(result.instructions, "inst"),
                    fmt_si(result.warp_ips, "inst/s"),
                    fmt_percent(result.issue_share),
                    *[
                        f"{by[lvl.id].intensity:.3g}" if lvl.id in by else "n/a"
                        for lvl in machine.memory
                    ],
                    f"{by['global'].intensity:.3g}" if "global" in by else "n/a",
                    f"{by['shared'].intensity:.3g}" if "shared" in by else "n/a",
                )
            )
    if not points:
        return None
    title = f"Instruction roofline of {case.case.title} on {machine.name}"
    inp = instruction_input(
        machine,
        ceilings,
        title,
        "Ding and Williams: warp GIPS against warp instructions per transaction",
        tuple(points),
    )
    header = (
        "Variant",
        "Kernel",
        "Warp instructions",
        "Warp IPS",
        "Of issue",
        *[f"Inst/txn {lvl.name}" for lvl in machine.memory],
        "Global LD/ST per sector",
        "Shared LD/ST per wavefront",
    )
    return Section(
        id="instructions",
        title="Instructions",
        intro=(
            "The instruction roofline counts warp instructions instead of FLOPs: its flat "
            "roof is instruction issue (SMs x schedulers x clock), its slanted walls each "
            "memory level's transactions per second (bandwidth / transaction size); L1 "
            "transactions include shared-memory wavefronts. The lower panel places load/store "
            "instructions per global sector and per shared wavefront against the walls of "
            "the access patterns (stride 0, unit stride, large stride; no bank conflict, "
            "full conflict), derived from the warp width."
        ),
        charts=(
            slot(f"case:{case.case.id}:{machine.id}:instruction", f"instruction-{n}", title, inp),
        ),
        tables=(Table("", header, tuple(rows), (False, False, *(True,) * (len(header) - 2))),),
        notes=(instruction_note(machine, ceilings),),
    )


def instruction_note(machine: Machine, c: InstructionCeilings) -> str:
    assert machine.issue is not None
    walls = ", ".join(
        f"{lvl.name} {c.transactions_per_s[lvl.id] / 1e9:.4g} GTXN/s "
        f"({fmt_si(lvl.bandwidth.value(), 'B/s')} / {c.transaction_size_b[lvl.id]:g} B)"
        for lvl in machine.memory
        if lvl.id in c.transactions_per_s
    )
    return (
        f"Issue: {machine.issue.sms} SMs x {machine.issue.schedulers_per_sm} schedulers x "
        f"{fmt_frequency(machine.sm_clock_hz)} = {c.issue_per_s / 1e9:.4g} warp GIPS; "
        f"transactions: {walls or 'no level states a transaction size'}; warp width "
        f"{c.warp_size}."
    )
