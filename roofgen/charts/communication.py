"""Communication roofline: compute against link traffic, and the cost of collectives.

Two panels, one above the other. Top: FLOP/s against FLOPs per byte sent over a link one
way (link bytes plus collectives' bus bytes); each link is a slanted roof (its bandwidth
per direction) that meets the compute roof at its ridge. Bottom: collective time against
bus bytes on log axes; each link's cost ``latency + bytes / bandwidth`` is flat
(latency-bound) for small messages and slanted (bandwidth-bound) for large ones, turning
at latency x bandwidth. Each collective is drawn at its modelled bound (hollow) and,
when a launch is only that collective, at its measured time (filled).
"""

from __future__ import annotations

import math
from typing import Any

from roofgen.charts.common import (
    LEGEND_FIELD,
    OKABE_ITO,
    diagonal_angle,
    finish,
    legend_names,
    log_axis,
    log_domain,
    log_samples,
    name_rows,
    nominal,
    quantitative,
    roof_rule,
    segment_end,
    square_decades,
    tooltip,
)
from roofgen.charts.inputs import ChartKind
from roofgen.charts.roofline_inputs import CommunicationInput, LinkRoof
from roofgen.charts.vl import Spec, channel, layer_chart, mark, title, unit, vconcat_chart
from roofgen.units import fmt_si, fmt_time

CHART_KIND = "roofgen.communication-roofline"
_EXTEND = 1e3


def link_text(link: LinkRoof) -> str:
    """``NVLink 4 450 GB/s per direction, 2 us``."""
    latency = f", {fmt_time(link.latency_s)}" if link.latency_s else ""
    return f"{link.name} {fmt_si(link.bandwidth, 'B/s', zeros=True)} per direction{latency}"


def communication_chart(
    inp: CommunicationInput, *, width: int = 400, height: int = 380
) -> dict[str, Any]:
    """Vega-Lite spec (a plain dict) of the communication roofline of ``inp``."""
    return _chart(inp, width, height)


def _colour(links: list[str], names: list[str]) -> Spec:
    """Colour by link: the rows' legend names (``names``, in the order of ``links``)."""
    return channel(
        LEGEND_FIELD,
        "nominal",
        title="Link",
        scale={"domain": list(names), "range": list(OKABE_ITO[1 : len(links) + 1])},
    )


def _left(
    inp: CommunicationInput, links: list[str], names: list[str], width: int, height: int
) -> tuple[Spec, dict[str, list[dict[str, Any]]]]:
    points: list[dict[str, Any]] = [
        {
            "x": p.flop_per_byte,
            "y": p.flop_per_s,
            "link": p.link,
            "launch": p.key.label,
            "ai": f"{p.flop_per_byte:.3g} FLOP per link byte",
            "perf": fmt_si(p.flop_per_s, "FLOP/s", zeros=True),
        }
        for p in inp.points
    ]
    peak = inp.compute_peak
    ridges = [peak / k.bandwidth for k in inp.links] if peak else []
    xdom = log_domain([p["x"] for p in points] + ridges, (1.0, 1e4), min_decades=3.0)
    ydom = log_domain(
        [p["y"] for p in points] + ([peak] if peak else []), (1e11, 1e15), min_decades=2.5
    )
    xdom, ydom, height = square_decades(xdom, ydom, width, height)
    roofs = []
    for k in inp.links:
        end = peak / k.bandwidth if peak else xdom[1] * _EXTEND
        start = xdom[0] / _EXTEND
        vis_lo = max(xdom[0], ydom[0] / k.bandwidth)
        lx = math.sqrt(vis_lo * min(end, xdom[1], ydom[1] / k.bandwidth))
        roofs.append(
            {
                "x": start,
                "y": k.bandwidth * start,
                "x2": end,
                "y2": k.bandwidth * end,
                "lx": lx,
                "ly": k.bandwidth * lx,
                "link": k.id,
                "text": link_text(k),
            }
        )
    compute = []
    if peak:
        compute.append(
            {
                "x": min(ridges, default=xdom[0]),
                "y": peak,
                "x2": xdom[1] * _EXTEND,
                "y2": peak,
                "lx": xdom[1] / 1.15,
                "ly": peak,
                "text": f"{inp.compute_label} {fmt_si(peak, 'FLOP/s', zeros=True)}",
            }
        )
    layers = [
        unit(
            "link-roofs",
            mark("rule", clip=True, strokeWidth=2),
            {
                **segment_end(),
                "color": _colour(links, names),
                "description": nominal("text"),
                "tooltip": tooltip([("text", "Link roof")]),
            },
        ),
        unit(
            "link-roofs",
            mark(
                "text",
                angle=diagonal_angle(xdom, ydom, width, height),
                clip=True,
                fontSize=10,
                baseline="bottom",
                dy=-3,
                aria=False,
            ),
            {
                "x": quantitative("lx"),
                "y": quantitative("ly"),
                "text": nominal("text"),
                "color": _colour(links, names),
            },
        ),
    ]
    if compute:
        compute_label = mark(
            "text", clip=True, fontSize=10, align="right", baseline="bottom", dy=-3, aria=False
        )
        layers += [
            roof_rule("compute-roof", "#000000", "Compute roof"),
            unit(
                "compute-roof",
                compute_label,
                {"x": quantitative("lx"), "y": quantitative("ly"), "text": nominal("text")},
            ),
        ]
    if points:
        # Altair named the views of concatenated charts by their place: this one is 0.
        layers.append(
            unit(
                "comm-points",
                mark("point", filled=True, size=70, opacity=0.9, clip=True, shape="circle"),
                {
                    "color": _colour(links, names),
                    "description": nominal("launch"),
                    "tooltip": tooltip(
                        [("launch", "Launch"), ("ai", "Intensity"), ("perf", "Performance")]
                    ),
                },
                name="launches_0",
            )
        )
    x_title = "FLOPs per byte over the link (one way)"
    panel = layer_chart(
        layers,
        encoding={
            "x": log_axis("x", x_title, xdom, "FLOP/B", si=False),
            "y": log_axis("y", "Performance (FLOP/s)", ydom, "FLOP/s"),
        },
        width=width,
        height=height,
        title=title("Compute against link traffic", fontSize=12),
    )
    return panel, {"link-roofs": roofs, "compute-roof": compute, "comm-points": points}


def _right(
    inp: CommunicationInput, links: list[str], names: list[str], width: int, height: int
) -> tuple[Spec, dict[str, list[dict[str, Any]]]]:
    xs = [c.bus_b for c in inp.collectives]
    turns = [k.latency_s * k.bandwidth for k in inp.links if k.latency_s]
    xdom = log_domain(xs + turns, (1e3, 1e9), min_decades=4.0)
    curve_rows: list[dict[str, Any]] = []
    for k in inp.links:
        for x in log_samples(xdom[0], xdom[1]):
            curve_rows.append(
                {
                    "x": x,
                    "y": (k.latency_s or 0.0) + x / k.bandwidth,
                    "link": k.id,
                    "text": link_text(k),
                }
            )
    times = [r["y"] for r in curve_rows] + [c.bound_s for c in inp.collectives]
    times += [c.measured_s for c in inp.collectives if c.measured_s]
    ydom = log_domain(times, (1e-6, 1e-2), min_decades=2.0)
    turn_rows = [
        {
            "x": k.latency_s * k.bandwidth,
            "y": ydom[0],
            "x2": k.latency_s * k.bandwidth,
            "y2": ydom[1],
            "link": k.id,
            "ly": ydom[1] / 1.3,
            "text": f"{k.name}: latency = bandwidth cost at "
            f"{fmt_si(k.latency_s * k.bandwidth, 'B', zeros=True)}",
        }
        for k in inp.links
        if k.latency_s
    ]
    points: list[dict[str, Any]] = []
    for c in inp.collectives:
        base = {
            "x": c.bus_b,
            "link": c.link,
            "launch": c.key.label,
            "what": f"{c.kind}, {c.ranks} ranks" + (f", {c.topology}" if c.topology else ""),
            "bus": fmt_si(c.bus_b, "B", zeros=True),
            "regime": c.regime,
            "bound": fmt_time(c.bound_s),
            "measured": fmt_time(c.measured_s),
        }
        points.append({**base, "y": c.bound_s, "source": "model (latency + bus bytes / bandwidth)"})
        if c.measured_s:
            points.append({**base, "y": c.measured_s, "source": "measured"})
    layers = [
        unit(
            "link-costs",
            mark("line", clip=True, strokeWidth=2),
            {
                "color": _colour(links, names),
                "detail": nominal("link"),
                "tooltip": tooltip([("text", "Link")]),
            },
        ),
    ]
    if turn_rows:
        layers.append(
            unit(
                "link-turns",
                mark("rule", clip=True, strokeDash=[3, 3], strokeWidth=1),
                {
                    **segment_end(),
                    "color": _colour(links, names),
                    "description": nominal("text"),
                    "tooltip": tooltip([("text", "Latency-bandwidth turn")]),
                },
            )
        )
    if points:
        sources = ["measured", "model (latency + bus bytes / bandwidth)"]
        layers.append(
            unit(
                "collectives",
                mark("point", clip=True, strokeWidth=2),
                {
                    "color": _colour(links, names),
                    # the model's point is a ring round the measured one, so a collective
                    # measured at its bound shows both
                    "fill": channel(
                        "source",
                        "nominal",
                        title="Collective time",
                        scale={"domain": sources, "range": ["#333333", "transparent"]},
                    ),
                    "size": channel(
                        "source",
                        "nominal",
                        scale={"domain": list(sources), "range": [60, 150]},
                        legend=None,
                    ),
                    "description": nominal("launch"),
                    "tooltip": tooltip(
                        [
                            ("launch", "Launch"),
                            ("what", "Collective"),
                            ("bus", "Bus bytes"),
                            ("bound", "Bound"),
                            ("measured", "Measured"),
                            ("regime", "Regime"),
                        ]
                    ),
                },
            )
        )
    panel = layer_chart(
        layers,
        encoding={
            "x": log_axis("x", "Bus bytes per rank (factor x size)", xdom, "B"),
            "y": log_axis("y", "Time (s)", ydom, "s"),
        },
        width=width,
        height=height,
        title=title("Collectives: latency + bytes / bandwidth", fontSize=12),
    )
    return panel, {"link-costs": curve_rows, "link-turns": turn_rows, "collectives": points}


def _chart(inp: CommunicationInput, width: int, height: int) -> dict[str, Any]:
    ids = [k.id for k in inp.links]
    shown = legend_names(ids, [k.name for k in inp.links])
    names = [shown[i] for i in ids]
    left, left_data = _left(inp, ids, names, width, height)
    right, right_data = _right(inp, ids, names, width, height)
    chart = vconcat_chart(
        [left, right],
        resolve={"x": "independent", "y": "independent"},
        title=title(inp.title, inp.subtitle),
    )
    data = {**left_data, **right_data}
    for rows in data.values():
        name_rows(rows, "link", shown)
    return finish(
        chart,
        CHART_KIND,
        inp.title,
        f"Communication roofline: {inp.title}",
        data,
        links=ids,
    )


CHART = ChartKind(CommunicationInput, CHART_KIND, communication_chart, panels=2)
