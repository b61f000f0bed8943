"""Input contracts of the other roofline charts: precision, instruction, communication,
energy, sparse, runtime and the resource view (the "3-D roofline").

Like :mod:`roofgen.charts.inputs` for the hierarchical chart, each chart reads nothing but
these frozen dataclasses; an adapter builds them from the analysis. Units are SI base units:
FLOP/s (OP/s for integer and transcendental work), B/s, seconds, joules, watts, warp
instructions per second, transactions per second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from roofgen.charts.inputs import ChartInput


def _positive(name: str, value: float | None, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")


@dataclass(frozen=True, slots=True)
class LaunchKey:
    """Which launch a point belongs to: case, variant, kernel and its place in the variant."""

    case: str
    variant: str
    kernel: str
    launch: str = ""  # e.g. "2" for the second launch of the kernel in the variant

    @property
    def label(self) -> str:
        return f"{self.variant} / {self.kernel}" + (f" #{self.launch}" if self.launch else "")


# ------------------------------------------------------------------------------- precision


@dataclass(frozen=True, slots=True)
class Ceiling:
    """A compute ceiling: the peak of one or more precisions on one unit (FLOP/s or OP/s)."""

    id: str
    label: str  # "Tensor cores BF16/FP16"; the chart appends the value
    unit: str  # unit id
    precision: str  # the first precision, for the colour: "bf16", "fp8", "int8"...
    value: float
    basis: str  # "measured" or "datasheet"
    sparse: bool = False

    def __post_init__(self) -> None:
        _positive(f"ceiling {self.id!r}", self.value)


@dataclass(frozen=True, slots=True)
class PrecisionPoint:
    """A launch's work on one unit at one precision: rate against intensity at device memory."""

    key: LaunchKey
    unit: str
    unit_name: str
    precision: str
    intensity: float  # work (FLOP or OP) per device-memory byte
    rate: float  # work / measured time
    peak: float  # the precision's peak on the unit
    unit_time_share: float  # this work's time at peak / measured time

    def __post_init__(self) -> None:
        _positive("precision point intensity", self.intensity)
        _positive("precision point rate", self.rate)


@dataclass(frozen=True, slots=True)
class Projection:
    """A launch's work moved to a lower precision, as the analysis projects it: from the
    measured point, right by the byte scale (the operands shrink) and up by the speedup."""

    key: LaunchKey
    from_precision: str
    to_precision: str
    intensity_from: float
    rate_from: float
    intensity_to: float  # intensity_from / byte_scale
    rate_to: float  # rate_from x speedup
    speedup: float

    def __post_init__(self) -> None:
        _positive("projection intensity", self.intensity_to)
        _positive("projection rate", self.rate_to)


@dataclass(frozen=True, slots=True)
class PrecisionInput(ChartInput):
    title: str
    subtitle: str
    ceilings: tuple[Ceiling, ...]
    memory_label: str  # "HBM3"
    bandwidth: float | None  # device memory B/s, the slanted roof
    points: tuple[PrecisionPoint, ...]
    projections: tuple[Projection, ...] = ()
    #: The machine's other ceilings: hidden, shown by a toggle in the interactive chart.
    other_ceilings: tuple[Ceiling, ...] = ()
    #: "measured" or "datasheet": the memory roof is drawn like a ceiling of that basis.
    bandwidth_basis: str = "datasheet"


# ----------------------------------------------------------------------------- instruction


@dataclass(frozen=True, slots=True)
class TransactionWall:
    """A memory level's transaction rate: warp GIPS = instructions per transaction x this."""

    level: str
    name: str
    role: str  # l1, llc, device
    per_s: float

    def __post_init__(self) -> None:
        _positive(f"transaction wall {self.level!r}", self.per_s)


@dataclass(frozen=True, slots=True)
class InstructionPointInput:
    key: LaunchKey
    level: str  # level id, or "global" / "shared"
    name: str  # display name of the level or pattern
    role: str  # l1, llc, device, global, shared
    intensity: float  # warp instructions per transaction
    warp_ips: float

    def __post_init__(self) -> None:
        _positive("instruction point intensity", self.intensity)
        _positive("instruction point warp IPS", self.warp_ips)


@dataclass(frozen=True, slots=True)
class InstructionInput(ChartInput):
    title: str
    subtitle: str
    warp_size: int
    issue_per_s: float
    walls: tuple[TransactionWall, ...]
    global_walls: tuple[tuple[str, float], ...]
    shared_walls: tuple[tuple[str, float], ...]
    points: tuple[InstructionPointInput, ...]

    def __post_init__(self) -> None:
        _positive("issue rate", self.issue_per_s)


# --------------------------------------------------------------------------- communication


@dataclass(frozen=True, slots=True)
class LinkRoof:
    id: str
    name: str
    bandwidth: float  # B/s one way
    latency_s: float | None

    def __post_init__(self) -> None:
        _positive(f"link {self.id!r} bandwidth", self.bandwidth)


@dataclass(frozen=True, slots=True)
class CommPoint:
    """A launch with FLOPs and link traffic: FLOP/s against FLOPs per byte on its link."""

    key: LaunchKey
    link: str
    flop_per_byte: float
    flop_per_s: float

    def __post_init__(self) -> None:
        _positive("communication point intensity", self.flop_per_byte)
        _positive("communication point FLOP/s", self.flop_per_s)


@dataclass(frozen=True, slots=True)
class CollectivePoint:
    """A collective: its bus bytes against its modelled time (alpha + bus bytes / B) and,
    for a launch that is only this collective, its measured time."""

    key: LaunchKey
    kind: str
    ranks: int
    topology: str
    link: str
    bus_b: float
    bound_s: float
    measured_s: float | None
    regime: str

    def __post_init__(self) -> None:
        _positive("collective bus bytes", self.bus_b)
        _positive("collective bound", self.bound_s)
        _positive("collective measured time", self.measured_s, allow_none=True)


@dataclass(frozen=True, slots=True)
class CommunicationInput(ChartInput):
    title: str
    subtitle: str
    links: tuple[LinkRoof, ...]
    compute_label: str
    compute_peak: float | None
    points: tuple[CommPoint, ...]
    collectives: tuple[CollectivePoint, ...]


# ---------------------------------------------------------------------------------- energy


@dataclass(frozen=True, slots=True)
class EnergyPoint:
    key: LaunchKey
    intensity: float  # FLOP per device-memory byte
    flop_per_j: float
    power_w: float | None
    source: str  # "measured" or "model"
    power_limited: bool

    def __post_init__(self) -> None:
        _positive("energy point intensity", self.intensity)
        _positive("energy point FLOP/J", self.flop_per_j)
        _positive("energy point power", self.power_w, allow_none=True)


@dataclass(frozen=True, slots=True)
class EnergyModel:
    """The machine's energy coefficients for one precision and device memory."""

    precision: str
    j_per_flop: float
    j_per_byte: float
    constant_w: float
    peak: float  # FLOP/s
    bandwidth: float  # B/s

    def __post_init__(self) -> None:
        _positive("energy per FLOP", self.j_per_flop)
        _positive("energy per byte", self.j_per_byte)
        _positive("peak", self.peak)
        _positive("bandwidth", self.bandwidth)


@dataclass(frozen=True, slots=True)
class EnergyInput(ChartInput):
    title: str
    subtitle: str
    limit_w: float | None
    constant_w: float | None
    model: EnergyModel | None  # None: no published coefficients; the chart says so
    note: str
    points: tuple[EnergyPoint, ...]


# ---------------------------------------------------------------------------------- sparse


@dataclass(frozen=True, slots=True)
class SparsePointInput:
    key: LaunchKey
    unit_name: str
    precision: str
    kind: str  # "executed" or "dense-equivalent"
    intensity: float  # FLOP per device-memory byte
    flop_per_s: float
    metadata_share: float | None

    def __post_init__(self) -> None:
        if self.kind not in ("executed", "dense-equivalent"):
            raise ValueError("sparse point kind must be 'executed' or 'dense-equivalent'")
        _positive("sparse point intensity", self.intensity)
        _positive("sparse point FLOP/s", self.flop_per_s)


@dataclass(frozen=True, slots=True)
class SparseInput(ChartInput):
    title: str
    subtitle: str
    ceilings: tuple[Ceiling, ...]  # the dense and the sparse peaks
    memory_label: str
    bandwidth: float | None
    points: tuple[SparsePointInput, ...]


# --------------------------------------------------------------------------------- runtime


@dataclass(frozen=True, slots=True)
class RuntimePoint:
    """One step (a variant): its launches and measured time."""

    case: str
    variant: str
    launches: int
    time_s: float
    floor_s: float | None
    mechanism: str
    launch_bound: bool

    def __post_init__(self) -> None:
        if self.launches < 1:
            raise ValueError("a step has at least one launch")
        _positive("step time", self.time_s)


@dataclass(frozen=True, slots=True)
class RuntimeInput(ChartInput):
    title: str
    subtitle: str
    costs: tuple[tuple[str, float], ...]  # (mechanism, seconds per launch)
    sync_s: float | None
    points: tuple[RuntimePoint, ...]


# ------------------------------------------------------------------------- resource view


@dataclass(frozen=True, slots=True)
class ResourceBar:
    """One resource's time lower bound for one launch; ``seconds`` None when unknown, 0 when
    the launch makes no demand on it."""

    group: int  # index into ResourcesInput.groups
    resource: str  # compute.tensor, memory.hbm, link.nvlink, issue, power, launch
    name: str
    seconds: float | None
    role: str  # binding, runner-up, other, unknown

    def __post_init__(self) -> None:
        if self.seconds is not None and not (math.isfinite(self.seconds) and self.seconds >= 0):
            raise ValueError(f"bar {self.resource!r}: seconds must be >= 0, got {self.seconds!r}")
        if self.role not in ("binding", "runner-up", "other", "unknown"):
            raise ValueError(f"bar {self.resource!r}: unknown role {self.role!r}")


@dataclass(frozen=True, slots=True)
class ResourceGroup:
    label: str  # "flash / prefill x32"
    measured_s: float
    bound_s: float | None

    def __post_init__(self) -> None:
        _positive(f"group {self.label!r} measured time", self.measured_s)


@dataclass(frozen=True, slots=True)
class ResourcesInput(ChartInput):
    title: str
    subtitle: str
    groups: tuple[ResourceGroup, ...]
    bars: tuple[ResourceBar, ...]
