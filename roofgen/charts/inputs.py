"""The charts' whole input contract.

The chart builders read nothing but these frozen dataclasses, so an adapter from the
analysis results (or a hand-written test fixture) is all a chart needs.

Units are SI base units throughout: FLOP/s for compute roofs and point performance, B/s
for memory roofs, FLOP/byte for arithmetic intensity.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

RoofKind = Literal["compute", "memory"]
RoofBasis = Literal["measured", "datasheet"]

#: Memory roles, from the level closest to the cores to the device memory.
MEMORY_ROLES: tuple[str, ...] = ("l1", "llc", "device")
#: Every role a roof may carry.
ROOF_ROLES: tuple[str, ...] = (*MEMORY_ROLES, "compute")


def _check_positive(name: str, value: float) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")


class ChartInput:
    """The base of every chart kind's input: a frozen dataclass whose type says which
    kind of chart draws it (see :class:`ChartKind`)."""

    __slots__ = ()


@dataclass(frozen=True)
class ChartKind:
    """One kind of chart, declared as ``CHART`` by the module that draws it and found
    by :mod:`roofgen.charts.kinds`: its input type, its name (``usermeta.chart`` of the
    spec), the function that draws it, and how many panels it stacks."""

    input: type[ChartInput]
    kind: str
    build: Callable[..., dict[str, Any]]
    panels: int = 1


@dataclass(frozen=True, slots=True)
class RoofLine:
    """One roof: a bandwidth diagonal (``kind="memory"``) or a compute ceiling.

    ``value`` is in FLOP/s for compute roofs and in B/s for memory roofs.
    ``role`` is ``"device"``, ``"llc"`` or ``"l1"`` for memory roofs and ``"compute"``
    for compute roofs. ``sub_ceiling`` marks a lower compute ceiling (no FMA, division,
    scalar code...) that is drawn thinner. ``label`` is the roof's name without its value
    (``"HBM"``, ``"Tensor BF16"``); the chart appends the formatted value.
    """

    id: str
    label: str
    kind: RoofKind
    value: float
    basis: RoofBasis
    role: str
    sub_ceiling: bool = False

    def __post_init__(self) -> None:
        if self.kind not in ("compute", "memory"):
            raise ValueError(f"roof {self.id!r}: kind must be 'compute' or 'memory'")
        if self.basis not in ("measured", "datasheet"):
            raise ValueError(f"roof {self.id!r}: basis must be 'measured' or 'datasheet'")
        if self.kind == "memory" and self.role not in MEMORY_ROLES:
            raise ValueError(f"memory roof {self.id!r}: role must be one of {MEMORY_ROLES}")
        if self.kind == "compute" and self.role != "compute":
            raise ValueError(f"compute roof {self.id!r}: role must be 'compute'")
        if self.kind == "memory" and self.sub_ceiling:
            raise ValueError(f"memory roof {self.id!r}: only compute roofs are sub-ceilings")
        _check_positive(f"roof {self.id!r} value", self.value)


@dataclass(frozen=True, slots=True)
class ChartPoint:
    """One launch at one memory level (the hierarchical form).

    A launch appears once per memory level, all its points at the same ``flop_per_s``.
    ``efficiency`` is a fraction (0.42 for 42 %) or ``None`` when unknown. ``klass`` is the
    analysis class (for example ``"memory-bound"``), ``binding`` the binding resource.
    ``launch`` optionally tells apart several launches of the same kernel and variant.
    A launch measured over a shape sweep has one point per shape: ``sweep_index`` gives
    its place in the sweep (the chart joins the points in that order) and ``shape`` its
    label (``seq_kv=4096``). ``flop_per_s_q3`` and ``flop_per_s_q1`` are the FLOP/s at the
    third and first quartile of the measured time (the spread, drawn as an error bar),
    ``None`` when the quartiles are unknown.
    """

    case: str
    kernel: str
    variant: str
    level: str
    level_role: str
    intensity_flop_per_byte: float
    flop_per_s: float
    efficiency: float | None
    klass: str
    binding: str | None
    launch: str = ""
    sweep_index: int | None = None
    shape: str = ""
    flop_per_s_q3: float | None = None
    flop_per_s_q1: float | None = None

    def __post_init__(self) -> None:
        if self.level_role not in MEMORY_ROLES:
            raise ValueError(
                f"point {self.kernel!r}/{self.level!r}: level_role must be one of {MEMORY_ROLES}"
            )
        _check_positive(f"point {self.kernel!r} intensity", self.intensity_flop_per_byte)
        _check_positive(f"point {self.kernel!r} FLOP/s", self.flop_per_s)


@dataclass(frozen=True, slots=True)
class Arrow:
    """A before/after link between two variants of one kernel at one memory level."""

    case: str
    kernel: str
    level: str
    from_variant: str
    to_variant: str


@dataclass(frozen=True, slots=True)
class RooflineInput(ChartInput):
    """Everything one roofline chart shows.

    ``variant_order`` orders the variants of a kernel (``("baseline", "optimised")``);
    ``labelled``: variants labelled directly beside the baseline and the best;
    when ``arrows`` is ``None`` the chart links consecutive variants of the same case,
    kernel and level in that order. Pass an explicit tuple (possibly empty) to choose.
    """

    title: str
    roofs: tuple[RoofLine, ...]
    points: tuple[ChartPoint, ...]
    variant_order: tuple[str, ...] = ()
    arrows: tuple[Arrow, ...] | None = field(default=None)
    subtitle: str = ""
    labelled: tuple[str, ...] = ()  # variants the case marks for a direct label

    def __post_init__(self) -> None:
        ids = [r.id for r in self.roofs]
        if len(set(ids)) != len(ids):
            raise ValueError("roof ids must be unique")
