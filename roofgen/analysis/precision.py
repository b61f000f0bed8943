"""The precision (tensor-core) roofline: each launch's work per unit and precision, and
what moving its tensor-core work, or a decode's KV cache, to a lower precision would
give. Pure.

Precisions on one unit share its time (BF16 and FP8 matrix work both run on the tensor
cores); different units run concurrently. A lower precision runs the work at its own
peak and shrinks the operand tensors; accumulators and FP32 statistics keep their size.
A KV cache stored at a lower precision (dequantised in registers) shrinks K and V only:
the arithmetic keeps its precision, and decode, which reads the whole cache for little
work, gains where it is memory-bound.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from roofgen.analysis.bounds import Bounds, level_bytes
from roofgen.analysis.inputs import LaunchInputs
from roofgen.model import Basis, Kernel, Launch, Machine, Measurement
from roofgen.operators.models import KV_CACHE, operator_model

__all__ = [
    "ACCUMULATOR_KEYS",
    "PRECISION_BITS",
    "PrecisionOption",
    "PrecisionResult",
    "PrecisionWork",
    "KV_CACHE_TARGETS",
    "byte_scale",
    "kv_cache_scale",
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
#: The storage types a decode's KV cache is offered at, where narrower than its own
#: (FP8 KV caches: vLLM, TensorRT-LLM, SGLang; FP4: TensorRT-LLM's NVFP4 on Blackwell).
KV_CACHE_TARGETS = ("fp8", "fp4")


@dataclass(frozen=True)
class PrecisionWork:
    """A launch's work on one unit at one precision (one point of the precision roofline).

    ``work``: FLOP (OP for integer and transcendental work) of one call;
    ``intensity_per_byte``: work per device-memory byte (``None`` when the device bytes
    are unknown or zero); ``rate_per_s``: work / measured time; ``peak_per_s``: the
    unit's peak at that precision (measured where present) at the launch's SM clock, as
    the bounds scale it; ``clock_hz``: that clock (None: the roof at the clock it is
    stated at, because the launch's clock is unknown or the roof does not follow it);
    ``share_of_peak``: the rate over the peak.
    """

    unit: str
    precision: str
    work: float
    intensity_per_byte: float | None
    rate_per_s: float
    peak_per_s: float
    share_of_peak: float
    clock_hz: float | None = None


def precision_work(machine: Machine, m: Measurement) -> tuple[PrecisionWork, ...]:
    """Every unit and precision the launch has positive work on, by unit then precision."""
    if m.flops is None:
        return ()
    device = machine.device_level
    moved = level_bytes(device, m) if device is not None else None
    t = m.time.value_s
    out = []
    for unit_id, by_precision in sorted(m.flops.items()):
        unit = machine.unit(unit_id)
        if unit is None:
            continue
        for precision, amount in sorted(by_precision.items()):
            if amount <= 0:
                continue
            roof = unit.peaks[precision]
            factor = roof.clock_factor(m.sm_clock_hz, roof.basis)
            peak = roof.value() * factor
            out.append(
                PrecisionWork(
                    unit_id,
                    precision,
                    amount,
                    amount / moved if moved else None,
                    amount / t,
                    peak,
                    amount / peak / t,
                    m.sm_clock_hz if factor != 1.0 or roof.clock_hz == m.sm_clock_hz else None,
                )
            )
    return tuple(out)


@dataclass(frozen=True)
class PrecisionOption:
    """What moving one unit's work (``moves`` "work"), or a decode's KV cache (``moves``
    "kv-cache"), from ``from_precision`` to ``to_precision`` would give.

    Work runs at the lower precision's peak; every memory level's bytes scale by
    ``byte_scale`` (operand tensors shrink, accumulators and FP32 statistics do not;
    for the KV cache, K and V only); other resources keep their time. ``compute_s``:
    the unit's new time (s; ``None`` for the KV cache, whose arithmetic does not
    change); ``bound_s``: the launch's new bound (s); ``binding``: the resource that
    would bind; ``speedup``: the current bound over the new one. ``available`` is False
    when the machine has no such roof on the unit (then the times are ``None``).
    """

    unit: str | None  # None for the KV cache: no unit's work moves
    from_precision: str
    to_precision: str
    available: bool
    compute_s: float | None
    byte_scale: float | None
    bound_s: float | None
    binding: str | None
    speedup: float | None
    moves: str = "work"


def _storage(dtype: str) -> str:
    return "fp8" if dtype.startswith("fp8") else dtype


def _stored(kernel: Kernel | None) -> dict[str, tuple[float, str]] | None:
    """Each tensor's elements and stored type from the operator model (attention's K and
    V at the KV cache's type); None without a model or with a tensor of unknown type."""
    if kernel is None:
        return None
    op = kernel.operator
    model = operator_model(op.kind, op.shape, kernel.dtypes, phase=op.phase, causal=op.causal).model
    if model is None or model.untyped:
        return None
    return {t.name: (t.elements, _storage(str(t.dtype))) for t in model.tensors}


def _scaled(
    stored: dict[str, tuple[float, str]], shrinks: Callable[[str, str], bool], to: str
) -> float | None:
    """New bytes over old when the tensors that ``shrinks(name, dtype)`` are stored in
    ``to``; each tensor weighs its elements times its bits."""
    old = new = 0.0
    for name, (elements, dtype) in stored.items():
        bits = PRECISION_BITS.get(dtype, 16)
        old += elements * bits
        new += elements * (PRECISION_BITS[to] if shrinks(name, dtype) else bits)
    return new / old if old else None


def _shrinks_from(precision: str) -> Callable[[str, str], bool]:
    """Whether a tensor stored in ``dtype`` shrinks when work moves off ``precision``."""

    def shrinks(name: str, dtype: str) -> bool:
        return dtype == precision or (precision in ("bf16", "fp16") and dtype in ("bf16", "fp16"))

    return shrinks


def byte_scale(kernel: Kernel | None, from_precision: str, to_precision: str) -> float:
    """Factor on the bytes when tensors stored in ``from_precision`` are stored in
    ``to_precision``; tensors of other types and accumulators keep their size.

    Each tensor's share of the traffic is its elements times its bits, both from the
    operator model (a decode's query is one token, its keys the whole cache); a kernel
    without a model gives each tensor named in its dtypes an equal share of elements. A
    kernel without dtypes is taken to store everything in ``from_precision``.
    """
    ratio = PRECISION_BITS[to_precision] / PRECISION_BITS[from_precision]
    stored = _stored(kernel)
    if stored is None:
        stored = {
            k: (1.0, _storage(v))
            for k, v in (kernel.dtypes if kernel else {}).items()
            if k not in ACCUMULATOR_KEYS and k != KV_CACHE
        }
    scale = _scaled(stored, _shrinks_from(from_precision), to_precision)
    return ratio if scale is None else scale


def kv_cache_scale(kernel: Kernel | None, to_precision: str) -> float | None:
    """Factor on the bytes when an attention kernel's K and V are stored in
    ``to_precision``, everything else as it is; None without an attention model."""
    stored = _stored(kernel)
    if kernel is None or kernel.operator.kind != "attention" or stored is None:
        return None
    return _scaled(stored, lambda name, dtype: name in ("k", "v"), to_precision)


def _kv_cache_options(
    launch: Launch, kernel: Kernel | None, bounds: Bounds
) -> list[PrecisionOption]:
    """A decode's KV cache stored at each narrower type of ``KV_CACHE_TARGETS``."""
    stored = _stored(kernel)
    if kernel is None or kernel.operator.phase != "decode" or stored is None:
        return []
    types = {stored[name][1] for name in ("k", "v") if name in stored}
    if len(types) != 1 or not any(r.startswith("memory.") for r in bounds.seconds):
        return []
    (current,) = types
    out = []
    for target in KV_CACHE_TARGETS:
        if PRECISION_BITS[target] >= PRECISION_BITS.get(current, 16):
            continue
        scale = kv_cache_scale(kernel, target)
        if scale is None:
            continue
        bound, binding, speedup = _rebound(bounds, {}, scale)
        out.append(
            PrecisionOption(
                None, current, target, True, None, scale, bound, binding, speedup, "kv-cache"
            )
        )
    return out


def _rebound(
    bounds: Bounds, compute: dict[str, float], scale: float
) -> tuple[float | None, str | None, float | None]:
    """The bound, binding resource and speedup with ``compute`` times replaced and every
    memory level's time scaled by ``scale``."""
    seconds = {**bounds.seconds, **compute}
    for resource in seconds:
        if resource.startswith("memory."):
            seconds[resource] *= scale
    new = replace(bounds, seconds=seconds)
    bound, ranked, current = new.bound_s, new.ranked(), bounds.bound_s
    return (
        bound,
        ranked[0][0] if ranked else None,
        current / bound if current and bound else None,
    )


def precision_options(
    machine: Machine, launch: Launch, kernel: Kernel | None, bounds: Bounds, basis: Basis
) -> list[PrecisionOption]:
    """For the dense work on each tensor-core unit: every lower precision the unit has,
    and FP8 (marked not available) where it has none; then, for a decode, its KV cache
    at each narrower type of ``KV_CACHE_TARGETS``."""
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
    return out + _kv_cache_options(launch, kernel, bounds)


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
    bound, binding, speedup = _rebound(bounds, {name: compute}, scale)
    return PrecisionOption(
        unit_id, precision, target, True, compute, scale, bound, binding, speedup
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
