"""Sparse roofline: a 2:4 structured-sparse launch drawn twice.

Executed FLOPs (the non-zero work the tensor cores did) meet the dense peak; dense-
equivalent FLOPs (counting the skipped zeros, as the datasheet's sparse peak does) meet
the sparse peak. With a sparse peak twice the dense one both points sit at the same
fraction of their roof. x is FLOPs per device-memory byte (the bytes include the index
and metadata bytes, whose share the tooltip gives), y FLOP/s, both log; the two points of
one launch are joined.
"""

from __future__ import annotations

import math
from typing import Any

from roofgen.charts.common import (
    diagonal_angle,
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
from roofgen.charts.labels import Plot
from roofgen.charts.precision import ceiling_rows, peak_dash
from roofgen.charts.roofline_inputs import SparseInput
from roofgen.charts.vl import Spec, channel, layer_chart, mark, title, unit
from roofgen.units import fmt_si

CHART_KIND = "roofgen.sparse-roofline"
KINDS = ["executed", "dense-equivalent"]


def sparse_chart(inp: SparseInput, *, width: int = 640, height: int = 440) -> dict[str, Any]:
    """Vega-Lite spec (a plain dict) of the sparse roofline of ``inp``."""
    return _chart(inp, width, height)


def _chart(inp: SparseInput, width: int, height: int) -> dict[str, Any]:
    points: list[dict[str, Any]] = [
        {
            "x": p.intensity,
            "y": p.flop_per_s,
            "kind": p.kind,
            "launch": p.key.label,
            "lid": f"{p.key.case}/{p.key.variant}/{p.key.kernel}/{p.key.launch}/{p.precision}",
            "what": f"{p.unit_name} {p.precision.upper()} 2:4, {p.kind} FLOPs",
            "ai": f"{p.intensity:.3g} FLOP/B",
            "perf": fmt_si(p.flop_per_s, "FLOP/s", zeros=True),
            "meta": "n/a"
            if p.metadata_share is None
            else f"{p.metadata_share:.1%} of device bytes",
        }
        for p in inp.points
    ]
    xs = [p["x"] for p in points]
    ys = [p["y"] for p in points] + [c.value for c in inp.ceilings]
    if inp.bandwidth:
        xs += [c.value / inp.bandwidth for c in inp.ceilings]
    xdom = log_domain(xs, (1.0, 1e4), min_decades=3.0)
    ydom = log_domain(ys, (1e12, 1e15), min_decades=2.0)
    xdom, ydom, height = square_decades(xdom, ydom, width, height)
    ceilings = ceiling_rows(inp.ceilings, inp.bandwidth, Plot(xdom, ydom, width, height), points)
    memory = []
    if inp.bandwidth:
        top = max((c.value for c in inp.ceilings), default=ydom[1])
        start = xdom[0] / 1e3
        lx = math.sqrt(max(xdom[0], ydom[0] / inp.bandwidth) * min(top / inp.bandwidth, xdom[1]))
        memory.append(
            {
                "x": start,
                "y": inp.bandwidth * start,
                "x2": top / inp.bandwidth,
                "y2": top,
                "lx": lx,
                "ly": inp.bandwidth * lx,
                "text": f"{inp.memory_label} {fmt_si(inp.bandwidth, 'B/s', zeros=True)}",
            }
        )
    joins: list[dict[str, Any]] = []
    by_launch: dict[str, list[dict[str, Any]]] = {}
    for p in points:
        by_launch.setdefault(p["lid"], []).append(p)
    for pair in by_launch.values():
        if len(pair) == 2:
            joins.append(
                {"x": pair[0]["x"], "y": pair[0]["y"], "x2": pair[1]["x"], "y2": pair[1]["y"]}
            )
    layers = [
        unit(
            "ceilings",
            mark("rule", clip=True, strokeWidth=1.8, color="#000000"),
            {
                **segment_end(),
                "strokeDash": peak_dash(ceilings),
                "description": nominal("text"),
                "tooltip": tooltip([("text", "Ceiling"), ("basis", "Basis")]),
            },
        ),
        unit(
            "ceilings",
            mark("text", clip=True, fontSize=11, align="center", baseline="middle", aria=False),
            {"x": quantitative("lx"), "y": quantitative("ly"), "text": nominal("text")},
        ),
    ]
    if memory:
        layers += [
            roof_rule("memory", "#D55E00", "Memory roof"),
            diagonal_label("memory", "#D55E00", diagonal_angle(xdom, ydom, width, height)),
        ]
    if joins:
        layers.append(
            unit(
                "joins",
                mark("rule", clip=True, color="#8c8c8c", strokeWidth=1, aria=False),
                segment_end(),
            )
        )
    if points:
        layers.append(
            unit(
                "points",
                mark("point", size=80, clip=True, strokeWidth=2, color="#0072B2"),
                {
                    "fill": _by_kind("FLOPs", ["white", "#0072B2"]),
                    "shape": _by_kind("FLOPs", ["circle", "diamond"]),
                    "description": nominal("what"),
                    "tooltip": tooltip(
                        [
                            ("launch", "Launch"),
                            ("what", "Work"),
                            ("ai", "Intensity"),
                            ("perf", "Performance"),
                            ("meta", "Metadata"),
                        ]
                    ),
                },
                name="launches",
            )
        )
    x_title = "FLOPs per device-memory byte (FLOP/B)"
    chart = layer_chart(
        layers,
        encoding={
            "x": log_axis("x", x_title, xdom, "FLOP/B", si=False),
            "y": log_axis("y", "Performance (FLOP/s)", ydom, "FLOP/s"),
        },
        width=width,
        height=height,
        title=title(inp.title, inp.subtitle),
    )
    return finish(
        chart,
        CHART_KIND,
        inp.title,
        f"Sparse roofline: {inp.title}",
        {"ceilings": ceilings, "memory": memory, "joins": joins, "points": points},
        ceilings=[c.id for c in inp.ceilings],
    )


def _by_kind(legend_title: str, values: list[str]) -> Spec:
    """Executed and dense-equivalent points told apart by ``values``."""
    return channel(
        "kind", "nominal", title=legend_title, scale={"domain": list(KINDS), "range": values}
    )


CHART = ChartKind(SparseInput, CHART_KIND, sparse_chart)
