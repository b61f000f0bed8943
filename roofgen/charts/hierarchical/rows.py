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
from roofgen.units import NO_PREFIX, fmt_si

Row = dict[str, Any]

_CROWDED = 10**0.15  # roofs closer than 0.15 decades put their labels on opposite sides
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


def roof_rows(inp: RooflineInput, xdom: Domain, ydom: Domain) -> tuple[list[Row], list[Row]]:
    """One row per roof (segment and label position), one per ridge marker."""
    (x_lo, x_hi), (y_lo, y_hi) = xdom, ydom
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
            # Label halfway (in decades) along the visible part of the diagonal.
            vis_lo = max(x_lo, y_lo / bw)
            vis_hi = min(x_end, x_hi, y_hi / bw)
            lx = math.sqrt(vis_lo * vis_hi) if vis_hi > vis_lo else vis_lo
            row.update(lx=lx, ly=bw * lx, align="center")
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
            row.update(lx=x_hi / 1.1, ly=roof.value, align="right")
        # Labels sit above (left of) their line, unless a higher roof of the same kind runs
        # so close that the text would cross it: then below (right of) it.
        crowded = any(
            o.kind == roof.kind and o.value > roof.value and o.value / roof.value < _CROWDED
            for o in inp.roofs
        )
        row["baseline"] = "top" if crowded else "bottom"
        row["dy"] = 3 if crowded else -3
        rows.append(row)
    return rows, ridges


def point_rows(points: Iterable[ChartPoint]) -> list[Row]:
    """One row per launch point and memory level, with its tooltip texts."""
    rows = []
    for p in points:
        eff = p.efficiency
        ai = _intensity(p.intensity_flop_per_byte)
        perf = _flops(p.flop_per_s)
        rows.append(
            {
                "x": p.intensity_flop_per_byte,
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


def trajectory_rows(points: Iterable[ChartPoint]) -> list[Row]:
    """The points of each shape sweep, per level, numbered in sweep order."""
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
    variants: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for p in inp.points:
        if p.level_role not in roles:
            continue
        seen = variants[(p.case, p.kernel, p.level)]
        if p.variant not in seen:
            seen.append(p.variant)
    arrows = []
    for (case, kernel, level), names in variants.items():
        ranked = sorted(names, key=lambda v: (order.get(v, len(order)), names.index(v)))
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
