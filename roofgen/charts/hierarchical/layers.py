"""The Altair layers and shared encodings of the hierarchical roofline.

Each layer reads one named dataset of :mod:`roofgen.charts.hierarchical.rows`. Colour
and shape encode the memory level's role (and the legend shows the level names), the
dash pattern the roof's basis; axis labels are Vega expressions evaluated per tick, so
they stay right when the chart is zoomed.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import altair as alt

from roofgen.charts.common import js_string, named
from roofgen.charts.hierarchical.domains import Domain
from roofgen.charts.hierarchical.style import DASHES, ROLE_COLOURS, ROLE_NAMES, ROLE_SHAPES
from roofgen.charts.inputs import ROOF_ROLES, RooflineInput
from roofgen.units import SI_PREFIXES

_POINT_TIPS = (
    ("case", "Case"),
    ("kernel", "Kernel"),
    ("variant", "Variant"),
    ("level", "Level"),
    ("ai", "Intensity"),
    ("perf", "Performance"),
    ("eff", "Efficiency"),
    ("cls", "Class"),
    ("bind", "Binding"),
)
_POINT_TIPS_SHAPE = (*_POINT_TIPS[:4], ("shape", "Shape"), *_POINT_TIPS[4:])
# On-screen angle (degrees) of any log-log diagonal, and of an arrow from (x, y) to (x2, y2),
# read from the live scales so both stay right when the chart is zoomed.
_DIAG_ANGLE = "atan2(scale('y', 10) - scale('y', 1), scale('x', 10) - scale('x', 1)) * 180 / PI"
_ARROW_ANGLE = (
    "atan2(scale('x', datum.x2) - scale('x', datum.x), "
    "scale('y', datum.y) - scale('y', datum.y2)) * 180 / PI"
)


# ------------------------------------------------------------------------------ axes


def _decade_only(axis: str, label: str) -> str:
    """Show ``label`` on whole decades only, unless the axis spans under two decades."""
    decade = "abs(log(datum.value) / LN10 - round(log(datum.value) / LN10)) < 1e-6"
    span = f"log(peek(domain('{axis}')) / domain('{axis}')[0]) / LN10"
    return f"(({decade}) || abs({span}) < 2) ? ({label}) : ''"


def si_label_expr(unit: str, axis: str = "y") -> str:
    """Vega expression writing a tick value of scale ``axis`` with an SI prefix and ``unit``.

    Evaluated by Vega for each tick, so labels stay right whatever the zoom: whole decades
    are labelled (``"10 TFLOP/s"``), and every tick once the view spans under two decades.
    """
    parts = [
        f"datum.value >= {factor * 0.9995:g} ? "
        f"format(datum.value / {factor:g}, '~g') + ' {prefix}{unit}'"
        for factor, prefix in SI_PREFIXES
        if prefix
    ]
    return _decade_only(axis, " : ".join([*parts, f"format(datum.value, '~g') + ' {unit}'"]))


def plain_label_expr(unit: str, axis: str = "x") -> str:
    """Like :func:`si_label_expr` with plain numbers: ``"0.1 FLOP/B"``, ``"100 FLOP/B"``."""
    return _decade_only(axis, f"format(datum.value, '~g') + ' {unit}'")


def encodings(xdom: Domain, ydom: Domain) -> dict[str, Any]:
    """The x (FLOP/byte) and y (FLOP/s) log scales that every layer shares."""
    x = alt.X(
        field="x",
        type="quantitative",
        title="Arithmetic intensity (FLOP/byte)",
        scale=alt.Scale(type="log", domain=list(xdom), nice=False),
        axis=alt.Axis(labelExpr=plain_label_expr("FLOP/B"), labelOverlap="greedy"),
    )
    y = alt.Y(
        field="y",
        type="quantitative",
        title="Performance (FLOP/s)",
        scale=alt.Scale(type="log", domain=list(ydom), nice=False),
        axis=alt.Axis(labelExpr=si_label_expr("FLOP/s"), labelOverlap="greedy"),
    )
    return {"x": x, "y": y}


# ---------------------------------------------------------------------------- legend


def role_names(inp: RooflineInput) -> dict[str, str]:
    """Legend name per role, from the level names the data uses (``"HBM"``, ``"L2"``)."""
    seen: dict[str, list[str]] = defaultdict(list)
    for p in inp.points:
        if p.level not in seen[p.level_role]:
            seen[p.level_role].append(p.level)
    for r in inp.roofs:
        if r.kind == "memory" and not seen[r.role]:
            seen[r.role].append(r.label)
    names = dict(ROLE_NAMES)
    for role, levels in seen.items():
        if levels:
            names[role] = " / ".join(levels)
    return names


def legend(names: dict[str, str]) -> alt.Legend:
    """The level legend, naming each role's levels."""
    label_expr = " : ".join(
        f"datum.value === '{role}' ? '{js_string(names[role])}'" for role in ROOF_ROLES
    )
    return alt.Legend(labelExpr=f"{label_expr} : datum.label", symbolStrokeWidth=2, symbolOpacity=1)


def _colour(legend: alt.Legend) -> alt.Color:
    return alt.Color(
        field="role",
        type="nominal",
        title="Level",
        scale=alt.Scale(domain=list(ROOF_ROLES), range=[ROLE_COLOURS[r] for r in ROOF_ROLES]),
        legend=legend,
    )


def _shape(legend: alt.Legend) -> alt.Shape:
    # "stroke" (a short line) stands for the compute roofs in the legend.
    return alt.Shape(
        field="role",
        type="nominal",
        title="Level",
        scale=alt.Scale(
            domain=list(ROOF_ROLES), range=[ROLE_SHAPES.get(r, "stroke") for r in ROOF_ROLES]
        ),
        legend=legend,
    )


# ---------------------------------------------------------------------------- layers


def join_layer(opacity: Any) -> alt.Chart:
    """Thin grey lines joining a launch's points across its memory levels."""
    return (
        named("joins")
        .mark_rule(color="#8c8c8c", strokeWidth=0.8, clip=True, aria=False)
        .encode(x2=alt.X2(field="x2"), opacity=opacity)
    )


def trajectory_layer(legend: alt.Legend, opacity: Any) -> alt.Chart:
    """Each shape sweep's points, joined in sweep order per level."""
    return (
        named("trajectories")
        .mark_line(strokeWidth=1.2, strokeDash=[4, 2], clip=True, aria=False)
        .encode(
            detail=alt.Detail(field="line", type="nominal"),
            order=alt.Order(field="order", type="quantitative"),
            color=_colour(legend),
            opacity=opacity,
        )
    )


def arrow_layers(legend: alt.Legend, opacity: Any) -> list[alt.Chart]:
    """Arrows between variants: a line, and a triangle at its midpoint turned along it."""
    shafts = (
        named("arrows")
        .mark_rule(strokeWidth=1.2, clip=True, aria=False)
        .encode(
            x2=alt.X2(field="x2"), y2=alt.Y2(field="y2"), color=_colour(legend), opacity=opacity
        )
    )
    heads = (
        named("arrows")
        .mark_point(
            shape="triangle",
            filled=True,
            size=60,
            clip=True,
            aria=False,
            angle=alt.ExprRef(_ARROW_ANGLE),
        )
        .encode(
            x=alt.X(field="xm", type="quantitative"),
            y=alt.Y(field="ym", type="quantitative"),
            color=_colour(legend),
            opacity=opacity,
            tooltip=[alt.Tooltip(field="text", type="nominal", title="Change")],
        )
    )
    return [shafts, heads]


def point_layer(
    legend: alt.Legend, size: float, opacity: Any, *, shapes: bool, aria: bool
) -> alt.Chart:
    """The launch points, one per memory level; ``shapes`` adds the shape to the tooltip,
    ``aria`` gives each point an ARIA label."""
    return (
        named("points")
        .mark_point(filled=True, size=size, clip=True, strokeWidth=0, aria=aria)
        .encode(
            color=_colour(legend),
            shape=_shape(legend),
            opacity=opacity,
            tooltip=[
                alt.Tooltip(field=f, type="nominal", title=t)
                for f, t in (_POINT_TIPS_SHAPE if shapes else _POINT_TIPS)
            ],
            **({"description": alt.Description(field="desc", type="nominal")} if aria else {}),
        )
    )


def roof_layers(legend: alt.Legend, has_ridges: bool) -> list[alt.Chart]:
    """The roofs, their ridge markers and their labels (on a white halo)."""
    dash = alt.StrokeDash(
        field="dash",
        type="nominal",
        scale=alt.Scale(domain=list(DASHES), range=list(DASHES.values())),
        legend=None,
    )
    lines = (
        named("roofs")
        .mark_rule(clip=True)
        .encode(
            x2=alt.X2(field="x2"),
            y2=alt.Y2(field="y2"),
            color=_colour(legend),
            strokeDash=dash,
            strokeWidth=alt.StrokeWidth(field="sw", type="quantitative", scale=None),
            description=alt.Description(field="text", type="nominal"),
            tooltip=[
                alt.Tooltip(field="text", type="nominal", title="Roof"),
                alt.Tooltip(field="basis", type="nominal", title="Basis"),
            ],
        )
    )
    text_props: dict[str, Any] = {
        "clip": True,
        "fontSize": 11,
        "align": alt.ExprRef("datum.align"),
        "baseline": alt.ExprRef("datum.baseline"),
        "dy": alt.ExprRef("datum.dy"),
        "angle": alt.ExprRef(f"datum.kind === 'memory' ? {_DIAG_ANGLE} : 0"),
    }
    text_enc: dict[str, Any] = {
        "x": alt.X(field="lx", type="quantitative"),
        "y": alt.Y(field="ly", type="quantitative"),
        "text": alt.Text(field="text", type="nominal"),
    }
    # A white halo under each label keeps it readable over crowded points.
    halo = (
        named("roofs")
        .mark_text(stroke="white", strokeWidth=3, strokeOpacity=0.85, aria=False, **text_props)
        .encode(**text_enc)
    )
    labels = (
        named("roofs").mark_text(aria=False, **text_props).encode(color=_colour(legend), **text_enc)
    )
    layers = [lines]
    if has_ridges:
        layers.append(
            named("ridges")
            .mark_point(
                filled=False, fill="white", fillOpacity=1, size=70, strokeWidth=1.5, clip=True
            )
            .encode(
                color=_colour(legend),
                shape=_shape(legend),
                description=alt.Description(field="text", type="nominal"),
                tooltip=[alt.Tooltip(field="text", type="nominal", title="Ridge")],
            )
        )
    return [*layers, halo, labels]
