"""Helpers shared by the roofline charts.

Every chart is a plain Vega-Lite dict (:mod:`roofgen.charts.vl`) whose layers read named
datasets; the rows are attached as ``datasets``, and nothing is validated here (the tests
validate every chart of the example site against the Vega-Lite schema). Axis labels are
written by Vega label expressions that need no scale lookup, so they also work inside
concatenated views (whose scales are renamed).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from roofgen.charts.vl import Spec, channel, mark, top_level, unit
from roofgen.units import SI_PREFIXES, TIME_PREFIXES

__all__ = [
    "AXIS",
    "FONT",
    "LEGEND_FIELD",
    "OKABE_ITO",
    "config",
    "decade_label",
    "diagonal_angle",
    "diagonal_label",
    "finish",
    "legend_names",
    "log_axis",
    "log_ticks",
    "square_decades",
    "tick_label",
    "log_domain",
    "name_rows",
    "log_samples",
    "nominal",
    "quantitative",
    "roof_rule",
    "segment_end",
    "tooltip",
]

#: Okabe-Ito colours (colour-blind safe), in a fixed order.
OKABE_ITO = (
    "#000000",
    "#E69F00",
    "#56B4E9",
    "#009E73",
    "#0072B2",
    "#D55E00",
    "#CC79A7",
    "#F0E442",
    "#999999",
)
FONT = "sans-serif"
#: Axis style of every chart: tick text at 11 px (the charts are never drawn smaller).
AXIS = {
    "gridColor": "#e6e6e6",
    "labelFontSize": 11,
    "titleFontSize": 12,
    "titleFontWeight": "normal",
}
#: The prefixes that Vega label expressions write (none below 1 but for times).
_SI = tuple((factor, prefix) for factor, prefix in SI_PREFIXES if prefix)
_SMALL = tuple(TIME_PREFIXES)


def log_domain(
    values: Iterable[float],
    default: tuple[float, float],
    pad_decades: float = 0.3,
    min_decades: float = 2.0,
) -> tuple[float, float]:
    """A log-axis domain holding ``values``, padded and at least ``min_decades`` wide."""
    finite = [v for v in values if v > 0 and math.isfinite(v)]
    lo, hi = (min(finite), max(finite)) if finite else default
    lo, hi = lo / 10**pad_decades, hi * 10**pad_decades
    missing = min_decades - math.log10(hi / lo)
    if missing > 0:
        lo, hi = lo / 10 ** (missing / 2), hi * 10 ** (missing / 2)
    return float(lo), float(hi)


def log_samples(lo: float, hi: float, n: int = 48) -> list[float]:
    """``n`` points evenly spaced in log between ``lo`` and ``hi``."""
    step = math.log10(hi / lo) / (n - 1)
    return [lo * 10 ** (i * step) for i in range(n)]


def decade_label(unit: str, si: bool = True) -> str:
    """Vega expression labelling whole decades of a log axis: ``10 TFLOP/s``, ``1 ms``."""
    decade = "abs(log(datum.value) / LN10 - round(log(datum.value) / LN10)) < 1e-6"
    if unit == "s":
        parts = [
            f"datum.value >= {factor * 0.9995:g} ? format(datum.value / {factor:g}, '~g') + "
            f"' {prefix}s'"
            for factor, prefix in _SMALL
        ]
        label = " : ".join([*parts, "format(datum.value, '~g') + ' s'"])
    elif si:
        parts = [
            f"datum.value >= {factor * 0.9995:g} ? format(datum.value / {factor:g}, '~g') + "
            f"' {prefix}{unit}'"
            for factor, prefix in _SI
        ]
        label = " : ".join([*parts, f"format(datum.value, '~g') + ' {unit}'"])
    else:
        label = f"format(datum.value, '~g') + ' {unit}'"
    return f"({decade}) ? ({label}) : ''"


def log_ticks(domain: tuple[float, float]) -> list[float]:
    """The labelled ticks of a log axis over ``domain``: 1 and 3 of every decade (two a
    decade, about evenly apart), or 1, 2 and 5 when the axis spans under two decades."""
    lo, hi = domain
    steps = (1.0, 2.0, 5.0) if math.log10(hi / lo) < 2 else (1.0, 3.0)
    out = []
    for exponent in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for step in steps:
            value = float(f"{step}e{exponent}")
            if lo <= value <= hi:
                out.append(value)
    return out


def tick_label(unit: str, si: bool = True) -> str:
    """Vega expression writing any tick value of a log axis: with an SI prefix and ``unit``
    (``30 TFLOP/s``, ``300 µs``), or plain (``0.03``, ``3e-5``) without ``si``."""
    if unit == "s":
        parts = [
            f"datum.value >= {factor * 0.9995:g} ? format(datum.value / {factor:g}, '~g') + "
            f"' {prefix}s'"
            for factor, prefix in _SMALL
        ]
        return " : ".join([*parts, "format(datum.value, '~g') + ' s'"])
    if si:
        parts = [
            f"datum.value >= {factor * 0.9995:g} ? format(datum.value / {factor:g}, '~g') + "
            f"' {prefix}{unit}'"
            for factor, prefix in _SI
        ]
        return " : ".join([*parts, f"format(datum.value, '~g') + ' {unit}'"])
    return "datum.value >= 0.0009995 ? format(datum.value, '~g') : format(datum.value, '.0e')"


def log_axis(
    field: str, title: str, domain: tuple[float, float], unit: str, si: bool = True
) -> Spec:
    """A log-scale x or y encoding labelled twice a decade (:func:`log_ticks`) in ``unit``;
    without ``si`` the labels are plain numbers and ``title`` names the unit."""
    return channel(
        field,
        "quantitative",
        title=title,
        scale={"domain": list(domain), "nice": False, "type": "log"},
        axis={"labelExpr": tick_label(unit, si), "values": log_ticks(domain)},
    )


def square_decades(
    xdom: tuple[float, float], ydom: tuple[float, float], width: int, height: int
) -> tuple[tuple[float, float], tuple[float, float], int]:
    """Domains and plot height that give a decade the same length on both log axes, so a
    bandwidth roof runs at 45 degrees: the plot is at most ``height`` and at least half
    ``width`` high, and the axis short of decades is widened about its middle."""
    dx, dy = math.log10(xdom[1] / xdom[0]), math.log10(ydom[1] / ydom[0])
    want = width * dy / dx
    if want > height:  # too many y decades for the height: widen x
        return _widened(xdom, height, dy, width), ydom, height
    if want < width / 2:  # too few: widen y, half as high as wide
        return xdom, _widened(ydom, width, dx, width // 2), width // 2
    return xdom, ydom, round(want)


def _widened(
    dom: tuple[float, float], other_px: float, other_decades: float, px: float
) -> tuple[float, float]:
    decades = px * other_decades / other_px
    missing = decades - math.log10(dom[1] / dom[0])
    return float(dom[0] / 10 ** (missing / 2)), float(dom[1] * 10 ** (missing / 2))


def diagonal_angle(
    xdom: tuple[float, float], ydom: tuple[float, float], width: int, height: int
) -> float:
    """On-screen angle (degrees, Vega's clockwise convention) of a slope-1 line on log-log
    axes with these domains and this plot size: for labels along bandwidth roofs."""
    x_px = width / math.log10(xdom[1] / xdom[0])
    y_px = height / math.log10(ydom[1] / ydom[0])
    return 360.0 - math.degrees(math.atan2(y_px, x_px))


#: The field of a chart's rows that holds the legend's name for the row (a level's or a
#: link's name), which the colour and shape channels encode.
LEGEND_FIELD = "legend"


def legend_names(ids: Sequence[str], names: Sequence[str]) -> dict[str, str]:
    """The legend's name for each of ``ids``: ``names`` themselves, which a chart writes
    into its rows (:data:`LEGEND_FIELD`) and scale domains. A legend shows its domain's
    values as they are, so names from a spec reach Vega as data, never as expression
    source. A name that two ids share gets its id added, so that each keeps its entry."""
    shared = {n for n in names if names.count(n) > 1}
    return {i: f"{n} ({i})" if n in shared else n for i, n in zip(ids, names, strict=True)}


def name_rows(rows: Iterable[dict[str, Any]], key: str, names: dict[str, str]) -> None:
    """Give each row with a ``key`` in ``names`` its legend name (:data:`LEGEND_FIELD`)."""
    for row in rows:
        if row.get(key) in names:
            row[LEGEND_FIELD] = names[row[key]]


def tooltip(fields: Sequence[tuple[str, str]]) -> list[Spec]:
    return [{"field": f, "title": t, "type": "nominal"} for f, t in fields]


def nominal(field: str) -> Spec:
    """A nominal field channel: a text, a description."""
    return {"field": field, "type": "nominal"}


def quantitative(field: str) -> Spec:
    """A quantitative x or y that uses the shared scale."""
    return {"field": field, "type": "quantitative"}


def segment_end() -> dict[str, Spec]:
    """The x2 and y2 channels of a segment from (x, y) to (x2, y2)."""
    return {"x2": {"field": "x2"}, "y2": {"field": "y2"}}


def config() -> Spec:
    return {
        "view": {"stroke": "#cccccc"},
        "axis": dict(AXIS),
        "font": FONT,
        "legend": {"orient": "bottom"},
    }


def finish(
    body: Spec,
    kind: str,
    title: str,
    description: str,
    datasets: dict[str, list[dict[str, Any]]],
    **meta: Any,
) -> Spec:
    """The whole spec of the chart ``body``: the charts' config, the data rows and
    roofgen's metadata."""
    spec = top_level(body, config())
    spec["description"] = description
    spec["usermeta"] = {"chart": kind, "title": title, **meta}
    spec["datasets"] = datasets
    return spec


def roof_rule(name: str, colour: str, title: str) -> Spec:
    """A roof drawn as the segment (x, y) to (x2, y2) of the rows of data ``name``,
    described and tooltipped by their ``text``."""
    return unit(
        name,
        mark("rule", clip=True, strokeWidth=2, color=colour),
        {**segment_end(), "description": nominal("text"), "tooltip": tooltip([("text", title)])},
    )


def diagonal_label(name: str, colour: str, angle: float, **text: Any) -> Spec:
    """The ``text`` of data ``name`` at (lx, ly), turned along a diagonal roof (``text``:
    mark properties that replace the defaults)."""
    props = {"fontSize": 10, "baseline": "bottom", "dy": -3, **text}
    return unit(
        name,
        mark("text", angle=angle, clip=True, color=colour, aria=False, **props),
        {"x": quantitative("lx"), "y": quantitative("ly"), "text": nominal("text")},
    )
