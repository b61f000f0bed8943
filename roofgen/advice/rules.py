"""Recommendation rules as data: parsing, team overrides, and checks of the data.

A rule file (``roofgen/rules/recommendations.yaml``, or a team's rules file) holds
``recommendations:`` (the rules) and ``techniques:`` (what the rules may name). A
team's rule with the id of a shipped rule replaces it; an entry without a message only
changes the shipped rule's severity, enabled flag or title, so ``{id: x, severity:
off}`` (or ``enabled: false``) switches rule ``x`` off.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = [
    "PLACEHOLDERS",
    "Conditions",
    "Range",
    "RecRule",
    "RuleSet",
    "Technique",
    "merge",
    "parse",
    "rule_problems",
]

SET_KEYS = (
    "class",
    "binding",
    "runner_up",
    "operator",
    "precision",
    "phase",
    "history",
    "missing",
    "evidence",
    "modelled",
)
#: Conditions that hold when every listed value holds (the others: when any does).
ALL_OF = frozenset({"history"})
SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2}

#: The placeholders a message may use (every launch and variant fact, formatted).
PLACEHOLDERS = frozenset(
    {
        "case",
        "variant",
        "kernel",
        "kernel_id",
        "binding",
        "runner_up",
        "runner_up_ratio",
        "class",
        "efficiency",
        "efficiency_datasheet",
        "headroom",
        "gain",
        "to_roof",
        "beyond",
        "time",
        "bound",
        "occupancy",
        "waves",
        "grid",
        "block",
        "grid_per_sm",
        "syncs",
        "missing",
        "metrics",
        "share",
        "e2e_share",
        "limit",
        "speedup",
        "noise",
        "movement",
        "baseline",
        "latest",
        "later",
        "operator",
        "precision",
        "phase",
        "modelled",
        "launches",
        "memory_bound_launches",
        "clock_scale",
        "intensity",
        "missing_caches",
        "tensor_speedup",
        "tensor_instructions",
        "libraries",
        "architecture",
        "faster_precisions",
    }
)


@dataclass(frozen=True)
class Range:
    low: float | None = None
    high: float | None = None

    def holds(self, value: float | None) -> bool:
        if value is None:
            return False  # a fact that is not known never matches
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)


@dataclass(frozen=True)
class Conditions:
    sets: dict[str, tuple[str, ...]] = field(default_factory=dict)
    ranges: dict[str, Range] = field(default_factory=dict)


@dataclass(frozen=True)
class Technique:
    id: str
    name: str
    summary: str = ""


@dataclass(frozen=True)
class RecRule:
    id: str
    message: str
    scope: str = "launch"
    severity: str = "medium"
    enabled: bool = True
    title: str = ""
    when: Conditions = field(default_factory=Conditions)
    unless: tuple[Conditions, ...] = ()  # the rule does not apply when any of these holds
    gain: str = "binding"
    techniques: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    why: str = ""

    @property
    def active(self) -> bool:
        return self.enabled and self.severity != "off"


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[RecRule, ...]
    techniques: dict[str, Technique]


def _conditions(data: Mapping[str, Any] | None) -> Conditions:
    data = data or {}
    sets = {k: tuple(str(v) for v in data[k]) for k in SET_KEYS if k in data}
    ranges = {k: Range(v.get("min"), v.get("max")) for k, v in data.items() if k not in SET_KEYS}
    return Conditions(sets, ranges)


def _unless(data: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None) -> tuple[Conditions, ...]:
    """``unless``: one set of conditions, or a list of them (any one holding skips)."""
    if data is None:
        return ()
    return tuple(_conditions(d) for d in ([data] if isinstance(data, Mapping) else data))


def _enabled(value: Any) -> bool:
    return value not in (False, "off")


def _rule(entry: Mapping[str, Any]) -> RecRule:
    return RecRule(
        id=entry["id"],
        message=entry.get("message", ""),
        scope=entry.get("scope", "launch"),
        severity=entry.get("severity", "medium"),
        enabled=_enabled(entry.get("enabled", True)),
        title=entry.get("title", ""),
        when=_conditions(entry.get("when")),
        unless=_unless(entry.get("unless")),
        gain=entry.get("gain", "binding"),
        techniques=tuple(entry.get("techniques", ())),
        metrics=tuple(entry.get("metrics", ())),
        why=entry.get("why", ""),
    )


def parse(data: Mapping[str, Any]) -> tuple[list[RecRule], dict[str, Technique], list[Any]]:
    """Rules, techniques, and the raw entries (for :func:`merge`) of one rules document."""
    entries = list(data.get("recommendations", []))
    techniques = {
        key: Technique(key, value["name"], value.get("summary", ""))
        for key, value in data.get("techniques", {}).items()
    }
    return [_rule(e) for e in entries], techniques, entries


def merge(shipped: RuleSet, team: Mapping[str, Any]) -> RuleSet:
    """``shipped`` with a team's rules document applied (same id replaces; an entry
    without a message adjusts severity, enabled and title only)."""
    rules, techniques, entries = parse(team)
    by_id = {r.id: r for r in shipped.rules}
    for rule, entry in zip(rules, entries, strict=True):
        base = by_id.get(rule.id)
        if base is not None and "message" not in entry:
            changes = {k: rule.__dict__[k] for k in ("severity", "title") if k in entry}
            if "enabled" in entry:
                changes["enabled"] = rule.enabled
            by_id[rule.id] = replace(base, **changes)
        else:
            by_id[rule.id] = rule
    return RuleSet(tuple(by_id.values()), {**shipped.techniques, **techniques})


def _placeholders(message: str) -> list[str]:
    try:
        return [name for _, name, _, _ in string.Formatter().parse(message) if name is not None]
    except ValueError as exc:
        return [f"!{exc}"]


def rule_problems(
    data: Mapping[str, Any], known_techniques: Sequence[str] = (), shipped_ids: Sequence[str] = ()
) -> list[tuple[tuple[str | int, ...], str]]:
    """``(path, message)`` for every fault of the recommendation rules in ``data`` that
    the schema cannot see: unknown placeholders and techniques, a new rule without a
    message."""
    techniques = set(known_techniques) | set(data.get("techniques", {}))
    problems: list[tuple[tuple[str | int, ...], str]] = []
    for i, entry in enumerate(data.get("recommendations", [])):
        path: tuple[str | int, ...] = ("recommendations", i)
        if "message" not in entry and entry["id"] not in shipped_ids:
            problems.append(
                (
                    path,
                    f"rule {entry['id']!r} has no message and replaces no shipped rule: "
                    "give it a message",
                )
            )
        for name in _placeholders(entry.get("message", "")):
            if name.startswith("!"):
                problems.append(((*path, "message"), f"the message is not a template: {name[1:]}"))
            elif name not in PLACEHOLDERS:
                known = ", ".join(sorted(PLACEHOLDERS))
                problems.append(
                    ((*path, "message"), f"unknown placeholder {{{name}}}; known: {known}")
                )
        for j, technique in enumerate(entry.get("techniques", [])):
            if technique not in techniques:
                listed = ", ".join(sorted(techniques))
                problems.append(
                    (
                        (*path, "techniques", j),
                        f"unknown technique {technique!r}; known: {listed}",
                    )
                )
    return problems


def severity_rank(rule: RecRule) -> int:
    return SEVERITY_RANK.get(rule.severity, 1)
