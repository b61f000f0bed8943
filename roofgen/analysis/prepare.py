"""Launches as the analysis sees them: operator models, modelled fill-ins, sweeps. Pure.

A launch that leaves its FLOPs or its device-memory bytes out gets the operator
model's (the model FLOPs; the compulsory bytes at the device-memory level), and the
result says which values were modelled. Measured values are never replaced. A
launch measured over a shape sweep is prepared point by point, then averaged with
the sweep's weights (:mod:`roofgen.operators.sweep`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from roofgen.model import ComputeUnit, Kernel, Launch, Machine, Measurement
from roofgen.operators.models import ModelOutcome, OpModel, operator_model
from roofgen.operators.sweep import label, mean_measurement, mean_model, normalised_weights

__all__ = ["Prepared", "PreparedPoint", "kernel_model", "place_work", "prepare"]


@dataclass(frozen=True)
class PreparedPoint:
    """One shape of a sweep: its own launch (one measurement) and model."""

    label: str
    shape: dict[str, int | str | bool]  # the kernel's shape with the point's keys
    weight: float  # normalised: the weights of a sweep sum to 1
    launch: Launch
    model: OpModel | None
    modelled: tuple[str, ...]


@dataclass(frozen=True)
class Prepared:
    launch: Launch  # with modelled values filled in (a sweep: its weighted mean)
    model: OpModel | None
    model_reason: str  # why there is no model ("" when there is one)
    modelled: tuple[str, ...]  # "flops", "bytes.<level>": values taken from the model
    points: tuple[PreparedPoint, ...] = ()


def kernel_model(kernel: Kernel | None, shape: Mapping[str, object] | None = None) -> ModelOutcome:
    """The operator model of ``kernel`` (at ``shape`` when given)."""
    if kernel is None:
        return ModelOutcome(None, "unknown kernel")
    op = kernel.operator
    return operator_model(
        op.kind,
        shape if shape is not None else op.shape,
        kernel.dtypes,
        phase=op.phase,
        causal=op.causal,
    )


def _candidates(machine: Machine, kernel: Kernel) -> list[ComputeUnit]:
    listed = [u for u in machine.compute if u.id in kernel.units]
    return listed or list(machine.compute)


def _unit_for(units: list[ComputeUnit], precision: str, tensor: bool | None) -> str | None:
    """The first unit with a peak at ``precision``; tensor units first (True), last
    (False) or in order (None)."""
    with_peak = [u for u in units if precision in u.peaks]
    if tensor is not None:
        with_peak.sort(key=lambda u: (u.kind == "tensor") != tensor)
    return with_peak[0].id if with_peak else None


def place_work(
    machine: Machine, kernel: Kernel, model: OpModel
) -> dict[str, dict[str, float]] | None:
    """The model's work by unit and precision, on the kernel's units (or the machine's):
    matrix work on a tensor unit where one has the precision, vector work on a vector
    pipe, transcendentals on the unit that has them. None if some work has no unit."""
    units = _candidates(machine, kernel)
    parts = [
        (model.matrix_flop, model.matrix_precision, True),
        (model.vector_flop, model.vector_precision, False),
        (model.transcendental_op, "transcendental", None),
    ]
    work: dict[str, dict[str, float]] = {}
    for amount, precision, tensor in parts:
        if amount <= 0:
            continue
        unit = _unit_for(units, precision, tensor) if precision else None
        if unit is None:
            return None
        by_precision = work.setdefault(unit, {})
        by_precision[str(precision)] = by_precision.get(str(precision), 0.0) + amount
    return work


def _fill(
    machine: Machine, kernel: Kernel | None, m: Measurement, model: OpModel | None
) -> tuple[Measurement, tuple[str, ...]]:
    if kernel is None or model is None:
        return m, ()
    modelled: list[str] = []
    flops, moved = m.flops, m.bytes
    if flops is None:
        flops = place_work(machine, kernel, model)
        if flops is not None:
            modelled.append("flops")
    device = machine.device_level
    minimum = model.bytes_min
    if device is not None and minimum is not None and device.id not in (m.bytes or {}):
        moved = {**(m.bytes or {}), device.id: minimum}
        modelled.append(f"bytes.{device.id}")
    if not modelled:
        return m, ()
    return replace(m, flops=flops, bytes=moved), tuple(modelled)


def prepare(machine: Machine, kernel: Kernel | None, launch: Launch) -> Prepared:
    """``launch`` with what its operator model can fill in, and its sweep points."""
    if not launch.sweep:
        outcome = kernel_model(kernel)
        measurement, modelled = _fill(machine, kernel, launch.measurement, outcome.model)
        return Prepared(
            replace(launch, measurement=measurement), outcome.model, outcome.reason, modelled
        )
    weights = normalised_weights(launch.sweep)
    base = dict(kernel.operator.shape) if kernel is not None else {}
    points = []
    reasons = []
    for point, weight in zip(launch.sweep, weights, strict=True):
        shape = {**base, **point.shape}
        outcome = kernel_model(kernel, shape)
        reasons.append(outcome.reason)
        measurement, modelled = _fill(machine, kernel, point.measurement, outcome.model)
        single = replace(launch, measurement=measurement, sweep=())
        points.append(PreparedPoint(label(point), shape, weight, single, outcome.model, modelled))
    mean = mean_measurement([p.launch.measurement for p in points], weights)
    model = mean_model([p.model for p in points], weights)
    modelled = tuple(dict.fromkeys(x for p in points for x in p.modelled))
    reason = next((r for r in reasons if r), "") if model is None else ""
    return Prepared(replace(launch, measurement=mean), model, reason, modelled, tuple(points))
