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

from roofgen.charts.common import finish, log_axis, log_domain, nominal, quantitative, tooltip
from roofgen.charts.inputs import ChartKind
from roofgen.charts.roofline_inputs import ResourcesInput
from roofgen.charts.vl import channel, layer_chart, mark, title, unit
from roofgen.units import fmt_time

CHART_KIND = "roofgen.resource-bounds"
ROLES = ["binding", "runner-up", "other", "unknown"]
ROLE_COLOURS = ["#D55E00", "#E69F00", "#9E9E9E", "#FFFFFF"]
ROW_PX = 15


def resources_chart(inp: ResourcesInput, *, width: int = 560, height: int = 0) -> dict[str, Any]:
    """Vega-Lite spec (a plain dict) of the resource view of ``inp``. ``height`` is unused:
    the chart is as tall as its rows need."""
    return _chart(inp, width)


def _rows(inp: ResourcesInput, lo: float) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Bar rows (one per launch and resource) and header rows (one per launch)."""
    bars: list[dict[str, Any]] = []
    headers: list[dict[str, Any]] = []
    by_group: dict[int, list[Any]] = {}  # one pass: a scan of every bar per group is n²
    for bar in inp.bars:
        by_group.setdefault(bar.group, []).append(bar)
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
        for j, b in enumerate(by_group.get(i, ())):
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

    def y() -> dict[str, Any]:
        # The row key is "launch|index|name": show the name; header rows show nothing.
        axis = {"labelExpr": "split(datum.value, '|')[2] || ''", "labelLimit": 220, "ticks": False}
        scale = {"domain": list(order), "paddingInner": 0.15}
        return channel("row", "nominal", title=None, scale=scale, axis=axis)

    def x() -> dict[str, Any]:
        return log_axis("x", "Time lower bound (s)", xdom, "s")

    colour = {"domain": list(ROLES), "range": list(ROLE_COLOURS)}
    tips = [
        ("launch", "Launch"),
        ("name", "Resource"),
        ("resource", "Id"),
        ("t", "Bound"),
        ("share", "Share"),
        ("role", "Role"),
    ]
    layers = [
        unit(
            "bars",
            mark("bar", clip=True, stroke="#666666", strokeWidth=0.5),
            {
                "x": x(),
                "x2": {"field": "x2"},
                "y": y(),
                "color": channel("role", "nominal", title="Resource", scale=colour),
                "description": nominal("name"),
                "tooltip": tooltip(tips),
            },
        ),
        unit(
            "bars",
            mark(
                "text",
                align="left",
                dx=4,
                fontSize=10,
                fontStyle="italic",
                color="#666666",
                aria=False,
            ),
            {"x": x(), "y": y(), "text": nominal("label")},
        ),
        unit(
            "bars",
            mark("tick", orient="vertical", thickness=2, color="#000000", clip=True),
            {
                "x": quantitative("measured"),
                "y": y(),
                "tooltip": tooltip([("launch", "Launch"), ("t", "Bound")]),
            },
        ),
        unit(
            "headers",
            mark(
                "text",
                align="left",
                baseline="middle",
                fontSize=11,
                fontWeight="bold",
                dx=2,
                aria=False,
            ),
            {"x": x(), "y": y(), "text": nominal("text")},
        ),
    ]
    chart = layer_chart(
        layers,
        width=width,
        height=ROW_PX * max(len(order), 1),
        title=title(inp.title, inp.subtitle),
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
