"""The data rows of the hierarchical roofline: roofs, ridges, points, joins, sweeps, arrows.

Every field a layer draws is computed here (Vega-Lite runs no transforms), and the rows
are attached to the spec as named datasets. Coordinates are in FLOP/byte (x) and FLOP/s
(y); texts are written by :mod:`roofgen.units` in the charts' style (trailing zeros kept).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Iterable
from typing import Any

from roofgen.charts.hierarchical.domains import Domain, compute_cap, top_bandwidth
from roofgen.charts.inputs import MEMORY_ROLES, Arrow, ChartPoint, RoofLine, RooflineInput
from roofgen.charts.labels import Box, Plot, clusters, place, place_optional, text_width
from roofgen.units import NO_PREFIX, fmt_si

Row = dict[str, Any]

#: Font size of the roof labels (pixels).
LABEL_SIZE = 11
#: Side of the square a point takes, for the label layout (pixels; the mark and a margin).
POINT_BOX = 12
_EXTEND = 1e3  # roofs run this far past the initial domain so that zooming out shows them


def _flops(value: float) -> str:
    """``"7.07 TFLOP/s"``."""
    return fmt_si(value, "FLOP/s", zeros=True)


def _intensity(value: float) -> str:
    """``"2.58 FLOP/B"`` (no prefix, as on the x axis)."""
    return fmt_si(value, "FLOP/B", zeros=True, prefixes=NO_PREFIX)


def roof_text(roof: RoofLine) -> str:
    """The label drawn next to a roof: ``"HBM 829 GB/s"``, ``"FP64 FMA 7.07 TFLOP/s"``."""
    unit = "FLOP/s" if roof.kind == "compute" else "B/s"
    suffix = " (datasheet)" if roof.basis == "datasheet" else ""
    return f"{roof.label} {fmt_si(roof.value, unit, zeros=True)}{suffix}"


def roof_rows(
    inp: RooflineInput, xdom: Domain, ydom: Domain, width: int = 640, height: int = 440
) -> tuple[list[Row], list[Row]]:
    """One row per roof (segment and label position), one per ridge marker. Labels are
    laid out in pixels (:mod:`roofgen.charts.labels`): clear of each other and of the
    points, each next to its own roof."""
    x_lo, x_hi = xdom
    rows: list[Row] = []
    ridges: list[Row] = []
    for roof in inp.roofs:
        text = roof_text(roof)
        row: Row = {
            "id": roof.id,
            "text": text,
            "kind": roof.kind,
            "role": roof.role,
            "basis": roof.basis,
            "dash": f"{roof.basis}:{roof.role}",
            "sw": 1.0 if roof.sub_ceiling else 2.0,
            "sub": roof.sub_ceiling,
        }
        if roof.kind == "memory":
            bw = roof.value
            cap = compute_cap(inp.roofs, roof.basis)
            x_end = cap / bw if cap is not None else x_hi * _EXTEND
            x_start = min(x_lo / _EXTEND, x_end)
            row.update(x=x_start, y=bw * x_start, x2=x_end, y2=bw * x_end)
            if cap is not None:
                ridges.append(
                    {
                        "x": x_end,
                        "y": cap,
                        "role": roof.role,
                        "basis": roof.basis,
                        "text": f"Ridge of {text}: {_intensity(x_end)}, {_flops(cap)}",
                    }
                )
        else:
            top = top_bandwidth(inp.roofs, roof.basis)
            x_start = roof.value / top if top is not None else x_lo / _EXTEND
            row.update(x=x_start, y=roof.value, x2=x_hi * _EXTEND, y2=roof.value)
        rows.append(row)
    _lay_out_labels(inp, rows, ridges, Plot(xdom, ydom, width, height))
    return rows, ridges


def _lay_out_labels(inp: RooflineInput, rows: list[Row], ridges: list[Row], plot: Plot) -> None:
    """Each roof's label centre (``lx``, ``ly``) and angle, placed clear of the other
    labels, of the points (where they are drawn), of the ridge markers and, where there is
    room, of the other roofs' lines."""
    size, h = LABEL_SIZE, LABEL_SIZE + 3
    moved = spread_coincident(inp.points, plot)
    obstacles = [Box(*plot.px(r["x"], r["y"]), 11, 11) for r in ridges]
    for i, p in enumerate(inp.points):
        if p.intensity_flop_per_byte > 0 and p.flop_per_s > 0:
            x = moved.get(i, p.intensity_flop_per_byte)
            obstacles.append(Box(*plot.px(x, p.flop_per_s), POINT_BOX, POINT_BOX))
    order = sorted(
        range(len(rows)),
        key=lambda i: (rows[i]["kind"] != "compute", -inp.roofs[i].value, rows[i]["id"]),
    )
    candidates = []
    (x_lo, x_hi), (y_lo, y_hi) = plot.xdom, plot.ydom
    for i in order:
        row, roof = rows[i], inp.roofs[i]
        w = text_width(row["text"], size)
        if roof.kind == "memory":
            vis_lo = max(x_lo, y_lo / roof.value, row["x"])
            vis_hi = min(row["x2"], x_hi, y_hi / roof.value)
            candidates.append(plot.diagonal_candidates(roof.value, vis_lo, vis_hi, w, h))
        else:
            candidates.append(plot.horizontal_candidates(roof.value, row["x"], w, h))
    obstacles += roof_lines(rows, plot)
    boxes = place(candidates, obstacles, plot.width, plot.height)
    for i, box in zip(order, boxes, strict=True):
        lx, ly = plot.data(box.cx, box.cy)
        rows[i].update(lx=lx, ly=ly, angle=round(box.angle, 3), align="center")
        rows[i].update(baseline="middle", dy=0)


def roof_lines(rows: list[Row], plot: Plot) -> list[Box]:
    """The visible part of each roof's line, as a thin box: an obstacle for labels."""
    (x_lo, x_hi), (y_lo, y_hi) = plot.xdom, plot.ydom
    out = []
    for row in rows:
        if row["kind"] == "memory":
            bw = row["y"] / row["x"]
            lo, hi = max(x_lo, y_lo / bw, row["x"]), min(row["x2"], x_hi, y_hi / bw)
            if hi > lo:
                out.append(plot.segment(lo, bw * lo, hi, bw * hi))
        elif y_lo < row["y"] < y_hi and max(row["x"], x_lo) < x_hi:
            out.append(plot.segment(max(row["x"], x_lo), row["y"], x_hi, row["y"]))
    return out


_SIDE_BY_SIDE = 9.0  # pixels between coincident points of different levels
_ROLE_ORDER = {role: i for i, role in enumerate(MEMORY_ROLES)}


def spread_coincident(points: Iterable[ChartPoint], plot: Plot) -> dict[int, float]:
    """x of each point (by its index) moved so that points of different levels that would
    be drawn on one spot (:func:`roofgen.charts.labels.clusters`) sit side by side, L1 to
    device memory from left to right, about the spot. Points not moved keep their x."""
    drawn = [
        (i, p) for i, p in enumerate(points) if p.intensity_flop_per_byte > 0 and p.flop_per_s > 0
    ]
    pixels = [plot.px(p.intensity_flop_per_byte, p.flop_per_s) for _, p in drawn]
    moved: dict[int, float] = {}
    for group in clusters(pixels):
        roles = sorted({drawn[k][1].level_role for k in group}, key=lambda r: _ROLE_ORDER.get(r, 9))
        if len(roles) < 2:
            continue
        for k in group:
            i, p = drawn[k]
            shift = (roles.index(p.level_role) - (len(roles) - 1) / 2) * _SIDE_BY_SIDE
            px, py = pixels[k]
            moved[i] = plot.data(px + shift, py)[0]
    return moved


def point_rows(points: Iterable[ChartPoint], plot: Plot | None = None) -> list[Row]:
    """One row per launch point and memory level, with its tooltip texts (which keep the
    measured intensity when the point is drawn beside one of another level)."""
    points = list(points)
    moved = spread_coincident(points, plot) if plot is not None else {}
    rows = []
    for i, p in enumerate(points):
        eff = p.efficiency
        ai = _intensity(p.intensity_flop_per_byte)
        perf = _flops(p.flop_per_s)
        rows.append(
            {
                "x": moved.get(i, p.intensity_flop_per_byte),
                "y": p.flop_per_s,
                "case": p.case,
                "kernel": p.kernel,
                "variant": p.variant,
                "level": p.level,
                "role": p.level_role,
                "ai": ai,
                "perf": perf,
                "eff": "n/a" if eff is None else f"{eff * 100:.1f} %",
                "cls": p.klass,
                "bind": p.binding or "n/a",
                "desc": f"{p.kernel} {p.variant} at {p.level}: {ai}, {perf}",
                **({"shape": p.shape} if p.shape else {}),
            }
        )
    return rows


def spread_rows(points: Iterable[ChartPoint], drawn: list[Row]) -> list[Row]:
    """An error bar per point whose time quartiles are known: FLOP/s at q3 to q1, at the
    point's drawn x."""
    return [
        {
            "x": row["x"],
            "y": p.flop_per_s_q3,
            "y2": p.flop_per_s_q1,
            "role": p.level_role,
            "case": p.case,
            "kernel": p.kernel,
            "text": f"{p.kernel} {p.variant}: {_flops(p.flop_per_s_q3)} to "
            f"{_flops(p.flop_per_s_q1)} (time q3 to q1)",
        }
        for p, row in zip(points, drawn, strict=True)
        if p.flop_per_s_q3 is not None and p.flop_per_s_q1 is not None
    ]


#: Sweeps are joined by trajectories only on charts of at most this many swept variants;
#: past it the lines hide the points (a thousand variants drew 999 lines).
TRAJECTORY_VARIANTS_MAX = 8


def trajectory_rows(points: Iterable[ChartPoint]) -> list[Row]:
    """The points of each shape sweep, per level, numbered in sweep order; none when more
    than ``TRAJECTORY_VARIANTS_MAX`` variants are swept."""
    points = list(points)
    swept = {(p.case, p.kernel, p.variant) for p in points if p.sweep_index is not None}
    if len(swept) > TRAJECTORY_VARIANTS_MAX:
        return []
    rows = []
    for p in points:
        if p.sweep_index is None:
            continue
        sweep = p.launch.split(" ", 1)[0]  # the launch's number, without the shape
        rows.append(
            {
                "x": p.intensity_flop_per_byte,
                "y": p.flop_per_s,
                "order": p.sweep_index,
                "line": f"{p.case}/{p.kernel}/{p.variant}/{sweep}/{p.level}",
                "case": p.case,
                "kernel": p.kernel,
                "role": p.level_role,
            }
        )
    return rows


def join_rows(points: Iterable[ChartPoint]) -> list[Row]:
    """One horizontal segment per launch across its memory levels."""
    spans: dict[tuple[str, str, str, str, float], list[float]] = {}
    for p in points:
        key = (p.case, p.kernel, p.variant, p.launch, p.flop_per_s)
        x = p.intensity_flop_per_byte
        span = spans.get(key)
        if span is None:
            spans[key] = [x, x]
        else:
            span[0] = min(span[0], x)
            span[1] = max(span[1], x)
    return [
        {"x": lo, "x2": hi, "y": key[4], "case": key[0], "kernel": key[1]}
        for key, (lo, hi) in spans.items()
        if hi > lo
    ]


def derive_arrows(inp: RooflineInput, roles: Collection[str] = MEMORY_ROLES) -> list[Arrow]:
    """Arrows between consecutive variants (``variant_order``) of each case/kernel/level."""
    order = {v: i for i, v in enumerate(inp.variant_order)}
    # variant names in the order first seen, each once (a dict: linear in the points)
    variants: dict[tuple[str, str, str], dict[str, None]] = defaultdict(dict)
    for p in inp.points:
        if p.level_role in roles:
            variants[(p.case, p.kernel, p.level)].setdefault(p.variant)
    arrows = []
    for (case, kernel, level), seen in variants.items():
        names = list(seen)
        ranked = [
            v for _, _, v in sorted((order.get(v, len(order)), i, v) for i, v in enumerate(names))
        ]
        for a, b in zip(ranked, ranked[1:], strict=False):
            arrows.append(Arrow(case, kernel, level, a, b))
    return arrows


def arrow_rows(inp: RooflineInput, roles: Collection[str]) -> list[Row]:
    """One row per arrow from a launch to the same launch of the next variant."""
    arrows = inp.arrows if inp.arrows is not None else derive_arrows(inp, roles)
    if not arrows:
        return []
    index: dict[tuple[str, str, str, str], list[ChartPoint]] = defaultdict(list)
    for p in inp.points:
        index[(p.case, p.kernel, p.level, p.variant)].append(p)
    rows = []
    for arrow in arrows:
        before = index.get((arrow.case, arrow.kernel, arrow.level, arrow.from_variant), [])
        after = index.get((arrow.case, arrow.kernel, arrow.level, arrow.to_variant), [])
        for a, b in _pair_launches(before, after):
            x1, y1 = a.intensity_flop_per_byte, a.flop_per_s
            x2, y2 = b.intensity_flop_per_byte, b.flop_per_s
            if x1 == x2 and y1 == y2:
                continue
            rows.append(
                {
                    "x": x1,
                    "y": y1,
                    "x2": x2,
                    "y2": y2,
                    "xm": math.sqrt(x1 * x2),
                    "ym": math.sqrt(y1 * y2),
                    "case": arrow.case,
                    "kernel": arrow.kernel,
                    "role": a.level_role,
                    "text": f"{arrow.kernel} @ {arrow.level}: {arrow.from_variant} → "
                    f"{arrow.to_variant}, {_flops(y1)} → {_flops(y2)}",
                }
            )
    return rows


def _pair_launches(
    before: list[ChartPoint], after: list[ChartPoint]
) -> list[tuple[ChartPoint, ChartPoint]]:
    if len(before) == 1 and len(after) == 1:
        return [(before[0], after[0])]
    by_launch = {p.launch: p for p in after}
    return [(p, by_launch[p.launch]) for p in before if p.launch in by_launch]


#: Most direct point labels on one chart; the other points are read from their tooltips.
POINT_LABELS_MAX = 12


def _spots(rows: list[Row]) -> dict[str, Row]:
    """Each variant's labelled point, variants in the order first seen: its first
    device-memory point, else its first point."""
    spots: dict[str, Row] = {}
    for row in rows:
        known = spots.get(row["variant"])
        if known is None or (row["role"] == "device" and known["role"] != "device"):
            spots[row["variant"]] = row
    return spots


def point_labels(
    inp: RooflineInput, points: list[Row], roofs: list[Row], ridges: list[Row], plot: Plot
) -> list[Row]:
    """Direct labels of a fixed set of points: per kernel, its baseline (first variant in
    ``variant_order``), its best variant (highest FLOP/s) and the variants the case marks
    (``labelled``), each on its device-memory point (else its first), placed clear of the
    roof labels, of each other, of every point and ridge marker; a label with no free
    place is left to the point's tooltip. Named by variant, and by kernel too when the
    chart has several."""
    order = {v: i for i, v in enumerate(inp.variant_order)}
    by_kernel: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in points:
        by_kernel[(row["case"], row["kernel"])].append(row)
    several = len(by_kernel) > 1
    chosen: list[tuple[Row, str]] = []
    for (_, kernel), rows in sorted(by_kernel.items()):
        spots = _spots(rows)  # one pass: a search per variant would be n² in the variants
        variants = list(spots)
        first = min(enumerate(variants), key=lambda iv: (order.get(iv[1], len(order)), iv[0]))[1]
        best = max(enumerate(variants), key=lambda iv: (spots[iv[1]]["y"], -iv[0]))[1]
        marked = [v for v in variants if v in inp.labelled]
        for variant in dict.fromkeys((first, best, *marked)):
            role = "baseline" if variant == first and len(variants) > 1 else ""
            role = "best" if variant == best and variant != first else role
            name = f"{kernel} {variant}" if several else variant
            plain = not role or role in variant.lower()
            chosen.append((spots[variant], name if plain else f"{name} ({role})"))
    chosen = chosen[:POINT_LABELS_MAX]
    size = LABEL_SIZE
    taken = [
        Box(*plot.px(r["lx"], r["ly"]), text_width(r["text"], size), size + 3, r["angle"])
        for r in roofs
    ]
    obstacles = [Box(*plot.px(r["x"], r["y"]), POINT_BOX, POINT_BOX) for r in points]
    obstacles += [Box(*plot.px(r["x"], r["y"]), POINT_BOX, POINT_BOX) for r in ridges]
    obstacles += roof_lines(roofs, plot)
    candidates = [
        plot.point_candidates(r["x"], r["y"], text_width(text, size), size + 3)
        for r, text in chosen
    ]
    boxes = place_optional(candidates, obstacles, plot.width, plot.height, fixed=taken)
    out = []
    for (r, text), box in zip(chosen, boxes, strict=True):
        if box is None:
            continue
        lx, ly = plot.data(box.cx, box.cy)
        out.append({"x": r["x"], "y": r["y"], "lx": lx, "ly": ly, "text": text,
                    "case": r["case"], "kernel": r["kernel"]})  # fmt: skip
    return out
