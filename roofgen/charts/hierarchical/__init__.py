"""Hierarchical roofline chart: one point per launch per memory level, on log-log axes.

Visual encoding
---------------
* x: arithmetic intensity (FLOP/byte), y: performance (FLOP/s), both log scales whose
  domains hold the data (points, roofs, ridges) padded by 0.3 decades each side and are at
  least 2.5 decades wide. Tick labels carry units ("10 TFLOP/s", "0.1 FLOP/B") through
  Vega label expressions, so they stay right when zoomed.
* Memory roofs are diagonals ``bandwidth x intensity`` drawn up to their ridge with the
  highest compute roof of the same basis; compute roofs are horizontals drawn from where
  they meet the highest-bandwidth diagonal. Every roof carries a text label with its value.
* Colour by role (Okabe-Ito, colour-blind safe, keeping the classic meaning): L1/shared
  bluish green, L2/last-level cache blue, device memory vermillion, compute black.
  Marker shapes differ per memory level (L1 diamond, LLC square, device circle), on both
  launch points and ridge markers, and every roof is labelled in text, so nothing rests
  on colour alone.
* Basis: **measured roofs are solid, datasheet roofs are always dashed** (whether or not
  a measured value exists for the same level), each level with its own dash pattern;
  datasheet labels end with "(datasheet)". A label sits above (left of) its line, or
  below (right of) it when a higher roof of the same kind runs within 0.15 decades, so a
  measured and a datasheet roof of one level stay readable side by side.
* Sub-ceilings (no FMA, division...) are drawn thinner. Ridge points are marked with the
  level's shape. Roofs are drawn above the points, their labels on a white halo.
* A launch measured over a shape sweep has one point per shape and level; each level's
  points are joined in sweep order by a line in the level's colour (the trajectory).
* A launch's points (same FLOP/s, one per level) are joined by a thin grey line. Consecutive
  variants of one kernel (``variant_order``) are joined per level by an arrow: a line and a
  triangle at its midpoint, oriented along it on screen (computed from the live scales, so
  it stays right when zoomed).
* Point size and opacity shrink as the chart fills up; past ``ARROWS_ALL_LEVELS_MAX``
  arrows only device-memory arrows are kept. The only legend is the level legend.
* Hovering a point highlights its kernel (all levels, variants, joins and arrows); clicking
  a legend entry highlights a memory level; the scales zoom and pan (drag, wheel).

Speed: the spec is written as plain dicts (:mod:`roofgen.charts.vl`), its layers reading
named datasets, and every layer's fields are pre-computed (no Vega-Lite transforms).

Modules: :mod:`.domains` (the log axes' domains), :mod:`.rows` (the data rows and their
texts), :mod:`.layers` (the layers, encodings and legend), :mod:`.style`
(colours, shapes, dashes, mark sizes) and :mod:`.chart`, which puts them together.
"""

from roofgen.charts.hierarchical.chart import CHART_KIND, hierarchical_chart
from roofgen.charts.hierarchical.rows import derive_arrows, roof_text
from roofgen.charts.hierarchical.style import (
    ARIA_POINTS_MAX,
    ARROWS_ALL_LEVELS_MAX,
    DASHES,
    ROLE_COLOURS,
    ROLE_NAMES,
    ROLE_SHAPES,
)
from roofgen.charts.inputs import ChartKind, RooflineInput

__all__ = [
    "ARIA_POINTS_MAX",
    "CHART",
    "ARROWS_ALL_LEVELS_MAX",
    "CHART_KIND",
    "DASHES",
    "ROLE_COLOURS",
    "ROLE_NAMES",
    "ROLE_SHAPES",
    "derive_arrows",
    "hierarchical_chart",
    "roof_text",
]

CHART = ChartKind(RooflineInput, CHART_KIND, hierarchical_chart)
