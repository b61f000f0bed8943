"""The hierarchical roofline's spec: domains, rows, interaction and layers, put together."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from roofgen.charts.common import AXIS, FONT, LEGEND_FIELD, name_rows, square_decades
from roofgen.charts.hierarchical import layers as lay
from roofgen.charts.hierarchical import rows
from roofgen.charts.hierarchical.domains import domains
from roofgen.charts.hierarchical.style import ARIA_POINTS_MAX, ARROWS_ALL_LEVELS_MAX, MarkStyle
from roofgen.charts.inputs import MEMORY_ROLES, RooflineInput
from roofgen.charts.labels import Plot
from roofgen.charts.vl import Spec, layer_chart, title, top_level

CHART_KIND = "roofgen.hierarchical-roofline"


def hierarchical_chart(
    inp: RooflineInput,
    *,
    width: int = 640,
    height: int = 440,
    arrow_roles: Collection[str] | None = None,
) -> dict[str, Any]:
    """Vega-Lite spec (a plain dict) of the hierarchical roofline chart of ``inp``.

    ``arrow_roles`` chooses the memory roles that get before/after arrows (explicit
    ``inp.arrows`` are filtered the same way). By default every level gets them, unless
    that makes more than ``ARROWS_ALL_LEVELS_MAX`` arrows: then device memory only.

    The spec is not validated here (the tests validate the example site's charts against
    the Vega-Lite schema).
    """
    return _hierarchical_chart(inp, width, height, arrow_roles)


def _hierarchical_chart(
    inp: RooflineInput,
    width: int,
    height: int,
    arrow_roles: Collection[str] | None,
) -> dict[str, Any]:
    xdom, ydom = domains(inp)
    xdom, ydom, height = square_decades(xdom, ydom, width, height)
    roof_rows, ridge_rows = rows.roof_rows(inp, xdom, ydom, width, height)
    plot = Plot(xdom, ydom, width, height)
    point_rows = rows.point_rows(inp.points, plot)
    join_rows = rows.join_rows(inp.points)
    trajectory_rows = rows.trajectory_rows(inp.points)
    spreads = rows.spread_rows(inp.points, point_rows)
    label_rows = rows.point_labels(inp, point_rows, roof_rows, ridge_rows, plot)
    roles = MEMORY_ROLES if arrow_roles is None else tuple(arrow_roles)
    arrow_rows = [r for r in rows.arrow_rows(inp, roles) if r["role"] in roles]
    if arrow_roles is None and len(arrow_rows) > ARROWS_ALL_LEVELS_MAX:
        arrow_rows = [r for r in arrow_rows if r["role"] == "device"]
    legend = lay.legend(lay.role_names(inp))
    style = MarkStyle.for_points(len(point_rows))

    # Hovering a launch (or its join or arrow) highlights every point of that kernel;
    # marks without a kernel (roofs, labels) leave the highlight as it is. The selections
    # act on the points layer, named "launches".
    params = [
        {
            "name": "kernel_hover",
            "select": {
                "type": "point",
                "clear": "pointerout",
                "fields": ["case", "kernel"],
                "on": "pointerover[event.item && event.item.datum && event.item.datum.kernel]",
            },
            "views": ["launches"],
        },
        {
            "name": "level_pick",
            "select": {"type": "point", "fields": [LEGEND_FIELD]},
            "bind": "legend",
            "views": ["launches"],
        },
        {"name": "zoom", "select": {"type": "interval"}, "bind": "scales", "views": ["launches"]},
    ]

    def op_points() -> Spec:
        both = {"and": [{"param": "kernel_hover"}, {"param": "level_pick"}]}
        return {"condition": {"test": both, "value": style.point_opacity}, "value": style.faded}

    def op_links() -> Spec:
        hovered = {"param": "kernel_hover", "value": style.link_opacity}
        return {"condition": hovered, "value": style.faded}

    layers: list[Spec] = []
    if join_rows:
        layers.append(lay.join_layer(op_links))
    if trajectory_rows:
        layers.append(lay.trajectory_layer(legend, op_links))
    if arrow_rows:
        layers += lay.arrow_layers(legend, op_links)
    if spreads:
        layers.append(lay.spread_layer(legend, op_links))
    aria = len(point_rows) <= ARIA_POINTS_MAX
    layers.append(
        lay.point_layer(
            legend, style.point_size, op_points, shapes=any(p.shape for p in inp.points), aria=aria
        )
    )
    if label_rows:
        layers += lay.point_label_layers()
    # Roofs above the points, so that they stay visible on crowded charts.
    layers += lay.roof_layers(legend, bool(ridge_rows))

    chart = layer_chart(
        layers,
        encoding=lay.encodings(xdom, ydom),
        width=width,
        height=height,
        title=title(inp.title, inp.subtitle),
        params=params,
    )
    config = {
        "axis": dict(AXIS),
        "font": FONT,
        "legend": {"orient": "right"},
    }
    spec = top_level(chart, config)
    spec["description"] = f"Hierarchical roofline chart: {inp.title}"
    spec["usermeta"] = {
        "chart": CHART_KIND,
        "title": inp.title,
        "roofs": [r.id for r in inp.roofs],
        "encoding": "dashed roofs are datasheet values, solid roofs are measured",
    }
    spec["datasets"] = {
        "roofs": roof_rows,
        "ridges": ridge_rows,
        "joins": join_rows,
        "arrows": arrow_rows,
        "points": point_rows,
    }
    if label_rows:
        spec["datasets"]["labels"] = label_rows
    if spreads:
        spec["datasets"]["spreads"] = spreads
    if trajectory_rows:
        spec["datasets"]["trajectories"] = trajectory_rows
    _name_levels(spec["datasets"], legend)
    return spec


def _name_levels(datasets: dict[str, list[dict[str, Any]]], legend: lay.Legend) -> None:
    """Every row of a level gets the level's legend name: what colour and shape encode."""
    for rows_ in datasets.values():
        name_rows(rows_, "role", legend.names)
