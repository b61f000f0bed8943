"""Hierarchical roofline chart: one point per launch per memory level, on log-log axes.

Visual encoding
---------------
* x: arithmetic intensity (FLOP/byte), y: performance (FLOP/s), both log scales whose
  domains hold the data (points, roofs, ridges) padded by 0.3 decades each side and are at
  least 2.5 decades wide. Tick labels carry units ("10 TFLOP/s", "0.1 FLOP/B") through
  Vega label expressions, so they stay right when zoomed.
* Memory roofs are diagonals ``bandwidth x intensity`` drawn up to their ridge with the
  highest compute roof of the same basis; compute roofs are horizontals drawn from where
  they meet the highest-bandwidth diagonal. Every roof carries a text label with its value.
* Colour by role (Okabe-Ito, colour-blind safe, keeping the classic meaning): L1/shared
  bluish green, L2/last-level cache blue, device memory vermillion, compute black.
  Marker shapes differ per memory level (L1 diamond, LLC square, device circle), on both
  launch points and ridge markers, and every roof is labelled in text, so nothing rests
  on colour alone.
* Basis: **measured roofs are solid, datasheet roofs are always dashed** (whether or not
  a measured value exists for the same level), each level with its own dash pattern;
  datasheet labels end with "(datasheet)". A label sits above (left of) its line, or
  below (right of) it when a higher roof of the same kind runs within 0.15 decades, so a
  measured and a datasheet roof of one level stay readable side by side.
* Sub-ceilings (no FMA, division...) are drawn thinner. Ridge points are marked with the
  level's shape. Roofs are drawn above the points, their labels on a white halo.
* A launch measured over a shape sweep has one point per shape and level; each level's
  points are joined in sweep order by a line in the level's colour (the trajectory).
* A launch's points (same FLOP/s, one per level) are joined by a thin grey line. Consecutive
  variants of one kernel (``variant_order``) are joined per level by an arrow: a line and a
  triangle at its midpoint, oriented along it on screen (computed from the live scales, so
  it stays right when zoomed).
* Point size and opacity shrink as the chart fills up; past ``ARROWS_ALL_LEVELS_MAX``
  arrows only device-memory arrows are kept. The only legend is the level legend.
* Hovering a point highlights its kernel (all levels, variants, joins and arrows); clicking
  a legend entry highlights a memory level; the scales zoom and pan (drag, wheel).

Speed: the Altair objects carry only named data references; the data rows are attached to
the dict after ``to_dict(validate=False)`` so that serialising thousands of rows never goes
through Altair, and every layer's fields are pre-computed here (no Vega-Lite transforms).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt
from altair.utils.schemapi import debug_mode

from roofgen.charts.inputs import (
    MEMORY_ROLES,
    ROOF_ROLES,
    Arrow,
    ChartPoint,
    RoofLine,
    RooflineInput,
)

CHART_KIND = "roofgen.hierarchical-roofline"

#: Okabe-Ito colours per role.
ROLE_COLOURS: dict[str, str] = {
    "l1": "#009E73",  # bluish green: L1 / shared memory
    "llc": "#0072B2",  # blue: L2 / last-level cache
    "device": "#D55E00",  # vermillion: device memory (HBM, DRAM)
    "compute": "#000000",  # black: compute ceilings
}
#: Marker shape per memory role (launch points and ridge markers).
ROLE_SHAPES: dict[str, str] = {"l1": "diamond", "llc": "square", "device": "circle"}
#: Default legend names per role, used when no level name is known.
ROLE_NAMES: dict[str, str] = {
    "l1": "L1 / shared",
    "llc": "L2 / LLC",
    "device": "Device memory",
    "compute": "Compute",
}
#: Dash pattern per (basis, role): measured solid, datasheet dashed with one pattern per level.
DASHES: dict[str, list[float]] = {
    "measured:l1": [1, 0],
    "measured:llc": [1, 0],
    "measured:device": [1, 0],
    "measured:compute": [1, 0],
    "datasheet:l1": [2, 3],
    "datasheet:llc": [5, 3],
    "datasheet:device": [9, 4],
    "datasheet:compute": [12, 3, 3, 3],
}

FONT = "sans-serif"
_PAD_DECADES = 0.3
_MIN_DECADES = 2.5
_FLAT_DECADES = 10**0.7  # flat roof shown right of the highest ridge
_CROWDED = 10**0.15  # roofs closer than 0.15 decades put their labels on opposite sides
_EXTEND = 1e3  # roofs run this far past the initial domain so that zooming out shows them

_SI = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


# --------------------------------------------------------------------------- formatting


def _sig3(x: float) -> str:
    """Three significant digits, keeping trailing zeros (``3.00``, ``829``, ``14.3``)."""
    text = f"{x:#.3g}"
    if "e" in text:
        return f"{x:.3g}"
    return text.rstrip(".")


def format_si(value: float, unit: str) -> str:
    """``format_si(3.12e14, "FLOP/s") == "312 TFLOP/s"`` (three significant digits)."""
    for factor, prefix in _SI:
        # Round first so that 999.96e9 is written 1.00T, not 1000G.
        if abs(value) >= factor * 0.99995:
            return f"{_sig3(value / factor)} {prefix}{unit}"
    return f"{_sig3(value)} {unit}"


def format_flops(value: float) -> str:
    """FLOP/s with an SI prefix: ``"7.07 TFLOP/s"``."""
    return format_si(value, "FLOP/s")


def format_bandwidth(value: float) -> str:
    """B/s with an SI prefix: ``"1.56 TB/s"``."""
    return format_si(value, "B/s")


def format_intensity(value: float) -> str:
    """Arithmetic intensity: ``"2.58 FLOP/B"``."""
    return f"{_sig3(value)} FLOP/B"


def roof_text(roof: RoofLine) -> str:
    """The label drawn next to a roof: ``"HBM 829 GB/s"``, ``"FP64 FMA 7.07 TFLOP/s"``."""
    value = format_flops(roof.value) if roof.kind == "compute" else format_bandwidth(roof.value)
    suffix = " (datasheet)" if roof.basis == "datasheet" else ""
    return f"{roof.label} {value}{suffix}"


def _decade_only(axis: str, label: str) -> str:
    """Show ``label`` on whole decades only, unless the axis spans under two decades."""
    decade = "abs(log(datum.value) / LN10 - round(log(datum.value) / LN10)) < 1e-6"
    span = f"log(peek(domain('{axis}')) / domain('{axis}')[0]) / LN10"
    return f"(({decade}) || abs({span}) < 2) ? ({label}) : ''"


def si_label_expr(unit: str, axis: str = "y") -> str:
    """Vega expression writing a tick value of scale ``axis`` with an SI prefix and ``unit``.

    Evaluated by Vega for each tick, so labels stay right whatever the zoom: whole decades
    are labelled (``"10 TFLOP/s"``), and every tick once the view spans under two decades.
    """
    parts = [
        f"datum.value >= {factor * 0.9995:g} ? "
        f"format(datum.value / {factor:g}, '~g') + ' {prefix}{unit}'"
        for factor, prefix in _SI
    ]
    return _decade_only(axis, " : ".join([*parts, f"format(datum.value, '~g') + ' {unit}'"]))


def plain_label_expr(unit: str, axis: str = "x") -> str:
    """Like :func:`si_label_expr` with plain numbers: ``"0.1 FLOP/B"``, ``"100 FLOP/B"``."""
    return _decade_only(axis, f"format(datum.value, '~g') + ' {unit}'")


# ------------------------------------------------------------------------------ geometry


def _padded(lo: float, hi: float, min_decades: float, low_only: bool) -> tuple[float, float]:
    """Pad ``[lo, hi]`` by ``_PAD_DECADES`` each side and widen it to ``min_decades``."""
    lo, hi = lo / 10**_PAD_DECADES, hi * 10**_PAD_DECADES
    missing = min_decades - math.log10(hi / lo)
    if missing > 0:
        if low_only:
            lo /= 10**missing
        else:
            lo, hi = lo / 10 ** (missing / 2), hi * 10 ** (missing / 2)
    return float(lo), float(hi)


def _cap(roofs: Sequence[RoofLine], basis: str) -> float | None:
    """Highest compute roof a roof of ``basis`` meets: same basis first, then any."""
    for pool in (
        [r for r in roofs if r.kind == "compute" and not r.sub_ceiling and r.basis == basis],
        [r for r in roofs if r.kind == "compute" and not r.sub_ceiling],
        [r for r in roofs if r.kind == "compute"],
    ):
        if pool:
            return max(r.value for r in pool)
    return None


def _top_bandwidth(roofs: Sequence[RoofLine], basis: str) -> float | None:
    """Highest memory bandwidth: same basis first, then any."""
    for pool in (
        [r for r in roofs if r.kind == "memory" and r.basis == basis],
        [r for r in roofs if r.kind == "memory"],
    ):
        if pool:
            return max(r.value for r in pool)
    return None


def _domains(
    inp: RooflineInput,
) -> tuple[tuple[float, float], tuple[float, float]]:
    xs = [p.intensity_flop_per_byte for p in inp.points]
    ys = [p.flop_per_s for p in inp.points]
    for roof in inp.roofs:
        if roof.kind == "memory":
            cap = _cap(inp.roofs, roof.basis)
            if cap is not None:
                # A decade of diagonal below each ridge, and some flat roof beyond it.
                ridge = cap / roof.value
                xs += [ridge / 10, ridge * _FLAT_DECADES]
                ys += [cap, cap / 10]
        else:
            ys.append(roof.value)
            top = _top_bandwidth(inp.roofs, roof.basis)
            if top is not None:
                xs.append(roof.value / top)
    xdom = _padded(*_span(xs, (0.1, 100.0)), _MIN_DECADES, low_only=False)
    ydom = _padded(*_span(ys, (1e9, 1e13)), _MIN_DECADES, low_only=True)
    return xdom, ydom


def _span(values: list[float], default: tuple[float, float]) -> tuple[float, float]:
    return (min(values), max(values)) if values else default


def _role_names(inp: RooflineInput) -> dict[str, str]:
    """Legend name per role, from the level names the data uses (``"HBM"``, ``"L2"``)."""
    seen: dict[str, list[str]] = defaultdict(list)
    for p in inp.points:
        if p.level not in seen[p.level_role]:
            seen[p.level_role].append(p.level)
    for r in inp.roofs:
        if r.kind == "memory" and not seen[r.role]:
            seen[r.role].append(r.label)
    names = dict(ROLE_NAMES)
    for role, levels in seen.items():
        if levels:
            names[role] = " / ".join(levels)
    return names


# ---------------------------------------------------------------------------------- rows


def _roof_rows(
    inp: RooflineInput, xdom: tuple[float, float], ydom: tuple[float, float]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One row per roof (segment and label position), one per ridge marker."""
    (x_lo, x_hi), (y_lo, y_hi) = xdom, ydom
    rows: list[dict[str, Any]] = []
    ridges: list[dict[str, Any]] = []
    for roof in inp.roofs:
        text = roof_text(roof)
        row: dict[str, Any] = {
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
            cap = _cap(inp.roofs, roof.basis)
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
                        "text": f"Ridge of {text}: {format_intensity(x_end)}, {format_flops(cap)}",
                    }
                )
        else:
            top = _top_bandwidth(inp.roofs, roof.basis)
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


def _point_rows(points: Iterable[ChartPoint]) -> list[dict[str, Any]]:
    rows = []
    for p in points:
        eff = p.efficiency
        ai = format_intensity(p.intensity_flop_per_byte)
        perf = format_flops(p.flop_per_s)
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


def _trajectory_rows(points: Iterable[ChartPoint]) -> list[dict[str, Any]]:
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


def _join_rows(points: Iterable[ChartPoint]) -> list[dict[str, Any]]:
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


def _arrow_rows(inp: RooflineInput, roles: Collection[str]) -> list[dict[str, Any]]:
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
                    f"{arrow.to_variant}, {format_flops(y1)} → {format_flops(y2)}",
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


# --------------------------------------------------------------------------------- chart


def _encodings(xdom: tuple[float, float], ydom: tuple[float, float]) -> dict[str, Any]:
    x = alt.X(
        field="x",
        type="quantitative",
        title="Arithmetic intensity (FLOP/byte)",
        scale=alt.Scale(type="log", domain=list(xdom), nice=False),
        axis=alt.Axis(labelExpr=plain_label_expr("FLOP/B"), labelOverlap="greedy"),
    )
    y = alt.Y(
        field="y",
        type="quantitative",
        title="Performance (FLOP/s)",
        scale=alt.Scale(type="log", domain=list(ydom), nice=False),
        axis=alt.Axis(labelExpr=si_label_expr("FLOP/s"), labelOverlap="greedy"),
    )
    return {"x": x, "y": y}


def _legend(names: dict[str, str]) -> alt.Legend:
    label_expr = " : ".join(
        f"datum.value === '{role}' ? '{_js(names[role])}'" for role in ROOF_ROLES
    )
    return alt.Legend(labelExpr=f"{label_expr} : datum.label", symbolStrokeWidth=2, symbolOpacity=1)


def _colour(legend: alt.Legend) -> alt.Color:
    return alt.Color(
        field="role",
        type="nominal",
        title="Level",
        scale=alt.Scale(domain=list(ROOF_ROLES), range=[ROLE_COLOURS[r] for r in ROOF_ROLES]),
        legend=legend,
    )


def _shape(legend: alt.Legend) -> alt.Shape:
    # "stroke" (a short line) stands for the compute roofs in the legend.
    return alt.Shape(
        field="role",
        type="nominal",
        title="Level",
        scale=alt.Scale(
            domain=list(ROOF_ROLES), range=[ROLE_SHAPES.get(r, "stroke") for r in ROOF_ROLES]
        ),
        legend=legend,
    )


def _js(text: str) -> str:
    """``text`` for a single-quoted string in a Vega expression: JSON escapes (line
    breaks, U+2028, control characters as \\uXXXX) and an escaped quote, so no name
    can end the string early or break the expression."""
    return json.dumps(text)[1:-1].replace("'", "\\'")


@dataclass(frozen=True)
class _Style:
    """Mark sizes and opacities, thinned out as the chart fills up."""

    point_size: float
    point_opacity: float
    link_opacity: float
    faded: float

    @classmethod
    def for_points(cls, n: int) -> _Style:
        if n <= 60:
            return cls(point_size=60, point_opacity=0.9, link_opacity=0.6, faded=0.12)
        if n <= 600:
            return cls(point_size=36, point_opacity=0.8, link_opacity=0.45, faded=0.08)
        return cls(point_size=14, point_opacity=0.5, link_opacity=0.18, faded=0.04)


#: Arrows on every level up to this many arrows; beyond it, device memory only.
ARROWS_ALL_LEVELS_MAX = 300
#: Per-point ARIA labels in the SVG up to this many points (they double a big SVG's size).
ARIA_POINTS_MAX = 2000

_POINT_TIPS = (
    ("case", "Case"),
    ("kernel", "Kernel"),
    ("variant", "Variant"),
    ("level", "Level"),
    ("ai", "Intensity"),
    ("perf", "Performance"),
    ("eff", "Efficiency"),
    ("cls", "Class"),
    ("bind", "Binding"),
)
_POINT_TIPS_SHAPE = (*_POINT_TIPS[:4], ("shape", "Shape"), *_POINT_TIPS[4:])
# On-screen angle (degrees) of any log-log diagonal, and of an arrow from (x, y) to (x2, y2),
# read from the live scales so both stay right when the chart is zoomed.
_DIAG_ANGLE = "atan2(scale('y', 10) - scale('y', 1), scale('x', 10) - scale('x', 1)) * 180 / PI"
_ARROW_ANGLE = (
    "atan2(scale('x', datum.x2) - scale('x', datum.x), "
    "scale('y', datum.y) - scale('y', datum.y2)) * 180 / PI"
)


def _named(name: str) -> alt.Chart:
    return alt.Chart(alt.NamedData(name=name))


def _roof_layers(legend: alt.Legend, has_ridges: bool) -> list[alt.Chart]:
    dash = alt.StrokeDash(
        field="dash",
        type="nominal",
        scale=alt.Scale(domain=list(DASHES), range=list(DASHES.values())),
        legend=None,
    )
    lines = (
        _named("roofs")
        .mark_rule(clip=True)
        .encode(
            x2=alt.X2(field="x2"),
            y2=alt.Y2(field="y2"),
            color=_colour(legend),
            strokeDash=dash,
            strokeWidth=alt.StrokeWidth(field="sw", type="quantitative", scale=None),
            description=alt.Description(field="text", type="nominal"),
            tooltip=[
                alt.Tooltip(field="text", type="nominal", title="Roof"),
                alt.Tooltip(field="basis", type="nominal", title="Basis"),
            ],
        )
    )
    text_props: dict[str, Any] = {
        "clip": True,
        "fontSize": 11,
        "align": alt.ExprRef("datum.align"),
        "baseline": alt.ExprRef("datum.baseline"),
        "dy": alt.ExprRef("datum.dy"),
        "angle": alt.ExprRef(f"datum.kind === 'memory' ? {_DIAG_ANGLE} : 0"),
    }
    text_enc: dict[str, Any] = {
        "x": alt.X(field="lx", type="quantitative"),
        "y": alt.Y(field="ly", type="quantitative"),
        "text": alt.Text(field="text", type="nominal"),
    }
    # A white halo under each label keeps it readable over crowded points.
    halo = (
        _named("roofs")
        .mark_text(stroke="white", strokeWidth=3, strokeOpacity=0.85, aria=False, **text_props)
        .encode(**text_enc)
    )
    labels = (
        _named("roofs")
        .mark_text(aria=False, **text_props)
        .encode(color=_colour(legend), **text_enc)
    )
    layers = [lines]
    if has_ridges:
        layers.append(
            _named("ridges")
            .mark_point(
                filled=False, fill="white", fillOpacity=1, size=70, strokeWidth=1.5, clip=True
            )
            .encode(
                color=_colour(legend),
                shape=_shape(legend),
                description=alt.Description(field="text", type="nominal"),
                tooltip=[alt.Tooltip(field="text", type="nominal", title="Ridge")],
            )
        )
    return [*layers, halo, labels]


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
    xdom, ydom = _domains(inp)
    roof_rows, ridge_rows = _roof_rows(inp, xdom, ydom)
    point_rows = _point_rows(inp.points)
    join_rows = _join_rows(inp.points)
    trajectory_rows = _trajectory_rows(inp.points)
    roles = MEMORY_ROLES if arrow_roles is None else tuple(arrow_roles)
    arrow_rows = [r for r in _arrow_rows(inp, roles) if r["role"] in roles]
    if arrow_roles is None and len(arrow_rows) > ARROWS_ALL_LEVELS_MAX:
        arrow_rows = [r for r in arrow_rows if r["role"] == "device"]
    legend = _legend(_role_names(inp))
    style = _Style.for_points(len(point_rows))

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
        layers.append(
            _named("joins")
            .mark_rule(color="#8c8c8c", strokeWidth=0.8, clip=True, aria=False)
            .encode(x2=alt.X2(field="x2"), opacity=op_links)
        )
    if trajectory_rows:
        layers.append(
            _named("trajectories")
            .mark_line(strokeWidth=1.2, strokeDash=[4, 2], clip=True, aria=False)
            .encode(
                detail=alt.Detail(field="line", type="nominal"),
                order=alt.Order(field="order", type="quantitative"),
                color=_colour(legend),
                opacity=op_links,
            )
        )
    if arrow_rows:
        layers += _arrow_layers(legend, op_links)
    aria = len(point_rows) <= ARIA_POINTS_MAX
    layers.append(
        _named("points")
        .mark_point(filled=True, size=style.point_size, clip=True, strokeWidth=0, aria=aria)
        .encode(
            color=_colour(legend),
            shape=_shape(legend),
            opacity=op_points,
            tooltip=[
                alt.Tooltip(field=f, type="nominal", title=t)
                for f, t in (_POINT_TIPS_SHAPE if trajectory_rows else _POINT_TIPS)
            ],
            **({"description": alt.Description(field="desc", type="nominal")} if aria else {}),
        )
        .add_params(hover, level_pick, zoom)
        .properties(name="launches")
    )
    # Roofs above the points, so that they stay visible on crowded charts.
    layers += _roof_layers(legend, bool(ridge_rows))

    # One LayerChart construction: every chained Altair call would deep-copy all layers.
    chart = alt.LayerChart(
        layer=layers,
        encoding=alt.SharedEncoding(**_encodings(xdom, ydom)),
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


def _arrow_layers(legend: alt.Legend, opacity: Any) -> list[alt.Chart]:
    shafts = (
        _named("arrows")
        .mark_rule(strokeWidth=1.2, clip=True, aria=False)
        .encode(
            x2=alt.X2(field="x2"), y2=alt.Y2(field="y2"), color=_colour(legend), opacity=opacity
        )
    )
    heads = (
        _named("arrows")
        .mark_point(
            shape="triangle",
            filled=True,
            size=60,
            clip=True,
            aria=False,
            angle=alt.ExprRef(_ARROW_ANGLE),
        )
        .encode(
            x=alt.X(field="xm", type="quantitative"),
            y=alt.Y(field="ym", type="quantitative"),
            color=_colour(legend),
            opacity=opacity,
            tooltip=[alt.Tooltip(field="text", type="nominal", title="Change")],
        )
    )
    return [shafts, heads]
