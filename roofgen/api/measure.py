"""A launch's ``measurement`` from a plain list of timings.

:func:`measurement_from_times` returns the mapping a case file holds under
``variants[].launches[].measurement``, with quantities written as text
(``"2.478 ms"``): put it into a case mapping and build or write the case, and the
case schema checks it like any spec file.

Statistics (no numpy): the median is :func:`statistics.median`; ``q1`` and ``q3``
are :func:`statistics.quantiles` with ``n=4, method="inclusive"`` (linear
interpolation between order statistics, the same as numpy's default ``linear``
percentile method); ``min``, ``max`` and ``repeats`` are exact. Values are written
with 6 significant digits in the unit given.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["TIME_UNITS", "measurement_from_times"]

TIME_UNITS = ("s", "ms", "us", "ns")


def _number(value: float, unit: str) -> str:
    return f"{value:.6g} {unit}"


def measurement_from_times(
    times: float | Iterable[float],
    unit: str = "ms",
    *,
    warmup: int | None = None,
    source: str | None = "cuda-events",
    flops: Mapping[str, Any] | None = None,
    bytes: Mapping[str, Any] | None = None,  # noqa: A002  (the spec's own key)
    **fields: Any,
) -> dict[str, Any]:
    """A ``measurement`` mapping from timings in ``unit`` (``s``, ``ms``, ``us``, ``ns``).

    ``times`` is a list of per-run times, or one number: what
    ``triton.testing.do_bench`` returns (milliseconds; a list with
    ``return_mode="all"``, otherwise one summary number, which is written as the
    time itself with no spread). ``source`` goes to ``timing`` (``cuda-events``,
    ``hip-events``, ...; None leaves it out); ``flops``, ``bytes`` and any other
    keyword (``clocks``, ``launches``, ``notes``...) are copied as given, in the
    spec's format: ``flops={"fp32": {"fp32": "268435456 FLOP"}}``,
    ``bytes={"hbm": {"read": "2 GiB", "write": "1 GiB"}}``.

    Raises ValueError for an unknown unit, no times, or a time that is negative or
    not finite.
    """
    if unit not in TIME_UNITS:
        raise ValueError(f"unit {unit!r}: use one of {', '.join(TIME_UNITS)}")
    single = isinstance(times, (int, float))
    values = [float(times)] if isinstance(times, (int, float)) else [float(t) for t in times]
    if not values:
        raise ValueError("no times given")
    for t in values:
        if not math.isfinite(t) or t < 0:
            raise ValueError(f"time {t!r} is not a finite, non-negative number")
    time: Any
    if single:
        time = _number(values[0], unit)
    else:
        time = {"median": _number(statistics.median(values), unit)}
        if len(values) >= 2:
            q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
            time |= {"q1": _number(q1, unit), "q3": _number(q3, unit)}
        time |= {
            "min": _number(min(values), unit),
            "max": _number(max(values), unit),
            "repeats": len(values),
        }
        if warmup is not None:
            time["warmup"] = warmup
    out: dict[str, Any] = {"time": time}
    if source is not None:
        out["timing"] = source
    if flops is not None:
        out["flops"] = dict(flops)
    if bytes is not None:
        out["bytes"] = dict(bytes)
    return out | fields
