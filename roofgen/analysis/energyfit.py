"""Energy coefficients fitted from measured launches, as Choi, Bedard, Fowler and Vuduc
fitted theirs ("A roofline model of energy", IPDPS 2013). Pure maths (numpy, scipy).

The model: a launch's energy is E = sum of e_flop x FLOPs (per unit and precision) +
sum of e_byte x bytes (per memory level) + pi0 x T, with pi0 the constant power under
load. Dividing by the time gives a linear model of average power, P = E / T, in the
launches' FLOP/s and B/s plus a constant, fitted here by non-negative least squares
over columns scaled to the same size (a coefficient is never negative). Byte
coefficients are incremental: a byte from device memory is counted at every level it
passes, so it pays each level's coefficient.

The fit refuses what the data cannot determine, and says which launches would
separate the coefficients: too few launches for the coefficients asked, or columns
of the energy form (FLOPs, bytes and *time*) that are nearly collinear (the condition
number of the column-scaled matrix above :data:`MAX_CONDITION`): a sweep in which time
grows with the bytes alone cannot tell energy per byte from constant power.

Launches from designed sweeps (intensity sweeps; spin kernels that do no memory
traffic, at the operating clock, pin pi0) are fitted; the others validate the fit.
Confidence intervals come from a bootstrap over the fitted launches (fixed seed, so
the same launches give the same bytes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import median
from typing import Any

__all__ = [
    "BOOTSTRAP",
    "MAX_CONDITION",
    "MIN_RUN_S",
    "Coefficient",
    "EnergyFit",
    "FitLaunch",
    "FitRefused",
    "describe",
    "fit_energy",
]

#: Above this condition number the energy form's columns are too close to collinear.
MAX_CONDITION = 1000.0
#: Bootstrap resamples for the confidence intervals.
BOOTSTRAP = 1000
#: A measured run shorter than this is left out: power sampling (NVML's energy counter is
#: updated from samples some tens of ms apart) misses short kernels.
MIN_RUN_S = 1.0
#: Launches whose SM clocks spread wider than this (relative) are said to differ.
CLOCK_SPREAD = 0.05

CONSTANT = "constant"


@dataclass(frozen=True)
class FitLaunch:
    """One launch's measured energy and work.

    ``flops``: executed work per (unit, precision) (FLOP or OP; a 2:4 sparse count halved
    to the work executed); ``bytes``: bytes per memory level; ``run_s``: how long the
    measured run lasted (repeats x time), None when not stated; ``designed``: from a
    designed sweep (fitted), else a validation launch.
    """

    label: str
    time_s: float
    energy_j: float
    flops: dict[tuple[str, str], float]
    bytes: dict[str, float]
    clock_hz: float | None = None
    run_s: float | None = None
    designed: bool = False


@dataclass(frozen=True)
class Coefficient:
    """A fitted coefficient: ``key`` is ``flop:UNIT/PRECISION``, ``byte:LEVEL`` or
    ``constant``; ``value`` in J/FLOP (J/OP), J/B or W; ``low`` and ``high``: the
    bootstrap's 95% interval."""

    key: str
    value: float
    low: float
    high: float

    @property
    def kind(self) -> str:
        return self.key.split(":", 1)[0]

    @property
    def name(self) -> str:
        return self.key.split(":", 1)[-1]


@dataclass(frozen=True)
class Residual:
    """A launch's measured and modelled average power (W)."""

    label: str
    measured_w: float
    modelled_w: float

    @property
    def relative(self) -> float:
        return (self.measured_w - self.modelled_w) / self.measured_w


@dataclass(frozen=True)
class EnergyFit:
    coefficients: tuple[Coefficient, ...]
    fitted: tuple[Residual, ...]
    validated: tuple[Residual, ...]
    condition: float
    clock_hz: float | None
    notes: tuple[str, ...] = ()

    @property
    def rms(self) -> float:
        """RMS of the relative power residual over the fitted launches."""
        return _rms([r.relative for r in self.fitted])

    @property
    def validation_rms(self) -> float | None:
        return _rms([r.relative for r in self.validated]) if self.validated else None

    def get(self, key: str) -> Coefficient | None:
        return next((c for c in self.coefficients if c.key == key), None)


@dataclass
class FitRefused(Exception):
    """The launches cannot determine the coefficients: ``reason`` says why and
    ``remedy`` which measurements would."""

    reason: str
    remedy: str
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.reason}. {self.remedy}"


def _rms(values: Sequence[float]) -> float:
    return (sum(v * v for v in values) / len(values)) ** 0.5 if values else 0.0


def _usable(launches: Sequence[FitLaunch], notes: list[str]) -> list[FitLaunch]:
    """Launches whose measured runs are long enough for the power to be sampled."""
    kept = []
    for launch in launches:
        run = launch.run_s if launch.run_s is not None else launch.time_s
        if run < MIN_RUN_S:
            how = "repeats x time" if launch.run_s is not None else "one call (repeats not stated)"
            notes.append(
                f"{launch.label}: left out: its measured run ({how}) lasts {run:.3g} s, under "
                f"{MIN_RUN_S:g} s; power sampling misses short runs: repeat it for at least "
                f"{MIN_RUN_S:g} s"
            )
            continue
        kept.append(launch)
    return kept


def _columns(launches: Sequence[FitLaunch], notes: list[str]) -> list[str]:
    flops = sorted({k for x in launches for k, v in x.flops.items() if v > 0})
    levels = sorted({k for x in launches for k, v in x.bytes.items() if v > 0})
    zero = sorted({k for x in launches for k in x.flops} - set(flops))
    for unit, precision in zero:
        notes.append(f"no launch does {precision} work on {unit}: its energy is not fitted")
    return [f"flop:{u}/{p}" for u, p in flops] + [f"byte:{lvl}" for lvl in levels] + [CONSTANT]


def _work(launch: FitLaunch, key: str) -> float:
    """The launch's amount of what ``key`` costs: FLOPs, bytes, or seconds."""
    if key == CONSTANT:
        return launch.time_s
    kind, name = key.split(":", 1)
    if kind == "flop":
        unit, precision = name.split("/", 1)
        return launch.flops.get((unit, precision), 0.0)
    return launch.bytes.get(name, 0.0)


def describe(key: str) -> str:
    if key == CONSTANT:
        return "time"
    kind, name = key.split(":", 1)
    if kind == "flop":
        unit, precision = name.split("/", 1)
        return f"{precision} FLOPs on {unit}"
    return f"{name} bytes"


def _remedy(keys: list[str]) -> str:
    flops = [k for k in keys if k.startswith("flop:")]
    levels = [k for k in keys if k.startswith("byte:")]
    if CONSTANT in keys and levels:
        return (
            "Add launches whose time is not set by their bytes: spin kernels that do "
            "arithmetic with no memory traffic at the operating clock (they pin constant "
            "power), or compute-bound points of an intensity sweep"
        )
    if CONSTANT in keys and flops:
        return (
            "Add launches whose time is not set by their FLOPs: memory-bound points of an "
            "intensity sweep, or spin kernels that idle the units for a known time"
        )
    if len(flops) > 1:
        return "Add launches that run each precision alone, so their FLOPs vary independently"
    if len(levels) > 1:
        return (
            "Add launches whose bytes at these levels differ: a working set that fits in the "
            "cache (cache hits, little device-memory traffic) beside one that streams"
        )
    return "Add launches over a wider range of intensities"


def _condition(launches: Sequence[FitLaunch], keys: list[str]) -> tuple[float, list[str]]:
    """Condition number of the energy form's column-scaled matrix (FLOPs, bytes and time),
    and the columns that make it large (the smallest singular vector's largest parts)."""
    import numpy as np

    x = np.array([[_work(launch, k) for k in keys] for launch in launches], dtype=float)
    x /= np.linalg.norm(x, axis=0)
    _, s, vt = np.linalg.svd(x, full_matrices=False)
    cond = float("inf") if s[-1] <= s[0] * 1e-15 else float(s[0] / s[-1])
    weak = vt[-1]
    biggest = np.abs(weak).max()
    involved = [k for k, w in zip(keys, weak, strict=True) if abs(w) >= 0.3 * biggest]
    return cond, involved


def _nnls(a: Any, y: Any) -> Any:
    """Non-negative least squares over columns scaled to unit size."""
    import numpy as np
    from scipy.optimize import nnls

    scale = np.abs(a).max(axis=0)
    scale[scale == 0] = 1.0
    solution, _ = nnls(a / scale, y)
    return solution / scale


def _power_rows(launches: Sequence[FitLaunch], keys: list[str]) -> tuple[Any, Any]:
    import numpy as np

    a = np.array([[_work(x, k) / x.time_s for k in keys] for x in launches], dtype=float)
    y = np.array([x.energy_j / x.time_s for x in launches], dtype=float)
    return a, y


def _clock(launches: Sequence[FitLaunch], notes: list[str]) -> float | None:
    clocks = [x.clock_hz for x in launches if x.clock_hz]
    if not clocks:
        notes.append(
            "no fitted launch states its SM clock: power depends on it; record it "
            "(clocks.sm) so the coefficients say which clock they hold at"
        )
        return None
    if len(clocks) < len(launches):
        notes.append(f"{len(launches) - len(clocks)} fitted launch(es) state no SM clock")
    if max(clocks) > min(clocks) * (1 + CLOCK_SPREAD):
        notes.append(
            f"the fitted launches ran at SM clocks from {min(clocks) / 1e6:.0f} to "
            f"{max(clocks) / 1e6:.0f} MHz: power depends on the clock; lock it for a sweep"
        )
    return float(median(clocks))


def fit_energy(
    launches: Sequence[FitLaunch],
    *,
    bootstrap: int = BOOTSTRAP,
    seed: int = 0,
    max_condition: float = MAX_CONDITION,
) -> EnergyFit:
    """Fit energy per FLOP (per unit and precision), per byte (per level) and constant
    power to ``launches``; raise :class:`FitRefused` when they cannot determine them."""
    import numpy as np

    notes: list[str] = []
    usable = _usable(launches, notes)
    designed = [x for x in usable if x.designed]
    fitted = designed or usable
    held_out = [x for x in usable if not x.designed] if designed else []
    if not designed and usable:
        notes.append(
            f"no designed sweep among the launches: all {len(usable)} are fitted and none is "
            "left to validate the fit (the residuals are in-sample)"
        )
    keys = _columns(fitted, notes)
    needed = len(keys) + 2
    if len(fitted) < needed:
        raise FitRefused(
            f"{len(fitted)} usable launch(es) for {len(keys)} coefficients "
            f"({', '.join(describe(k) for k in keys)})",
            f"Measure at least {needed} launches (runs of at least {MIN_RUN_S:g} s each) "
            "spanning low and high intensity, with spin kernels for constant power",
            notes,
        )
    cond, involved = _condition(fitted, keys)
    if not cond <= max_condition:
        what = " and ".join(describe(k) for k in involved)
        raise FitRefused(
            f"the launches cannot separate {what}: they vary together (condition number "
            f"{cond:.3g} of FLOPs, bytes and time, above {max_condition:g})",
            _remedy(involved),
            notes,
        )
    a, y = _power_rows(fitted, keys)
    solution = _nnls(a, y)
    rng = np.random.default_rng(seed)
    samples = np.empty((bootstrap, len(keys)))
    for b in range(bootstrap):
        rows = rng.integers(0, len(fitted), len(fitted))
        samples[b] = _nnls(a[rows], y[rows])
    low, high = np.percentile(samples, [2.5, 97.5], axis=0)
    coefficients = tuple(
        Coefficient(k, float(v), float(lo), float(hi))
        for k, v, lo, hi in zip(keys, solution, low, high, strict=True)
    )
    for c in coefficients:
        if c.value == 0.0:
            notes.append(
                f"{describe(c.key)}: fitted as 0 (the non-negative bound holds): the launches "
                "show no cost for it"
            )
    modelled = a @ solution
    fit_rows = tuple(
        Residual(x.label, float(p), float(m)) for x, p, m in zip(fitted, y, modelled, strict=True)
    )
    check_rows: tuple[Residual, ...] = ()
    if held_out:
        a2, y2 = _power_rows(held_out, keys)
        check_rows = tuple(
            Residual(x.label, float(p), float(m))
            for x, p, m in zip(held_out, y2, a2 @ solution, strict=True)
        )
    return EnergyFit(coefficients, fit_rows, check_rows, cond, _clock(fitted, notes), tuple(notes))
