"""`roofgen fit energy`: energy coefficients fitted from the launches of checked cases,
and written into a machine file with their provenance.

The maths is :mod:`roofgen.analysis.energyfit`; this module picks the launches (those
with measured energy, FLOPs and bytes, on the machine asked for), and edits the machine
file round trip (comments and layout kept, as ``import --into`` does).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from roofgen.analysis.energyfit import (
    CONSTANT,
    Coefficient,
    EnergyFit,
    FitLaunch,
    FitRefused,
    describe,
    fit_energy,
)
from roofgen.model import Case, Launch, Machine, Measurement
from roofgen.units import counts_ops, fmt_frequency

if TYPE_CHECKING:
    from roofgen.pipeline import CheckResult

__all__ = [
    "EnergyFitReport",
    "FitRefused",
    "FitWriteError",
    "fit_machine_energy",
    "fitted_yaml",
    "left_out",
    "write_fit",
]

METHOD = "non-negative least squares of power (E/T) over scaled columns, bootstrap 95% intervals"


class FitWriteError(Exception):
    """The fit cannot be written into the machine file; the message says why."""


@dataclass(frozen=True)
class EnergyFitReport:
    machine: Machine
    fit: EnergyFit
    cases: tuple[str, ...]
    skipped: tuple[str, ...]  # launches left out before the fit, and why
    operands: str = ""


def _energy(m: Measurement) -> float | None:
    if m.energy_j is not None:
        return m.energy_j
    if m.average_power_w is not None:
        return m.average_power_w * m.time.value_s
    return None


def _work(m: Measurement) -> dict[tuple[str, str], float]:
    """Executed work per (unit, precision): sparse counts halved, as the energy model
    counts them; transcendental operations have no coefficient and are left out."""
    work: dict[tuple[str, str], float] = {}
    for unit, by_precision in (m.flops or {}).items():
        for precision, count in by_precision.items():
            if precision == "transcendental":
                continue
            base = precision.removesuffix("-sparse")
            done = count / 2 if precision.endswith("-sparse") else count
            work[(unit, base)] = work.get((unit, base), 0.0) + done
    return work


def _launch(label: str, m: Measurement, designed: bool, skipped: list[str]) -> FitLaunch | None:
    energy = _energy(m)
    missing = [
        what
        for what, value in (("energy", energy), ("FLOPs", m.flops), ("bytes", m.bytes))
        if value is None
    ]
    if missing:
        skipped.append(f"{label}: no measured {' or '.join(missing)}")
        return None
    assert energy is not None and m.bytes is not None
    repeats = m.time.repeats
    return FitLaunch(
        label,
        m.time.value_s,
        energy,
        _work(m),
        dict(m.bytes),
        m.sm_clock_hz,
        repeats * m.time.value_s if repeats else None,
        designed,
    )


def _launches(
    case: Case, machine_id: str, designed_cases: set[str], skipped: list[str]
) -> list[FitLaunch]:
    out: list[FitLaunch] = []
    for variant in case.variants:
        if variant.machine != machine_id:
            continue
        for i, launch in enumerate(variant.launches):
            out += _points(case, variant.id, i, launch, designed_cases, skipped)
    return out


def _points(
    case: Case, variant: str, i: int, launch: Launch, designed_cases: set[str], skipped: list[str]
) -> list[FitLaunch]:
    label = f"{case.id}/{launch.kernel}/{variant}"
    designed = case.id in designed_cases
    if not launch.sweep:
        one = _launch(label if i == 0 else f"{label}[{i}]", launch.measurement, designed, skipped)
        return [one] if one is not None else []
    # A sweep's points are its designed launches (the launch's own measurement is their
    # weighted mean, not a launch of its own).
    points = []
    for p, point in enumerate(launch.sweep):
        name = point.label or f"point {p}"
        one = _launch(f"{label}: {name}", point.measurement, True, skipped)
        if one is not None:
            points.append(one)
    return points


def fit_machine_energy(
    checked: CheckResult,
    machine_id: str,
    *,
    fit_on: tuple[str, ...] = (),
    operands: str = "",
) -> EnergyFitReport:
    """Fit ``machine_id``'s energy coefficients to every launch of the checked cases that
    ran on it with measured energy, FLOPs and bytes. Sweeps' points and the cases named
    in ``fit_on`` are fitted; the other launches validate the fit. Raises
    :class:`~roofgen.analysis.energyfit.FitRefused`, or KeyError for an unknown machine."""
    specs = checked.specs
    assert specs is not None
    machine = specs.machines[machine_id]
    skipped: list[str] = []
    launches: list[FitLaunch] = []
    cases = []
    for case in specs.cases:
        found = _launches(case, machine_id, set(fit_on), skipped)
        if found:
            cases.append(case.id)
        launches += found
    fit = fit_energy(launches)
    return EnergyFitReport(machine, fit, tuple(cases), tuple(skipped), operands)


# ------------------------------------------------------------------ the machine file


def _number(x: float) -> str:
    return f"{x:.4g}"


def _pj(joules: float, per: str) -> str:
    return f"{_number(joules * 1e12)} pJ/{per}"


def _written(text: str, dimension: str) -> bool:
    """Whether ``text`` reads back as a positive quantity: a coefficient fitted as 0, or
    so small that it reads back as 0 (underflow), is not a value the schema accepts."""
    from roofgen.spec.quantity import QuantityError, parse_quantity

    try:
        return parse_quantity(text, dimension) > 0
    except QuantityError:
        return False


def _coefficient_text(c: Coefficient) -> tuple[str, str]:
    """The text written for ``c`` and the dimension it is read back in."""
    if c.key == CONSTANT:
        return f"{_number(c.value)} W", "power"
    if c.kind == "flop":
        precision = c.name.split("/", 1)[1]
        if counts_ops(precision):
            return _pj(c.value, "OP"), "energy_per_op"
        return _pj(c.value, "FLOP"), "energy_per_flop"
    return _pj(c.value, "B"), "energy_per_byte"


def left_out(fit: EnergyFit) -> list[str]:
    """The coefficients the machine file cannot take, each with why: fitted as zero (the
    launches show no cost the fit could separate for it) or too small to write."""
    out = []
    for c in fit.coefficients:
        text, dimension = _coefficient_text(c)
        if not _written(text, dimension):
            out.append(
                f"{describe(c.key)}: fitted as {c.value:.3g} (the launches show no cost that "
                "the fit could separate for it), so it is not written; measure launches that "
                "vary it on their own to fit it"
            )
    return out


def fitted_yaml(report: EnergyFitReport) -> dict[str, Any]:
    """What the fit writes: ``power`` keys (constant, energy_per_byte, fit) and, per
    compute unit, its ``energy_per_flop``. A coefficient that fitted as zero (or reads
    back as zero) is left out (:func:`left_out` says which): the schema refuses it."""
    fit = report.fit
    units: dict[str, dict[str, str]] = {}
    per_byte: dict[str, str] = {}
    constant = None
    for c in fit.coefficients:
        text, dimension = _coefficient_text(c)
        if not _written(text, dimension):
            continue
        if c.key == CONSTANT:
            constant = text
        elif c.kind == "flop":
            unit, precision = c.name.split("/", 1)
            units.setdefault(unit, {})[precision] = text
        else:
            per_byte[c.name] = text
    provenance: dict[str, Any] = {
        "method": METHOD,
        "cases": list(report.cases),
        "launches": len(fit.fitted),
        "validated": len(fit.validated),
        "residual": f"{fit.rms * 100:.1f}%",
    }
    if fit.clock_hz is not None:
        provenance["clock"] = fmt_frequency(fit.clock_hz)
    if report.operands:
        provenance["operands"] = report.operands
    power: dict[str, Any] = {"constant": constant, "energy_per_byte": per_byte, "fit": provenance}
    return {"power": power, "units": units}


def write_fit(report: EnergyFitReport) -> tuple[str, list[str]]:
    """Write the fitted coefficients into the machine's file (round trip: comments and
    layout kept); returns the file and one line per change. Raises
    :class:`FitWriteError` (a machine of roofgen's library, no power limit)."""
    from roofgen.spec.library import DISPLAY_ROOT
    from roofgen.spec.roundtrip import lf_text, load_round_trip, write_edited

    file = report.machine.file
    if not file or file.startswith(DISPLAY_ROOT):
        raise FitWriteError(
            f"{report.machine.id} is a machine of roofgen's library: copy it into your specs "
            f"(`roofgen machines vendor {report.machine.id}`) and write the fit into that file"
        )
    path = Path(file)
    raw = path.read_bytes()
    text = lf_text(raw)
    yaml, data = load_round_trip(text)
    if not isinstance(data, dict) or data.get("id") != report.machine.id:
        raise FitWriteError(f"{path}: not the machine file of {report.machine.id!r}")
    power = data.get("power")
    if not isinstance(power, dict) or "limit" not in power:
        raise FitWriteError(
            f"{path}: the machine has no power.limit: add its power limit (e.g. "
            "'power: {limit: 400 W}') first; the fit does not invent one"
        )
    new = fitted_yaml(report)
    changes = []
    power.pop("idle", None)
    for key, value in new["power"].items():
        if value in (None, {}):  # fitted as zero: an older value no longer holds
            if power.pop(key, None) is not None:
                changes.append(f"power.{key} removed")
            continue
        power[key] = value
        changes.append(f"power.{key}")
    fitted_units = {c.name.split("/", 1)[0] for c in report.fit.coefficients if c.kind == "flop"}
    for unit in data.get("compute", []):
        own = new["units"].get(unit.get("id"))
        if own:
            unit["energy_per_flop"] = own
            changes.append(f"compute[{unit['id']}].energy_per_flop")
        elif unit.get("id") in fitted_units and unit.pop("energy_per_flop", None) is not None:
            changes.append(f"compute[{unit['id']}].energy_per_flop removed")
    from roofgen.spec.roundtrip import dump

    edited = dump(yaml, data)
    _self_check(path, text, edited)
    write_edited(path, edited, raw)
    return file, changes


def _self_check(path: Path, before: str, after: str) -> None:
    """The machine file written must check as well as it did before: the same checks as
    ``roofgen check`` on a machine file (schema, units, references inside it); problems
    the file already had are not the fit's."""
    from roofgen.spec import crossrefs, schema
    from roofgen.spec.yamlload import load_text

    def problems(text: str) -> list[tuple[str, str]]:
        doc, found = load_text(text, str(path))
        if doc is not None:
            found = schema.validate(doc, "machine") or crossrefs.check_machine(doc)
        return [(p.path, p.format()) for p in found]

    old = {p for p, _ in problems(before)}
    new = [shown for p, shown in problems(after) if p not in old]
    if new:
        raise FitWriteError(
            f"{path}: the machine file with the fit would not check, so nothing was "
            "written:\n  " + "\n  ".join(new)
        )
