"""What every roofline kind is computed from, and where its result is kept. Pure.

A *kind* (the precision options, the instruction points, the collectives, the energy,
the sparse points, the runtime floor, the per-resource view) is a frozen result class
with a classmethod ``of`` that computes it from one launch (:class:`LaunchInputs`) or
one step (:class:`VariantInputs`) as the analysis prepared them. ``inputs.get(Kind)``
computes a kind on first use and keeps it on the inputs object, so a kind nobody reads
costs nothing and a kind read twice (the site, the JSON, the facts) is computed once.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol, Self, TypeVar

from roofgen.analysis.bounds import Bounds, Thresholds
from roofgen.model import Kernel, Launch, Machine, Measurement, Variant
from roofgen.units import counts_ops

__all__ = [
    "LaunchInputs",
    "LaunchKind",
    "LaunchKindT",
    "VariantInputs",
    "VariantKind",
    "VariantKindT",
    "floating_point_work",
    "work",
]


class LaunchKind(Protocol):
    """A roofline kind computed per launch."""

    @classmethod
    def of(cls, inputs: LaunchInputs) -> Self: ...


class VariantKind(Protocol):
    """A roofline kind computed per variant (one step: its launches in order)."""

    @classmethod
    def of(cls, inputs: VariantInputs) -> Self: ...


LaunchKindT = TypeVar("LaunchKindT", bound=LaunchKind)
VariantKindT = TypeVar("VariantKindT", bound=VariantKind)


def _kept(holder: object) -> dict[type, Any]:
    """The results kept on ``holder`` (a frozen dataclass: written through its __dict__)."""
    kept: dict[type, Any] = vars(holder).setdefault("_kinds", {})
    return kept


@dataclass(frozen=True, eq=False)
class LaunchInputs:
    """One launch as the analysis saw it: on ``machine``, with the operator model's values
    filled in where the measurement left them out (``launch``), and the time each resource
    needs for one call (``bounds``: measured roofs where present; ``datasheet``: datasheet
    roofs)."""

    machine: Machine
    launch: Launch
    kernel: Kernel | None
    bounds: Bounds
    datasheet: Bounds

    @property
    def measurement(self) -> Measurement:
        return self.launch.measurement

    def get(self, kind: type[LaunchKindT]) -> LaunchKindT:
        """The result of ``kind`` for this launch, computed on first use."""
        kept = _kept(self)
        if kind not in kept:
            kept[kind] = kind.of(self)
        result: LaunchKindT = kept[kind]
        return result


@dataclass(frozen=True, eq=False)
class VariantInputs:
    """One variant (a step) as the analysis saw it: its launches in order, each with its
    calls per step (``variant``: modelled values filled in), and each launch's inputs."""

    machine: Machine
    variant: Variant
    launches: tuple[LaunchInputs, ...]
    thresholds: Thresholds

    @cached_property
    def time_s(self) -> float:
        """The step's measured time (s): calls x the time of one call, summed over the
        launches in order. Its one home: the variant's result, its runtime floor and its
        energy read it here."""
        return sum(x.calls * x.measurement.time.value_s for x in self.variant.launches)

    def get(self, kind: type[VariantKindT]) -> VariantKindT:
        """The result of ``kind`` for this step, computed on first use."""
        kept = _kept(self)
        if kind not in kept:
            kept[kind] = kind.of(self)
        result: VariantKindT = kept[kind]
        return result


def work(m: Measurement, integer: bool) -> float | None:
    """Work of one call: FLOP (``integer`` False) or integer and transcendental OP (True);
    ``None`` without FLOP counts. A 2:4 sparse count is the dense-equivalent one."""
    if m.flops is None:
        return None
    total = 0.0
    for by_precision in m.flops.values():
        for precision, amount in by_precision.items():
            if counts_ops(precision) == integer:
                total += amount
    return total


def floating_point_work(m: Measurement) -> float | None:
    """Floating-point work of one call (FLOP); ``None`` without FLOP counts."""
    return work(m, integer=False)
