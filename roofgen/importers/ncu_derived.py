"""What an Nsight Compute import derives for one launch, in roofgen's terms, and the
parts of a machine it needs."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any


@dataclass(frozen=True)
class Figure:
    """A value in roofgen's base unit and the metrics it came from."""

    value: Decimal
    unit: str  # "FLOP", "OP", "B", "s", "Hz", "inst", "txn"
    origin: str


@dataclass
class Derived:
    """What one launch's metrics say, in roofgen's terms."""

    time: Figure | None = None
    time_min: Figure | None = None
    time_max: Figure | None = None
    time_statistic: str = "median"  # or "mean": a summary's average over its invocations
    clocks: dict[str, Figure] = field(default_factory=dict)
    flops: dict[str, dict[str, Figure]] = field(default_factory=dict)
    bytes: dict[str, Figure | dict[str, Figure]] = field(default_factory=dict)
    transactions: dict[str, Figure] = field(default_factory=dict)
    accesses: dict[str, Figure] = field(default_factory=dict)  # global/shared ld/st counts
    instructions: Figure | None = None
    occupancy: Figure | None = None
    notes: list[str] = field(default_factory=list)  # for the measurement's notes
    clock_moved: bool = False  # the SM clock varied across a summary's invocations
    missing: dict[str, list[str]] = field(default_factory=dict)  # need -> metrics to collect
    warnings: list[str] = field(default_factory=list)


class MachineView:
    """The parts of a machine an import needs: units by kind, levels by role."""

    def __init__(self, data: dict[str, Any]):
        self.id: str = data["id"]
        self.units: list[dict[str, Any]] = list(data["compute"])
        self.levels: list[dict[str, Any]] = list(data["memory"])
        clocks = data.get("clocks")
        self.base_sm: Any = (
            clocks.get("base_sm") if isinstance(clocks, dict) else None
        )  # as the machine file writes it

    def base_sm_hz(self) -> Decimal | None:
        """The machine's base SM clock (what Nsight Compute locks to), if it states one."""
        from roofgen.spec.quantity import parse_quantity

        if self.base_sm is None:
            return None
        try:
            return Decimal(str(parse_quantity(self.base_sm, "frequency")))
        except Exception:  # a machine file that does not check: no clock, said so
            return None

    def unit(self, kind: str) -> dict[str, Any] | None:
        return next((u for u in self.units if u["kind"] == kind), None)

    def level(self, role: str) -> dict[str, Any] | None:
        return next((m for m in self.levels if m["role"] == role), None)


# Significant digits of a derived quotient (a time from cycles over a clock, a clock rate,
# a mean): more than a profiler's counters and clocks can carry is noise.
SIGNIFICANT = 6


def number(value: Decimal, significant: int = SIGNIFICANT) -> str:
    """A decimal as plain digits (no exponent), exact for integers (counters), trailing
    zeros dropped; others (quotients) rounded to ``significant`` digits."""
    if value == value.to_integral_value():
        return format(value.to_integral_value(), "f")
    rounded = Decimal(format(value, f".{significant}g"))
    text = format(rounded.normalize(), "f")
    return text


_TIME_UNITS = (
    (Decimal(1), "s"),
    (Decimal("1e-3"), "ms"),
    (Decimal("1e-6"), "us"),
    (Decimal("1e-9"), "ns"),
)
_FREQ_UNITS = (
    (Decimal("1e9"), "GHz"),
    (Decimal("1e6"), "MHz"),
    (Decimal("1e3"), "kHz"),
    (Decimal(1), "Hz"),
)


def quantity(figure: Figure) -> str:
    if figure.unit == "s":
        return _scaled(figure.value, _TIME_UNITS)
    if figure.unit == "Hz":
        return _scaled(figure.value, _FREQ_UNITS)
    return f"{number(figure.value)} {figure.unit}"


def _scaled(value: Decimal, units: tuple[tuple[Decimal, str], ...]) -> str:
    """A time or a clock in the largest unit it reaches, rounded to SIGNIFICANT digits
    first (so 764,999,999.31 Hz is 765 MHz, not 764.99999931 MHz)."""
    if value:
        value = Decimal(format(value, f".{SIGNIFICANT}g"))
    for factor, name in units:
        if abs(value) >= factor:
            return f"{number(value / factor)} {name}"
    factor, name = units[-1]
    return f"{number(value / factor)} {name}"
