"""The sparse roofline: 2:4 structured sparsity. Pure.

A 2:4 sparse launch keeps two values of every four. The datasheet's sparse peak counts
the skipped zeros, so executed FLOPs meet the dense roof and dense-equivalent FLOPs the
sparse roof.
"""

from __future__ import annotations

from dataclasses import dataclass

from roofgen.analysis.bounds import level_bytes
from roofgen.analysis.inputs import LaunchInputs
from roofgen.model import Basis, Machine, Measurement

__all__ = ["SparsePoint", "SparseResult", "sparse_points"]


@dataclass(frozen=True)
class SparsePoint:
    """A 2:4 sparse launch: executed FLOPs against the dense roof, dense-equivalent FLOPs
    against the sparse roof (which counts the skipped zeros). Both need the same time
    on the unit when the sparse peak is twice the dense one.

    ``executed_flop`` and ``dense_equivalent_flop``: FLOP of one call; ``dense_peak`` and
    ``sparse_peak``: the unit's peaks (FLOP/s, measured where present; the dense one
    ``None`` when the unit has none); ``device_bytes`` and ``metadata_b``: bytes at device
    memory and the index and metadata bytes among them (B); ``time_s``: measured (s).
    """

    unit: str
    precision: str  # the dense precision, e.g. "bf16"
    executed_flop: float
    dense_equivalent_flop: float
    dense_peak: float | None
    sparse_peak: float
    device_bytes: float | None
    metadata_b: float | None
    time_s: float

    @property
    def executed_flop_per_s(self) -> float:
        """Executed FLOPs / measured time (FLOP/s): the point against the dense roof."""
        return self.executed_flop / self.time_s

    @property
    def dense_equivalent_flop_per_s(self) -> float:
        """Dense-equivalent FLOPs / measured time (FLOP/s): the point against the sparse roof."""
        return self.dense_equivalent_flop / self.time_s

    @property
    def metadata_share(self) -> float | None:
        """The metadata's share of the device-memory bytes."""
        if self.metadata_b is None or not self.device_bytes:
            return None
        return self.metadata_b / self.device_bytes


def sparse_points(machine: Machine, m: Measurement, basis: Basis = "measured") -> list[SparsePoint]:
    """One point pair per sparse precision of a launch that declares 2:4 sparsity."""
    if m.sparsity is None or m.flops is None:
        return []
    device = machine.device_level
    moved = level_bytes(device, m) if device is not None else None
    out = []
    for unit_id, by_precision in sorted(m.flops.items()):
        unit = machine.unit(unit_id)
        if unit is None:
            continue
        for precision, work in sorted(by_precision.items()):
            if not precision.endswith("-sparse") or work <= 0:
                continue
            base = precision.removesuffix("-sparse")
            dense = unit.peaks.get(base)
            out.append(
                SparsePoint(
                    unit=unit_id,
                    precision=base,
                    executed_flop=work / 2,  # 2:4 keeps two values of every four
                    dense_equivalent_flop=work,
                    dense_peak=dense.value(basis) if dense is not None else None,
                    sparse_peak=unit.peaks[precision].value(basis),
                    device_bytes=moved,
                    metadata_b=m.sparsity.metadata_b,
                    time_s=m.time.value_s,
                )
            )
    return out


@dataclass(frozen=True)
class SparseResult:
    """The sparse roofline of one launch: one point pair per sparse precision (none for a
    launch that declares no sparsity)."""

    points: tuple[SparsePoint, ...]

    @classmethod
    def of(cls, inputs: LaunchInputs) -> SparseResult:
        return cls(tuple(sparse_points(inputs.machine, inputs.measurement)))
