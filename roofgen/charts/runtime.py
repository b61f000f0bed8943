"""Runtime roofline: a step's time against the kernel launches it makes.

x: launches per step, y: the step's measured time, both log. Each launch mechanism is a
floor ``launches x cost per launch``: a stream launch, a node of a CUDA graph and a
programmatic dependent launch cost differently. A step whose point sits on the floor of
its own mechanism spends its time launching (launch-bound): fuse kernels, capture the
step in a CUDA graph, chain launches with PDL or run one persistent kernel.
"""

from __future__ import annotations

from typing import Any

from roofgen.charts.common import (
    finish,
    log_axis,
    log_domain,
    nominal,
    quantitative,
    segment_end,
    square_decades,
    tooltip,
)
from roofgen.charts.inputs import ChartKind
from roofgen.charts.labels import Box, Plot, place, text_width
from roofgen.charts.roofline_inputs import RuntimeInput
from roofgen.charts.vl import Spec, channel, layer_chart, mark, title, unit
from roofgen.units import fmt_time

CHART_KIND = "roofgen.runtime-roofline"
MECHANISMS = ["stream", "graph", "pdl"]
MECHANISM_NAMES = {"stream": "Stream launch", "graph": "CUDA graph node", "pdl": "PDL launch"}
MECHANISM_COLOURS = {"stream": "#D55E00", "graph": "#0072B2", "pdl": "#009E73"}


def runtime_chart(inp: RuntimeInput, *, width: int = 640, height: int = 400) -> dict[str, Any]:
    """Vega-Lite spec (a plain dict) of the runtime roofline of ``inp``."""
    return _chart(inp, width, height)


def floor_text(mechanism: str, cost_s: float) -> str:
    """``Stream launch 4 us each``."""
    return f"{MECHANISM_NAMES.get(mechanism, mechanism)} {fmt_time(cost_s)} each"


def _chart(inp: RuntimeInput, width: int, height: int) -> dict[str, Any]:
    points: list[dict[str, Any]] = [
        {
            # A count beyond 2^53 is not exact as a JSON number anyway, and vl-convert
            # refuses an integer beyond 2^64: such a count is written as a float.
            "x": p.launches if p.launches <= 2**53 else float(p.launches),
            "y": p.time_s,
            "mechanism": p.mechanism,
            "step": f"{p.variant}",
            "case": p.case,
            "n": str(p.launches),
            "t": fmt_time(p.time_s),
            "floor": fmt_time(p.floor_s),
            "bound": "yes" if p.launch_bound else "no",
        }
        for p in inp.points
    ]
    xdom = log_domain([p["x"] for p in points], (1.0, 1000.0), min_decades=2.0)
    ys = [p["y"] for p in points] + [xdom[0] * c for _, c in inp.costs]
    ys += [xdom[1] * c for _, c in inp.costs]
    ydom = log_domain(ys, (1e-6, 1e-2), pad_decades=0.1, min_decades=2.0)
    xdom, ydom, height = square_decades(xdom, ydom, width, height)
    floors = [
        {
            "x": xdom[0] / 10,
            "y": xdom[0] / 10 * cost,
            "x2": xdom[1] * 10,
            "y2": xdom[1] * 10 * cost,
            "lx": xdom[1] / 1.5,
            "ly": xdom[1] / 1.5 * cost,
            "mechanism": mech,
            "text": floor_text(mech, cost),
        }
        for mech, cost in inp.costs
    ]
    _lay_out(Plot(xdom, ydom, width, height), floors, points)
    angle = Plot(xdom, ydom, width, height).diagonal_angle()
    used = [m for m in MECHANISMS if any(r["mechanism"] == m for r in floors + points)]

    def colour() -> Spec:
        names = [f"datum.value === '{m}' ? '{MECHANISM_NAMES[m]}'" for m in used]
        return channel(
            "mechanism",
            "nominal",
            title="Launch mechanism",
            scale={"domain": list(used), "range": [MECHANISM_COLOURS[m] for m in used]},
            legend={"labelExpr": " : ".join([*names, "datum.label"])},
        )

    layers = [
        unit(
            "floors",
            mark("rule", clip=True, strokeWidth=2, strokeDash=[6, 3]),
            {
                **segment_end(),
                "color": colour(),
                "description": nominal("text"),
                "tooltip": tooltip([("text", "Floor")]),
            },
        ),
        unit(
            "floors",
            mark("text", clip=True, fontSize=11, baseline="middle", angle=angle, aria=False),
            {
                "x": quantitative("lx"),
                "y": quantitative("ly"),
                "text": nominal("text"),
                "color": colour(),
            },
        ),
    ]
    if points:
        tips = [
            ("case", "Case"),
            ("step", "Variant"),
            ("n", "Launches per step"),
            ("t", "Measured"),
            ("floor", "Launch floor"),
            ("bound", "Launch-bound"),
        ]
        layers += [
            unit(
                "steps",
                mark("point", filled=True, size=80, clip=True, shape="circle"),
                {"color": colour(), "description": nominal("step"), "tooltip": tooltip(tips)},
                name="launches",
            ),
            unit(
                "steps",
                mark("text", clip=True, fontSize=11, baseline="middle", aria=False),
                {"x": quantitative("lx"), "y": quantitative("ly"), "text": nominal("step")},
            ),
        ]
    chart = layer_chart(
        layers,
        encoding={
            "x": log_axis("x", "Kernel launches per step", xdom, "", si=False),
            "y": log_axis("y", "Step time (s)", ydom, "s"),
        },
        width=width,
        height=height,
        title=title(inp.title, inp.subtitle),
    )
    return finish(
        chart,
        CHART_KIND,
        inp.title,
        f"Runtime roofline: {inp.title}",
        {"floors": floors, "steps": points},
        costs={m: c for m, c in inp.costs},
    )


def _lay_out(plot: Plot, floors: list[dict[str, Any]], points: list[dict[str, Any]]) -> None:
    """Label centres of the floors (along them) and of the steps (beside them), clear of
    each other and of the points."""
    candidates = []
    for r in floors:
        cost = r["y"] / r["x"]
        lo = max(plot.xdom[0], plot.ydom[0] / cost)
        hi = min(plot.xdom[1], plot.ydom[1] / cost)
        candidates.append(plot.diagonal_candidates(cost, lo, hi, text_width(r["text"], 11), 14))
    for p in points:
        candidates.append(plot.point_candidates(p["x"], p["y"], text_width(p["step"], 11), 14))
    obstacles = [Box(*plot.px(p["x"], p["y"]), 11, 11) for p in points]
    for row, box in zip(
        [*floors, *points], place(candidates, obstacles, plot.width, plot.height), strict=True
    ):
        row["lx"], row["ly"] = plot.data(box.cx, box.cy)


CHART = ChartKind(RuntimeInput, CHART_KIND, runtime_chart)
