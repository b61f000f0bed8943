"""The resource view (the seeds' "3-D roofline"): which resource limits each launch?

One row per resource of each launch, under a header row naming the launch: a horizontal
bar whose length is the time lower bound that resource alone sets (demand / capacity), on
one log time axis; a black tick in every row of a launch marks its measured time. The
binding resource is vermillion, the runner-up orange, the rest grey; a resource without
demand data says "unknown" (unknown is not zero), one the launch does not use "no
demand". Every classic roofline is a projection of this table.

One view, not one panel per launch: a case with many launches stays one small SVG.
"""

from __future__ import annotations

from typing import Any

import altair as alt
from altair.utils.schemapi import debug_mode

from roofgen.charts.common import config, finish, log_axis, log_domain, named, tooltip
from roofgen.charts.inputs import ChartKind
from roofgen.charts.roofline_inputs import ResourcesInput
from roofgen.units import fmt_time

CHART_KIND = "roofgen.resource-bounds"
ROLES = ["binding", "runner-up", "other", "unknown"]
ROLE_COLOURS = ["#D55E00", "#E69F00", "#9E9E9E", "#FFFFFF"]
ROW_PX = 15


def resources_chart(inp: ResourcesInput, *, width: int = 560, height: int = 0) -> dict[str, Any]:
    """Vega-Lite spec (a plain dict) of the resource view of ``inp``. ``height`` is unused:
    the chart is as tall as its rows need."""
    with debug_mode(False):
        return _chart(inp, width)


def _rows(inp: ResourcesInput, lo: float) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Bar rows (one per launch and resource) and header rows (one per launch)."""
    bars: list[dict[str, Any]] = []
    headers: list[dict[str, Any]] = []
    for i, group in enumerate(inp.groups):
        key = f"{i:04d}"
        headers.append(
            {
                "row": f"{key}|",
                "x": lo,
                "text": f"{group.label}: measured {fmt_time(group.measured_s)}, bound "
                f"{fmt_time(group.bound_s)}",
            }
        )
        for j, b in enumerate(bar for bar in inp.bars if bar.group == i):
            seconds = b.seconds
            bars.append(
                {
                    "row": f"{key}|{j:03d}|{b.name}",
                    "x": lo,
                    "x2": max(seconds or 0.0, lo),
                    "measured": group.measured_s,
                    "launch": group.label,
                    "name": b.name,
                    "resource": b.resource,
                    "role": b.role,
                    "t": "unknown" if seconds is None else fmt_time(seconds),
                    "share": ""
                    if seconds is None
                    else f"{seconds / group.measured_s:.0%} of measured",
                    "label": "unknown" if seconds is None else ("no demand" if not seconds else ""),
                }
            )
    return bars, headers


def _chart(inp: ResourcesInput, width: int) -> dict[str, Any]:
    seconds = [b.seconds for b in inp.bars if b.seconds] + [g.measured_s for g in inp.groups]
    xdom = log_domain(seconds, (1e-6, 1e-2), pad_decades=0.2, min_decades=2.0)
    bars, headers = _rows(inp, xdom[0])
    order = sorted([r["row"] for r in bars] + [h["row"] for h in headers])
    y = alt.Y(
        field="row",
        type="nominal",
        title=None,
        scale=alt.Scale(domain=order, paddingInner=0.15),
        # The row key is "launch|index|name": show the name; header rows show nothing.
        axis=alt.Axis(labelExpr="split(datum.value, '|')[2] || ''", labelLimit=220, ticks=False),
    )
    x = log_axis("x", "x", "Time lower bound (s)", xdom, "s")
    colour = alt.Color(
        field="role",
        type="nominal",
        title="Resource",
        scale=alt.Scale(domain=ROLES, range=ROLE_COLOURS),
    )
    layers = [
        named("bars")
        .mark_bar(clip=True, stroke="#666666", strokeWidth=0.5)
        .encode(
            x=x,
            x2=alt.X2(field="x2"),
            y=y,
            color=colour,
            description=alt.Description(field="name", type="nominal"),
            tooltip=tooltip(
                [
                    ("launch", "Launch"),
                    ("name", "Resource"),
                    ("resource", "Id"),
                    ("t", "Bound"),
                    ("share", "Share"),
                    ("role", "Role"),
                ]
            ),
        ),
        named("bars")
        .mark_text(align="left", dx=4, fontSize=10, fontStyle="italic", color="#666666", aria=False)
        .encode(x=x, y=y, text=alt.Text(field="label", type="nominal")),
        named("bars")
        .mark_tick(orient="vertical", thickness=2, color="#000000", clip=True)
        .encode(
            x=alt.X(field="measured", type="quantitative"),
            y=y,
            tooltip=tooltip([("launch", "Launch"), ("t", "Bound")]),
        ),
        named("headers")
        .mark_text(
            align="left", baseline="middle", fontSize=11, fontWeight="bold", dx=2, aria=False
        )
        .encode(x=x, y=y, text=alt.Text(field="text", type="nominal")),
    ]
    chart = alt.LayerChart(
        layer=layers,
        width=width,
        height=ROW_PX * max(len(order), 1),
        title=alt.TitleParams(
            text=inp.title, subtitle=inp.subtitle or alt.Undefined, anchor="start"
        ),
        config=config(),
    )
    return finish(
        chart,
        CHART_KIND,
        inp.title,
        f"Resource bounds: {inp.title}",
        {"bars": bars, "headers": headers},
        groups=[g.label for g in inp.groups],
    )


CHART = ChartKind(ResourcesInput, CHART_KIND, resources_chart)
