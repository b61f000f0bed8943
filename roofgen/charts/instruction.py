"""Instruction roofline (Ding and Williams, PMBS 2019): warp GIPS against warp instructions
per transaction.

Two panels, one above the other. Top: every instruction against the transactions of each
memory level (L1 counts shared-memory wavefronts too); the flat roof is instruction
issue (SMs x schedulers x clock), the slanted walls are each level's transactions per
second (bandwidth / transaction size), so a point under a wall is bound by that level's
transactions. Bottom: load/store instructions per global transaction and per shared
wavefront, with the access-pattern walls derived from the warp width and the sector size
(stride 0, unit stride by word size, large stride; no bank conflict, full conflict): the
further left of its wall a point sits, the more transactions each instruction needs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from roofgen.charts.common import (
    LEGEND_FIELD,
    finish,
    legend_names,
    log_axis,
    log_domain,
    name_rows,
    nominal,
    quantitative,
    segment_end,
    square_decades,
    tooltip,
)
from roofgen.charts.inputs import ChartKind
from roofgen.charts.labels import Box, Plot, place, side_by_side, text_width
from roofgen.charts.roofline_inputs import InstructionInput
from roofgen.charts.vl import Spec, channel, layer_chart, mark, title, unit, vconcat_chart

CHART_KIND = "roofgen.instruction-roofline"

ROLE_COLOURS = {
    "l1": "#009E73",
    "llc": "#0072B2",
    "device": "#D55E00",
    "global": "#CC79A7",
    "shared": "#E69F00",
}
ROLE_SHAPES = {
    "l1": "diamond",
    "llc": "square",
    "device": "circle",
    "global": "triangle-up",
    "shared": "triangle-down",
}
_EXTEND = 1e3
#: Left to right, points of different levels drawn on one spot.
ROLE_ORDER = ("l1", "llc", "device", "global", "shared")
#: Font size of the roof, wall and pattern labels (pixels).
LABEL_SIZE = 11


def gips(value: float) -> str:
    """``489.6 warp GIPS``."""
    return f"{value / 1e9:.4g} warp GIPS"


def gtxn(value: float) -> str:
    """``25.9 GTXN/s``."""
    return f"{value / 1e9:.4g} GTXN/s"


def instruction_chart(
    inp: InstructionInput, *, width: int = 400, height: int = 380
) -> dict[str, Any]:
    """Vega-Lite spec (a plain dict) of the instruction roofline of ``inp``."""
    return _chart(inp, width, height)


def _names(inp: InstructionInput, roles: list[str]) -> dict[str, str]:
    """The legend's name of each role: the level's name, as the machine's wall names it."""
    named_roles = {w.role: w.name for w in inp.walls}
    named_roles |= {"global": "Global load/store", "shared": "Shared load/store"}
    return legend_names(roles, [named_roles.get(r, r) for r in roles])


def _colour(roles: list[str], legend_title: str, names: dict[str, str]) -> Spec:
    return channel(
        LEGEND_FIELD,
        "nominal",
        title=legend_title,
        scale={"domain": [names[r] for r in roles], "range": [ROLE_COLOURS[r] for r in roles]},
    )


def _shape(roles: list[str], legend_title: str, names: dict[str, str]) -> Spec:
    return channel(
        LEGEND_FIELD,
        "nominal",
        title=legend_title,
        scale={"domain": [names[r] for r in roles], "range": [ROLE_SHAPES[r] for r in roles]},
    )


def _launches(name: str, roles: list[str], legend_title: str, names: dict[str, str]) -> Spec:
    """The points of dataset ``name``, coloured and shaped by role."""
    return unit(
        name,
        mark("point", filled=True, size=70, opacity=0.9, clip=True),
        {
            "color": _colour(roles, legend_title, names),
            "shape": _shape(roles, legend_title, names),
            "description": nominal("launch"),
            "tooltip": tooltip(_TIPS),
        },
    )


_TIPS = [
    ("launch", "Launch"),
    ("level", "Level"),
    ("ai", "Instructions per transaction"),
    ("perf", "Performance"),
]


def _point_rows(inp: InstructionInput, roles: set[str]) -> list[dict[str, Any]]:
    return [
        {
            "x": p.intensity,
            "y": p.warp_ips,
            "role": p.role,
            "level": p.name,
            "launch": p.key.label,
            "ai": f"{p.intensity:.3g}",
            "perf": gips(p.warp_ips),
        }
        for p in inp.points
        if p.role in roles
    ]


def _roof_layers(name: str, colour: Callable[[], Spec] | None, angle: float) -> list[Spec]:
    """Transaction walls (coloured by level, or all in the L1 colour) and the issue roof."""

    def paint() -> dict[str, Any]:
        return {"color": colour()} if colour is not None else {}

    fixed: dict[str, Any] = {} if colour is not None else {"color": ROLE_COLOURS["l1"]}
    at_label = {"x": quantitative("lx"), "y": quantitative("ly"), "text": nominal("text")}
    return [
        unit(
            f"{name}-walls",
            mark("rule", clip=True, strokeWidth=2, **fixed),
            {
                **segment_end(),
                "description": nominal("text"),
                "tooltip": tooltip([("text", "Transaction wall")]),
                **paint(),
            },
        ),
        unit(
            f"{name}-walls",
            mark(
                "text",
                clip=True,
                fontSize=LABEL_SIZE,
                baseline="middle",
                aria=False,
                angle=angle,
                **fixed,
            ),
            {**at_label, **paint()},
        ),
        unit(
            f"{name}-issue",
            mark("rule", clip=True, strokeWidth=2, color="#000000"),
            {
                **segment_end(),
                "description": nominal("text"),
                "tooltip": tooltip([("text", "Issue ceiling")]),
            },
        ),
        unit(
            f"{name}-issue",
            mark("text", clip=True, fontSize=LABEL_SIZE, baseline="middle", aria=False),
            {"x": quantitative("lx"), "y": quantitative("ly"), "text": nominal("text")},
        ),
    ]


def _walls(
    inp: InstructionInput, roles: set[str], xdom: tuple[float, float]
) -> list[dict[str, Any]]:
    rows = []
    for wall in inp.walls:
        if wall.role not in roles:
            continue
        ridge = inp.issue_per_s / wall.per_s
        x0 = xdom[0] / _EXTEND
        lx = math.sqrt(max(xdom[0], x0) * min(ridge, xdom[1]))
        rows.append(
            {
                "x": x0,
                "y": wall.per_s * x0,
                "x2": ridge,
                "y2": inp.issue_per_s,
                "lx": lx,
                "ly": wall.per_s * lx,
                "role": wall.role,
                "text": f"{wall.name} {gtxn(wall.per_s)}",
            }
        )
    return rows


def _issue_row(inp: InstructionInput, start: float, xdom: tuple[float, float]) -> dict[str, Any]:
    return {
        "x": start,
        "y": inp.issue_per_s,
        "x2": xdom[1] * _EXTEND,
        "y2": inp.issue_per_s,
        "lx": xdom[1] / 1.15,
        "ly": inp.issue_per_s,
        "text": f"Issue {gips(inp.issue_per_s)}",
    }


def _pattern_rows(inp: InstructionInput, ydom: tuple[float, float]) -> list[dict[str, Any]]:
    """Vertical access-pattern walls; patterns at the same position share a label."""
    at: dict[float, list[str]] = defaultdict(list)
    for label, x in (*inp.global_walls, *inp.shared_walls):
        # Twelve significant digits, not decimals: a wall at 1e-62 (a transaction of
        # 1e-60 B) is not at 0.
        at[float(f"{x:.12g}")].append(label)
    rows = []
    for i, (x, labels) in enumerate(sorted(at.items())):
        rows.append(
            {
                "x": x,
                "y": ydom[0],
                "x2": x,
                "y2": ydom[1],
                "ly": ydom[1] / (1.3 if i % 2 == 0 else 4.0),
                "text": f"{'; '.join(labels)} ({_fraction(x)})",
            }
        )
    return rows


def _lay_out(
    plot: Plot,
    flat: list[dict[str, Any]],
    diagonal: list[dict[str, Any]],
    vertical: list[dict[str, Any]],
    points: list[dict[str, Any]],
) -> None:
    """Centres (``lx``, ``ly``) of the labels of one panel's roofs, walls and patterns,
    clear of each other and of the points (:mod:`roofgen.charts.labels`)."""
    h = LABEL_SIZE + 3
    candidates = [plot.horizontal_candidates(r["y"], r["x"], _w(r), h) for r in flat]
    candidates += [plot.vertical_candidates(r["x"], _w(r), h) for r in vertical]
    for r in diagonal:
        slope = r["y"] / r["x"]
        lo = max(plot.xdom[0], plot.ydom[0] / slope)
        hi = min(r["x2"], plot.xdom[1], plot.ydom[1] / slope)
        candidates.append(plot.diagonal_candidates(slope, lo, hi, _w(r), h))
    side_by_side(points, plot, ROLE_ORDER)
    obstacles = [Box(*plot.px(p["x"], p["y"]), 10, 10) for p in points if p["x"] > 0 < p["y"]]
    boxes = place(candidates, obstacles, plot.width, plot.height)
    for row, box in zip([*flat, *vertical, *diagonal], boxes, strict=True):
        row["lx"], row["ly"] = plot.data(box.cx, box.cy)


def _w(row: dict[str, Any]) -> float:
    return text_width(row["text"], LABEL_SIZE)


def _fraction(x: float) -> str:
    return "1" if abs(x - 1.0) < 1e-12 else f"1/{1 / x:.3g}"


def _panel(
    layers: list[Spec],
    xdom: tuple[float, float],
    ydom: tuple[float, float],
    xtitle: str,
    ytitle: str,
    panel_title: str,
    width: int,
    height: int,
) -> Spec:
    return layer_chart(
        layers,
        encoding={
            "x": log_axis("x", xtitle, xdom, "", si=False),
            "y": log_axis("y", ytitle, ydom, "IPS"),
        },
        width=width,
        height=height,
        title=title(panel_title, fontSize=12),
    )


def _chart(inp: InstructionInput, width: int, height: int) -> dict[str, Any]:
    # Only the levels the machine has (or points sit at): a legend entry for a level
    # without a wall or a point would be drawn nowhere.
    present = {w.role for w in inp.walls} | {p.role for p in inp.points}
    all_levels: list[str] = ["l1", "llc", "device"]
    level_roles = [r for r in all_levels if r in present] or all_levels
    pattern_roles = ["global", "shared"]
    # Top panel: levels.
    lpoints = _point_rows(inp, set(level_roles))
    ridges = [inp.issue_per_s / w.per_s for w in inp.walls]
    lx = log_domain([p["x"] for p in lpoints] + ridges, (0.01, 100.0), min_decades=3.0)
    ly = log_domain([p["y"] for p in lpoints] + [inp.issue_per_s], (1e8, 1e12), min_decades=2.5)
    lx, ly, left_height = square_decades(lx, ly, width, height)
    walls = _walls(inp, set(level_roles), lx)
    issue = _issue_row(inp, min(ridges, default=lx[0] / _EXTEND), lx)
    left_plot = Plot(lx, ly, width, left_height)
    _lay_out(left_plot, [issue], walls, [], lpoints)
    names = _names(inp, level_roles)
    name_rows([*walls, *lpoints], "role", names)
    left_layers = _roof_layers(
        "levels", lambda: _colour(level_roles, "Level", names), left_plot.diagonal_angle()
    )
    if lpoints:
        points = _launches("level-points", level_roles, "Level", names)
        # Altair named the views of concatenated charts by their place: this one is 0.
        points["name"] = "launches_0"
        left_layers.append(points)
    left = _panel(
        left_layers,
        lx,
        ly,
        "Warp instructions per transaction",
        "Performance (warp instructions/s)",
        "Instructions and transactions",
        width,
        left_height,
    )
    # Bottom panel: access patterns.
    rpoints = _point_rows(inp, set(pattern_roles))
    walls_x = [x for _, x in (*inp.global_walls, *inp.shared_walls)]
    rx = log_domain([p["x"] for p in rpoints] + walls_x, (0.01, 1.0), min_decades=2.0)
    ry = log_domain([p["y"] for p in rpoints] + [inp.issue_per_s], (1e8, 1e12), min_decades=2.5)
    rx, ry, right_height = square_decades(rx, ry, width, height)
    l1 = [w for w in inp.walls if w.role == "l1"]
    pwalls = _walls(
        InstructionInput(
            inp.title, inp.subtitle, inp.warp_size, inp.issue_per_s, tuple(l1), (), (), ()
        ),
        {"l1"},
        rx,
    )
    pissue = _issue_row(inp, min([inp.issue_per_s / w.per_s for w in l1], default=rx[0] / 1e3), rx)
    patterns = _pattern_rows(inp, ry)
    right_plot = Plot(rx, ry, width, right_height)
    _lay_out(right_plot, [pissue], pwalls, patterns, rpoints)
    right_layers = _roof_layers("patterns", None, right_plot.diagonal_angle())
    pattern_label = mark(
        "text",
        clip=True,
        fontSize=LABEL_SIZE,
        angle=270,
        baseline="middle",
        color="#444444",
        aria=False,
    )
    right_layers += [
        unit(
            "pattern-walls",
            mark("rule", clip=True, strokeWidth=1.2, strokeDash=[4, 3], color="#666666"),
            {
                **segment_end(),
                "description": nominal("text"),
                "tooltip": tooltip([("text", "Access pattern")]),
            },
        ),
        unit(
            "pattern-walls",
            pattern_label,
            {"x": quantitative("lx"), "y": quantitative("ly"), "text": nominal("text")},
        ),
    ]
    if rpoints:
        pattern_names = _names(inp, pattern_roles)
        name_rows(rpoints, "role", pattern_names)
        right_layers.append(_launches("pattern-points", pattern_roles, "Access", pattern_names))
    right = _panel(
        right_layers,
        rx,
        ry,
        "Load/store warp instructions per transaction",
        "Load/store performance (warp instructions/s)",
        "Memory access patterns",
        width,
        right_height,
    )
    independent = {axis: "independent" for axis in ("x", "y", "color", "shape")}
    chart = vconcat_chart([left, right], resolve=independent, title=title(inp.title, inp.subtitle))
    return finish(
        chart,
        CHART_KIND,
        inp.title,
        f"Instruction roofline: {inp.title}",
        {
            "levels-walls": walls,
            "levels-issue": [issue],
            "level-points": lpoints,
            "patterns-walls": pwalls,
            "patterns-issue": [pissue],
            "pattern-walls": patterns,
            "pattern-points": rpoints,
        },
        issue_per_s=inp.issue_per_s,
        transactions_per_s={w.level: w.per_s for w in inp.walls},
        walls=[{"label": label, "x": x} for label, x in (*inp.global_walls, *inp.shared_walls)],
    )


def wall_text(label: str, per_s: float) -> str:
    """Label of a transaction wall: ``HBM2 25.9 GTXN/s``."""
    return f"{label} {gtxn(per_s)}"


__all__ = ["CHART_KIND", "gips", "gtxn", "instruction_chart", "wall_text"]


CHART = ChartKind(InstructionInput, CHART_KIND, instruction_chart, panels=2)
