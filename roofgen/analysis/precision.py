"""The precision (tensor-core) roofline: each launch's work per unit and precision, and
what moving its tensor-core work to a lower precision would give. Pure.

Precisions on one unit share its time (BF16 and FP8 matrix work both run on the tensor
cores); different units run concurrently. A lower precision runs the work at its own
peak and shrinks the operand tensors; accumulators and FP32 statistics keep their size.
"""

from __future__ import annotations

from dataclasses import dataclass

from roofgen.analysis.bounds import Bounds, level_bytes
from roofgen.analysis.inputs import LaunchInputs, device_level
from roofgen.model import Basis, Kernel, Launch, Machine, Measurement

__all__ = [
    "ACCUMULATOR_KEYS",
    "PRECISION_BITS",
    "PrecisionOption",
    "PrecisionResult",
    "PrecisionWork",
    "byte_scale",
    "precision_options",
    "precision_work",
]

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
class PrecisionWork:
    """A launch's work on one unit at one precision (one point of the precision roofline).

    ``work``: FLOP (OP for integer and transcendental work) of one call;
    ``intensity_per_byte``: work per device-memory byte (``None`` when the device bytes
    are unknown or zero); ``rate_per_s``: work / measured time; ``peak_per_s``: the
    unit's peak at that precision (measured where present); ``share_of_peak``: the rate
    over the peak.
    """

    unit: str
    precision: str
    work: float
    intensity_per_byte: float | None
    rate_per_s: float
    peak_per_s: float
    share_of_peak: float


def precision_work(machine: Machine, m: Measurement) -> tuple[PrecisionWork, ...]:
    """Every unit and precision the launch has positive work on, by unit then precision."""
    if m.flops is None:
        return ()
    device = device_level(machine)
    moved = level_bytes(device, m) if device is not None else None
    t = m.time.median_s
    out = []
    for unit_id, by_precision in sorted(m.flops.items()):
        unit = machine.unit(unit_id)
        if unit is None:
            continue
        for precision, amount in sorted(by_precision.items()):
            if amount <= 0:
                continue
            peak = unit.peaks[precision].value()
            out.append(
                PrecisionWork(
                    unit_id,
                    precision,
                    amount,
                    amount / moved if moved else None,
                    amount / t,
                    peak,
                    amount / peak / t,
                )
            )
    return tuple(out)


@dataclass(frozen=True)
class PrecisionOption:
    """What moving one unit's work from ``from_precision`` to ``to_precision`` would give.

    The work runs at the lower precision's peak; every memory level's bytes scale by
    ``byte_scale`` (operand tensors shrink, accumulators and FP32 statistics do not);
    other resources keep their time. ``compute_s``: the unit's new time (s);
    ``bound_s``: the launch's new bound (s); ``binding``: the resource that would bind;
    ``speedup``: the current bound over the new one. ``available`` is False when the
    machine has no such roof on the unit (then the times are ``None``).
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
    new = Bounds(seconds, bounds.unknown, bounds.basis, bounds.added, bounds.links_overlap)
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


@dataclass(frozen=True)
class PrecisionResult:
    """The precision roofline of one launch: its work per unit and precision, and its
    tensor-core work moved to every lower precision (measured roofs where present)."""

    work: tuple[PrecisionWork, ...]
    options: tuple[PrecisionOption, ...]

    @classmethod
    def of(cls, inputs: LaunchInputs) -> PrecisionResult:
        return cls(
            precision_work(inputs.machine, inputs.measurement),
            tuple(
                precision_options(
                    inputs.machine, inputs.launch, inputs.kernel, inputs.bounds, "measured"
                )
            ),
        )
