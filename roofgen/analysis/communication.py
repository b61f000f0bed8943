"""The communication roofline: each launch's traffic over each link and the cost of each
collective (the alpha-beta model of :mod:`roofgen.analysis.comm`). Pure."""

from __future__ import annotations

from dataclasses import dataclass, replace

from roofgen.analysis.comm import (
    bus_bytes,
    bus_factor,
    collective_seconds,
    latency_s,
    latency_steps,
    regime,
)
from roofgen.analysis.inputs import LaunchInputs, floating_point_work
from roofgen.model import Basis, Machine, Measurement

__all__ = [
    "CollectiveCost",
    "CommunicationResult",
    "LinkTraffic",
    "collective_costs",
    "link_bytes_by_link",
]


@dataclass(frozen=True)
class CollectiveCost:
    """One collective's cost on its link: ``latency_s + bus_b / bandwidth`` seconds.

    ``size_b``: its size as nccl-tests counts it (B); ``factor``: bus bytes per byte of
    size; ``bus_b``: bytes each rank sends and receives (B); ``bandwidth_b_per_s``: the
    link's bandwidth per direction (B/s); ``algorithm`` and ``steps``: the algorithm and
    the link latencies it pays one after another; ``latency_s``: steps x the link's
    latency (s), ``None`` (unknown) when the link states none; ``bound_s``: the cost (s),
    the bandwidth term alone when the latency is unknown (still a lower bound);
    ``regime``: "latency-bound" when the latency term is the larger, else
    "bandwidth-bound", ``None`` when the latency is unknown; ``measured_s``: the launch's
    measured time when the launch is this collective alone.
    """

    kind: str
    ranks: int
    link: str
    topology: str
    size_b: float
    factor: float
    bus_b: float
    bandwidth_b_per_s: float
    latency_s: float | None
    bound_s: float
    regime: str | None  # "latency-bound", "bandwidth-bound"; None: latency unknown
    algorithm: str = "ring"
    steps: int = 0
    measured_s: float | None = None


def collective_costs(
    machine: Machine, m: Measurement, basis: Basis = "measured"
) -> list[CollectiveCost]:
    """The cost of each collective of ``m`` over a link the machine has."""
    out = []
    for c in m.collectives:
        link = machine.link(c.link)
        if link is None:
            continue
        bw = link.bandwidth_per_direction.value(basis)
        out.append(
            CollectiveCost(
                kind=c.kind,
                ranks=c.ranks,
                link=c.link,
                topology=c.topology,
                size_b=c.bytes_b,
                factor=bus_factor(c),
                bus_b=bus_bytes(c),
                bandwidth_b_per_s=bw,
                latency_s=latency_s(c, link),
                bound_s=collective_seconds(c, link, bw),
                regime=regime(c, link, bw),
                algorithm=c.algorithm,
                steps=latency_steps(c),
            )
        )
    return out


def link_bytes_by_link(m: Measurement) -> dict[str, float]:
    """Bytes each way over each link: the busier direction plus the collectives' bus bytes."""
    out = {k: max(v) for k, v in (m.link_bytes or {}).items()}
    for c in m.collectives:
        out[c.link] = out.get(c.link, 0.0) + bus_bytes(c)
    return out


@dataclass(frozen=True)
class LinkTraffic:
    """One launch's traffic over one link, a point of the communication roofline.

    ``bytes_b``: bytes each way (B); ``intensity_flop_per_byte``: FLOPs per link byte and
    ``flop_per_s``: FLOPs / measured time, both ``None`` without FLOPs or link bytes.
    """

    link: str
    bytes_b: float
    intensity_flop_per_byte: float | None
    flop_per_s: float | None


@dataclass(frozen=True)
class CommunicationResult:
    """The communication roofline of one launch: its traffic per link (by link id) and
    its collectives' costs (measured link bandwidths where present)."""

    links: tuple[LinkTraffic, ...]
    collectives: tuple[CollectiveCost, ...]

    @classmethod
    def of(cls, inputs: LaunchInputs) -> CommunicationResult:
        m = inputs.measurement
        t = m.time.value_s
        flop = floating_point_work(m)
        links = tuple(
            LinkTraffic(
                link,
                moved,
                flop / moved if flop and moved > 0 else None,
                flop / t if flop and moved > 0 else None,
            )
            for link, moved in sorted(link_bytes_by_link(m).items())
        )
        costs = collective_costs(inputs.machine, m)
        kernel = inputs.kernel
        alone = (
            len(m.collectives) == 1 and kernel is not None and kernel.operator.kind == "collective"
        )
        if alone:
            costs = [replace(c, measured_s=t) for c in costs]
        return cls(links, tuple(costs))
