"""The energy roofline (Choi, Bedard, Fowler and Vuduc, IPDPS 2013). Pure.

Energy = e_flop x FLOPs + sum of e_byte x bytes + constant power x time. The power limit
is a roof on time (see :mod:`roofgen.analysis.bounds`); a launch held back by it shows
by its clock, below the roofs' clock while average power sits at the limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from roofgen.analysis.bounds import dynamic_energy_j, level_bytes
from roofgen.analysis.inputs import LaunchInputs, VariantInputs, floating_point_work
from roofgen.model import Machine, Measurement

__all__ = ["POWER_AT_LIMIT", "EnergyResult", "StepEnergy", "energy_result", "power_limited"]

#: Average power at or above this fraction of the limit counts as "at the limit".
POWER_AT_LIMIT = 0.95


@dataclass(frozen=True)
class EnergyResult:
    """Energy of one call of a launch (J).

    ``measured_j``: the measured energy, or average power x time. ``dynamic_j``: the
    model's e_flop x FLOPs + sum of e_byte x bytes; ``constant_j``: the machine's constant
    power under load x measured time; ``modelled_j`` their sum (Choi et al.: energy = work +
    constant power x time), None when either is unknown.
    ``average_power_w``: measured (W); ``flop``: floating-point work (FLOP);
    ``device_bytes``: bytes at device memory (B); ``power_limited``: the SM clock ran
    below the roofs' clock while average power sat at the limit.
    """

    measured_j: float | None
    dynamic_j: float | None
    constant_j: float | None
    modelled_j: float | None
    average_power_w: float | None
    flop: float | None
    device_bytes: float | None = None
    power_limited: bool = False

    @property
    def energy_j(self) -> float | None:
        """The measured energy where there is one, else the model's (J)."""
        return self.measured_j if self.measured_j is not None else self.modelled_j

    @property
    def flop_per_j(self) -> float | None:
        """FLOPs per joule (= FLOP/s per watt)."""
        energy = self.energy_j
        return self.flop / energy if self.flop and energy else None

    @classmethod
    def of(cls, inputs: LaunchInputs) -> EnergyResult:
        return energy_result(inputs.machine, inputs.measurement)


def _limited(machine: Machine, m: Measurement, average_power_w: float | None) -> bool:
    if machine.power is None or m.sm_clock_hz is None or average_power_w is None:
        return False
    at_limit = average_power_w >= POWER_AT_LIMIT * machine.power.limit.value("datasheet")
    return at_limit and m.sm_clock_hz < machine.sm_clock_hz


def energy_result(machine: Machine, m: Measurement) -> EnergyResult:
    """The energy of one call of the launch measured by ``m`` on ``machine``."""
    t = m.time.value_s
    measured = m.energy_j
    if measured is None and m.average_power_w is not None:
        measured = m.average_power_w * t
    power = (
        m.average_power_w
        if m.average_power_w is not None
        else (measured / t if measured is not None else None)
    )
    dynamic = dynamic_energy_j(machine, m)
    pi0 = machine.power.constant_w if machine.power is not None else None
    constant = pi0 * t if pi0 is not None else None
    modelled = dynamic + constant if dynamic is not None and constant is not None else None
    device = machine.device_level
    return EnergyResult(
        measured,
        dynamic,
        constant,
        modelled,
        power,
        floating_point_work(m),
        level_bytes(device, m) if device is not None else None,
        _limited(machine, m, power),
    )


def power_limited(machine: Machine, m: Measurement) -> bool:
    """A launch held back by the power limit, recognised by what it leaves behind: the
    SM clock below the clock the roofs are stated at while average power sits at the
    limit (within ``POWER_AT_LIMIT``). Measured energy alone can never show it."""
    if machine.power is None or m.sm_clock_hz is None:
        return False
    return energy_result(machine, m).power_limited


def _per_step(calls: list[int], values: list[float | None]) -> float | None:
    """Sum of calls x value, or None when any value is unknown."""
    total = 0.0
    for c, value in zip(calls, values, strict=True):
        if value is None:
            return None
        total += c * value
    return total


@dataclass(frozen=True)
class StepEnergy:
    """Energy to solution of one step (a variant: its launches x calls).

    ``measured_j`` and ``modelled_j``: summed over the launches (J), ``None`` when a
    launch lacks one; ``flop``: the step's floating-point work (FLOP); ``time_s``: the
    step's measured time (s); ``power_limited``: the kernels of the power-limited
    launches, in launch order.
    """

    measured_j: float | None
    modelled_j: float | None
    flop: float
    time_s: float
    power_limited: tuple[str, ...]

    @property
    def energy_j(self) -> float | None:
        """The measured energy where every launch has one, else the model's (J)."""
        return self.measured_j if self.measured_j is not None else self.modelled_j

    @property
    def flop_per_j(self) -> float | None:
        """FLOPs per joule over the step."""
        energy = self.energy_j
        return self.flop / energy if energy and self.flop else None

    @property
    def average_power_w(self) -> float | None:
        """Energy over the step's measured time (W)."""
        energy = self.energy_j
        return energy / self.time_s if energy else None

    @classmethod
    def of(cls, inputs: VariantInputs) -> StepEnergy:
        launches = inputs.variant.launches
        energies = [x.get(EnergyResult) for x in inputs.launches]
        calls = [x.calls for x in launches]
        return cls(
            _per_step(calls, [e.measured_j for e in energies]),
            _per_step(calls, [e.modelled_j for e in energies]),
            sum(c * (e.flop or 0.0) for c, e in zip(calls, energies, strict=True)),
            inputs.time_s,
            tuple(x.kernel for x, e in zip(launches, energies, strict=True) if e.power_limited),
        )
