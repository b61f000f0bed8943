"""Reading recommendation rules: the shipped file, and a team's rules document."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from roofgen.advice.rules import RuleSet, merge, parse, rule_problems
from roofgen.problems import Problem
from roofgen.spec.yamlload import Document, load_text

__all__ = ["SHIPPED_FILE", "shipped_ruleset", "team_ruleset"]

SHIPPED_FILE = "roofgen/rules/recommendations.yaml"


@cache
def _shipped_data() -> dict[str, Any]:
    text = resources.files("roofgen.rules").joinpath("recommendations.yaml").read_text("utf-8")
    doc, problems = load_text(text, SHIPPED_FILE)
    assert doc is not None and not problems, problems
    data: dict[str, Any] = doc.data
    return data


def shipped_ruleset() -> RuleSet:
    """The recommendation rules and techniques shipped with roofgen."""
    rules, techniques, _ = parse(_shipped_data())
    return RuleSet(tuple(rules), techniques)


def shipped_problems() -> list[tuple[tuple[str | int, ...], str]]:
    """Faults of the shipped rules that the schema cannot see (a test keeps this empty)."""
    return rule_problems(_shipped_data())


def team_ruleset(base: RuleSet, doc: Document) -> tuple[RuleSet, list[Problem]]:
    """``base`` with the recommendation rules of a team's rules document (already
    validated against the rules schema) applied, and the faults found in them."""
    found = rule_problems(
        doc.data, known_techniques=list(base.techniques), shipped_ids=[r.id for r in base.rules]
    )
    problems = [doc.problem(path, message, code="rules.recommendation") for path, message in found]
    if problems:
        return base, problems
    return merge(base, doc.data), []
