"""Helpers shared by the roofline charts.

Every chart is built from explicit Altair objects over named data; the rows are attached
to the dict after ``to_dict(validate=False)``, and nothing is validated here (the tests
validate one spec of each kind against the Vega-Lite schema). Axis labels are written by
Vega label expressions that need no scale lookup, so they also work inside concatenated
views (whose scales are renamed).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

import altair as alt

from roofgen.units import SI_PREFIXES, TIME_PREFIXES

__all__ = [
    "FONT",
    "OKABE_ITO",
    "config",
    "decade_label",
    "diagonal_angle",
    "finish",
    "js_string",
    "legend_names",
    "log_axis",
    "log_domain",
    "log_samples",
    "named",
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
#: The prefixes that Vega label expressions write (none below 1 but for times).
_SI = tuple((factor, prefix) for factor, prefix in SI_PREFIXES if prefix)
_SMALL = tuple(TIME_PREFIXES)


def js_string(text: str) -> str:
    """``text`` for a single-quoted string in a Vega expression: JSON escapes (line
    breaks, U+2028, control characters as \\uXXXX) and an escaped quote, so no name
    can end the string early or break the expression."""
    return json.dumps(text)[1:-1].replace("'", "\\'")


def named(name: str) -> alt.Chart:
    """A chart over the named dataset ``name`` (rows attached after ``to_dict``)."""
    return alt.Chart(alt.NamedData(name=name))


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


def log_axis(
    channel: str, field: str, title: str, domain: tuple[float, float], unit: str, si: bool = True
) -> Any:
    """A log-scale x or y encoding with decade labels in ``unit``."""
    cls = alt.X if channel == "x" else alt.Y
    return cls(
        field=field,
        type="quantitative",
        title=title,
        scale=alt.Scale(type="log", domain=list(domain), nice=False),
        axis=alt.Axis(labelExpr=decade_label(unit, si), labelOverlap="greedy"),
    )


def diagonal_angle(
    xdom: tuple[float, float], ydom: tuple[float, float], width: int, height: int
) -> float:
    """On-screen angle (degrees, Vega's clockwise convention) of a slope-1 line on log-log
    axes with these domains and this plot size: for labels along bandwidth roofs."""
    x_px = width / math.log10(xdom[1] / xdom[0])
    y_px = height / math.log10(ydom[1] / ydom[0])
    return 360.0 - math.degrees(math.atan2(y_px, x_px))


def legend_names(ids: Sequence[str], names: Sequence[str]) -> alt.Legend:
    """A legend that shows ``names`` for the field values ``ids``."""
    parts = [f"datum.value === '{i}' ? '{js_string(n)}'" for i, n in zip(ids, names, strict=True)]
    return alt.Legend(labelExpr=" : ".join([*parts, "datum.label"]))


def tooltip(fields: Sequence[tuple[str, str]]) -> list[alt.Tooltip]:
    return [alt.Tooltip(field=f, type="nominal", title=t) for f, t in fields]


def config() -> alt.Config:
    return alt.Config(
        font=FONT,
        axis=alt.AxisConfig(gridColor="#e6e6e6", titleFontWeight="normal"),
        legend=alt.LegendConfig(orient="bottom"),
        view=alt.ViewConfig(stroke="#cccccc"),
    )


def finish(
    chart: alt.TopLevelMixin,
    kind: str,
    title: str,
    description: str,
    datasets: dict[str, list[dict[str, Any]]],
    **meta: Any,
) -> dict[str, Any]:
    """The plain Vega-Lite dict of ``chart`` with its data rows and roofgen's metadata."""
    spec: dict[str, Any] = chart.to_dict(validate=False)
    spec["description"] = description
    spec["usermeta"] = {"chart": kind, "title": title, **meta}
    spec["datasets"] = datasets
    return spec


def roof_rule(name: str, colour: str, title: str) -> alt.Chart:
    """A roof drawn as the segment (x, y) to (x2, y2) of the rows of data ``name``,
    described and tooltipped by their ``text``."""
    return (
        named(name)
        .mark_rule(clip=True, strokeWidth=2, color=colour)
        .encode(
            x2=alt.X2(field="x2"),
            y2=alt.Y2(field="y2"),
            description=alt.Description(field="text", type="nominal"),
            tooltip=tooltip([("text", title)]),
        )
    )


def diagonal_label(name: str, colour: str, angle: float, **text: Any) -> alt.Chart:
    """The ``text`` of data ``name`` at (lx, ly), turned along a diagonal roof."""
    return (
        named(name)
        .mark_text(
            angle=angle,
            clip=True,
            fontSize=10,
            baseline="bottom",
            dy=-3,
            color=colour,
            aria=False,
            **text,
        )
        .encode(
            x=alt.X(field="lx", type="quantitative"),
            y=alt.Y(field="ly", type="quantitative"),
            text=alt.Text(field="text", type="nominal"),
        )
    )
