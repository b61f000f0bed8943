"""Problems found in specs: errors and warnings as data, each located."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True, order=True)
class Problem:
    """One problem in one file, at a line and column (1-based; 0 when unknown)."""

    file: str
    line: int
    column: int
    path: str  # the path inside the document, e.g. "variants[0].launches[1].measurement.time"
    message: str
    severity: Severity = Severity.ERROR
    code: str = ""  # a stable identifier of the rule or check

    def format(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}" if self.line else self.file
        path = f" {self.path}:" if self.path else ""
        label = "" if self.severity is Severity.ERROR else f" {self.severity.value}:"
        return f"{where}:{label}{path} {self.message}"

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "path": self.path,
            "message": self.message,
            "severity": self.severity.value,
            "code": self.code,
        }


def format_path(parts: Iterable[str | int]) -> str:
    """``("variants", 0, "id")`` -> ``variants[0].id``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out


def errors(problems: Iterable[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity is Severity.ERROR]


def warnings(problems: Iterable[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity is Severity.WARNING]


class SpecError(Exception):
    """Raised by the library when specs are invalid; carries every problem."""

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(problems, key=_sort_key)
        super().__init__("\n".join(p.format() for p in self.problems))


def _sort_key(p: Problem) -> tuple[str, int, int, str, str]:
    return (p.file, p.line, p.column, p.path, p.message)


def sort_problems(problems: Iterable[Problem]) -> list[Problem]:
    return sorted(problems, key=_sort_key)
