"""The resource view: every resource's time bound per launch (the seeds' "3-D roofline")."""

from __future__ import annotations

from collections.abc import Mapping

from roofgen.analysis.analyse import CaseResult, LaunchResult, VariantResult
from roofgen.charts.roofline_inputs import (
    ResourceBar,
    ResourceGroup,
    ResourcesInput,
)
from roofgen.model import Machine
from roofgen.site.sections.base import Section, Table, launch_items, slot
from roofgen.units import fmt_time


def resource_section(
    case: CaseResult, machine: Machine, names: Mapping[str, str], n: int
) -> Section:
    items = list(launch_items(case, machine.id))
    every = case.machines[machine.id].resources
    # Resources no launch makes a demand on are left out of the chart (the table keeps
    # them); unknown ones stay: unknown is not zero.
    order = [res for res in every if any(i.result.bound_s.get(res, 1.0) > 0 for i in items)]
    groups = []
    bars = []
    for i, item in enumerate(items):
        r = item.result
        groups.append(ResourceGroup(item.label, r.time_s, r.lower_bound_s))
        for resource in order:
            bars.append(
                ResourceBar(
                    i,
                    resource,
                    names.get(resource, resource),
                    r.bound_s.get(resource),
                    _role(r, resource),
                )
            )
    title = f"Resource bounds of {case.case.title} on {machine.name}"
    inp = ResourcesInput(
        title=title,
        subtitle="Time each resource alone needs (demand / capacity); black tick: measured "
        "time; resources no launch uses are left out",
        groups=tuple(groups),
        bars=tuple(bars),
    )
    tables = tuple(
        _resource_table(every, names, v) for v in case.variants if v.machine == machine.id
    )
    return Section(
        id="resources",
        title="Every resource",
        intro=(
            "The time lower bound each resource sets for each launch (demand / capacity, "
            'the seeds\' "3-D roofline"): the longest is the binding resource, the next the '
            "runner-up; a resource without demand data is unknown, not zero. Every chart on "
            "this page is a projection of this table."
        ),
        charts=(slot(f"case:{case.case.id}:{machine.id}:resources", f"resources-{n}", title, inp),),
        tables=tables,
        notes=(),
    )


def _role(r: LaunchResult, resource: str) -> str:
    if resource in r.coverage.unknown or resource not in r.bound_s:
        return "unknown"
    if resource == r.binding:
        return "binding"
    if resource == r.runner_up:
        return "runner-up"
    return "other"


def _resource_table(every: tuple[str, ...], names: Mapping[str, str], v: VariantResult) -> Table:
    launches = v.launches
    header = (
        "Resource",
        *[f"{r.kernel}" + (f" x{r.calls}" if r.calls != 1 else "") for r in launches],
    )
    rows = []
    for resource in every:
        cells = []
        for r in launches:
            seconds = r.bound_s.get(resource)
            role = _role(r, resource)
            if seconds is None:
                cells.append("unknown")
            elif seconds == 0:
                cells.append("no demand")
            else:
                mark = {"binding": " (binding)", "runner-up": " (runner-up)"}.get(role, "")
                cells.append(fmt_time(seconds) + mark)
        rows.append((f"{names.get(resource, resource)} ({resource})", *cells))
    rows.append(("Bound", *[fmt_time(r.lower_bound_s) for r in launches]))
    rows.append(("Measured", *[fmt_time(r.time_s) for r in launches]))
    return Table(f"Variant {v.variant}", header, tuple(rows), (False,) + (True,) * len(launches))
