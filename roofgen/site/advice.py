"""Recommendations on the case pages: the roof summary of each launch, then the
recommendations the rules (:mod:`roofgen.advice`) gave for it and for its variant.

Text here is plain (not Markdown): the page escapes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from roofgen.advice import Advice, Recommendation
from roofgen.advice.summary import headline, summary, unmeasured
from roofgen.analysis.analyse import CaseResult, LaunchResult

__all__ = [
    "AdviceGroup",
    "AdviceItem",
    "advice_groups",
    "recommendations",
    "variant_advice",
]


def recommendations(
    launch_result: LaunchResult, names: Mapping[str, str] | None = None
) -> list[str]:
    """The roof summary of ``launch_result``: one paragraph per point, most important
    first (``names`` maps resources such as ``memory.hbm`` to display names)."""
    return summary(launch_result, names)


@dataclass(frozen=True)
class AdviceItem:
    title: str
    severity: str
    text: str
    gain: str  # the gain bound in words, "" without one
    techniques: tuple[tuple[str, str], ...]  # (name, summary)
    metrics: tuple[str, ...]
    rule: str


@dataclass(frozen=True)
class AdviceGroup:
    variant: str
    kernel: str
    calls: int
    paragraphs: tuple[str, ...]
    items: tuple[AdviceItem, ...] = ()


def _item(r: Recommendation) -> AdviceItem:
    gain = r.gain_text[0].upper() + r.gain_text[1:] + "." if r.gain_text else ""
    if gain and gain.lower().rstrip(".") in r.text.lower():
        gain = ""  # the message already says it
    return AdviceItem(
        title=r.title,
        severity=r.severity,
        text=r.text,
        gain=gain,
        techniques=tuple((t.name, t.summary) for t in r.techniques),
        metrics=r.metrics,
        rule=r.rule,
    )


def advice_groups(
    case: CaseResult, names: Mapping[str, Mapping[str, str]], advice: Advice | None
) -> tuple[AdviceGroup, ...]:
    """One group per launch: its roof summary and its recommendations.

    ``names`` maps each machine id to its resources' display names."""
    groups = []
    for v in case.variants:
        shown = names.get(v.machine, {})
        for r in v.launches:
            paragraphs = [headline(r, shown)]
            rest = unmeasured(r, shown)
            if rest and r.klass != "insufficient-data":
                paragraphs.append(rest)
            found = (
                advice.for_launch(case.case.id, v.variant, r.index) if advice is not None else ()
            )
            groups.append(
                AdviceGroup(
                    v.variant, r.kernel, r.calls, tuple(paragraphs), tuple(map(_item, found))
                )
            )
    return tuple(groups)


def variant_advice(case: CaseResult, advice: Advice | None) -> tuple[AdviceGroup, ...]:
    """One group per variant that has recommendations of its own."""
    if advice is None:
        return ()
    out = []
    for v in case.variants:
        found = advice.for_variant(case.case.id, v.variant)
        if found:
            out.append(AdviceGroup(v.variant, "", 1, (), tuple(map(_item, found))))
    return tuple(out)
