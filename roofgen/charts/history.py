"""History chart: a case's launch times over the commits that changed it.

x: the commits, oldest first (each labelled by its short SHA); y: the time of one
call of each launch, log. A line per kernel and variant, a point per commit; each
commit's subject is written above its points, and every point's tooltip gives the
date, the subject, the efficiency and the binding resource (a history of more than
:data:`MAX_LABELS` commits keeps its subjects to the tooltips). Subjects are text in
the chart's data (drawn as SVG text, never markup); control characters must be
escaped by whoever makes the input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from roofgen.charts.common import OKABE_ITO, finish, log_axis, log_domain, nominal, tooltip
from roofgen.charts.inputs import ChartInput, ChartKind
from roofgen.charts.vl import Spec, channel, layer_chart, mark, title, unit
from roofgen.units import fmt_percent, fmt_time

CHART_KIND = "roofgen.history"
_LABEL_CHARS = 40
#: Above this many commits the subjects would cover each other: they stay in the tooltips.
MAX_LABELS = 40


@dataclass(frozen=True)
class HistoryPoint:
    """One launch at one commit: time of one call (s), efficiency (None: unknown),
    binding resource (None: unknown)."""

    order: int  # the commit's position, oldest first
    commit: str  # short SHA
    date: str  # ISO 8601, UTC
    subject: str  # printable text
    series: str  # KERNEL/VARIANT (with #N for a later launch of the same kernel)
    time_s: float
    efficiency: float | None = None
    binding: str | None = None


@dataclass(frozen=True)
class HistoryInput(ChartInput):
    """A case's history: its points, oldest commit first."""

    title: str
    points: tuple[HistoryPoint, ...]
    subtitle: str = ""


def history_chart(inp: HistoryInput, *, width: int = 640, height: int = 400) -> dict[str, Any]:
    """Vega-Lite spec (a plain dict) of the history of ``inp``."""
    rows: list[dict[str, Any]] = [
        {
            "order": p.order,
            "commit": p.commit,
            "date": p.date[:10],
            "subject": p.subject,
            "series": p.series,
            "y": p.time_s,
            "t": fmt_time(p.time_s),
            "eff": fmt_percent(p.efficiency) if p.efficiency is not None else "unknown",
            "binding": p.binding or "unknown",
        }
        for p in inp.points
    ]
    top: dict[int, dict[str, Any]] = {}
    for row in rows:
        held = top.get(row["order"])
        if held is None or row["y"] > held["y"]:
            top[row["order"]] = row
    labels = [
        {"commit": r["commit"], "y": r["y"], "label": _short(r["subject"])}
        for _, r in sorted(top.items())
    ][: MAX_LABELS if len(top) <= MAX_LABELS else 0]
    series = list(dict.fromkeys(r["series"] for r in rows))
    commits = [r["commit"] for _, r in sorted(top.items())]
    ydom = log_domain([r["y"] for r in rows], (1e-6, 1e-2), pad_decades=0.3, min_decades=2.0)
    x = channel(
        "commit",
        "ordinal",
        title="Commit (oldest first)",
        scale={"domain": commits},
        axis={"labelAngle": -45, "labelOverlap": "parity"},
    )

    def colour() -> Spec:
        palette = [OKABE_ITO[i % len(OKABE_ITO)] for i in range(len(series))]
        scale = {"domain": list(series), "range": palette}
        return channel("series", "nominal", title="Kernel/variant", scale=scale)

    tips = [
        ("series", "Kernel/variant"),
        ("commit", "Commit"),
        ("date", "Date"),
        ("subject", "Subject"),
        ("t", "Time per call"),
        ("eff", "Efficiency"),
        ("binding", "Binding"),
    ]
    layers: list[Spec] = [
        unit("points", mark("line", clip=True, strokeWidth=1.5), {"color": colour()}),
        unit(
            "points",
            mark("point", filled=True, size=60, clip=True),
            {"color": colour(), "description": nominal("subject"), "tooltip": tooltip(tips)},
            name="commits",
        ),
        unit(
            "labels",
            mark("text", align="left", angle=330, dx=4, dy=-6, fontSize=11, aria=False),
            {"text": nominal("label")},
        ),
    ]
    chart = layer_chart(
        layers,
        encoding={"x": x, "y": log_axis("y", "Time per call (s)", ydom, "s")},
        width=width,
        height=height,
        title=title(inp.title, inp.subtitle),
    )
    return finish(
        chart,
        CHART_KIND,
        inp.title,
        f"History over commits: {inp.title}",
        {"points": rows, "labels": labels},
    )


def _short(subject: str) -> str:
    """A subject cut to fit a label (the tooltip has it whole)."""
    return subject if len(subject) <= _LABEL_CHARS else subject[: _LABEL_CHARS - 3] + "..."


CHART = ChartKind(HistoryInput, CHART_KIND, history_chart)
