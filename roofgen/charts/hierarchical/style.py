"""Colours, marker shapes, dash patterns and mark sizes of the hierarchical roofline."""

from __future__ import annotations

from dataclasses import dataclass

#: Okabe-Ito colours per role.
ROLE_COLOURS: dict[str, str] = {
    "l1": "#009E73",  # bluish green: L1 / shared memory
    "llc": "#0072B2",  # blue: L2 / last-level cache
    "device": "#D55E00",  # vermillion: device memory (HBM, DRAM)
    "compute": "#000000",  # black: compute ceilings
}
#: Marker shape per memory role (launch points and ridge markers).
ROLE_SHAPES: dict[str, str] = {"l1": "diamond", "llc": "square", "device": "circle"}
#: Default legend names per role, used when no level name is known.
ROLE_NAMES: dict[str, str] = {
    "l1": "L1 / shared",
    "llc": "L2 / LLC",
    "device": "Device memory",
    "compute": "Compute",
}
#: Dash pattern per (basis, role): measured solid, datasheet dashed with one pattern per level.
DASHES: dict[str, list[float]] = {
    "measured:l1": [1, 0],
    "measured:llc": [1, 0],
    "measured:device": [1, 0],
    "measured:compute": [1, 0],
    "datasheet:l1": [2, 3],
    "datasheet:llc": [5, 3],
    "datasheet:device": [9, 4],
    "datasheet:compute": [12, 3, 3, 3],
}

#: Arrows on every level up to this many arrows; beyond it, device memory only.
ARROWS_ALL_LEVELS_MAX = 300
#: Per-point ARIA labels in the SVG up to this many points (they double a big SVG's size).
ARIA_POINTS_MAX = 2000


@dataclass(frozen=True)
class MarkStyle:
    """Mark sizes (square pixels) and opacities (0 to 1), thinned out as the chart fills up."""

    point_size: float
    point_opacity: float
    link_opacity: float
    faded: float

    @classmethod
    def for_points(cls, n: int) -> MarkStyle:
        if n <= 60:
            return cls(point_size=60, point_opacity=0.9, link_opacity=0.6, faded=0.12)
        if n <= 600:
            return cls(point_size=36, point_opacity=0.8, link_opacity=0.45, faded=0.08)
        return cls(point_size=14, point_opacity=0.5, link_opacity=0.18, faded=0.04)
