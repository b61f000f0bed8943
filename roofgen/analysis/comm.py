"""Collectives on the communication roofline: bus bytes and the alpha-beta cost.

A collective of size ``S`` bytes over ``n`` ranks moves ``factor x S`` bytes each way
through every rank's link ("bus bytes"), where the factor is the bus-bandwidth factor
nccl-tests uses to turn algorithm bandwidth (``S / t``) into bus bandwidth:

=====================================  =================
collective                             factor
=====================================  =================
all-reduce                             2 (n - 1) / n
reduce-scatter, all-gather, all-to-all (n - 1) / n  (S is the total size)
broadcast, reduce, send-recv           1
=====================================  =================

An in-network reduction (NVLink SHARP, InfiniBand SHARP) sends each byte about once;
its factor is stated in the spec (``bus_factor``). The time lower bound of a collective
on a link of bandwidth ``B`` bytes/s per direction and latency ``alpha`` seconds is
``alpha + factor x S / B`` (the alpha-beta model, with beta = 1 / B).
"""

from __future__ import annotations

from roofgen.model import Collective, Link

__all__ = ["BUS_FACTORS", "bus_bytes", "bus_factor", "collective_seconds", "half_bandwidth_size"]

#: Bus-bandwidth factor by collective kind, as a function of the rank count n.
BUS_FACTORS = {
    "all-reduce": lambda n: 2.0 * (n - 1) / n,
    "reduce-scatter": lambda n: (n - 1) / n,
    "all-gather": lambda n: (n - 1) / n,
    "all-to-all": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "send-recv": lambda n: 1.0,
}


def bus_factor(c: Collective) -> float:
    """Bus bytes per byte of size: the spec's ``bus_factor``, else the nccl-tests one."""
    if c.bus_factor is not None:
        return c.bus_factor
    if c.ranks <= 1:
        return 0.0  # one rank communicates nothing
    return float(BUS_FACTORS[c.kind](c.ranks))


def bus_bytes(c: Collective) -> float:
    """Bytes each rank sends (and receives) over its link: factor x size (B)."""
    return bus_factor(c) * c.bytes_b


def collective_seconds(c: Collective, link: Link, bandwidth_b_per_s: float) -> float:
    """Lower bound on the collective's time (s): latency + bus bytes / bandwidth."""
    latency = link.latency_s or 0.0
    moved = bus_bytes(c)
    if moved == 0.0:
        return 0.0
    return latency + moved / bandwidth_b_per_s


def half_bandwidth_size(link: Link, bandwidth_b_per_s: float) -> float | None:
    """Bus bytes at which latency and bandwidth cost the same (alpha x B, in B).

    Smaller messages are latency-bound, larger ones bandwidth-bound (the "ridge" of
    the collective cost); ``None`` when the link has no latency.
    """
    if not link.latency_s:
        return None
    return link.latency_s * bandwidth_b_per_s
