"""roofgen: roofline analysis, recommendations, charts and case-study sites.

The public Python API is what ``__all__`` lists (semantic versioning applies to it;
see the README). Importing ``roofgen`` is light and changes nothing in the caller's
environment: the names below are imported on first use.

    import roofgen
    ws = roofgen.load("specs")            # raises roofgen.SpecError with every error
    ws.analysis.to_dataframe()            # one row per variant and launch
    ws.chart("vector-add/add")            # an Altair chart, displayed offline
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from roofgen.version import OUTPUT_FORMAT_VERSION, SPEC_FORMAT_VERSION, __version__

__all__ = [
    "OUTPUT_FORMAT_VERSION",
    "SPEC_FORMAT_VERSION",
    "Case",
    "Machine",
    "Problem",
    "Results",
    "SpecError",
    "Workspace",
    "__version__",
    "analyse",
    "chart",
    "dump_case",
    "from_dicts",
    "load",
    "machine",
    "measurement_from_times",
]

# name -> module that defines it, imported on first access (PEP 562).
_LAZY = {
    "Case": "roofgen.model",
    "Machine": "roofgen.model",
    "Problem": "roofgen.problems",
    "SpecError": "roofgen.problems",
    "Results": "roofgen.api.workspace",
    "Workspace": "roofgen.api.workspace",
    "analyse": "roofgen.api.workspace",
    "chart": "roofgen.api.workspace",
    "dump_case": "roofgen.api.workspace",
    "from_dicts": "roofgen.api.workspace",
    "load": "roofgen.api.workspace",
    "machine": "roofgen.api.workspace",
    "measurement_from_times": "roofgen.api.measure",
}

if TYPE_CHECKING:
    from roofgen.api.measure import measurement_from_times
    from roofgen.api.workspace import (
        Results,
        Workspace,
        analyse,
        chart,
        dump_case,
        from_dicts,
        load,
        machine,
    )
    from roofgen.model import Case, Machine
    from roofgen.problems import Problem, SpecError


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'roofgen' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
