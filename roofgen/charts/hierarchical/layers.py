"""The layers and shared encodings of the hierarchical roofline, as Vega-Lite dicts.

Each layer reads one named dataset of :mod:`roofgen.charts.hierarchical.rows`. Colour
and shape encode the memory level's role (and the legend shows the level names), the
dash pattern the roof's basis; axis labels are Vega expressions evaluated per tick, so
they stay right when the chart is zoomed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from roofgen.charts.common import js_string, nominal, quantitative, segment_end, tooltip
from roofgen.charts.hierarchical.domains import Domain
from roofgen.charts.hierarchical.style import DASHES, ROLE_COLOURS, ROLE_NAMES, ROLE_SHAPES
from roofgen.charts.inputs import ROOF_ROLES, RooflineInput
from roofgen.charts.vl import Spec, channel, expr, mark, unit
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


def encodings(xdom: Domain, ydom: Domain) -> dict[str, Spec]:
    """The x (FLOP/byte) and y (FLOP/s) log scales that every layer shares."""
    x = channel(
        "x",
        "quantitative",
        title="Arithmetic intensity (FLOP/byte)",
        scale={"domain": list(xdom), "nice": False, "type": "log"},
        axis={"labelExpr": plain_label_expr("FLOP/B"), "labelOverlap": "greedy"},
    )
    y = channel(
        "y",
        "quantitative",
        title="Performance (FLOP/s)",
        scale={"domain": list(ydom), "nice": False, "type": "log"},
        axis={"labelExpr": si_label_expr("FLOP/s"), "labelOverlap": "greedy"},
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


def legend(names: dict[str, str]) -> str:
    """The label expression of the level legend, naming each role's levels."""
    label_expr = " : ".join(
        f"datum.value === '{role}' ? '{js_string(names[role])}'" for role in ROOF_ROLES
    )
    return f"{label_expr} : datum.label"


def _legend(label_expr: str) -> Spec:
    return {"labelExpr": label_expr, "symbolOpacity": 1, "symbolStrokeWidth": 2}


def _colour(legend: str) -> Spec:
    return channel(
        "role",
        "nominal",
        title="Level",
        scale={"domain": list(ROOF_ROLES), "range": [ROLE_COLOURS[r] for r in ROOF_ROLES]},
        legend=_legend(legend),
    )


def _shape(legend: str) -> Spec:
    # "stroke" (a short line) stands for the compute roofs in the legend.
    return channel(
        "role",
        "nominal",
        title="Level",
        scale={
            "domain": list(ROOF_ROLES),
            "range": [ROLE_SHAPES.get(r, "stroke") for r in ROOF_ROLES],
        },
        legend=_legend(legend),
    )


# ---------------------------------------------------------------------------- layers
#
# ``opacity`` is a function that gives the opacity channel (with its condition on the
# selections) afresh for each layer.


def join_layer(opacity: Callable[[], Spec]) -> Spec:
    """Thin grey lines joining a launch's points across its memory levels."""
    return unit(
        "joins",
        mark("rule", color="#8c8c8c", strokeWidth=0.8, clip=True, aria=False),
        {"x2": {"field": "x2"}, "opacity": opacity()},
    )


def trajectory_layer(legend: str, opacity: Callable[[], Spec]) -> Spec:
    """Each shape sweep's points, joined in sweep order per level."""
    return unit(
        "trajectories",
        mark("line", strokeWidth=1.2, strokeDash=[4, 2], clip=True, aria=False),
        {
            "detail": nominal("line"),
            "order": quantitative("order"),
            "color": _colour(legend),
            "opacity": opacity(),
        },
    )


def arrow_layers(legend: str, opacity: Callable[[], Spec]) -> list[Spec]:
    """Arrows between variants: a line, and a triangle at its midpoint turned along it."""
    shafts = unit(
        "arrows",
        mark("rule", strokeWidth=1.2, clip=True, aria=False),
        {**segment_end(), "color": _colour(legend), "opacity": opacity()},
    )
    heads = unit(
        "arrows",
        mark(
            "point",
            shape="triangle",
            filled=True,
            size=60,
            clip=True,
            aria=False,
            angle=expr(_ARROW_ANGLE),
        ),
        {
            "x": quantitative("xm"),
            "y": quantitative("ym"),
            "color": _colour(legend),
            "opacity": opacity(),
            "tooltip": tooltip([("text", "Change")]),
        },
    )
    return [shafts, heads]


def point_layer(
    legend: str, size: float, opacity: Callable[[], Spec], *, shapes: bool, aria: bool
) -> Spec:
    """The launch points, one per memory level; ``shapes`` adds the shape to the tooltip,
    ``aria`` gives each point an ARIA label."""
    encoding: dict[str, Any] = {
        "color": _colour(legend),
        "shape": _shape(legend),
        "opacity": opacity(),
        "tooltip": tooltip(_POINT_TIPS_SHAPE if shapes else _POINT_TIPS),
    }
    if aria:
        encoding["description"] = nominal("desc")
    return unit(
        "points",
        mark("point", filled=True, size=size, clip=True, strokeWidth=0, aria=aria),
        encoding,
        name="launches",
    )


def roof_layers(legend: str, has_ridges: bool) -> list[Spec]:
    """The roofs, their ridge markers and their labels (on a white halo)."""
    dash = channel(
        "dash",
        "nominal",
        scale={"domain": list(DASHES), "range": [list(d) for d in DASHES.values()]},
        legend=None,
    )
    lines = unit(
        "roofs",
        mark("rule", clip=True),
        {
            **segment_end(),
            "color": _colour(legend),
            "strokeDash": dash,
            "strokeWidth": channel("sw", "quantitative", scale=None),
            "description": nominal("text"),
            "tooltip": tooltip([("text", "Roof"), ("basis", "Basis")]),
        },
    )

    def text_props() -> dict[str, Any]:
        return {
            "clip": True,
            "fontSize": 11,
            "align": expr("datum.align"),
            "baseline": expr("datum.baseline"),
            "dy": expr("datum.dy"),
            "angle": expr(f"datum.kind === 'memory' ? {_DIAG_ANGLE} : 0"),
        }

    def text_enc() -> dict[str, Any]:
        return {"x": quantitative("lx"), "y": quantitative("ly"), "text": nominal("text")}

    # A white halo under each label keeps it readable over crowded points.
    halo = unit(
        "roofs",
        mark("text", stroke="white", strokeWidth=3, strokeOpacity=0.85, aria=False, **text_props()),
        text_enc(),
    )
    labels = unit(
        "roofs",
        mark("text", aria=False, **text_props()),
        {"color": _colour(legend), **text_enc()},
    )
    layers = [lines]
    if has_ridges:
        ridge_mark = mark(
            "point", filled=False, fill="white", fillOpacity=1, size=70, strokeWidth=1.5, clip=True
        )
        layers.append(
            unit(
                "ridges",
                ridge_mark,
                {
                    "color": _colour(legend),
                    "shape": _shape(legend),
                    "description": nominal("text"),
                    "tooltip": tooltip([("text", "Ridge")]),
                },
            )
        )
    return [*layers, halo, labels]
