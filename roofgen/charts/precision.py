"""Precision (tensor-core) roofline: every compute ceiling of a machine, and each launch
against the units and precisions it uses.

x: work per device-memory byte (FLOP/B, OP/B for integer and transcendental work), y: work
per second, both log. Each ceiling is a horizontal line from its ridge with device memory;
dense peaks are solid, 2:4 sparse peaks dashed (they count the skipped zeros). Equal peaks
of one unit share a line and a label. A launch has one point per (unit, precision) it has
work on, coloured by precision and shaped by unit; its tooltip gives the share of the
measured time that work needs at the peak. Precisions on one unit add up; different units
run concurrently.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from roofgen.charts.common import (
    diagonal_label,
    finish,
    log_axis,
    log_domain,
    nominal,
    quantitative,
    roof_rule,
    segment_end,
    square_decades,
    tooltip,
)
from roofgen.charts.inputs import ChartKind
from roofgen.charts.labels import Box, Plot, place, place_optional, text_width
from roofgen.charts.roofline_inputs import Ceiling, PrecisionInput
from roofgen.charts.vl import Spec, channel, expr, layer_chart, mark, title, unit
from roofgen.units import fmt_si, rate_unit

CHART_KIND = "roofgen.precision-roofline"

#: Colour per precision (Okabe-Ito and neighbours); labels carry the names too.
PRECISION_COLOURS: dict[str, str] = {
    "fp64": "#000000",
    "fp32": "#56B4E9",
    "tf32": "#0072B2",
    "bf16": "#009E73",
    "fp16": "#8C6D31",
    "fp8": "#D55E00",
    "fp6": "#B8860B",
    "fp4": "#CC79A7",
    "int8": "#E69F00",
    "int4": "#7F7F7F",
    "transcendental": "#9467BD",
}
UNIT_SHAPES: dict[str, str] = {
    "tensor": "circle",
    "fp32": "square",
    "fp64": "diamond",
    "fp16": "triangle-down",
    "sfu": "triangle-up",
}


def ceiling_text(c: Ceiling) -> str:
    """``BF16/FP16 312 TFLOP/s``, ``INT8 sparse 1.25 POP/s``; ``(measured)`` for a measured
    ceiling (the others are datasheet values)."""
    sparse = " sparse" if c.sparse and "sparse" not in c.label.lower() else ""
    suffix = " (measured)" if c.basis == "measured" else ""
    return f"{c.label}{sparse} {fmt_si(c.value, rate_unit(c.precision), zeros=True)}{suffix}"


#: Dash pattern per kind of peak: measured solid, datasheet dashed; sparse ones dotted.
PEAK_DASHES: dict[str, list[float]] = {
    "dense, measured": [1, 0],
    "dense, datasheet": [8, 3],
    "2:4 sparse, measured": [2, 2],
    "2:4 sparse, datasheet": [8, 3, 2, 3],
}


def ceiling_rows(
    ceilings: tuple[Ceiling, ...],
    bandwidth: float | None,
    plot: Plot,
    points: list[dict[str, Any]] | None = None,
    fixed: list[Box] | None = None,
) -> list[dict[str, Any]]:
    """One row per ceiling: a horizontal segment from its ridge, and its label's centre,
    laid out clear of the other labels and of the points."""
    lo, hi = plot.xdom
    rows: list[dict[str, Any]] = []
    for c in sorted(ceilings, key=lambda c: (-c.value, c.id)):
        start = c.value / bandwidth if bandwidth else lo / 1e3
        rows.append(
            {
                "id": c.id,
                "x": start,
                "x2": hi * 1e3,
                "y": c.value,
                "y2": c.value,
                "text": ceiling_text(c),
                "precision": c.precision.removesuffix("-sparse"),
                "dash": f"{'2:4 sparse' if c.sparse else 'dense'}, {c.basis}",
                "basis": c.basis,
            }
        )
    obstacles = [Box(*plot.px(p["x"], p["y"]), 12, 12) for p in points or ()]
    candidates = [
        plot.horizontal_candidates(r["y"], r["x"], text_width(r["text"], 11), 14) for r in rows
    ]
    boxes = place(candidates, obstacles, plot.width, plot.height, fixed=fixed or [])
    for row, box in zip(rows, boxes, strict=True):
        row["lx"], row["ly"] = plot.data(box.cx, box.cy)
    return rows


def peak_dash(rows: list[dict[str, Any]]) -> Spec:
    """The dash of each kind of peak the chart draws (:data:`PEAK_DASHES`)."""
    kinds = [k for k in PEAK_DASHES if any(r["dash"] == k for r in rows)]
    return channel(
        "dash",
        "nominal",
        title="Peak",
        scale={"domain": kinds, "range": [list(PEAK_DASHES[k]) for k in kinds]},
    )


def precision_chart(inp: PrecisionInput, *, width: int = 640, height: int = 440) -> dict[str, Any]:
    """Vega-Lite spec (a plain dict) of the precision roofline of ``inp``."""
    return _chart(inp, width, height)


def _domains(inp: PrecisionInput) -> tuple[tuple[float, float], tuple[float, float]]:
    xs = [p.intensity for p in inp.points] + [j.intensity_to for j in inp.projections]
    ys = [p.rate for p in inp.points] + [c.value for c in inp.ceilings]
    ys += [j.rate_to for j in inp.projections]
    if inp.bandwidth:
        xs += [c.value / inp.bandwidth for c in inp.ceilings]
    xdom = log_domain(xs, (0.1, 1000.0), min_decades=3.0)
    ydom = log_domain(ys, (1e9, 1e15), min_decades=2.5)
    return xdom, ydom


def _chart(inp: PrecisionInput, width: int, height: int) -> dict[str, Any]:
    xdom, ydom = _domains(inp)
    xdom, ydom, height = square_decades(xdom, ydom, width, height)
    plot = Plot(xdom, ydom, width, height)
    spots = [{"x": p.intensity, "y": p.rate} for p in inp.points]
    spots += [{"x": j.intensity_to, "y": j.rate_to} for j in inp.projections]
    ceilings = ceiling_rows(inp.ceilings, inp.bandwidth, plot, spots)
    precisions = sorted(
        {r["precision"] for r in ceilings}
        | {p.precision.removesuffix("-sparse") for p in inp.points}
        | {j.to_precision.removesuffix("-sparse") for j in inp.projections},
        key=lambda p: (list(PRECISION_COLOURS).index(p) if p in PRECISION_COLOURS else 99, p),
    )

    def colour() -> Spec:
        return channel(
            "precision",
            "nominal",
            title="Precision",
            scale={
                "domain": list(precisions),
                "range": [PRECISION_COLOURS.get(p, "#666666") for p in precisions],
            },
            legend={"labelExpr": "upper(datum.label)"},
        )

    memory: list[dict[str, Any]] = []
    if inp.bandwidth:
        top = max((c.value for c in inp.ceilings), default=ydom[1])
        x_end = top / inp.bandwidth
        x_start = xdom[0] / 1e3
        vis = max(xdom[0], ydom[0] / inp.bandwidth)
        text = f"{inp.memory_label} {fmt_si(inp.bandwidth, 'B/s', zeros=True)}"
        text += " (measured)" if inp.bandwidth_basis == "measured" else ""
        taken = [
            Box(*plot.px(r["lx"], r["ly"]), text_width(r["text"], 11), 14) for r in ceilings
        ] + [Box(*plot.px(p.intensity, p.rate), 10, 10) for p in inp.points]
        options = plot.diagonal_candidates(
            inp.bandwidth, vis, min(x_end, xdom[1], ydom[1] / inp.bandwidth),
            text_width(text, 11), 14,
        )  # fmt: skip
        box = place([options], taken, plot.width, plot.height)[0]
        lx, ly = plot.data(box.cx, box.cy)
        memory.append(
            {
                "x": x_start,
                "y": inp.bandwidth * x_start,
                "x2": x_end,
                "y2": top,
                "lx": lx,
                "ly": ly,
                "text": text,
            }
        )
    points: list[dict[str, Any]] = [
        {
            "x": p.intensity,
            "y": p.rate,
            "precision": p.precision.removesuffix("-sparse"),
            "unit": p.unit,
            "launch": p.key.label,
            "case": p.key.case,
            "what": f"{p.unit_name} {p.precision.upper()}",
            "rate": fmt_si(p.rate, rate_unit(p.precision), zeros=True),
            "peak": fmt_si(p.peak, rate_unit(p.precision), zeros=True),
            "of_peak": f"{p.rate / p.peak:.1%}",
            "share": f"{p.unit_time_share:.1%} of the measured time",
        }
        for p in inp.points
    ]
    shapes = sorted({p["unit"] for p in points})
    label = {"clip": True, "fontSize": 11, "align": "center", "baseline": "middle"}
    layers = [
        unit(
            "ceilings",
            mark("rule", clip=True, strokeWidth=1.6),
            {
                **segment_end(),
                "color": colour(),
                "strokeDash": peak_dash(ceilings),
                "description": nominal("text"),
                "tooltip": tooltip([("text", "Ceiling"), ("basis", "Basis")]),
            },
        ),
        unit(
            "ceilings",
            mark("text", aria=False, stroke="white", strokeWidth=3, strokeOpacity=0.85, **label),
            {"x": quantitative("lx"), "y": quantitative("ly"), "text": nominal("text")},
        ),
        unit(
            "ceilings",
            mark("text", aria=False, **label),
            {
                "x": quantitative("lx"),
                "y": quantitative("ly"),
                "text": nominal("text"),
                "color": colour(),
            },
        ),
    ]
    if memory:
        rule = roof_rule("memory", "#D55E00", "Memory roof")
        if inp.bandwidth_basis != "measured":  # drawn as the datasheet ceilings are
            rule["mark"]["strokeDash"] = list(PEAK_DASHES["dense, datasheet"])
        layers += [
            rule,
            diagonal_label(
                "memory",
                "#D55E00",
                plot.diagonal_angle(),
                align="center",
                baseline="middle",
                dy=0,
                fontSize=11,
            ),
        ]
    if points:
        layers.append(
            unit(
                "points",
                mark("point", filled=True, size=70, opacity=0.9, clip=True),
                {
                    "color": colour(),
                    "shape": channel(
                        "unit",
                        "nominal",
                        title="Unit",
                        scale={
                            "domain": list(shapes),
                            "range": [UNIT_SHAPES.get(u, "cross") for u in shapes],
                        },
                    ),
                    "description": nominal("launch"),
                    "tooltip": tooltip(
                        [
                            ("launch", "Launch"),
                            ("what", "Work"),
                            ("rate", "Rate"),
                            ("peak", "Peak"),
                            ("of_peak", "Of peak"),
                            ("share", "Time at peak"),
                        ]
                    ),
                },
                name="launches",
            )
        )
    fixed = [Box(*plot.px(r["lx"], r["ly"]), text_width(r["text"], 11), 14) for r in ceilings]
    fixed += [
        Box(*plot.px(r["lx"], r["ly"]), text_width(r["text"], 11), 14, plot.diagonal_angle())
        for r in memory
    ]
    projected = projection_rows(inp, plot, fixed, spots)
    if projected:
        layers += projection_layers(colour)
    fixed += [
        Box(*plot.px(r["lx"], r["ly"]), text_width(r["label"], 11), 14)
        for r in projected
        if r["label"]
    ]
    others = ceiling_rows(inp.other_ceilings, inp.bandwidth, plot, spots, fixed)
    params = [toggle()] if others else None
    if others:
        layers += other_layers()
    x_title = "Work per device-memory byte (FLOP/B or OP/B)"
    y_title = "Work per second (FLOP/s; OP/s for integer and transcendental)"
    chart = layer_chart(
        layers,
        encoding={
            "x": log_axis("x", x_title, xdom, "FLOP/B", si=False),
            "y": log_axis("y", y_title, ydom, "FLOP/s"),
        },
        width=width,
        height=height,
        title=title(inp.title, inp.subtitle),
        params=params,
    )
    return finish(
        chart,
        CHART_KIND,
        inp.title,
        f"Precision roofline: {inp.title}",
        {
            "ceilings": ceilings,
            "memory": memory,
            "points": points,
            "projected": projected,
            "others": others,
        },
        ceilings=[c.id for c in inp.ceilings],
    )


def toggle() -> Spec:
    """The check box that shows the machine's other ceilings (hidden in static charts)."""
    return {
        "name": "all_ceilings",
        "value": False,
        "bind": {"input": "checkbox", "name": "Every ceiling of the machine "},
    }


def other_layers() -> list[Spec]:
    """The machine's other ceilings, in grey, shown only while the toggle is on."""

    def shown() -> Spec:
        return {"condition": {"param": "all_ceilings", "value": 1}, "value": 0}

    label = {"clip": True, "fontSize": 11, "align": "center", "baseline": "middle", "aria": False}

    def at() -> dict[str, Spec]:
        return {"x": quantitative("lx"), "y": quantitative("ly"), "text": nominal("text")}

    return [
        unit(
            "others",
            mark("rule", clip=True, strokeWidth=1.2, strokeDash=[2, 2], color="#999999"),
            {**segment_end(), "opacity": shown(), "description": nominal("text")},
        ),
        unit(
            "others",
            mark("text", stroke="white", strokeWidth=3, strokeOpacity=0.85, **label),
            {**at(), "opacity": shown()},
        ),
        unit(
            "others",
            mark("text", color="#777777", **label),
            {**at(), "opacity": shown()},
        ),
    ]


def projection_rows(
    inp: PrecisionInput, plot: Plot, fixed: list[Box], spots: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """One row per projected point: the arrow from the measured point, its head's screen
    angle, and a short label (``FP8 1.60x``) placed clear of every other label and point."""
    rows: list[dict[str, Any]] = []
    for j in inp.projections:
        (ax, ay), (bx, by) = (
            plot.px(j.intensity_from, j.rate_from),
            plot.px(j.intensity_to, j.rate_to),
        )
        rows.append(
            {
                "x": j.intensity_from,
                "y": j.rate_from,
                "x2": j.intensity_to,
                "y2": j.rate_to,
                "head": round(math.degrees(math.atan2(bx - ax, ay - by)) % 360, 3),
                "xm": math.sqrt(j.intensity_from * j.intensity_to),
                "ym": math.sqrt(j.rate_from * j.rate_to),
                "precision": j.to_precision.removesuffix("-sparse"),
                "short": f"{j.to_precision.upper()} {j.speedup:.2f}x",
                "text": f"{j.key.label}: {j.from_precision.upper()} to "
                f"{j.to_precision.upper()}, {j.speedup:.2f}x (projected)",
            }
        )
    obstacles = [Box(*plot.px(p["x"], p["y"]), 10, 10) for p in spots]
    candidates = [
        plot.point_candidates(r["x2"], r["y2"], text_width(r["short"], 11), 14) for r in rows
    ]
    boxes = place_optional(candidates, obstacles, plot.width, plot.height, fixed=fixed)
    for row, box in zip(rows, boxes, strict=True):
        # no free place: no label (the arrow's tooltip and the hollow point's colour tell)
        row["lx"], row["ly"] = plot.data(box.cx, box.cy) if box else (row["x2"], row["y2"])
        row["label"] = row["short"] if box else ""
    return rows


def projection_layers(colour: Callable[[], Spec]) -> list[Spec]:
    """Projected points: a dashed arrow from the measured point to a hollow point in the
    lower precision's colour, and its label."""
    tip = {"tooltip": tooltip([("text", "Lower precision")])}
    return [
        unit(
            "projected",
            mark("rule", clip=True, strokeWidth=1.2, strokeDash=[4, 3], color="#555555"),
            {**segment_end(), **tip},
        ),
        unit(
            "projected",
            mark(
                "point",
                shape="triangle-up",
                filled=True,
                size=50,
                clip=True,
                color="#555555",
                angle=expr("datum.head"),
                aria=False,
            ),  # fmt: skip
            {"x": quantitative("xm"), "y": quantitative("ym")},
        ),
        unit(
            "projected",
            mark("point", filled=False, size=150, strokeWidth=2, clip=True, shape="circle"),
            {
                "x": quantitative("x2"),
                "y": quantitative("y2"),
                "color": colour(),
                **tip,
                "description": nominal("text"),
            },  # fmt: skip
        ),
        unit(
            "projected",
            mark("text", clip=True, fontSize=11, baseline="middle", aria=False),
            {
                "x": quantitative("lx"),
                "y": quantitative("ly"),
                "text": nominal("label"),
                "color": colour(),
            },  # fmt: skip
        ),
    ]


CHART = ChartKind(PrecisionInput, CHART_KIND, precision_chart)
