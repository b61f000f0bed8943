"""The recommendation engine: analysis results and rules in, recommendations out. Pure.

Every active rule of the right scope whose ``when`` conditions all hold, and none of
whose ``unless`` condition sets holds in full, gives one recommendation: its message filled
with the facts' numbers, the gain bound (the headroom to the binding roof and, beyond
it, the runner-up's roof), and the techniques that fit. Recommendations are ordered by
severity, then by their rules' order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from roofgen.advice.facts import Facts, Gain, forget_variants, launch_facts, variant_facts
from roofgen.advice.rules import ALL_OF, Conditions, RecRule, RuleSet, Technique, severity_rank
from roofgen.analysis.analyse import Analysis
from roofgen.model import Machine
from roofgen.resources import resource_names

__all__ = ["Advice", "Recommendation", "advise", "applies", "matches"]


@dataclass(frozen=True)
class Recommendation:
    rule: str
    scope: str  # "launch" or "variant"
    severity: str  # high, medium, low
    title: str
    text: str  # why, with the numbers
    gain: Gain | None
    gain_text: str  # the gain bound in words ("" without one)
    techniques: tuple[Technique, ...]
    metrics: tuple[str, ...]
    case: str
    variant: str
    kernel: str | None = None
    index: int | None = None


@dataclass(frozen=True)
class Advice:
    """Recommendations by launch (case, variant, index) and by variant (case, variant)."""

    launches: dict[tuple[str, str, int], tuple[Recommendation, ...]] = field(default_factory=dict)
    variants: dict[tuple[str, str], tuple[Recommendation, ...]] = field(default_factory=dict)

    def for_launch(self, case: str, variant: str, index: int) -> tuple[Recommendation, ...]:
        return self.launches.get((case, variant, index), ())

    def for_variant(self, case: str, variant: str) -> tuple[Recommendation, ...]:
        return self.variants.get((case, variant), ())

    def __len__(self) -> int:
        """The number of recommendations (it walks them all: test ``is None``, not
        truth, where an ``Advice`` may be missing)."""
        return sum(map(len, self.launches.values())) + sum(map(len, self.variants.values()))


def matches(conditions: Conditions, facts: Facts) -> bool:
    """Whether every condition holds for ``facts`` (``history``: all of the listed tags;
    other lists: any of them; ranges: the number is known and inside)."""
    for key, wanted in conditions.sets.items():
        have = facts.sets.get(key, frozenset())
        if key in ALL_OF:
            if not set(wanted) <= have:
                return False
        elif not set(wanted) & have:
            return False
    return all(r.holds(facts.numbers.get(key)) for key, r in conditions.ranges.items())


def applies(rule: RecRule, facts: Facts) -> bool:
    if not rule.active or rule.scope != facts.scope or not matches(rule.when, facts):
        return False
    return not any(matches(u, facts) for u in rule.unless)


def _ordered(rules: RuleSet, scope: str) -> list[RecRule]:
    """The active rules of ``scope``, by severity, then in the rules' order."""
    ranked = sorted(enumerate(rules.rules), key=lambda ir: (severity_rank(ir[1]), ir[0]))
    return [rule for _, rule in ranked if rule.active and rule.scope == scope]


def _recommend(
    rules: RuleSet, ordered: list[RecRule], facts: Facts, names: Mapping[str, str]
) -> tuple[Recommendation, ...]:
    out = []
    for rule in ordered:
        if not matches(rule.when, facts) or any(matches(u, facts) for u in rule.unless):
            continue
        text = {**facts.text, "metrics": ", ".join(rule.metrics) or "n/a"}
        gain = facts.gain if rule.gain == "binding" else None
        out.append(
            Recommendation(
                rule=rule.id,
                scope=rule.scope,
                severity=rule.severity,
                title=rule.title or rule.id,
                text=" ".join(rule.message.format(**text).split()),
                gain=gain,
                gain_text=gain.text(names) if gain else "",
                techniques=tuple(rules.techniques.get(t, Technique(t, t)) for t in rule.techniques),
                metrics=rule.metrics,
                case=facts.case,
                variant=facts.variant,
                kernel=facts.kernel,
                index=facts.index,
            )
        )
    return tuple(out)


def advise(analysis: Analysis, rules: RuleSet) -> Advice:
    """Recommendations for every launch and every variant of ``analysis``."""
    machines: dict[str, Machine] = {m.machine.id: m.machine for m in analysis.machines}
    names_of = {ident: resource_names(m) for ident, m in machines.items()}
    per_launch, per_variant = _ordered(rules, "launch"), _ordered(rules, "variant")
    advice = Advice()
    for case in analysis.cases:
        comparison = case.comparison
        for vi, v in enumerate(case.variants):
            machine, names = machines[v.machine], names_of[v.machine]
            spec_variant = case.case.variants[vi]
            for r in v.launches:
                measurement = spec_variant.launches[r.index].measurement
                facts = launch_facts(case, vi, r, machine, comparison, measurement)
                found = _recommend(rules, per_launch, facts, names)
                if found:
                    advice.launches[(case.case.id, v.variant, r.index)] = found
            facts = variant_facts(case, vi, machine, comparison)
            found = _recommend(rules, per_variant, facts, names)
            if found:
                advice.variants[(case.case.id, v.variant)] = found
    forget_variants()
    return advice
