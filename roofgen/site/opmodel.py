"""The operator model of each kernel, in words, for the kernels table of a case page."""

from __future__ import annotations

from roofgen.analysis.analyse import CaseResult
from roofgen.units import fmt_si

__all__ = ["kernel_models"]


def kernel_models(case: CaseResult) -> tuple[tuple[str, str, str, str], ...]:
    """``(kernel, model FLOPs, minimum bytes, notes)`` per kernel; for a kernel without
    a model, why there is none."""
    rows = []
    for k in case.case.kernels:
        outcome = case.kernel_models[k.id]
        m = outcome.model
        if m is None:
            rows.append((k.id, "n/a", "n/a", outcome.reason))
            continue
        parts = []
        if m.matrix_flop:
            parts.append(f"{fmt_si(m.matrix_flop, 'FLOP')} matrix ({m.matrix_precision})")
        if m.vector_flop:
            parts.append(f"{fmt_si(m.vector_flop, 'FLOP')} vector ({m.vector_precision})")
        if m.transcendental_op:
            parts.append(f"{fmt_si(m.transcendental_op, 'OP')} transcendental")
        minimum = m.bytes_min
        untyped = ", ".join(m.untyped)
        notes = list(m.notes) + ([f"no dtype for {untyped}"] if untyped else [])
        rows.append(
            (
                k.id,
                ", ".join(parts) or "0 FLOP",
                fmt_si(minimum, "B") if minimum is not None else "n/a",
                "; ".join(notes),
            )
        )
    return tuple(rows)
