"""Numbers with units, written for people: reports, pages, explain, chart labels and tooltips.

roofgen's one number formatter. It is pure (the standard library only, nothing of
roofgen), so that the charts use it too and every output writes a value the same way.

A value is rounded to its significant digits *before* its prefix is chosen: 999.96e9
FLOP/s is ``1 TFLOP/s``, never ``1000 GFLOP/s``. Two styles share the rounding:
``zeros=False`` (reports, pages, explain) drops trailing zeros (``10 GB/s``);
``zeros=True`` (chart labels and tooltips) keeps them, so that every label shows its
precision (``10.0 GB/s``, ``1.00 TFLOP/s``). None is ``n/a``; NaN and infinities are
written as Python writes them (``nan B``, ``-inf s``).

It is also the one home of the unit a precision's work is counted in (:func:`counts_ops`,
:func:`work_unit`, :func:`rate_unit`): every layer, the charts included, reaches it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

__all__ = [
    "NO_PREFIX",
    "SI_PREFIXES",
    "TIME_PREFIXES",
    "counts_ops",
    "fmt_frequency",
    "fmt_percent",
    "fmt_ratio",
    "fmt_si",
    "fmt_time",
    "rate_unit",
    "work_unit",
]

#: (factor, prefix) pairs, largest first; the last one also takes every smaller value.
Prefixes = Sequence[tuple[float, str]]

#: Decimal prefixes from exa to none: values under 1 are written without a prefix.
SI_PREFIXES: Prefixes = (
    (1e18, "E"),
    (1e15, "P"),
    (1e12, "T"),
    (1e9, "G"),
    (1e6, "M"),
    (1e3, "k"),
    (1.0, ""),
)
#: Prefixes of times (the unit is the second): s, ms, us, ns and ps.
TIME_PREFIXES: Prefixes = ((1.0, ""), (1e-3, "m"), (1e-6, "u"), (1e-9, "n"), (1e-12, "p"))
#: No prefix at all: ``1500 FLOP/B``.
NO_PREFIX: Prefixes = ((1.0, ""),)


def fmt_si(
    value: float | None,
    unit: str,
    digits: int = 3,
    *,
    zeros: bool = False,
    prefixes: Prefixes = SI_PREFIXES,
) -> str:
    """``value`` (in ``unit``) to ``digits`` significant digits with a decimal prefix.

    ``fmt_si(1.5552e12, "B/s") == "1.56 TB/s"``, ``fmt_si(10e9, "FLOP/s") == "10 GFLOP/s"``,
    and with ``zeros=True`` ``"10.0 GFLOP/s"``. The prefix is the largest of ``prefixes``
    under which the rounded value is at least 1, else the last one.
    """
    if value is None:
        return "n/a"
    if not math.isfinite(value):
        return f"{value} {unit}"
    if value == 0:
        return f"{_digits(0.0, digits, zeros)} {unit}"
    for factor, prefix in prefixes[:-1]:
        text = _digits(value / factor, digits, zeros)
        if abs(float(text)) >= 1:
            return f"{text} {prefix}{unit}"
    factor, prefix = prefixes[-1]
    return f"{_digits(value / factor, digits, zeros)} {prefix}{unit}"


def fmt_time(seconds: float | None) -> str:
    """A time in seconds: ``1.51 ms``, ``4.2 us``, ``2 s``; ``n/a`` for None."""
    return fmt_si(seconds, "s", prefixes=TIME_PREFIXES)


def fmt_frequency(hz: float) -> str:
    """A clock in hertz, to four digits: ``1.41 GHz``, ``765 MHz``."""
    return fmt_si(hz, "Hz", 4)


def fmt_percent(fraction: float | None) -> str:
    """A fraction as a percentage: ``0.42`` -> ``42%``, ``0.068`` -> ``6.8%``."""
    if fraction is None:
        return "n/a"
    return f"{fraction * 100:.0f}%" if fraction >= 0.1 else f"{fraction * 100:.1f}%"


def fmt_ratio(ratio: float | None) -> str:
    """A ratio (a speed-up, a headroom): ``2.5`` -> ``2.50x``."""
    return "n/a" if ratio is None else f"{ratio:.2f}x"


def counts_ops(precision: str) -> bool:
    """Whether the work of ``precision`` is counted in operations (OP) rather than in
    floating-point operations (FLOP).

    Integer precisions (``int8``, ``int4``: every name that starts with ``int``) are OP,
    and so is ``transcendental`` work (exp, rsqrt, sin on the special-function unit): one
    such operation is not a floating-point operation of any precision, and the machine
    schema states its peaks in OP/s. Every other precision (``fp64`` down to ``fp4``,
    ``tf32``, ``bf16``) is FLOP. A ``-sparse`` suffix (2:4 sparse peaks) keeps the
    unit of its precision.
    """
    base = precision.removesuffix("-sparse")
    return base.startswith("int") or base == "transcendental"


def work_unit(precision: str) -> Literal["OP", "FLOP"]:
    """The unit of a count of ``precision``'s work: ``OP`` or ``FLOP`` (see :func:`counts_ops`)."""
    return "OP" if counts_ops(precision) else "FLOP"


def rate_unit(precision: str) -> Literal["OP/s", "FLOP/s"]:
    """The unit of a rate of ``precision``'s work: ``OP/s`` or ``FLOP/s``."""
    return "OP/s" if counts_ops(precision) else "FLOP/s"


def _digits(x: float, digits: int, zeros: bool) -> str:
    """``x`` to ``digits`` significant digits in plain (never exponent) notation."""
    text = f"{x:#.{digits}g}" if zeros else f"{x:.{digits}g}"
    if "e" in text:
        if zeros:
            return f"{x:.{digits}g}"
        places = max(digits - 1 - math.floor(math.log10(abs(x))), 0)
        text = f"{x:.{places}f}"
    return text.rstrip(".")
