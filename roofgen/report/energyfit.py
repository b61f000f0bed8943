"""`roofgen fit energy` as text and JSON: the coefficients with their intervals, the
residuals of every launch, what was left out and why."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from roofgen.analysis.energyfit import CONSTANT, Coefficient, EnergyFit, Residual
from roofgen.units import fmt_frequency, fmt_percent, work_unit

__all__ = ["fit_json", "fit_text"]


def _label(c: Coefficient) -> str:
    if c.key == CONSTANT:
        return "constant power"
    if c.kind == "flop":
        unit, precision = c.name.split("/", 1)
        return f"{precision} {work_unit(precision)} on {unit}"
    return f"byte at {c.name}"


def _value(c: Coefficient, x: float) -> str:
    if c.key == CONSTANT:
        return f"{x:.4g} W"
    per = "B" if c.kind == "byte" else work_unit(c.name.split("/")[-1])
    return f"{x * 1e12:.4g} pJ/{per}"


def _residuals(rows: Sequence[Residual]) -> list[str]:
    width = max((len(r.label) for r in rows), default=0)
    return [
        f"  {r.label:<{width}}  measured {r.measured_w:8.4g} W  modelled {r.modelled_w:8.4g} W"
        f"  {r.relative * 100:+6.1f}%"
        for r in rows
    ]


def fit_text(
    fit: EnergyFit,
    machine: str,
    cases: Sequence[str],
    skipped: Sequence[str] = (),
    operands: str = "",
) -> str:
    clock = fmt_frequency(fit.clock_hz) if fit.clock_hz else "not stated"
    lines = [
        f"Energy coefficients of {machine}: {len(fit.fitted)} launch(es) fitted, "
        f"{len(fit.validated)} validated, from {', '.join(cases) or 'no case'}",
        f"  SM clock {clock}; operand data: {operands or 'not stated'}",
        "",
    ]
    width = max(len(_label(c)) for c in fit.coefficients)
    lines.append(f"  {'coefficient':<{width}}  {'value':>14}  95% interval (bootstrap)")
    for c in fit.coefficients:
        lines.append(
            f"  {_label(c):<{width}}  {_value(c, c.value):>14}  "
            f"{_value(c, c.low)} to {_value(c, c.high)}"
        )
    lines += [
        "",
        f"Residual (RMS of (measured - modelled) / measured power): fitted "
        f"{fmt_percent(fit.rms)}"
        + (
            f", validation {fmt_percent(fit.validation_rms)}"
            if fit.validation_rms is not None
            else ""
        ),
        f"Condition number of FLOPs, bytes and time (scaled): {fit.condition:.3g}",
        "",
        "Fitted launches:",
        *_residuals(fit.fitted),
    ]
    if fit.validated:
        lines += ["", "Validation launches:", *_residuals(fit.validated)]
    notes = [*skipped, *fit.notes]
    if notes:
        lines += ["", "Notes:", *(f"  {n}" for n in notes)]
    return "\n".join(lines) + "\n"


def fit_json(
    fit: EnergyFit,
    machine: str,
    cases: Sequence[str],
    skipped: Sequence[str] = (),
    operands: str = "",
) -> dict[str, Any]:
    def rows(residuals: Sequence[Residual]) -> list[dict[str, Any]]:
        return [
            {"launch": r.label, "measured_w": r.measured_w, "modelled_w": r.modelled_w}
            for r in residuals
        ]

    return {
        "machine": machine,
        "cases": list(cases),
        "clock_hz": fit.clock_hz,
        "operands": operands or None,
        "coefficients": [
            {"key": c.key, "value": c.value, "low": c.low, "high": c.high} for c in fit.coefficients
        ],
        "residual_rms": fit.rms,
        "validation_rms": fit.validation_rms,
        "condition": fit.condition,
        "fitted": rows(fit.fitted),
        "validated": rows(fit.validated),
        "notes": [*skipped, *fit.notes],
    }
