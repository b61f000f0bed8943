"""Roofline charts: Vega-Lite specs written as plain dicts, rendered offline with vl-convert.

The charts read only :mod:`roofgen.charts.inputs`; an adapter turns analysis results into
those dataclasses.
"""

from roofgen.charts.hierarchical import (
    CHART_KIND,
    DASHES,
    ROLE_COLOURS,
    ROLE_SHAPES,
    derive_arrows,
    hierarchical_chart,
    roof_text,
)
from roofgen.charts.inputs import (
    MEMORY_ROLES,
    ROOF_ROLES,
    Arrow,
    ChartPoint,
    RoofLine,
    RooflineInput,
)
from roofgen.charts.render import (
    spec_digest,
    stabilise_svg_ids,
    to_html,
    to_png,
    to_svg,
    vega_lite_version,
    vl_convert_version,
)

__all__ = [
    "CHART_KIND",
    "DASHES",
    "MEMORY_ROLES",
    "ROLE_COLOURS",
    "ROLE_SHAPES",
    "ROOF_ROLES",
    "Arrow",
    "ChartPoint",
    "RoofLine",
    "RooflineInput",
    "derive_arrows",
    "hierarchical_chart",
    "roof_text",
    "spec_digest",
    "stabilise_svg_ids",
    "to_html",
    "to_png",
    "to_svg",
    "vega_lite_version",
    "vl_convert_version",
]
