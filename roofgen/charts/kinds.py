"""Every chart kind by its input type: one entry point for whoever draws charts.

A chart kind is a module (or package) of ``roofgen.charts`` that declares
``CHART = ChartKind(InputType, "roofgen.<kind>", draw_function, panels)``; it is found
here by looking through the package, so a new kind is its module alone.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import Any

from roofgen.charts.inputs import ChartInput, ChartKind

__all__ = ["CHART_KINDS", "ChartInput", "build_chart", "chart_kind", "chart_kinds"]


@cache
def chart_kinds() -> dict[type[ChartInput], ChartKind]:
    """Every chart kind of the package, by its input type."""
    package = importlib.import_module(__package__ or "roofgen.charts")
    found: dict[type[ChartInput], ChartKind] = {}
    for module in pkgutil.iter_modules(package.__path__):
        declared = getattr(
            importlib.import_module(f"{package.__name__}.{module.name}"), "CHART", None
        )
        if isinstance(declared, ChartKind):
            found[declared.input] = declared
    return found


CHART_KINDS = tuple(sorted(kind.kind for kind in chart_kinds().values()))


def chart_kind(inp: ChartInput) -> str:
    return chart_kinds()[type(inp)].kind


def build_chart(inp: ChartInput, width: int = 640, height: int = 440) -> dict[str, Any]:
    """The Vega-Lite spec of any chart input; charts of several panels stack them, each
    ``width`` wide and a little lower than ``height``."""
    kind = chart_kinds()[type(inp)]
    if kind.panels > 1:
        return kind.build(inp, width=width, height=int(height * 0.8))
    return kind.build(inp, width=width, height=height)
