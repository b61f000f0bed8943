"""Classification of a bound: bound, co-bound, below all roofs, insufficient data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class VariantRanking:
    """What binds a variant (launches run in order, so their bounds add up).

    ``shares``: per resource, the fraction of the variant's bound time spent in launches
    that resource binds. ``binding``: the resource with the largest share.
    ``without_s``: the variant's bound were the binding resource infinitely fast (the
    sum over launches of calls x the longest time of the other resources);
    ``runner_up``: the resource that binds most of that time.
    """

    bound_s: float
    shares: dict[str, float]
    binding: str | None
    runner_up: str | None
    without_s: float

    def ranked(self) -> list[tuple[str, float]]:
        """The binding resource with the bound, the runner-up with the bound without the
        binding resource (what :func:`classify_ranked` compares)."""
        out = [(self.binding, self.bound_s)] if self.binding is not None else []
        if self.runner_up is not None:
            out.append((self.runner_up, self.without_s))
        return out


def _top(seconds: Mapping[str, float]) -> tuple[str, float] | None:
    return min(seconds.items(), key=lambda kv: (-kv[1], kv[0]), default=None)


def rank_variant(
    launches: Sequence[tuple[int, Mapping[str, float], str | None, float | None]],
) -> VariantRanking:
    """Rank the resources of a variant from its launches' ``(calls, seconds per
    resource, binding resource, bound)``."""
    per_resource: dict[str, float] = {}
    for calls, _, launch_binding, launch_bound in launches:
        if launch_binding is not None and launch_bound is not None:
            per_resource[launch_binding] = (
                per_resource.get(launch_binding, 0.0) + calls * launch_bound
            )
    bound = sum(per_resource.values())
    binding = _top(per_resource)
    if binding is None or bound <= 0:
        return VariantRanking(bound, {}, None, None, 0.0)
    without: dict[str, float] = {}
    for calls, seconds, _, _ in launches:
        nxt = _top({r: s for r, s in seconds.items() if r != binding[0]})
        if nxt is not None:
            without[nxt[0]] = without.get(nxt[0], 0.0) + calls * nxt[1]
    runner = _top(without)
    return VariantRanking(
        bound,
        {r: s / bound for r, s in sorted(per_resource.items(), key=lambda kv: (-kv[1], kv[0]))},
        binding[0],
        runner[0] if runner is not None else None,
        sum(without.values()),
    )


def variant_verdict(
    klass: Class, ranking: VariantRanking, efficiency: float | None, t: Thresholds
) -> str:
    """The verdict of a variant of several launches: what binds, the shares of the bound
    time by binding resource, and the runner-up (what would bind without the first)."""
    if klass == "insufficient-data" or ranking.binding is None:
        return "insufficient data: a launch has no bound"
    top = ranking.binding
    limits = (
        f"(co-bound margin {t.co_bound_margin:.0%}, "
        f"below-roofs threshold {t.below_roofs_efficiency:.0%})"
    )
    eff = f"{efficiency:.0%}" if efficiency is not None else "?"
    parts = [
        f"{share:.0%} in {r}-bound launches" if share >= 0.005 else f"under 1% in {r}-bound"
        for r, share in ranking.shares.items()
    ]
    shares = "; of the bound time " + ", ".join(parts)
    runner = ""
    if ranking.runner_up is not None:
        runner = (
            f"; runner-up {ranking.runner_up}: without {top} the bound would be "
            f"{ranking.without_s / ranking.bound_s:.0%} of it"
        )
    if klass == "below-roofs":
        head = f"below all roofs: {eff} of the bound, mostly {top}"
    elif klass == "co-bound":
        head = f"co-bound by {top} and {ranking.runner_up}: {eff} of the bound"
    else:
        head = f"{top}-bound at {eff} of the bound"
    return f"{head}{shares}{runner} {limits}"
