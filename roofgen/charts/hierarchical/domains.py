"""The axes' domains of the hierarchical roofline, and the roofs that meet at each ridge.

Both axes are logarithmic: x is arithmetic intensity (FLOP/byte), y performance
(FLOP/s). A domain holds the points, the roofs and their ridges, padded by
``PAD_DECADES`` each side and at least ``MIN_DECADES`` wide.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from roofgen.charts.inputs import RoofLine, RooflineInput

PAD_DECADES = 0.3
MIN_DECADES = 2.5
_FLAT_DECADES = 10**0.7  # flat roof shown right of the highest ridge

#: A domain on the log axis: (low, high), in the axis' unit.
Domain = tuple[float, float]


def compute_cap(roofs: Sequence[RoofLine], basis: str) -> float | None:
    """Highest compute roof (FLOP/s) a roof of ``basis`` meets: same basis first, then any."""
    for pool in (
        [r for r in roofs if r.kind == "compute" and not r.sub_ceiling and r.basis == basis],
        [r for r in roofs if r.kind == "compute" and not r.sub_ceiling],
        [r for r in roofs if r.kind == "compute"],
    ):
        if pool:
            return max(r.value for r in pool)
    return None


def top_bandwidth(roofs: Sequence[RoofLine], basis: str) -> float | None:
    """Highest memory bandwidth (B/s): same basis first, then any."""
    for pool in (
        [r for r in roofs if r.kind == "memory" and r.basis == basis],
        [r for r in roofs if r.kind == "memory"],
    ):
        if pool:
            return max(r.value for r in pool)
    return None


def domains(inp: RooflineInput) -> tuple[Domain, Domain]:
    """The x (FLOP/byte) and y (FLOP/s) domains of the chart of ``inp``."""
    xs = [p.intensity_flop_per_byte for p in inp.points]
    ys = [p.flop_per_s for p in inp.points]
    for roof in inp.roofs:
        if roof.kind == "memory":
            cap = compute_cap(inp.roofs, roof.basis)
            if cap is not None:
                # A decade of diagonal below each ridge, and some flat roof beyond it.
                ridge = cap / roof.value
                xs += [ridge / 10, ridge * _FLAT_DECADES]
                ys += [cap, cap / 10]
        else:
            ys.append(roof.value)
            top = top_bandwidth(inp.roofs, roof.basis)
            if top is not None:
                xs.append(roof.value / top)
    xdom = _padded(*_span(xs, (0.1, 100.0)), MIN_DECADES, low_only=False)
    ydom = _padded(*_span(ys, (1e9, 1e13)), MIN_DECADES, low_only=True)
    return xdom, ydom


def _padded(lo: float, hi: float, min_decades: float, low_only: bool) -> Domain:
    """Pad ``[lo, hi]`` by ``PAD_DECADES`` each side and widen it to ``min_decades``."""
    lo, hi = lo / 10**PAD_DECADES, hi * 10**PAD_DECADES
    missing = min_decades - math.log10(hi / lo)
    if missing > 0:
        if low_only:
            lo /= 10**missing
        else:
            lo, hi = lo / 10 ** (missing / 2), hi * 10 ** (missing / 2)
    return float(lo), float(hi)


def _span(values: list[float], default: Domain) -> Domain:
    return (min(values), max(values)) if values else default
