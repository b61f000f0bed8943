"""Frozen, typed model objects built from validated specs.

Every number is a float in SI base units of roofgen's dimensions, and the unit
is in the field name (``_s`` seconds, ``_b`` bytes, ``_flop`` FLOP or OP,
``_per_s`` rates, ``_hz`` clocks, ``_w`` watts, ``_j`` joules).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

Basis = Literal["measured", "datasheet"]
Role = Literal["device", "llc", "l1"]


@dataclass(frozen=True)
class Roof:
    """A capacity per second with a datasheet and/or a measured value."""

    datasheet: float | None
    measured: float | None = None
    source: str = ""
    measured_source: str = ""
    measured_clock_hz: float | None = None  # the locked SM clock the measured value was taken at
    # The SM clock the values are stated at (the peak's, its unit's or the machine's);
    # None for a roof that does not follow the SM clock (device memory, links, power).
    clock_hz: float | None = None
    # Measured with clocks free to boost (e.g. power-limited): used as is, never rescaled.
    measured_unlocked: bool = False
    measured_near_clock_hz: float | None = None  # unlocked: the clock it ran near
    measured_power_w: float | None = None  # unlocked: the power limit it ran under

    def clock_factor(self, clock_hz: float | None, basis: Basis = "measured") -> float:
        """How much the roof's value (on ``basis``) scales at SM clock ``clock_hz``.

        1 when the clock is unknown, the roof does not follow the SM clock, or the
        value used is a measurement taken with unlocked clocks (it has no single
        clock to scale from); else ``clock_hz`` over the clock the value is stated at.
        """
        if clock_hz is None or self.clock_hz is None:
            return 1.0
        if self.measured_unlocked and basis == "measured" and self.measured is not None:
            return 1.0
        return clock_hz / self.clock_hz

    @property
    def conditions_clock_hz(self) -> float | None:
        """The clock an unlocked measurement ran near (default: the roof's own clock, the
        boost clock its unit reaches: NVIDIA caps H100 tensor work at 1830 MHz)."""
        if not self.measured_unlocked:
            return None
        return self.measured_near_clock_hz or self.clock_hz

    def value(self, basis: Basis = "measured") -> float:
        """The measured value where present (basis 'measured'), else the datasheet one."""
        if basis == "measured" and self.measured is not None:
            return self.measured
        if self.datasheet is not None:
            return self.datasheet
        assert self.measured is not None  # the schema requires one of the two
        return self.measured

    @property
    def basis(self) -> Basis:
        return "measured" if self.measured is not None else "datasheet"


@dataclass(frozen=True)
class SubCeiling:
    id: str
    name: str
    precision: str
    value: Roof


@dataclass(frozen=True)
class ComputeUnit:
    id: str
    name: str
    kind: str
    peaks: dict[str, Roof]  # precision -> FLOP/s (or OP/s for int*, transcendental)
    ceilings: tuple[SubCeiling, ...] = ()
    clock_scaled: bool = True
    clock_hz: float | None = None  # the clock its peaks assume unless a peak states its own
    # precision -> J/FLOP (J/OP for int*) of this unit; overrides Power.energy_per_flop_j
    energy_per_flop_j: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class MemoryLevel:
    id: str
    name: str
    role: Role
    bandwidth: Roof  # B/s
    transaction_size_b: float | None = None
    capacity_b: float | None = None
    clock_scaled: bool = False


@dataclass(frozen=True)
class Link:
    id: str
    name: str
    kind: str
    bandwidth_per_direction: Roof  # B/s one way
    latency_s: float | None = None


@dataclass(frozen=True)
class Power:
    limit: Roof  # W
    # Choi's constant power under load (pi0), W; None when the machine does not state it
    constant_w: float | None = None
    energy_per_flop_j: dict[str, float] = field(default_factory=dict)  # precision -> J/FLOP
    energy_per_byte_j: dict[str, float] = field(default_factory=dict)  # level -> J/B
    fit: dict[str, object] | None = None  # provenance written by `roofgen fit energy`

    def energy_per_flop(self, unit: ComputeUnit, precision: str) -> float | None:
        """J per FLOP (OP) of ``precision`` on ``unit``: the unit's own coefficient,
        else the machine's for that precision; None when neither is stated."""
        own = unit.energy_per_flop_j.get(precision)
        return own if own is not None else self.energy_per_flop_j.get(precision)


@dataclass(frozen=True)
class Issue:
    sms: int
    schedulers_per_sm: int
    warp_size: int = 32

    def rate_per_s(self, clock_hz: float) -> float:
        """Warp instructions per second: SMs x schedulers x clock (one issue per cycle)."""
        return self.sms * self.schedulers_per_sm * clock_hz


@dataclass(frozen=True)
class Runtime:
    launch_overhead_s: float | None = None
    graph_launch_overhead_s: float | None = None
    sync_overhead_s: float | None = None
    pdl_launch_overhead_s: float | None = None  # programmatic dependent launch

    def launch_cost_s(self, mechanism: str) -> float | None:
        """Cost of one launch by ``mechanism``: 'stream', 'graph' or 'pdl'."""
        return {
            "stream": self.launch_overhead_s,
            "graph": self.graph_launch_overhead_s,
            "pdl": self.pdl_launch_overhead_s,
        }.get(mechanism)


@dataclass(frozen=True)
class Machine:
    id: str
    name: str
    sm_clock_hz: float
    compute: tuple[ComputeUnit, ...]
    memory: tuple[MemoryLevel, ...]  # far to near
    links: tuple[Link, ...] = ()
    power: Power | None = None
    issue: Issue | None = None
    runtime: Runtime | None = None
    memory_clock_hz: float | None = None
    base_sm_clock_hz: float | None = None
    version: int | None = None
    vendor: str = ""
    description: str = ""
    file: str = ""

    def unit(self, unit_id: str) -> ComputeUnit | None:
        return next((u for u in self.compute if u.id == unit_id), None)

    def level(self, level_id: str) -> MemoryLevel | None:
        return next((m for m in self.memory if m.id == level_id), None)

    def link(self, link_id: str) -> Link | None:
        return next((k for k in self.links if k.id == link_id), None)

    @cached_property
    def device_level(self) -> MemoryLevel | None:
        """The machine's device memory (HBM, GDDR, DRAM): the first level whose role is
        ``device``, i.e. the farthest (levels run far to near); None if none has it.

        The one answer to "which level is the device": the operator model's compulsory
        bytes, the device-memory intensity, the memory-bound facts and the pages all read
        it, so a machine that names two device levels is read the same way everywhere.
        """
        return next((level for level in self.memory if level.role == "device"), None)


Statistic = Literal["median", "mean"]


@dataclass(frozen=True)
class TimeStats:
    """The time of one launch over its timed repeats: ``value_s`` is the median (with
    its quartiles or a confidence interval) or the mean (with its standard deviation),
    as ``statistic`` says; every analysis uses ``value_s`` and names the statistic."""

    value_s: float
    statistic: Statistic = "median"
    std_s: float | None = None  # spread of a mean
    min_s: float | None = None
    max_s: float | None = None
    q1_s: float | None = None
    q3_s: float | None = None
    ci_low_s: float | None = None
    ci_high_s: float | None = None
    repeats: int | None = None
    warmup: int | None = None


@dataclass(frozen=True)
class Collective:
    """A collective operation over one link (communication roofline)."""

    kind: str  # all-reduce, reduce-scatter, all-gather, all-to-all, broadcast, reduce, send-recv
    bytes_b: float  # the size as nccl-tests counts it
    ranks: int
    link: str
    topology: str = ""
    bus_factor: float | None = None  # given in the spec (in-network reduction); else by kind
    algorithm: str = "ring"  # ring or tree: how many latencies it pays
    sms: int | None = None  # SMs the collective's kernel occupies


@dataclass(frozen=True)
class Sparsity:
    """Structured sparsity of a launch's tensor-core work (sparse roofline)."""

    pattern: str  # "2:4"
    metadata_b: float | None = None  # index and metadata bytes, part of the device bytes


@dataclass(frozen=True)
class Measurement:
    time: TimeStats
    timing: str | None = None
    sm_clock_hz: float | None = None
    memory_clock_hz: float | None = None
    flops: dict[str, dict[str, float]] | None = None  # unit -> precision -> FLOP (or OP)
    model_flops: dict[str, dict[str, float]] | None = None
    bytes: dict[str, float] | None = None  # level -> bytes moved
    instructions: float | None = None  # warp instructions
    transactions: dict[str, float] | None = None
    link_bytes: dict[str, tuple[float, float]] | None = None  # link -> (out, in)
    energy_j: float | None = None
    average_power_w: float | None = None
    launches: int | None = None
    syncs: int | None = None
    graph: bool = False
    launch_mechanism: str | None = None  # stream, graph or pdl; None: graph if graph else stream
    global_ldst_instructions: float | None = None  # warp instructions
    global_transactions: float | None = None  # sectors requested by them
    shared_ldst_instructions: float | None = None  # warp instructions
    shared_wavefronts: float | None = None
    collectives: tuple[Collective, ...] = ()
    sparsity: Sparsity | None = None
    grid: tuple[int, ...] | None = None
    block: tuple[int, ...] | None = None
    occupancy: float | None = None
    waves: float | None = None
    notes: str = ""
    accepted: dict[str, str] = field(default_factory=dict)  # plausibility rule id -> reason

    @property
    def mechanism(self) -> str:
        """How the kernels were launched: 'stream', 'graph' or 'pdl'."""
        return self.launch_mechanism or ("graph" if self.graph else "stream")


@dataclass(frozen=True)
class Operator:
    kind: str
    shape: dict[str, int | str | bool] = field(default_factory=dict)
    phase: str | None = None
    causal: bool | str | None = None  # true, or where the diagonal starts: "top-left", ...


@dataclass(frozen=True)
class Kernel:
    id: str
    name: str
    operator: Operator
    dtypes: dict[str, str] = field(default_factory=dict)
    units: tuple[str, ...] = ()
    description: str = ""


@dataclass(frozen=True)
class SweepPoint:
    """One shape of a launch measured over several shapes (a shape sweep)."""

    shape: dict[str, int | str | bool]  # keys that replace the kernel's shape keys
    measurement: Measurement
    weight: float | None = None  # how often the shape occurs in production (relative)
    label: str = ""


@dataclass(frozen=True)
class Launch:
    kernel: str
    calls: int
    measurement: Measurement
    overlap: bool | None = None  # communication overlaps compute (None: the variant's, else yes)
    # With overlap false and several links: their transfers run at the same time (the
    # longest adds) or one after another (their times add).
    links_overlap: bool = True
    # A shape sweep: the measurement above is then the sweep's weighted mean per call.
    sweep: tuple[SweepPoint, ...] = ()


@dataclass(frozen=True)
class Variant:
    id: str
    name: str
    machine: str
    launches: tuple[Launch, ...]
    description: str = ""
    overlap: bool | None = None  # default for the launches' overlap
    label: bool = False  # labelled directly in the charts, beside baseline and best


@dataclass(frozen=True)
class MachineRef:
    id: str
    version: int | None = None


@dataclass(frozen=True)
class Case:
    id: str
    title: str
    machines: tuple[MachineRef, ...]
    kernels: tuple[Kernel, ...]
    variants: tuple[Variant, ...]
    summary: str = ""
    date: str = ""
    owners: tuple[str, ...] = ()
    status: str = ""
    tags: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    links: dict[str, str] = field(default_factory=dict)
    narrative: dict[str, str] = field(default_factory=dict)
    method: dict[str, str] = field(default_factory=dict)
    end_to_end_s: dict[str, float] = field(default_factory=dict)
    end_to_end_notes: dict[str, str] = field(default_factory=dict)
    file: str = ""

    def kernel(self, kernel_id: str) -> Kernel | None:
        return next((k for k in self.kernels if k.id == kernel_id), None)


@dataclass(frozen=True)
class Specs:
    """Everything loaded from a set of spec files."""

    machines: dict[str, Machine]
    cases: tuple[Case, ...]
