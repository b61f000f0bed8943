"""Measurement quality on the case pages: the plausibility and hygiene findings of a
case, numbered, and the markers that sit beside the figures they weaken."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from roofgen.analysis.findings import Finding
from roofgen.model import Case

__all__ = ["Mark", "QualityItem", "mark_rows", "marks_for", "quality_items"]

T = TypeVar("T", bound=Any)

#: Findings on these parts of a measurement weaken its time; the others its bound.
_TIME_PARTS = frozenset({"time", "clocks", "timing"})


@dataclass(frozen=True)
class Mark:
    """A marker beside a figure: ``text`` links to the finding at ``anchor``."""

    text: str
    anchor: str
    severity: str


@dataclass(frozen=True)
class QualityItem:
    number: int
    anchor: str
    severity: str  # warning or note
    rule: str
    where: str  # "naive / decode at seq_kv=1024", "end to end of flash", "method"
    message: str
    variant_index: int | None
    launch_index: int | None
    weakens: str  # "time", "bound" or "" (not a launch's figure)


def _where(case: Case, path: tuple[str | int, ...]) -> tuple[str, int | None, int | None]:
    if len(path) >= 4 and path[0] == "variants" and path[2] == "launches":
        vi, li = int(path[1]), int(path[3])
        variant = case.variants[vi]
        launch = variant.launches[li]
        text = f"{variant.id} / {launch.kernel}"
        if len(path) >= 6 and path[4] == "sweep":
            point = launch.sweep[int(path[5])]
            from roofgen.operators.sweep import label

            text += f" at {label(point)}"
        return text, vi, li
    if path and path[0] == "end_to_end" and len(path) > 1:
        return f"end to end of {path[1]}", None, None
    return ".".join(str(p) for p in path) or "case", None, None


def _weakens(path: tuple[str | int, ...]) -> str:
    parts = {p for p in path if isinstance(p, str)}
    if "measurement" not in parts:
        return ""
    return "time" if parts & _TIME_PARTS else "bound"


def quality_items(case: Case, findings: Sequence[Finding]) -> tuple[QualityItem, ...]:
    """The case's findings, warnings first, in the order of the document."""
    mine = [f for f in findings if f.case == case.id]
    mine.sort(key=lambda f: (f.severity != "warning", [str(p).zfill(6) for p in f.path], f.rule))
    items = []
    for number, f in enumerate(mine, start=1):
        where, vi, li = _where(case, f.path)
        items.append(
            QualityItem(
                number=number,
                anchor=f"quality-{number}",
                severity=f.severity,
                rule=f.rule,
                where=where,
                message=f.message,
                variant_index=vi,
                launch_index=li,
                weakens=_weakens(f.path),
            )
        )
    return tuple(items)


def marks_for(
    items: Sequence[QualityItem], variant_index: int, launch_index: int, weakens: str
) -> tuple[Mark, ...]:
    """Markers for one figure (``weakens``: "time" or "bound") of one launch."""
    return tuple(
        Mark(("⚠" if i.severity == "warning" else "ⓘ") + str(i.number), i.anchor, i.severity)
        for i in items
        if i.variant_index == variant_index
        and i.launch_index == launch_index
        and i.weakens == weakens
    )


def mark_rows(sections: Sequence[T], items: Sequence[QualityItem]) -> tuple[T, ...]:
    """The variant sections with each launch row's markers set (time and bound)."""
    out = []
    for vi, section in enumerate(sections):
        rows = tuple(
            replace(
                row,
                time_marks=marks_for(items, vi, li, "time"),
                bound_marks=marks_for(items, vi, li, "bound"),
            )
            for li, row in enumerate(section.launches)
        )
        out.append(replace(section, launches=rows))
    return tuple(out)
