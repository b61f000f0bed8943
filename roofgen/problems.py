"""Problems found in specs: errors and warnings as data, each located."""

from __future__ import annotations

import re
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
        """``file:line:col: path: message`` on one line (control characters in the file
        name, such as a newline, are written escaped)."""
        file = _one_line(self.file)
        where = f"{file}:{self.line}:{self.column}" if self.line else file
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


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_$.-]+$")


def format_path(parts: Iterable[str | int]) -> str:
    """``("variants", 0, "id")`` -> ``variants[0].id``; a key that is not a plain word
    is quoted: ``("shape", "a b")`` -> ``shape['a b']``, so that a path never holds
    spaces, colons or line breaks that would garble a ``file:line:col: path: message``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(part) and len(part) <= 40:
            out += ("." if out else "") + part
        else:
            out += f"[{_quote(part)}]"
    return out


def _quote(key: str) -> str:
    text = repr(key)  # escapes line breaks and control characters
    return text if len(text) <= 40 else text[:36] + "...'"


def errors(problems: Iterable[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity is Severity.ERROR]


def warnings(problems: Iterable[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity is Severity.WARNING]


class SpecError(Exception):
    """Raised by the library when specs are invalid; carries every problem."""

    SHOWN = 10  # problems listed by str(); every one is in .problems

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(problems, key=_sort_key)
        super().__init__("\n".join(p.format() for p in self.problems))

    def __str__(self) -> str:
        n = len(self.problems)
        lines = [f"{n} problem(s) in the specs:"] if n != 1 else []
        lines += [p.format() for p in self.problems[: self.SHOWN]]
        if n > self.SHOWN:
            lines.append(f"... and {n - self.SHOWN} more (all in .problems)")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """A table of every problem, for Jupyter."""
        from html import escape

        head = "".join(f"<th>{h}</th>" for h in ("file", "line", "column", "path", "message",
                                                  "severity"))  # fmt: skip
        rows = "".join(
            "<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in (
                p.file, p.line, p.column, p.path, p.message, p.severity.value)) + "</tr>"
            for p in self.problems
        )  # fmt: skip
        return (f"<p><b>roofgen.SpecError</b>: {len(self.problems)} problem(s)</p>"
                f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")  # fmt: skip


def _sort_key(p: Problem) -> tuple[str, int, int, str, str]:
    return (p.file, p.line, p.column, p.path, p.message)


def sort_problems(problems: Iterable[Problem]) -> list[Problem]:
    return sorted(problems, key=_sort_key)


def _one_line(text: str) -> str:
    """``text`` with control characters escaped (``\\n``), so it cannot split a line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)
