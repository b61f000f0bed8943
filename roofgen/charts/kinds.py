"""Every chart kind by its input type: one entry point for whoever draws charts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from roofgen.charts.communication import CHART_KIND as COMMUNICATION
from roofgen.charts.communication import communication_chart
from roofgen.charts.energy import CHART_KIND as ENERGY
from roofgen.charts.energy import energy_chart
from roofgen.charts.hierarchical import CHART_KIND as HIERARCHICAL
from roofgen.charts.hierarchical import hierarchical_chart
from roofgen.charts.inputs import RooflineInput
from roofgen.charts.instruction import CHART_KIND as INSTRUCTION
from roofgen.charts.instruction import instruction_chart
from roofgen.charts.precision import CHART_KIND as PRECISION
from roofgen.charts.precision import precision_chart
from roofgen.charts.resources import CHART_KIND as RESOURCES
from roofgen.charts.resources import resources_chart
from roofgen.charts.roofline_inputs import (
    CommunicationInput,
    EnergyInput,
    InstructionInput,
    PrecisionInput,
    ResourcesInput,
    RuntimeInput,
    SparseInput,
)
from roofgen.charts.runtime import CHART_KIND as RUNTIME
from roofgen.charts.runtime import runtime_chart
from roofgen.charts.sparse import CHART_KIND as SPARSE
from roofgen.charts.sparse import sparse_chart

__all__ = ["CHART_KINDS", "ChartInput", "build_chart", "chart_kind"]

ChartInput: TypeAlias = (
    RooflineInput
    | PrecisionInput
    | InstructionInput
    | CommunicationInput
    | EnergyInput
    | SparseInput
    | RuntimeInput
    | ResourcesInput
)

#: Input type -> (chart kind, builder, panels stacked).
_BUILDERS: dict[type, tuple[str, Callable[..., dict[str, Any]], int]] = {
    RooflineInput: (HIERARCHICAL, hierarchical_chart, 1),
    PrecisionInput: (PRECISION, precision_chart, 1),
    InstructionInput: (INSTRUCTION, instruction_chart, 2),
    CommunicationInput: (COMMUNICATION, communication_chart, 2),
    EnergyInput: (ENERGY, energy_chart, 2),
    SparseInput: (SPARSE, sparse_chart, 1),
    RuntimeInput: (RUNTIME, runtime_chart, 1),
    ResourcesInput: (RESOURCES, resources_chart, 1),
}
CHART_KINDS = tuple(kind for kind, _, _ in _BUILDERS.values())


def chart_kind(inp: ChartInput) -> str:
    return _BUILDERS[type(inp)][0]


def build_chart(inp: ChartInput, width: int = 640, height: int = 440) -> dict[str, Any]:
    """The Vega-Lite spec of any chart input; charts of several panels stack them, each
    ``width`` wide and a little lower than ``height``."""
    _, builder, panels = _BUILDERS[type(inp)]
    if panels > 1:
        return builder(inp, width=width, height=int(height * 0.8))
    return builder(inp, width=width, height=height)
