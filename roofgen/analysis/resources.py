"""The per-resource view of a launch (the seeds' "3-D roofline"): for every resource of
the machine, its demand, its capacity, the time it needs, and why it is unknown where it
is. Pure.

Every classic roofline is a projection of this table: t_r = demand_r / capacity_r, the
longest binds, and a resource without demand data is unknown, never zero.
"""

from __future__ import annotations

from dataclasses import dataclass

from roofgen.analysis.bounds import dynamic_energy_j, level_bytes, resources
from roofgen.analysis.inputs import LaunchInputs
from roofgen.model import Machine, Measurement
from roofgen.resources import why_unknown
from roofgen.units import counts_ops, fmt_si, work_unit

__all__ = ["ResourceUse", "ResourceView", "resource_demand"]


@dataclass(frozen=True)
class ResourceUse:
    """One resource of one launch.

    ``demand`` in ``demand_unit`` (FLOP or OP, B, inst, J, launch; ``None`` when the
    resource is unknown); ``capacity`` in ``capacity_unit`` (FLOP/s, B/s, inst/s, W): the
    demand over the time, so at the measurement's clocks (a link's: its bandwidth per
    direction; launches have none); ``seconds``: demand / capacity on the measured roofs
    where present (s); ``datasheet_seconds``: on the datasheet roofs (s);
    ``share_of_measured``: seconds / measured time; ``role``: "binding", "runner-up" or
    ""; ``note``: what the demand is made of; ``why_unknown``: what data is missing ("" when
    known).
    """

    resource: str
    known: bool
    demand: float | None
    demand_unit: str
    capacity: float | None
    capacity_unit: str
    seconds: float | None
    datasheet_seconds: float | None
    share_of_measured: float | None
    role: str
    note: str
    why_unknown: str


def resource_demand(
    resource: str, machine: Machine, m: Measurement
) -> tuple[float | None, str, str, str]:
    """(demand, its unit, the capacity's unit, what the demand is made of) of one resource."""
    kind, _, ident = resource.partition(".")
    if kind == "compute":
        work = (m.flops or {}).get(ident, {})
        unit = "OP" if work and all(counts_ops(p) for p in work) else "FLOP"
        parts = [f"{p} {fmt_si(v, work_unit(p))}" for p, v in work.items()]
        return sum(work.values()), unit, f"{unit}/s", ", ".join(parts) if len(work) > 1 else ""
    if kind == "memory":
        level = machine.level(ident)
        moved = level_bytes(level, m) if level is not None else None
        return moved, "B", "B/s", ""
    if kind == "link":
        out_b, in_b = (m.link_bytes or {}).get(ident, (0.0, 0.0))
        count = sum(1 for c in m.collectives if c.link == ident)
        note = f"one way; plus {count} collective(s) and the link latency" if count else "one way"
        return max(out_b, in_b), "B", "B/s", note
    if resource == "issue":
        return m.instructions, "inst", "inst/s", "warp instructions"
    if resource == "power":
        return dynamic_energy_j(machine, m), "J", "W", "dynamic energy over limit - constant power"
    if resource == "launch":
        count = (m.launches or 0) + (m.syncs or 0)
        return float(count), "launch", "", f"{m.launches or 0} launch(es), {m.syncs or 0} sync(s)"
    return None, "", "", ""


def _capacity(
    resource: str, machine: Machine, demand: float | None, seconds: float | None
) -> float | None:
    if resource == "launch":
        return None  # launches and syncs cost different times: no single rate
    if seconds is not None and demand is not None and demand > 0 and seconds > 0:
        return demand / seconds
    if resource.startswith("link.") and seconds is not None:
        link = machine.link(resource.removeprefix("link."))
        return link.bandwidth_per_direction.value() if link else None
    return None


@dataclass(frozen=True)
class ResourceView:
    """Every resource of the machine for one launch, in the machine's resource order."""

    resources: tuple[ResourceUse, ...]

    @classmethod
    def of(cls, inputs: LaunchInputs) -> ResourceView:
        machine, m = inputs.machine, inputs.measurement
        ranked = [name for name, _ in inputs.bounds.ranked()[:2]]
        roles = dict(zip(ranked, ("binding", "runner-up"), strict=False))
        time_s = m.time.value_s
        rows = []
        for resource in resources(machine):
            seconds = inputs.bounds.seconds.get(resource)
            demand, unit, rate_unit, note = resource_demand(resource, machine, m)
            known = seconds is not None
            rows.append(
                ResourceUse(
                    resource=resource,
                    known=known,
                    demand=demand if known else None,
                    demand_unit=unit,
                    capacity=_capacity(resource, machine, demand, seconds),
                    capacity_unit=rate_unit,
                    seconds=seconds,
                    datasheet_seconds=inputs.datasheet.seconds.get(resource),
                    share_of_measured=seconds / time_s if seconds is not None and time_s else None,
                    role=roles.get(resource, ""),
                    note=note,
                    why_unknown="" if known else why_unknown(resource, machine),
                )
            )
        return cls(tuple(rows))
