"""The verdict card at the top of a case page: what binds, how far from the roof, the
biggest measured win and the top recommendation, each read from the results (the
fastest variant's analysis, the case's comparison, the rules' advice)."""

from __future__ import annotations

from collections.abc import Mapping

from roofgen.advice import Advice
from roofgen.analysis.analyse import CaseResult, VariantResult
from roofgen.analysis.compare import VariantComparison
from roofgen.model import Machine
from roofgen.site.comparison import fmt_speedup
from roofgen.site.names import display_name, resource_names
from roofgen.site.pagetypes import Verdict
from roofgen.units import fmt_percent, fmt_ratio

__all__ = ["best_comparison", "fastest_variant", "verdict"]


def fastest_variant(case: CaseResult) -> VariantResult:
    """The fastest variant (the first of equals, by position: linear in the variants)."""
    ranked = enumerate(case.variants)
    return max(ranked, key=lambda iv: (iv[1].speedup_vs_first, -iv[0]))[1]


def best_comparison(case: CaseResult) -> VariantComparison | None:
    """The variant compared with the baseline that has the largest speedup (the first
    of equals); None for a case of one variant."""
    compared = case.comparison.variants
    if not compared:
        return None
    return max(enumerate(compared), key=lambda ic: (ic[1].speedup.value, -ic[0]))[1]


def _win(case: CaseResult) -> str:
    best = best_comparison(case)
    if best is None:
        return "one variant only: nothing to compare"
    text = f"{fmt_speedup(best.speedup)} for {best.variant} against {best.baseline}"
    text += f", {best.speedup.noise}"
    e2e = next((e for e in case.comparison.end_to_end if e.variant == best.variant), None)
    if e2e is not None:
        text += f"; {fmt_ratio(e2e.measured)} end to end"
    return text


def _recommendation(case: CaseResult, fastest: VariantResult, advice: Advice | None) -> str:
    if advice is None:
        return "none: no rules were run"
    found = list(advice.for_variant(case.case.id, fastest.variant))
    for r in fastest.launches:
        found += advice.for_launch(case.case.id, fastest.variant, r.index)
    if not found:
        return "none: no rule applies to the fastest variant"
    top = found[0]
    return f"{top.title}: {top.text}"


def verdict(case: CaseResult, machines: Mapping[str, Machine], advice: Advice | None) -> Verdict:
    fastest = fastest_variant(case)
    names = resource_names(machines[fastest.machine])
    binding = display_name(names, fastest.binding)
    if fastest.efficiency is None:
        distance = "unknown: a roof or a measurement is missing"
    else:
        distance = f"{fmt_percent(fastest.efficiency)} of the roof"
        if fastest.headroom is not None:
            distance += f", at most {fmt_ratio(fastest.headroom)} left"
    return Verdict(
        variant=fastest.variant,
        binding=binding,
        klass=fastest.klass,
        distance=distance,
        win=_win(case),
        recommendation=_recommendation(case, fastest, advice),
    )
