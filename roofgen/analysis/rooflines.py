"""The other rooflines of the resource model: instruction, communication, energy,
precision, sparse and runtime. Pure functions of model objects and bounds.

Each classic chart is a 2-D projection of the same resource table (demand /
capacity per resource). This module computes what those projections need beyond
the bounds themselves: the instruction roofline's ceilings and walls (Ding and
Williams, PMBS 2019), the cost of each collective, the energy model of Choi,
Bedard, Fowler and Vuduc (IPDPS 2013), what a lower precision would give, the two
points of a 2:4 sparse launch, the runtime floor of a step, and the facts a
recommendation reads ("launch-bound", "power-limited").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from roofgen.analysis.bounds import Bounds, Thresholds, level_bytes
from roofgen.analysis.comm import bus_bytes, bus_factor, collective_seconds, half_bandwidth_size
from roofgen.model import Basis, Kernel, Launch, Machine, Measurement, Variant

__all__ = [
    "ACCUMULATOR_KEYS",
    "CollectiveCost",
    "EnergyResult",
    "InstructionCeilings",
    "InstructionPoint",
    "PRECISION_BITS",
    "PrecisionOption",
    "RuntimeFloor",
    "SparsePoint",
    "collective_costs",
    "energy_result",
    "instruction_ceilings",
    "instruction_points",
    "launch_facts",
    "launch_floor_s",
    "power_limited",
    "precision_options",
    "runtime_floor",
    "sparse_points",
    "variant_facts",
]

#: Shared memory has 32 banks of 4 bytes on every GPU roofgen knows (NVIDIA, AMD CDNA).
SHARED_BANKS = 32
#: Average power at or above this fraction of the limit counts as "at the limit".
POWER_AT_LIMIT = 0.95

# --------------------------------------------------------------------- instruction roofline


@dataclass(frozen=True)
class InstructionCeilings:
    """The instruction roofline of a machine (Ding and Williams).

    ``issue_per_s``: warp instructions per second, SMs x schedulers x clock.
    ``transactions_per_s``: level id -> transactions per second, bandwidth / transaction
    size (the slanted walls: warp GIPS = intensity x GTXN/s). ``global_walls`` and
    ``shared_walls``: (label, warp instructions per transaction) of the access patterns,
    derived from the warp width and the L1 transaction (sector) size.
    """

    warp_size: int
    issue_per_s: float
    transactions_per_s: dict[str, float]
    transaction_size_b: dict[str, float]
    global_walls: tuple[tuple[str, float], ...]
    shared_walls: tuple[tuple[str, float], ...]


def _sector_b(machine: Machine) -> float:
    for role in ("l1", "llc", "device"):
        for level in machine.memory:
            if level.role == role and level.transaction_size_b:
                return level.transaction_size_b
    return 32.0


def access_walls(warp_size: int, sector_b: float) -> tuple[tuple[str, float], ...]:
    """Global load/store walls: warp instructions per transaction of each access pattern.

    A warp instruction touches ``warp_size`` words. Every thread on one address
    (stride 0) is one transaction; unit stride over w-byte words needs
    ``warp_size x w / sector`` sectors; a stride of a sector or more needs one sector
    per thread. With 32 threads and 32-byte sectors: 1, 1/4 (4 B), 1/8 (8 B), 1/16
    (16 B) and 1/32.
    """
    walls = [("stride 0", 1.0)]
    for word in (4, 8, 16):
        sectors = max(warp_size * word / sector_b, 1.0)
        walls.append((f"unit stride, {word}-byte words", 1.0 / sectors))
    walls.append((f"stride >= {sector_b:g} B", 1.0 / warp_size))
    return tuple(walls)


def shared_walls(warp_size: int) -> tuple[tuple[str, float], ...]:
    """Shared-memory walls: warp instructions per wavefront.

    Without bank conflicts a warp's 4-byte accesses need ``warp_size / 32`` wavefronts
    (one on NVIDIA, two for a 64-wide AMD wavefront); when every thread hits one bank
    at different addresses, one wavefront per thread.
    """
    free = max(warp_size / SHARED_BANKS, 1.0)
    return (
        ("shared, no bank conflict", 1.0 / free),
        (f"shared, {warp_size}-way bank conflict", 1.0 / warp_size),
    )


def instruction_ceilings(machine: Machine, basis: Basis = "measured") -> InstructionCeilings | None:
    """The machine's instruction ceilings; ``None`` without an ``issue`` section."""
    if machine.issue is None:
        return None
    rates: dict[str, float] = {}
    sizes: dict[str, float] = {}
    for level in machine.memory:
        if level.transaction_size_b:
            rates[level.id] = level.bandwidth.value(basis) / level.transaction_size_b
            sizes[level.id] = level.transaction_size_b
    warp = machine.issue.warp_size
    return InstructionCeilings(
        warp_size=warp,
        issue_per_s=machine.issue.rate_per_s(machine.sm_clock_hz),
        transactions_per_s=rates,
        transaction_size_b=sizes,
        global_walls=access_walls(warp, _sector_b(machine)),
        shared_walls=shared_walls(warp),
    )


@dataclass(frozen=True)
class InstructionPoint:
    """A launch on the instruction roofline.

    ``level``: a memory level id, or ``"global"`` / ``"shared"`` for the access-pattern
    points (load/store instructions per global transaction, per shared wavefront).
    ``intensity``: warp instructions per transaction; ``warp_ips``: warp instructions
    per second (all instructions for levels, load/store instructions for patterns).
    """

    level: str
    transactions: float
    instructions: float
    intensity: float
    warp_ips: float


def _transactions(machine: Machine, m: Measurement, level_id: str) -> float | None:
    if m.transactions and level_id in m.transactions:
        return m.transactions[level_id]
    level = machine.level(level_id)
    if level is None or not level.transaction_size_b:
        return None
    moved = level_bytes(level, m)
    return None if moved is None else moved / level.transaction_size_b


def instruction_points(machine: Machine, m: Measurement) -> list[InstructionPoint]:
    """Points of one launch: one per memory level with known transactions (L1 adds the
    shared wavefronts), then the global and shared access-pattern points."""
    t = m.time.median_s
    out: list[InstructionPoint] = []
    if m.instructions:
        for level in machine.memory:
            txn = _transactions(machine, m, level.id)
            if txn is None:
                continue
            if level.role == "l1" and m.shared_wavefronts:
                txn += m.shared_wavefronts
            if txn > 0:
                out.append(
                    InstructionPoint(
                        level.id, txn, m.instructions, m.instructions / txn, m.instructions / t
                    )
                )
    for name, inst, txn in (
        ("global", m.global_ldst_instructions, m.global_transactions),
        ("shared", m.shared_ldst_instructions, m.shared_wavefronts),
    ):
        if inst and txn:
            out.append(InstructionPoint(name, txn, inst, inst / txn, inst / t))
    return out


# ------------------------------------------------------------------- communication roofline


@dataclass(frozen=True)
class CollectiveCost:
    """One collective's cost on its link: ``latency_s + bus_b / bandwidth`` seconds."""

    kind: str
    ranks: int
    link: str
    topology: str
    size_b: float
    factor: float
    bus_b: float
    bandwidth_b_per_s: float
    latency_s: float
    bound_s: float
    regime: str  # "latency-bound" or "bandwidth-bound"


def collective_costs(
    machine: Machine, m: Measurement, basis: Basis = "measured"
) -> list[CollectiveCost]:
    out = []
    for c in m.collectives:
        link = machine.link(c.link)
        if link is None:
            continue
        bw = link.bandwidth_per_direction.value(basis)
        latency = link.latency_s or 0.0
        moved = bus_bytes(c)
        ridge = half_bandwidth_size(link, bw)
        out.append(
            CollectiveCost(
                kind=c.kind,
                ranks=c.ranks,
                link=c.link,
                topology=c.topology,
                size_b=c.bytes_b,
                factor=bus_factor(c),
                bus_b=moved,
                bandwidth_b_per_s=bw,
                latency_s=latency,
                bound_s=collective_seconds(c, link, bw),
                regime="latency-bound"
                if ridge is not None and moved < ridge
                else "bandwidth-bound",
            )
        )
    return out


def link_bytes_by_link(m: Measurement) -> dict[str, float]:
    """Bytes each way over each link: the busier direction plus the collectives' bus bytes."""
    out = {k: max(v) for k, v in (m.link_bytes or {}).items()}
    for c in m.collectives:
        out[c.link] = out.get(c.link, 0.0) + bus_bytes(c)
    return out


# -------------------------------------------------------------------------- energy roofline


@dataclass(frozen=True)
class EnergyResult:
    """Energy of one call of a launch (J).

    ``measured_j``: the measured energy, or average power x time. ``dynamic_j``: the
    model's e_flop x FLOPs + sum of e_byte x bytes; ``idle_j``: idle power x measured
    time; ``modelled_j`` their sum (Choi et al.: energy = work + constant power x time).
    """

    measured_j: float | None
    dynamic_j: float | None
    idle_j: float | None
    modelled_j: float | None
    average_power_w: float | None
    flop: float | None

    @property
    def energy_j(self) -> float | None:
        """The measured energy where there is one, else the model's."""
        return self.measured_j if self.measured_j is not None else self.modelled_j

    @property
    def flop_per_j(self) -> float | None:
        energy = self.energy_j
        return self.flop / energy if self.flop and energy else None


def _flop(m: Measurement) -> float | None:
    if m.flops is None:
        return None
    total = 0.0
    for by_precision in m.flops.values():
        for precision, work in by_precision.items():
            base = precision.removesuffix("-sparse")
            if not (base.startswith("int") or base == "transcendental"):
                total += work
    return total


def energy_result(machine: Machine, m: Measurement) -> EnergyResult:
    from roofgen.analysis.bounds import dynamic_energy_j

    t = m.time.median_s
    measured = m.energy_j
    if measured is None and m.average_power_w is not None:
        measured = m.average_power_w * t
    power = (
        m.average_power_w
        if m.average_power_w is not None
        else (measured / t if measured is not None else None)
    )
    dynamic = dynamic_energy_j(machine, m)
    idle = machine.power.idle_w * t if machine.power is not None and machine.power.idle_w else None
    modelled = None
    if dynamic is not None:
        modelled = dynamic + (idle or 0.0)
    return EnergyResult(measured, dynamic, idle, modelled, power, _flop(m))


def power_limited(machine: Machine, m: Measurement) -> bool:
    """A launch held back by the power limit, recognised by what it leaves behind: the
    SM clock below the clock the roofs are stated at while average power sits at the
    limit (within ``POWER_AT_LIMIT``). Measured energy alone can never show it."""
    if machine.power is None or m.sm_clock_hz is None:
        return False
    energy = energy_result(machine, m)
    if energy.average_power_w is None:
        return False
    at_limit = energy.average_power_w >= POWER_AT_LIMIT * machine.power.limit.value("datasheet")
    return at_limit and m.sm_clock_hz < machine.sm_clock_hz


# ------------------------------------------------------------------------ precision roofline

#: Bits per stored element. TF32 is computed in 19 bits but stored as FP32.
PRECISION_BITS = {
    "fp64": 64,
    "fp32": 32,
    "tf32": 32,
    "bf16": 16,
    "fp16": 16,
    "fp8": 8,
    "int8": 8,
    "fp6": 6,
    "fp4": 4,
    "int4": 4,
    "int32": 32,
    "bool": 8,
}
#: Lower is narrower: the precisions a precision can move down to.
_RANK = {
    "fp64": 0,
    "fp32": 1,
    "tf32": 2,
    "bf16": 3,
    "fp16": 3,
    "fp8": 4,
    "int8": 4,
    "fp6": 5,
    "fp4": 6,
    "int4": 6,
}
#: dtype keys that name accumulators held in registers: they move no bytes and never shrink.
ACCUMULATOR_KEYS = frozenset({"accumulator", "accumulate", "accum", "acc"})


@dataclass(frozen=True)
class PrecisionOption:
    """What moving one unit's work from ``from_precision`` to ``to_precision`` would give.

    The work runs at the lower precision's peak; every memory level's bytes scale by
    ``byte_scale`` (operand tensors shrink, accumulators and FP32 statistics do not);
    other resources keep their time. ``available`` is False when the machine has no
    such roof on the unit (then the times are ``None``).
    """

    unit: str
    from_precision: str
    to_precision: str
    available: bool
    compute_s: float | None
    byte_scale: float | None
    bound_s: float | None
    binding: str | None
    speedup: float | None


def _storage(dtype: str) -> str:
    return "fp8" if dtype.startswith("fp8") else dtype


def _tensor_elements(kernel: Kernel) -> dict[str, float]:
    """Elements per tensor from the operator's shape, where its kind says how."""
    shape = {k: v for k, v in kernel.operator.shape.items() if isinstance(v, int)}
    kind = kernel.operator.kind
    if kind in ("gemm", "batched-gemm") and {"m", "n", "k"} <= set(shape):
        m, n, k, b = shape["m"], shape["n"], shape["k"], shape.get("batch", 1)
        return {"a": b * m * k, "b": b * k * n, "c": b * m * n, "d": b * m * n, "bias": b * n}
    if kind == "attention" and {"batch", "heads", "head_dim"} <= set(shape):
        b, h, d = shape["batch"], shape["heads"], shape["head_dim"]
        s = shape.get("seq", shape.get("seq_q", 1))
        kv = shape.get("kv_len", shape.get("seq_kv", s))
        hk = shape.get("kv_heads", h)
        return {
            "q": b * h * s * d,
            "o": b * h * s * d,
            "k": b * hk * kv * d,
            "v": b * hk * kv * d,
            "lse": b * h * s,
        }
    return {}


def byte_scale(kernel: Kernel | None, from_precision: str, to_precision: str) -> float:
    """Factor on the bytes when tensors stored in ``from_precision`` are stored in
    ``to_precision``; tensors of other types and accumulators keep their size.

    Each tensor's share of the traffic is taken as its share of the elements (from
    the operator's shape for GEMMs and attention, else equal shares). A kernel without
    dtypes is taken to store everything in ``from_precision``.
    """
    ratio = PRECISION_BITS[to_precision] / PRECISION_BITS[from_precision]
    tensors = {
        k: _storage(v)
        for k, v in (kernel.dtypes if kernel else {}).items()
        if k not in ACCUMULATOR_KEYS
    }
    if not tensors:
        return ratio
    elements = _tensor_elements(kernel) if kernel else {}
    known = [elements[k] for k in tensors if k in elements]
    default = sum(known) / len(known) if known else 1.0
    old = new = 0.0
    for key, dtype in tensors.items():
        weight = elements.get(key, default)
        bits = PRECISION_BITS.get(dtype, 16)
        shrinks = dtype == from_precision or (
            from_precision in ("bf16", "fp16") and dtype in ("bf16", "fp16")
        )
        old += weight * bits
        new += weight * (PRECISION_BITS[to_precision] if shrinks else bits)
    return new / old if old else ratio


def precision_options(
    machine: Machine, launch: Launch, kernel: Kernel | None, bounds: Bounds, basis: Basis
) -> list[PrecisionOption]:
    """For the dense work on each tensor-core unit: every lower precision the unit has,
    and FP8 (marked not available) where it has none."""
    m = launch.measurement
    out: list[PrecisionOption] = []
    for unit in machine.compute:
        work = (m.flops or {}).get(unit.id, {})
        if unit.kind != "tensor" or f"compute.{unit.id}" not in bounds.seconds:
            continue
        for precision, flop in sorted(work.items()):
            if flop <= 0 or precision not in _RANK:
                continue
            lower = [p for p in unit.peaks if p in _RANK and _RANK[p] > _RANK[precision]]
            if _RANK[precision] < _RANK["fp8"] and "fp8" not in lower:
                lower.append("fp8")
            for target in sorted(lower, key=lambda p: (_RANK[p], p)):
                out.append(
                    _option(machine, unit.id, precision, target, work, kernel, bounds, basis)
                )
    return out


def _option(
    machine: Machine,
    unit_id: str,
    precision: str,
    target: str,
    work: dict[str, float],
    kernel: Kernel | None,
    bounds: Bounds,
    basis: Basis,
) -> PrecisionOption:
    unit = machine.unit(unit_id)
    assert unit is not None
    if target not in unit.peaks:
        return PrecisionOption(unit_id, precision, target, False, None, None, None, None, None)
    name = f"compute.{unit_id}"
    peak_from = unit.peaks[precision].value(basis)
    peak_to = unit.peaks[target].value(basis)
    # This precision's part of the unit's time, with the clock scaling the bounds used,
    # runs peak_from / peak_to times as long at the lower precision.
    part = bounds.seconds[name] * _share_of_unit(machine, unit_id, precision, work, basis)
    compute = bounds.seconds[name] - part + part * peak_from / peak_to
    scale = byte_scale(kernel, precision, target)
    seconds = dict(bounds.seconds)
    seconds[name] = compute
    for resource in seconds:
        if resource.startswith("memory."):
            seconds[resource] *= scale
    new = Bounds(seconds, bounds.unknown, bounds.basis, bounds.added)
    bound = new.bound_s
    ranked = new.ranked()
    current = bounds.bound_s
    return PrecisionOption(
        unit_id,
        precision,
        target,
        True,
        compute,
        scale,
        bound,
        ranked[0][0] if ranked else None,
        current / bound if current and bound else None,
    )


def _share_of_unit(
    machine: Machine, unit_id: str, precision: str, work: dict[str, float], basis: Basis
) -> float:
    """Fraction of the unit's time that its ``precision`` work takes."""
    unit = machine.unit(unit_id)
    assert unit is not None
    times = {p: w / unit.peaks[p].value(basis) for p, w in work.items() if p in unit.peaks}
    total = sum(times.values())
    return times.get(precision, 0.0) / total if total else 0.0


# ---------------------------------------------------------------------------- sparse roofline


@dataclass(frozen=True)
class SparsePoint:
    """A 2:4 sparse launch: executed FLOPs against the dense roof, dense-equivalent FLOPs
    against the sparse roof (which counts the skipped zeros). Both need the same time
    on the unit when the sparse peak is twice the dense one."""

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
        return self.executed_flop / self.time_s

    @property
    def dense_equivalent_flop_per_s(self) -> float:
        return self.dense_equivalent_flop / self.time_s

    @property
    def metadata_share(self) -> float | None:
        if self.metadata_b is None or not self.device_bytes:
            return None
        return self.metadata_b / self.device_bytes


def sparse_points(machine: Machine, m: Measurement, basis: Basis = "measured") -> list[SparsePoint]:
    """One point pair per sparse precision of a launch that declares 2:4 sparsity."""
    if m.sparsity is None or m.flops is None:
        return []
    device = next((lvl for lvl in machine.memory if lvl.role == "device"), None)
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
                    time_s=m.time.median_s,
                )
            )
    return out


# --------------------------------------------------------------------------- runtime roofline


def launches_per_call(m: Measurement) -> int:
    """Kernel launches of one call: the measured count, else one."""
    return m.launches if m.launches is not None else 1


@dataclass(frozen=True)
class RuntimeFloor:
    """The runtime roofline of a step (one variant): launches and syncs with their cost.

    ``floor_s`` is the launch resource's time summed over the step (``None`` when a
    launch's count or cost is unknown); ``by_mechanism`` what the same launches would
    cost as stream launches, graph nodes and PDL launches (plus the syncs).
    """

    launches: int
    syncs: int
    mechanisms: tuple[str, ...]
    time_s: float
    floor_s: float | None
    by_mechanism: dict[str, float]
    launch_bound: bool


def launch_floor_s(bounds: list[Bounds], calls: list[int]) -> float | None:
    if any("launch" not in b.seconds for b in bounds):
        return None
    return sum(c * b.seconds["launch"] for b, c in zip(bounds, calls, strict=True))


def runtime_floor(
    machine: Machine, variant: Variant, bounds: list[Bounds], t: Thresholds
) -> RuntimeFloor | None:
    rt = machine.runtime
    if rt is None:
        return None
    calls = [x.calls for x in variant.launches]
    launches = sum(
        c * launches_per_call(x.measurement) for c, x in zip(calls, variant.launches, strict=True)
    )
    syncs = sum(
        c * (x.measurement.syncs or 0) for c, x in zip(calls, variant.launches, strict=True)
    )
    time_s = sum(
        c * x.measurement.time.median_s for c, x in zip(calls, variant.launches, strict=True)
    )
    floor = launch_floor_s(bounds, calls)
    sync_s = syncs * (rt.sync_overhead_s or 0.0)
    by_mechanism = {
        mech: launches * cost + sync_s
        for mech in ("stream", "graph", "pdl")
        if (cost := rt.launch_cost_s(mech)) is not None
    }
    mechanisms = tuple(dict.fromkeys(x.measurement.mechanism for x in variant.launches))
    bound = floor is not None and floor >= (1.0 - t.co_bound_margin) * time_s
    return RuntimeFloor(launches, syncs, mechanisms, time_s, floor, by_mechanism, bound)


# ------------------------------------------------------------------------------------ facts


def launch_facts(
    machine: Machine, launch: Launch, bounds: Bounds, t: Thresholds
) -> tuple[str, ...]:
    """Facts the recommendations read: ``launch-bound`` (the launch overhead alone is within
    the co-bound margin of the measured time, or binds), ``power-limited``,
    ``communication-serial`` (link time adds to the rest), ``sparse``."""
    m = launch.measurement
    facts = []
    launch_s = bounds.seconds.get("launch")
    ranked = bounds.ranked()
    if launch_s and (
        launch_s >= (1.0 - t.co_bound_margin) * m.time.median_s
        or (ranked and ranked[0][0] == "launch")
    ):
        facts.append("launch-bound")
    if power_limited(machine, m):
        facts.append("power-limited")
    plain = max(bounds.seconds.values(), default=0.0)
    if bounds.added and (bounds.bound_s or 0.0) > 1.01 * plain:
        facts.append("communication-serial")
    if m.sparsity is not None:
        facts.append("sparse")
    return tuple(facts)


def variant_facts(floor: RuntimeFloor | None) -> tuple[str, ...]:
    return ("launch-bound",) if floor is not None and floor.launch_bound else ()


def fact_note(facts: tuple[str, ...], bounds: Bounds, m: Measurement) -> str:
    """A clause for the verdict naming the facts, with their numbers."""
    notes = []
    if "launch-bound" in facts:
        launch_s = bounds.seconds.get("launch", 0.0)
        n, syncs = launches_per_call(m), m.syncs or 0
        what = f"{n} launch{'es' if n != 1 else ''}"
        if syncs:
            what += f" and {syncs} sync{'s' if syncs != 1 else ''}"
        notes.append(
            f"launch-bound: {what} cost {launch_s * 1e6:.3g} us of {m.time.median_s * 1e6:.3g} us"
        )
    if "power-limited" in facts:
        notes.append("power-limited: SM clock below the roofs' clock with power at the limit")
    return "; ".join(notes)


def finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None
