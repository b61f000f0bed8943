"""The runtime roofline: launches and synchronisations per step."""

from __future__ import annotations

from collections.abc import Mapping

from roofgen.analysis.analyse import CaseResult
from roofgen.analysis.runtime import RuntimeResult
from roofgen.charts.roofline_inputs import (
    RuntimeInput,
    RuntimePoint,
)
from roofgen.model import Machine
from roofgen.site.sections.base import Section, Table, slot
from roofgen.units import fmt_percent, fmt_time

#: The section appears when some step's launch floor is at least this share of its time.
SHOWN_SHARE = 0.05


def runtime_section(
    case: CaseResult, machine: Machine, names: Mapping[str, str], n: int
) -> Section | None:
    rt = machine.runtime
    if rt is None:
        return None
    points = []
    rows = []
    bound_any = False
    for v in case.variants:
        if v.machine != machine.id:
            continue
        runtime = v.get(RuntimeResult)
        floor = runtime.floor
        if not runtime.counted or floor is None:
            continue
        bound_any |= floor.launch_bound
        mech = "+".join(floor.mechanisms)
        points.append(
            RuntimePoint(
                case.case.id,
                v.variant,
                max(floor.launches, 1),
                floor.time_s,
                floor.floor_s,
                floor.mechanisms[0],
                floor.launch_bound,
            )
        )
        rows.append(
            (
                v.variant,
                str(floor.launches),
                str(floor.syncs),
                mech,
                fmt_time(floor.floor_s),
                fmt_time(floor.time_s),
                fmt_percent(floor.floor_s / floor.time_s if floor.floor_s else None),
                "yes" if floor.launch_bound else "no",
            )
        )
    # Where launches cost next to nothing the section would only say so: leave it out.
    if not points or not any(p.floor_s and p.floor_s >= SHOWN_SHARE * p.time_s for p in points):
        return None
    costs = tuple((m, c) for m in ("stream", "graph", "pdl") if (c := rt.launch_cost_s(m)))
    title = f"Runtime roofline of {case.case.title} on {machine.name}"
    inp = RuntimeInput(
        title,
        "Floors: launches per step x cost per launch",
        costs,
        rt.sync_overhead_s,
        tuple(points),
    )
    notes = []
    if bound_any:
        notes.append(
            "A launch-bound step spends its time launching kernels: capture it in a CUDA "
            "graph, chain the launches with programmatic dependent launch, fuse kernels, or "
            "run one persistent kernel."
        )
    cost_text = ", ".join(f"{m} {fmt_time(c)}" for m, c in costs)
    notes.append(
        f"Costs per launch on {machine.name}: {cost_text}; per synchronisation "
        f"{fmt_time(rt.sync_overhead_s)}."
    )
    return Section(
        id="runtime",
        title="Launches and synchronisation",
        intro=(
            "The runtime roofline: kernel launches, graph nodes and synchronisations per step "
            "times their cost are a floor under the step's time (a stream launch, a CUDA "
            "graph node and a programmatic dependent launch cost differently). A step whose "
            "time is within the co-bound margin of that floor is launch-bound."
        ),
        charts=(slot(f"case:{case.case.id}:{machine.id}:runtime", f"runtime-{n}", title, inp),),
        tables=(
            Table(
                "",
                (
                    "Variant",
                    "Launches",
                    "Syncs",
                    "Mechanism",
                    "Launch floor",
                    "Time",
                    "Floor share",
                    "Launch-bound",
                ),
                tuple(rows),
                (False, True, True, False, True, True, True, False),
            ),
        ),
        notes=tuple(notes),
    )
