"""Speedups across cases: each case's best kernel speedup and end-to-end speedup, with
their intervals, for the site's home page.

y: one row per case (in the input's order), x: speedup against the case's baseline,
log, with a rule at 1x; the kernel speedup a circle on its interval, the end-to-end
speedup a diamond on the same row. A speedup beyond the noise (its timing intervals apart) is
coloured; one within the noise, or whose noise is unknown, is grey. Each mark links
to its case's page (``href``), so the chart is also a way into the cases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from roofgen.charts.common import finish, log_domain, nominal, tooltip
from roofgen.charts.inputs import ChartInput, ChartKind
from roofgen.charts.vl import channel, layer_chart, mark, title, unit
from roofgen.units import fmt_ratio

__all__ = ["CHART", "CaseSpeedup", "SpeedupsInput", "speedups_chart"]

CHART_KIND = "roofgen.speedups"
MEASURES = {"kernel": "Best kernel speedup", "end-to-end": "End-to-end speedup"}
NOISE = ("significant", "within noise", "unknown noise")
NOISE_COLOURS = ("#0072B2", "#9e9e9e", "#c4c4c4")
BAND_PX = 24  # per case
TICKS = (0.1, 0.2, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4, 5, 7.5, 10, 20, 50, 100, 1000)


@dataclass(frozen=True, slots=True)
class CaseSpeedup:
    """One speedup of one case (``measure``: ``kernel`` or ``end-to-end``), as the
    analysis measured it: ``value`` with its interval ``low``..``high`` (None when the
    timings give none) and its noise verdict (one of :data:`NOISE`). ``href`` is the
    link to the case's page from the page the chart is on."""

    case: str
    title: str
    href: str
    measure: str
    value: float
    low: float | None
    high: float | None
    noise: str

    def __post_init__(self) -> None:
        if self.measure not in MEASURES:
            raise ValueError(f"measure must be one of {sorted(MEASURES)}, got {self.measure!r}")
        if self.noise not in NOISE:
            raise ValueError(f"noise must be one of {NOISE}, got {self.noise!r}")
        for name in ("value", "low", "high"):
            x = getattr(self, name)
            if x is not None and not (math.isfinite(x) and x > 0):
                raise ValueError(f"{name} must be a positive finite number, got {x!r}")


@dataclass(frozen=True)
class SpeedupsInput(ChartInput):
    """Every case's speedups, one band per case in the order of ``rows``."""

    title: str
    subtitle: str
    rows: tuple[CaseSpeedup, ...]


def speedups_chart(inp: SpeedupsInput, *, width: int = 640, height: int = 440) -> dict[str, Any]:
    """Vega-Lite spec (a plain dict) of the speedups of ``inp``; ``height`` is unused:
    the chart is as tall as its cases need."""
    del height
    titles = [r.title for r in inp.rows]
    shared = {
        t for t in titles if sum(1 for r in inp.rows if r.title == t and r.measure == "kernel") > 1
    }
    rows = [
        {
            "case": f"{r.title} ({r.case})" if r.title in shared else r.title,
            "title": r.title,
            "href": r.href,
            "measure": MEASURES[r.measure],
            "x": r.value,
            "lo": r.low if r.low is not None else r.value,
            "hi": r.high if r.high is not None else r.value,
            "noise": r.noise,
            "speedup": fmt_ratio(r.value),
            "interval": "n/a"
            if r.low is None or r.high is None
            else f"{fmt_ratio(r.low)} to {fmt_ratio(r.high)}",
        }
        for r in inp.rows
    ]
    xs = [v for r in inp.rows for v in (r.low or r.value, r.high or r.value)] + [1.0]
    xdom = log_domain(xs, (0.5, 4.0), pad_decades=0.05, min_decades=0.6)
    order = list(dict.fromkeys(row["case"] for row in rows))
    drawn_noise = {row["noise"] for row in rows}
    drawn_measures = {row["measure"] for row in rows}

    def y() -> dict[str, Any]:
        return channel("case", "nominal", title=None, sort=list(order), axis={"labelLimit": 240})

    x = channel(
        "x",
        "quantitative",
        title="Speedup against the case's baseline",
        scale={"domain": list(xdom), "nice": False, "type": "log"},
        axis={
            "values": [t for t in TICKS if xdom[0] <= t <= xdom[1]],
            "labelExpr": "format(datum.value, '~g') + 'x'",
            "labelOverlap": "greedy",
        },
    )

    # The legends list only what is drawn.
    noises = [(n, c) for n, c in zip(NOISE, NOISE_COLOURS, strict=True) if n in drawn_noise]
    measures = [(m, s) for m, s in zip(MEASURES.values(), ("circle", "diamond"), strict=True)
                if m in drawn_measures]  # fmt: skip

    def colour() -> dict[str, Any]:
        scale = {"domain": [n for n, _ in noises], "range": [c for _, c in noises]}
        return channel("noise", "nominal", title="Noise", scale=scale)

    shape = channel(
        "measure",
        "nominal",
        title=None,
        scale={"domain": [m for m, _ in measures], "range": [s for _, s in measures]},
    )

    tips = [
        ("title", "Case"),
        ("measure", "Measure"),
        ("speedup", "Speedup"),
        ("interval", "Interval"),
        ("noise", "Noise"),
    ]
    layers = [
        unit(
            "one",
            mark("rule", color="#888888", strokeDash=[4, 3]),
            {"x": {"datum": 1.0}},
        ),
        unit(
            "speedups",
            mark("rule", strokeWidth=2),
            {
                "x": channel("lo", "quantitative"),
                "x2": {"field": "hi"},
                "y": y(),
                "color": colour(),
            },
        ),
        unit(
            "speedups",
            mark("point", filled=True, size=70, cursor="pointer"),
            {
                "y": y(),
                "color": colour(),
                "shape": shape,
                "href": nominal("href"),
                "description": nominal("title"),
                "tooltip": tooltip(tips),
            },
            name="speedups",
        ),
    ]
    chart = layer_chart(
        layers,
        encoding={"x": x},
        width=width,
        height={"step": BAND_PX},  # type: ignore[arg-type]
        title=title(inp.title, inp.subtitle),
    )
    return finish(
        chart,
        CHART_KIND,
        inp.title,
        f"Speedups of {len(order)} cases",
        {"speedups": rows, "one": [{}]},
        cases=len(order),
    )


CHART = ChartKind(SpeedupsInput, CHART_KIND, speedups_chart)
