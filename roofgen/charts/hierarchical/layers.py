"""The layers and shared encodings of the hierarchical roofline, as Vega-Lite dicts.

Each layer reads one named dataset of :mod:`roofgen.charts.hierarchical.rows`. Colour
and shape encode the memory level's role (and the legend shows the level names), the
dash pattern the roof's basis; axis labels are Vega expressions evaluated per tick, so
they stay right when the chart is zoomed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from roofgen.charts.common import (
    LEGEND_FIELD,
    legend_names,
    log_ticks,
    nominal,
    quantitative,
    segment_end,
    tick_label,
    tooltip,
)
from roofgen.charts.hierarchical.domains import Domain
from roofgen.charts.hierarchical.style import DASHES, ROLE_COLOURS, ROLE_NAMES, ROLE_SHAPES
from roofgen.charts.inputs import ROOF_ROLES, RooflineInput
from roofgen.charts.vl import Spec, channel, expr, mark, unit

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
# On-screen angle (degrees) of an arrow from (x, y) to (x2, y2), read from the live scales
# so that it stays right when the chart is zoomed.
_ARROW_ANGLE = (
    "atan2(scale('x', datum.x2) - scale('x', datum.x), "
    "scale('y', datum.y) - scale('y', datum.y2)) * 180 / PI"
)


# ------------------------------------------------------------------------------ axes


def encodings(xdom: Domain, ydom: Domain) -> dict[str, Spec]:
    """The x (FLOP/byte) and y (FLOP/s) log scales that every layer shares."""
    x = channel(
        "x",
        "quantitative",
        title="Arithmetic intensity (FLOP/byte)",
        scale={"domain": list(xdom), "nice": False, "type": "log"},
        axis={"labelExpr": tick_label("", si=False), "values": log_ticks(xdom)},
    )
    y = channel(
        "y",
        "quantitative",
        title="Performance (FLOP/s)",
        scale={"domain": list(ydom), "nice": False, "type": "log"},
        axis={"labelExpr": tick_label("FLOP/s"), "values": log_ticks(ydom)},
    )
    return {"x": x, "y": y}


# ---------------------------------------------------------------------------- legend


@dataclass(frozen=True)
class Legend:
    """The level legend: the roles drawn, in legend order, and each one's name (what the
    rows hold in :data:`LEGEND_FIELD`, the colour and shape channels' field)."""

    roles: tuple[str, ...]
    names: dict[str, str]

    @property
    def domain(self) -> list[str]:
        return [self.names[r] for r in self.roles]


def role_names(inp: RooflineInput) -> dict[str, str]:
    """Legend name per role drawn, from the level names the data uses (``"HBM"``, ``"L2"``);
    a role with neither a roof nor a point is not in it."""
    seen: dict[str, list[str]] = defaultdict(list)
    for p in inp.points:
        if p.level not in seen[p.level_role]:
            seen[p.level_role].append(p.level)
    for r in inp.roofs:
        if r.kind == "memory" and not seen[r.role]:
            seen[r.role].append(r.label)
    drawn = {r.role for r in inp.roofs} | {p.level_role for p in inp.points}
    names = {role: name for role, name in ROLE_NAMES.items() if role in drawn}
    for role, levels in seen.items():
        if levels and role in drawn:
            names[role] = " / ".join(levels)
    return names


def legend(names: dict[str, str]) -> Legend:
    """The level legend naming each drawn role's levels (all roles when none is drawn)."""
    roles = tuple(r for r in ROOF_ROLES if r in names) or tuple(ROOF_ROLES)
    return Legend(roles, legend_names(roles, [names.get(r, ROLE_NAMES[r]) for r in roles]))


def _legend() -> Spec:
    return {"symbolOpacity": 1, "symbolStrokeWidth": 2}


def _colour(legend: Legend) -> Spec:
    return channel(
        LEGEND_FIELD,
        "nominal",
        title="Level",
        scale={
            "domain": legend.domain,
            "range": [ROLE_COLOURS[r] for r in legend.roles],
        },
        legend=_legend(),
    )


def _shape(legend: Legend) -> Spec:
    # "stroke" (a short line) stands for the compute roofs in the legend.
    return channel(
        LEGEND_FIELD,
        "nominal",
        title="Level",
        scale={
            "domain": legend.domain,
            "range": [ROLE_SHAPES.get(r, "stroke") for r in legend.roles],
        },
        legend=_legend(),
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


def trajectory_layer(legend: Legend, opacity: Callable[[], Spec]) -> Spec:
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


def arrow_layers(legend: Legend, opacity: Callable[[], Spec]) -> list[Spec]:
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
    legend: Legend, size: float, opacity: Callable[[], Spec], *, shapes: bool, aria: bool
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


def spread_layer(legend: Legend, opacity: Callable[[], Spec]) -> Spec:
    """Error bars: each point's FLOP/s from the third to the first quartile of its time."""
    return unit(
        "spreads",
        mark("rule", strokeWidth=1.5, clip=True),
        {
            "y2": {"field": "y2"},
            "color": _colour(legend),
            "opacity": opacity(),
            "tooltip": tooltip([("text", "Spread")]),
        },
    )


def point_label_layers() -> list[Spec]:
    """The direct labels of the baseline and best points (``labels``), on a white halo."""

    def enc() -> dict[str, Any]:
        return {"x": quantitative("lx"), "y": quantitative("ly"), "text": nominal("text")}

    props: dict[str, Any] = {"clip": True, "fontSize": 11, "baseline": "middle", "aria": False}
    halo = mark("text", stroke="white", strokeWidth=3, strokeOpacity=0.85, **props)
    return [
        unit("labels", halo, enc()),
        unit("labels", mark("text", color="#333333", **props), enc()),
    ]


def roof_layers(legend: Legend, has_ridges: bool) -> list[Spec]:
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
            "angle": expr("datum.angle"),
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
