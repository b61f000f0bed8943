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
``steps x alpha + factor x S / B`` (the alpha-beta model, with beta = 1 / B), where the
algorithm pays one latency per step (Thakur, Rabenseifner and Gropp, "Optimization of
Collective Communication Operations in MPICH", IJHPCA 2005; Patarasuk and Yuan,
"Bandwidth optimal all-reduce algorithms for clusters of workstations", JPDC 2009):

==========================================  ==============  ====================
collective                                  ring            tree
==========================================  ==============  ====================
all-reduce (reduce-scatter, then all-gather) 2 (n - 1)      2 ceil(log2 n)
reduce-scatter, all-gather, all-to-all      n - 1           (no tree algorithm)
broadcast, reduce (pipelined chain / tree)  n - 1           ceil(log2 n)
send-recv                                   1               1
==========================================  ==============  ====================

An in-network reduction (``algorithm: in-network``: NVLink SHARP, InfiniBand SHARP) pays
two latencies for an all-reduce (up to the switch and back) and one for the others.

A link without a stated latency leaves the latency term unknown, never zero: the
bandwidth term alone is still a lower bound, but no regime is claimed.
"""

from __future__ import annotations

import math

from roofgen.model import Collective, Link

__all__ = [
    "BUS_FACTORS",
    "LATENCY_STEPS",
    "bus_bytes",
    "bus_factor",
    "collective_seconds",
    "half_bandwidth_size",
    "latency_s",
    "latency_steps",
    "regime",
]

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


#: Latency steps (alphas) by algorithm and collective kind, as a function of n.
LATENCY_STEPS = {
    "ring": {
        "all-reduce": lambda n: 2 * (n - 1),
        "reduce-scatter": lambda n: n - 1,
        "all-gather": lambda n: n - 1,
        "all-to-all": lambda n: n - 1,
        "broadcast": lambda n: n - 1,
        "reduce": lambda n: n - 1,
        "send-recv": lambda n: 1,
    },
    "tree": {
        "all-reduce": lambda n: 2 * math.ceil(math.log2(n)),
        "broadcast": lambda n: math.ceil(math.log2(n)),
        "reduce": lambda n: math.ceil(math.log2(n)),
        "send-recv": lambda n: 1,
    },
    # The switch reduces or replicates (NVLink SHARP / NVLS, InfiniBand SHARP): up to the
    # switch and back down for an all-reduce, one traversal for the others.
    "in-network": {
        "all-reduce": lambda n: 2,
        "reduce-scatter": lambda n: 1,
        "all-gather": lambda n: 1,
        "broadcast": lambda n: 1,
        "reduce": lambda n: 1,
        "send-recv": lambda n: 1,
    },
}


def latency_steps(c: Collective) -> int:
    """Latencies (alphas) the collective's algorithm pays one after another."""
    if c.ranks <= 1:
        return 0
    return int(LATENCY_STEPS[c.algorithm][c.kind](c.ranks))


def latency_s(c: Collective, link: Link) -> float | None:
    """The latency term (s): steps x the link's latency; ``None`` when the link states none."""
    if link.latency_s is None:
        return None
    return latency_steps(c) * link.latency_s


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
    """Lower bound on the collective's time (s): steps x latency + bus bytes / bandwidth.

    Without a stated latency the bandwidth term alone: still a lower bound, never a
    latency of zero claimed as known (:func:`latency_s` says ``None``)."""
    moved = bus_bytes(c)
    if moved == 0.0:
        return 0.0
    return (latency_s(c, link) or 0.0) + moved / bandwidth_b_per_s


def half_bandwidth_size(c: Collective, link: Link, bandwidth_b_per_s: float) -> float | None:
    """Bus bytes at which this collective's latency and bandwidth terms cost the same
    (steps x alpha x B, in B).

    Smaller messages are latency-bound, larger ones bandwidth-bound (the "ridge" of
    the collective cost); ``None`` when the link states no latency.
    """
    latency = latency_s(c, link)
    if latency is None:
        return None
    return latency * bandwidth_b_per_s


def regime(c: Collective, link: Link, bandwidth_b_per_s: float) -> str | None:
    """ "latency-bound" or "bandwidth-bound"; ``None`` (unknown) without a stated latency."""
    ridge = half_bandwidth_size(c, link, bandwidth_b_per_s)
    if ridge is None:
        return None
    return "latency-bound" if bus_bytes(c) < ridge else "bandwidth-bound"
