"""Every roofline kind the analysis computes, by the key it has in the analysis JSON
(``rooflines``): one line per kind. A launch's kinds are read with
``LaunchResult.get(Kind)``, a step's with ``VariantResult.get(Kind)``; each is computed
on first use and kept (:mod:`roofgen.analysis.inputs`)."""

from __future__ import annotations

from roofgen.analysis.communication import CommunicationResult
from roofgen.analysis.energy import EnergyResult, StepEnergy
from roofgen.analysis.inputs import LaunchKind, VariantKind
from roofgen.analysis.instruction import InstructionResult
from roofgen.analysis.precision import PrecisionResult
from roofgen.analysis.resources import ResourceView
from roofgen.analysis.runtime import RuntimeResult
from roofgen.analysis.sparse import SparseResult

__all__ = ["LAUNCH_KINDS", "VARIANT_KINDS"]

#: Kinds computed per launch.
LAUNCH_KINDS: tuple[tuple[str, type[LaunchKind]], ...] = (
    ("resources", ResourceView),
    ("precision", PrecisionResult),
    ("instruction", InstructionResult),
    ("communication", CommunicationResult),
    ("energy", EnergyResult),
    ("sparse", SparseResult),
)

#: Kinds computed per variant (one step: its launches x calls).
VARIANT_KINDS: tuple[tuple[str, type[VariantKind]], ...] = (
    ("runtime", RuntimeResult),
    ("energy", StepEnergy),
)
