"""Energy roofline (Choi, Bedard, Fowler and Vuduc, IPDPS 2013).

Energy = e_flop x FLOPs + e_byte x bytes + constant power x time. Two panels over arithmetic
intensity at device memory, one above the other. Top: energy efficiency in FLOP/J (the
same number as FLOP/s per watt); with the machine's coefficients, the "arch" line is the
best any kernel of
that intensity can do, ``1 / (e_flop + e_byte / I + P_const x max(1 / peak, 1 / (I x BW)))``.
Bottom: average power; the power limit and constant power are horizontal lines, and the
model's power at the roofline, ``P_const + (e_flop + e_byte / I) x min(peak, I x BW)``,
shows where running at the time roofline would need more than the limit allows (there the
power limit binds: time >= dynamic energy / (limit - constant power)). Without published
coefficients the chart shows the measured points only and says so.
"""

from __future__ import annotations

from typing import Any

from roofgen.charts.common import (
    finish,
    log_axis,
    log_domain,
    log_samples,
    nominal,
    quantitative,
    roof_rule,
    tooltip,
)
from roofgen.charts.inputs import ChartKind
from roofgen.charts.roofline_inputs import EnergyInput, EnergyModel
from roofgen.charts.vl import Spec, channel, layer_chart, mark, title, unit, vconcat_chart
from roofgen.units import fmt_si

CHART_KIND = "roofgen.energy-roofline"


def arch_flop_per_j(model: EnergyModel, intensity: float) -> float:
    """Best FLOP/J at ``intensity`` (FLOP/B): work energy plus constant power over the
    roofline time."""
    time_per_flop = max(1.0 / model.peak, 1.0 / (intensity * model.bandwidth))
    per_flop = model.j_per_flop + model.j_per_byte / intensity
    return 1.0 / (per_flop + model.constant_w * time_per_flop)


def roofline_power_w(model: EnergyModel, intensity: float) -> float:
    """Power (W) a kernel of ``intensity`` would draw running at the time roofline."""
    rate = min(model.peak, intensity * model.bandwidth)
    return model.constant_w + (model.j_per_flop + model.j_per_byte / intensity) * rate


def energy_chart(inp: EnergyInput, *, width: int = 400, height: int = 380) -> dict[str, Any]:
    """Vega-Lite spec (a plain dict) of the energy roofline of ``inp``."""
    return _chart(inp, width, height)


_SOURCES = ["measured", "model"]
_TIPS = [
    ("launch", "Launch"),
    ("ai", "Intensity"),
    ("eff", "Energy efficiency"),
    ("power", "Average power"),
    ("source", "Energy from"),
    ("limited", "Power-limited"),
]


def _fill() -> Spec:
    scale = {"domain": list(_SOURCES), "range": ["#0072B2", "white"]}
    return channel("source", "nominal", title="Energy", scale=scale)


def _points(name: str, view: str | None = None) -> Spec:
    """The launches of dataset ``name``, filled when their energy was measured."""
    return unit(
        name,
        mark("point", size=70, clip=True, strokeWidth=2, color="#0072B2", shape="circle"),
        {"fill": _fill(), "description": nominal("launch"), "tooltip": tooltip(_TIPS)},
        name=view,
    )


def _axes(ydom: tuple[float, float], y_title: str, y_unit: str, xdom: tuple[float, float]) -> Spec:
    x_title = "Arithmetic intensity at device memory (FLOP/B)"
    return {
        "x": log_axis("x", x_title, xdom, "FLOP/B", si=False),
        "y": log_axis("y", y_title, ydom, y_unit),
    }


def _chart(inp: EnergyInput, width: int, height: int) -> dict[str, Any]:
    points: list[dict[str, Any]] = [
        {
            "x": p.intensity,
            "y": p.flop_per_j,
            "power_w": p.power_w,
            "launch": p.key.label,
            "source": p.source,
            "ai": f"{p.intensity:.3g} FLOP/B",
            "eff": fmt_si(p.flop_per_j, "FLOP/J", zeros=True),
            "power": "n/a" if p.power_w is None else f"{p.power_w:.0f} W",
            "limited": "yes" if p.power_limited else "no",
        }
        for p in inp.points
    ]
    model = inp.model
    ridge = [model.peak / model.bandwidth] if model else []
    xdom = log_domain([p["x"] for p in points] + ridge, (0.1, 1000.0), min_decades=3.0)
    arch: list[dict[str, Any]] = []
    power_curve: list[dict[str, Any]] = []
    if model:
        for x in log_samples(xdom[0], xdom[1]):
            arch.append({"x": x, "y": arch_flop_per_j(model, x)})
            power_curve.append({"x": x, "y": roofline_power_w(model, x)})
    # Left panel: FLOP/J.
    ly = log_domain([p["y"] for p in points] + [r["y"] for r in arch], (1e9, 1e12), min_decades=2.0)
    left_layers: list[Spec] = []
    if arch:
        left_layers.append(
            unit(
                "arch",
                mark("line", clip=True, strokeWidth=2, color="#000000"),
                {"tooltip": tooltip([("y", "Best FLOP/J")])},
            )
        )
    if points:
        # Altair named the views of concatenated charts by their place: this one is 0.
        left_layers.append(_points("points", view="launches_0"))
    if not left_layers:
        left_layers.append(unit("arch", mark("line"), {}))
    left = layer_chart(
        left_layers,
        encoding=_axes(ly, "Energy efficiency (FLOP/J = FLOP/s per W)", "FLOP/J", xdom),
        width=width,
        height=height,
        title=title("Energy efficiency", fontSize=12),
    )
    # Right panel: power.
    power_points = [{**p, "y": p["power_w"]} for p in points if p["power_w"]]
    levels: list[dict[str, Any]] = []
    if inp.limit_w:
        levels.append({"y": inp.limit_w, "text": f"Power limit {inp.limit_w:.0f} W"})
    if inp.constant_w:
        levels.append({"y": inp.constant_w, "text": f"Constant {inp.constant_w:.0f} W"})
    lines = [{**r, "x": xdom[0], "x2": xdom[1], "y2": r["y"], "lx": xdom[1] / 1.15} for r in levels]
    watts = [p["y"] for p in power_points] + [r["y"] for r in levels]
    watts += [r["y"] for r in power_curve if not inp.limit_w or r["y"] < 4 * inp.limit_w]
    ry = log_domain(watts, (50.0, 1000.0), pad_decades=0.15, min_decades=1.0)
    right_layers: list[Spec] = []
    if power_curve:
        right_layers.append(
            unit(
                "power-curve",
                mark("line", clip=True, strokeWidth=2, color="#000000", strokeDash=[6, 3]),
                {"tooltip": tooltip([("y", "Power at the roofline (W)")])},
            )
        )
    if lines:
        level_label = mark(
            "text",
            clip=True,
            fontSize=10,
            align="right",
            baseline="bottom",
            dy=-3,
            color="#D55E00",
            aria=False,
        )
        right_layers += [
            roof_rule("power-levels", "#D55E00", "Power"),
            unit("power-levels", level_label, {"x": quantitative("lx"), "text": nominal("text")}),
        ]
    if power_points:
        right_layers.append(_points("power-points"))
    if not right_layers:
        right_layers.append(unit("power-levels", mark("rule"), {}))
    right = layer_chart(
        right_layers,
        encoding=_axes(ry, "Average power (W)", "W", xdom),
        width=width,
        height=height,
        title=title("Power", fontSize=12),
    )
    subtitle = [s for s in (inp.subtitle, inp.note) if s]
    chart = vconcat_chart(
        [left, right], resolve={"y": "independent"}, title=title(inp.title, subtitle)
    )
    return finish(
        chart,
        CHART_KIND,
        inp.title,
        f"Energy roofline: {inp.title}",
        {
            "arch": arch,
            "points": points,
            "power-curve": power_curve,
            "power-levels": lines,
            "power-points": power_points,
        },
        model=model is not None,
        note=inp.note,
    )


CHART = ChartKind(EnergyInput, CHART_KIND, energy_chart, panels=2)
