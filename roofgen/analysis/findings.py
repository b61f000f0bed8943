"""What plausibility and hygiene checks share: their rules, findings and the
launch they look at."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from roofgen.analysis.analyse import LaunchResult
from roofgen.model import Case, Launch, Machine

PathKey = tuple[str | int, ...]


@dataclass(frozen=True)
class Rule:
    id: str
    check: str
    severity: str  # warning, note or off
    message: str
    params: dict[str, Any]


@dataclass(frozen=True)
class Finding:
    case: str
    path: PathKey  # inside the case document
    rule: str
    severity: str
    message: str


@dataclass(frozen=True)
class LaunchContext:
    """One launch (or one shape of a sweep) as a launch check sees it."""

    case: Case
    machine: Machine
    launch: Launch
    result: LaunchResult
    path: PathKey


Hit = tuple[PathKey, dict[str, str]]  # where in the case document, and the message's values
