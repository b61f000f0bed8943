"""Formatting numbers with units for people (reports, pages, tooltips)."""

from __future__ import annotations

import math

_DECIMAL = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]


def fmt_si(value: float | None, unit: str, digits: int = 3) -> str:
    """``1.555e12, "B/s"`` -> ``1.56 TB/s`` (decimal prefixes, 3 significant digits)."""
    if value is None:
        return "n/a"
    if value == 0:
        return f"0 {unit}"
    if not math.isfinite(value):
        return f"{value} {unit}"
    for factor, prefix in _DECIMAL:
        if abs(value) >= factor:
            return f"{_sig(value / factor, digits)} {prefix}{unit}"
    return f"{_sig(value, digits)} {unit}"


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    for factor, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
        if abs(seconds) >= factor:
            return f"{_sig(seconds / factor, 3)} {unit}"
    return f"{_sig(seconds / 1e-9, 3)} ns" if seconds else "0 s"


def fmt_frequency(hz: float) -> str:
    return fmt_si(hz, "Hz", 4)


def fmt_percent(fraction: float | None) -> str:
    if fraction is None:
        return "n/a"
    return f"{fraction * 100:.0f}%" if fraction >= 0.1 else f"{fraction * 100:.1f}%"


def fmt_ratio(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{ratio:.2f}x"


def _sig(x: float, digits: int) -> str:
    text = f"{x:.{digits}g}"
    if "e" in text:  # keep plain notation
        text = f"{x:.{max(digits - 1 - int(math.floor(math.log10(abs(x)))), 0)}f}"
    return text
