"""Shape sweeps: weights, labels and the weighted mean of measurements. Pure.

A launch measured over several shapes runs, per call, the production mix of those
shapes: its time and its demands per call are the weighted means over the shape
points (weights: how often each shape occurs; equal when none are given). The mean
of the demands gives a bound no larger than the mean of the per-shape bounds, so it
is still a lower bound on the mean time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields, is_dataclass, replace
from typing import Any, TypeVar

from roofgen.model import Measurement, SweepPoint
from roofgen.operators.models import OpModel, Tensor

__all__ = ["label", "mean_measurement", "mean_model", "normalised_weights"]

T = TypeVar("T")
_FEWEST = {"repeats", "warmup"}  # statistics of how it was timed: the weakest point counts


def normalised_weights(points: Sequence[SweepPoint]) -> list[float]:
    """Weights summing to 1: as given (relative), or equal when none is given."""
    given = [p.weight for p in points]
    if not points:
        return []
    if any(w is None for w in given):
        return [1.0 / len(points)] * len(points)
    total = sum(w for w in given if w is not None)
    return [(w or 0.0) / total for w in given] if total > 0 else [1.0 / len(points)] * len(points)


def label(point: SweepPoint) -> str:
    """The point's label, or its shape keys: ``seq_kv=1024``."""
    if point.label:
        return point.label
    return ", ".join(f"{k}={v}" for k, v in point.shape.items()) or "shape"


def _dominant(values: Sequence[T], weights: Sequence[float]) -> T:
    """The value of the heaviest point (the first of equals)."""
    best = max(range(len(values)), key=lambda i: (weights[i], -i))
    return values[best]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _mean(values: Sequence[Any], weights: Sequence[float], name: str = "") -> Any:
    if any(v is None for v in values):
        return None
    first = values[0]
    if all(v == first for v in values):
        return first
    if all(_number(v) for v in values):
        if name in _FEWEST:
            return min(values)
        mean = sum(w * v for w, v in zip(weights, values, strict=True))
        return round(mean) if all(isinstance(v, int) for v in values) else mean
    if all(isinstance(v, dict) for v in values):
        keys = [k for k in first if all(k in v for v in values)]  # missing means unknown
        return {k: _mean([v[k] for v in values], weights) for k in keys}
    if is_dataclass(first) and not isinstance(first, type) and name == "time":
        return _dataclass_mean(values, weights)
    if all(isinstance(v, tuple) and len(v) == len(first) for v in values) and all(
        _number(x) for v in values for x in v
    ):
        if name:  # a field of its own (grid, block): the heaviest point's
            return _dominant(values, weights)
        return tuple(_mean(list(column), weights) for column in zip(*values, strict=True))
    return _dominant(values, weights)


def _dataclass_mean(values: Sequence[Any], weights: Sequence[float]) -> Any:
    first = values[0]
    changes = {
        f.name: _mean([getattr(v, f.name) for v in values], weights, f.name) for f in fields(first)
    }
    return replace(first, **changes)


def mean_measurement(measurements: Sequence[Measurement], weights: Sequence[float]) -> Measurement:
    """The weighted mean of ``measurements`` per call: times, work and bytes averaged;
    a quantity some point lacks is unknown; other fields from the heaviest point."""
    result: Measurement = _dataclass_mean(measurements, weights)
    return result


def mean_model(models: Sequence[OpModel | None], weights: Sequence[float]) -> OpModel | None:
    """The weighted mean of the points' operator models (None if any point has none)."""
    known = [m for m in models if m is not None]
    if len(known) != len(models) or not known:
        return None
    first = known[0]
    names = [t.name for t in first.tensors]
    if any([t.name for t in m.tensors] != names for m in known):
        return None

    def avg(attr: str) -> float:
        return sum(w * getattr(m, attr) for w, m in zip(weights, known, strict=True))

    tensors = tuple(
        Tensor(
            t.name,
            sum(w * m.tensors[i].elements for w, m in zip(weights, known, strict=True)),
            t.dtype,
            t.access,
        )
        for i, t in enumerate(first.tensors)
    )
    return replace(
        first,
        matrix_flop=avg("matrix_flop"),
        vector_flop=avg("vector_flop"),
        transcendental_op=avg("transcendental_op"),
        tensors=tensors,
        notes=(*first.notes, "the weighted mean over the sweep's shapes"),
    )
