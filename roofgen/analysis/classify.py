"""Classification of a bound: bound, co-bound, below all roofs, insufficient data."""

from __future__ import annotations

from typing import Literal

from roofgen.analysis.bounds import Bounds, Thresholds

Class = Literal["bound", "co-bound", "below-roofs", "insufficient-data"]
CLASSES: tuple[Class, ...] = ("bound", "co-bound", "below-roofs", "insufficient-data")


def has_enough_data(bounds: Bounds) -> bool:
    """The classic axes must be known: some compute demand and some memory demand."""
    compute = any(r.startswith("compute.") for r in bounds.seconds)
    memory = any(r.startswith("memory.") for r in bounds.seconds)
    return compute and memory and (bounds.bound_s or 0.0) > 0.0


def classify(bounds: Bounds, efficiency: float | None, t: Thresholds) -> Class:
    if not has_enough_data(bounds):
        return "insufficient-data"
    return classify_ranked(bounds.ranked(), efficiency, t)


def classify_ranked(
    ranked: list[tuple[str, float]], efficiency: float | None, t: Thresholds
) -> Class:
    """Class from resources ranked by time (largest first) and the efficiency."""
    if efficiency is None or not ranked:
        return "insufficient-data"
    if efficiency < t.below_roofs_efficiency:
        return "below-roofs"
    if len(ranked) > 1 and ranked[1][1] >= (1.0 - t.co_bound_margin) * ranked[0][1]:
        return "co-bound"
    return "bound"


def verdict(
    klass: Class,
    bounds: Bounds,
    efficiency: float | None,
    t: Thresholds,
) -> str:
    """One sentence with the numbers and the thresholds that decided it."""
    ranked = bounds.ranked()
    limits = (
        f"(co-bound margin {t.co_bound_margin:.0%}, "
        f"below-roofs threshold {t.below_roofs_efficiency:.0%})"
    )
    if klass == "insufficient-data":
        missing = [r for r in bounds.unknown if r.startswith(("compute.", "memory."))]
        what = ", ".join(missing) if missing else "FLOPs or bytes"
        return f"insufficient data: no demand known for {what}"
    top, top_s = ranked[0]
    eff = f"{efficiency:.0%}" if efficiency is not None else "?"
    qualifier = _unknown_clause(bounds, efficiency)
    runner = ""
    if len(ranked) > 1 and top_s > 0:
        runner = f"; runner-up {ranked[1][0]} at {ranked[1][1] / top_s:.0%} of it"
    if klass == "below-roofs":
        return f"below all roofs: {eff} of the {top} bound{runner}{qualifier} {limits}"
    if klass == "co-bound":
        return (
            f"co-bound by {top} and {ranked[1][0]}: {eff} of the bound{runner}{qualifier} {limits}"
        )
    return f"{top}-bound at {eff} of its roof{runner}{qualifier} {limits}"


def _unknown_clause(bounds: Bounds, efficiency: float | None) -> str:
    """The bound from known resources is a lower bound all the same; an unknown compute
    unit or memory level could only raise it, so the efficiency is at least the one
    shown and the headroom at most."""
    missing = [r for r in bounds.unknown if r.startswith(("compute.", "memory."))]
    if not missing or efficiency is None or efficiency <= 0:
        return ""
    return (
        f"; no demand known for {', '.join(missing)}, which could only raise the bound: "
        f"efficiency at least {efficiency:.0%}, headroom at most {1 / efficiency:.3g}x"
    )
