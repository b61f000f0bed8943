"""What a machine offers a launch beyond its current unit and precision: a tensor-core
path at the same precision, faster (narrower) precisions, the matrix instructions and
libraries of its architecture. Pure: a machine in, facts out.

Peaks are compared on their datasheet values (like with like: not every peak has a
measured value).
"""

from __future__ import annotations

from dataclasses import dataclass

from roofgen.model import ComputeUnit, Machine
from roofgen.units import fmt_ratio, fmt_si, rate_unit

__all__ = [
    "TENSOR_ADVANTAGE",
    "Architecture",
    "FasterPrecision",
    "architecture",
    "faster_precisions",
    "tensor_speedup",
    "unit_peak",
]

#: Tensor cores are advised only where their peak at the launch's precision is at least
#: this multiple of the vector pipe's: below it (B200's FP64 tensor peak equals its FP64
#: pipe) moving the work gains too little to be worth a rewrite.
TENSOR_ADVANTAGE = 1.5

#: A precision and the next narrower ones a launch could move to where accuracy allows
#: (one step: FP64 to FP32, FP32 to TF32 or 16-bit, 16-bit to FP8, FP8 to FP6 or FP4).
NARROWER: dict[str, tuple[str, ...]] = {
    "fp64": ("fp32",),
    "fp32": ("tf32", "bf16", "fp16"),
    "tf32": ("bf16", "fp16"),
    "bf16": ("fp8",),
    "fp16": ("fp8",),
    "fp8": ("fp6", "fp4"),
    "fp6": ("fp4",),
}


@dataclass(frozen=True)
class Architecture:
    """A GPU architecture: its name, the matrix instructions a hand-written kernel uses,
    and the libraries that use them for you."""

    name: str
    instructions: str
    libraries: str


_MMA_SYNC = "warp-level mma.sync (or WMMA)"
_CUDA_LIBS = "cuBLAS or cuBLASLt, CUTLASS"
VOLTA = Architecture("Volta (sm_70)", _MMA_SYNC, _CUDA_LIBS)
AMPERE = Architecture("Ampere (sm_80)", _MMA_SYNC, _CUDA_LIBS)
ADA = Architecture("Ada (sm_89)", _MMA_SYNC, _CUDA_LIBS)
HOPPER = Architecture("Hopper (sm_90a)", "warpgroup wgmma (with TMA)", _CUDA_LIBS)
BLACKWELL = Architecture("Blackwell (sm_100a)", "tcgen05.mma (tensor memory, with TMA)", _CUDA_LIBS)
BLACKWELL_RTX = Architecture("Blackwell (sm_120)", _MMA_SYNC, _CUDA_LIBS)
CDNA = Architecture("CDNA", "MFMA (v_mfma)", "hipBLASLt or rocBLAS, Composable Kernel")
NVIDIA = Architecture(
    "NVIDIA",
    "mma.sync (Volta to Ada, sm_120), wgmma (sm_90a) or tcgen05 (sm_100a)",
    _CUDA_LIBS,
)
UNKNOWN = Architecture("", "the architecture's matrix instructions", "the vendor's BLAS library")

# By the id of roofgen's library machines (and the ids people give the same parts): the
# longest matching prefix wins.
_BY_ID: dict[str, Architecture] = {
    "v100": VOLTA,
    "a100": AMPERE,
    "a30": AMPERE,
    "a10": AMPERE,
    "l40": ADA,
    "l4": ADA,
    "h100": HOPPER,
    "h200": HOPPER,
    "gh200": HOPPER,
    "b100": BLACKWELL,
    "b200": BLACKWELL,
    "gb200": BLACKWELL,
    "b300": BLACKWELL,
    "rtx-5090": BLACKWELL_RTX,
    "rtx-pro-6000": BLACKWELL_RTX,
    "mi100": CDNA,
    "mi210": CDNA,
    "mi250": CDNA,
    "mi300": CDNA,
    "mi325": CDNA,
    "mi355": CDNA,
}


def architecture(machine: Machine) -> Architecture:
    """The architecture of ``machine``, from its id (``h100-sxm``: Hopper), else from its
    vendor (the matrix instructions of every NVIDIA architecture, or AMD's MFMA)."""
    matches = [prefix for prefix in _BY_ID if machine.id.lower().startswith(prefix)]
    if matches:
        return _BY_ID[max(matches, key=len)]
    vendor = machine.vendor.lower()
    if vendor in ("amd", "advanced micro devices"):
        return CDNA
    if vendor == "nvidia":
        return NVIDIA
    return UNKNOWN


def unit_peak(unit: ComputeUnit, precision: str) -> float | None:
    """The datasheet peak of ``unit`` at ``precision`` (FLOP/s), None if it has none."""
    roof = unit.peaks.get(precision)
    return roof.value("datasheet") if roof is not None else None


def _best(machine: Machine, precision: str, tensor: bool) -> tuple[ComputeUnit, float] | None:
    found = [
        (unit, peak)
        for unit in machine.compute
        if (unit.kind == "tensor") == tensor and (peak := unit_peak(unit, precision))
    ]
    return max(found, key=lambda up: up[1], default=None)


def tensor_speedup(machine: Machine, precision: str | None, unit_id: str) -> float | None:
    """The machine's tensor-core peak at ``precision`` over the vector unit ``unit_id``'s
    peak at it; None where either is not listed (no tensor path to advise)."""
    if precision is None:
        return None
    unit = machine.unit(unit_id)
    tensor = _best(machine, precision, tensor=True)
    vector = None
    if unit is not None:
        # The unit's peak at the precision; where it has none (FP16 data computed in FP32),
        # the fastest it runs.
        vector = unit_peak(unit, precision) or max(
            (roof.value("datasheet") for roof in unit.peaks.values()), default=None
        )
    if tensor is None or not vector:
        return None
    return tensor[1] / vector


@dataclass(frozen=True)
class FasterPrecision:
    precision: str
    unit: str  # the unit's display name
    peak: float  # FLOP/s (datasheet)
    speedup: float  # over the launch's binding peak

    def text(self) -> str:
        return (
            f"{self.precision.upper()} on the {self.unit} "
            f"({fmt_si(self.peak, rate_unit(self.precision))}, {fmt_ratio(self.speedup)})"
        )


def faster_precisions(
    machine: Machine, precision: str | None, unit_id: str
) -> tuple[FasterPrecision, ...]:
    """The next narrower precisions the machine runs at least :data:`TENSOR_ADVANTAGE`
    times faster than ``unit_id`` runs ``precision`` (dense peaks), fastest first."""
    unit = machine.unit(unit_id)
    here = unit_peak(unit, precision) if unit is not None and precision else None
    if not here or precision is None:
        return ()
    found = []
    for narrower in NARROWER.get(precision, ()):
        best = max(
            (_best(machine, narrower, tensor=t) for t in (True, False)),
            key=lambda up: up[1] if up else 0.0,
        )
        if best is not None and best[1] >= TENSOR_ADVANTAGE * here:
            found.append(FasterPrecision(narrower, best[0].name, best[1], best[1] / here))
    return tuple(sorted(found, key=lambda f: (-f.peak, f.precision)))
