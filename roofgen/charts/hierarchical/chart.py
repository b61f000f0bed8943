"""The hierarchical roofline's spec: domains, rows, interaction and layers, put together."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import altair as alt
from altair.utils.schemapi import debug_mode

from roofgen.charts.common import FONT
from roofgen.charts.hierarchical import layers as lay
from roofgen.charts.hierarchical import rows
from roofgen.charts.hierarchical.domains import domains
from roofgen.charts.hierarchical.style import ARIA_POINTS_MAX, ARROWS_ALL_LEVELS_MAX, MarkStyle
from roofgen.charts.inputs import MEMORY_ROLES, RooflineInput

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

    The spec is not validated here (the tests validate one against the Vega-Lite schema);
    Altair's per-object validation is switched off while building, for speed.
    """
    with debug_mode(False):
        return _hierarchical_chart(inp, width, height, arrow_roles)


def _hierarchical_chart(
    inp: RooflineInput,
    width: int,
    height: int,
    arrow_roles: Collection[str] | None,
) -> dict[str, Any]:
    xdom, ydom = domains(inp)
    roof_rows, ridge_rows = rows.roof_rows(inp, xdom, ydom)
    point_rows = rows.point_rows(inp.points)
    join_rows = rows.join_rows(inp.points)
    trajectory_rows = rows.trajectory_rows(inp.points)
    roles = MEMORY_ROLES if arrow_roles is None else tuple(arrow_roles)
    arrow_rows = [r for r in rows.arrow_rows(inp, roles) if r["role"] in roles]
    if arrow_roles is None and len(arrow_rows) > ARROWS_ALL_LEVELS_MAX:
        arrow_rows = [r for r in arrow_rows if r["role"] == "device"]
    legend = lay.legend(lay.role_names(inp))
    style = MarkStyle.for_points(len(point_rows))

    # Hovering a launch (or its join or arrow) highlights every point of that kernel;
    # marks without a kernel (roofs, labels) leave the highlight as it is.
    hover = alt.selection_point(
        name="kernel_hover",
        fields=["case", "kernel"],
        on="pointerover[event.item && event.item.datum && event.item.datum.kernel]",
        clear="pointerout",
        empty=True,
    )
    level_pick = alt.selection_point(name="level_pick", fields=["role"], bind="legend")
    zoom = alt.selection_interval(name="zoom", bind="scales")
    # Conditions written as Vega-Lite dicts inside typed channel objects: Altair's
    # alt.condition() results are dicts that Altair re-parses at every encode() (slow).
    op_points = alt.OpacityValue(
        value=style.faded,
        condition={
            "test": {"and": [{"param": hover.name}, {"param": level_pick.name}]},
            "value": style.point_opacity,
        },
    )
    op_links = alt.OpacityValue(
        value=style.faded, condition={"param": hover.name, "value": style.link_opacity}
    )

    layers: list[alt.Chart] = []
    if join_rows:
        layers.append(lay.join_layer(op_links))
    if trajectory_rows:
        layers.append(lay.trajectory_layer(legend, op_links))
    if arrow_rows:
        layers += lay.arrow_layers(legend, op_links)
    aria = len(point_rows) <= ARIA_POINTS_MAX
    layers.append(
        lay.point_layer(
            legend, style.point_size, op_points, shapes=bool(trajectory_rows), aria=aria
        )
        .add_params(hover, level_pick, zoom)
        .properties(name="launches")
    )
    # Roofs above the points, so that they stay visible on crowded charts.
    layers += lay.roof_layers(legend, bool(ridge_rows))

    # One LayerChart construction: every chained Altair call would deep-copy all layers.
    chart = alt.LayerChart(
        layer=layers,
        encoding=alt.SharedEncoding(**lay.encodings(xdom, ydom)),
        width=width,
        height=height,
        title=alt.TitleParams(
            text=inp.title, subtitle=inp.subtitle or alt.Undefined, anchor="start"
        ),
        config=alt.Config(
            font=FONT,
            axis=alt.AxisConfig(gridColor="#e6e6e6", titleFontWeight="normal"),
            legend=alt.LegendConfig(orient="right"),
        ),
    )
    spec = chart.to_dict(validate=False)
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
    if trajectory_rows:
        spec["datasets"]["trajectories"] = trajectory_rows
    return spec
