"""The verdict of a diff at kernel level: which kernels got faster or slower, by how much.

A reviewer asks "which kernels moved?", so the verdict counts launches (a kernel in a
variant), not variants. A kernel is *faster* when its speedup clears the measurement noise
(the timing intervals do not overlap, :mod:`roofgen.analysis.compare`) and the threshold
(speedup at least ``1 + threshold``); *slower* when it is a significant regression more
than ``threshold`` slower (head time over base time above ``1 + threshold``, as the gate
``--fail-on-regression`` measures it). Everything else changed is *unchanged* (within noise
or under the threshold) or of *unknown noise* (a side has no timing interval; listed apart
when it moved beyond the threshold, since nothing says whether the move is real). Pure.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from roofgen.report.mdtext import code
from roofgen.review.diff import Change, Diff

Kind = Literal["faster", "slower", "unchanged", "unknown", "added", "removed"]

#: Default threshold of the verdict (a fraction): 5%.
DEFAULT_THRESHOLD = 0.05


@dataclass(frozen=True)
class KernelChange:
    """One changed launch, classified, with the short label the verdict names it by."""

    change: Change
    kind: Kind
    label: str  # kernel id, qualified by variant and case only where needed to be unique


def kind_of(c: Change, threshold: float) -> Kind:
    if c.status != "changed":
        return c.status
    s = c.speedup
    if s is None:
        return "unchanged"
    beyond = s.value >= 1 + threshold or c.slowdown() > threshold
    if c.verdict == "faster" and s.value >= 1 + threshold:
        return "faster"
    if c.verdict == "regression" and c.slowdown() > threshold:
        return "slower"
    if c.verdict == "unknown noise" and beyond:
        return "unknown"
    return "unchanged"


def _labels(changes: tuple[Change, ...]) -> list[str]:
    """Kernel ids, made unique: ``rmsnorm``, else ``rmsnorm/fused``, else
    ``norm/rmsnorm/fused``; ``#2`` for the second launch of a kernel in a variant."""

    def label(c: Change, depth: int) -> str:
        parts = ([c.kernel], [c.kernel, c.variant], [c.case, c.kernel, c.variant])[depth]
        text = "/".join(parts)
        return text + (f"#{c.occurrence}" if c.occurrence > 1 else "")

    out = []
    for depth in range(3):
        out = [label(c, depth) for c in changes]
        if len(set(out)) == len(out):
            return out
    return out


def kernels(d: Diff, threshold: float) -> list[KernelChange]:
    """Every changed launch of ``d``, classified: faster first (largest speedup first),
    then slower (largest slowdown first), then the rest in the diff's order."""
    out = [KernelChange(c, kind_of(c, threshold), label)
           for c, label in zip(d.launches, _labels(d.launches), strict=True)]  # fmt: skip
    order = {"faster": 0, "slower": 1, "unknown": 2, "unchanged": 3, "added": 4, "removed": 5}

    def key(k: KernelChange) -> tuple[int, float]:
        s = k.change.speedup
        magnitude = abs(math.log(s.value)) if s is not None and s.value > 0 else 0.0
        return order[k.kind], -magnitude

    return sorted(out, key=key)


def _named(items: list[KernelChange], shown: int) -> str:
    parts = [f"{code(k.label)} {k.change.speedup.value:.2f}x" for k in items[:shown]
             if k.change.speedup is not None]  # fmt: skip
    if len(items) > shown:
        parts.append(f"and {len(items) - shown} more")
    return ", ".join(parts)


def verdict_line(d: Diff, threshold: float, shown: int = 3) -> str:
    """``2 kernels faster: `rmsnorm` 1.27x, `gate` 1.08x; 1 slower: `up-proj` 0.92x;
    3 within noise or threshold (threshold 5%)``: the kernels that moved, by name,
    largest first; then kernels and cases added or removed, and roof changes."""
    ks = kernels(d, threshold)
    by = Counter(k.kind for k in ks)
    parts = []
    faster = [k for k in ks if k.kind == "faster"]
    slower = [k for k in ks if k.kind == "slower"]
    unknown = [k for k in ks if k.kind == "unknown"]
    if faster:
        noun = "kernel" if len(faster) == 1 else "kernels"
        parts.append(f"{len(faster)} {noun} faster: {_named(faster, shown)}")
    if slower:
        noun = "" if faster else (" kernel" if len(slower) == 1 else " kernels")
        parts.append(f"{len(slower)}{noun} slower: {_named(slower, shown)}")
    if not faster and not slower:
        parts.append("no kernel faster or slower" if ks else "no kernel changed")
    if unknown:
        parts.append(f"{len(unknown)} moved with unknown noise (no timing interval): "
                     f"{_named(unknown, shown)}")  # fmt: skip
    if by["unchanged"]:
        parts.append(f"{by['unchanged']} within noise or threshold")
    for kind in ("added", "removed"):
        if by[kind]:
            parts.append(f"{by[kind]} kernel{'s' if by[kind] > 1 else ''} {kind}")
    if d.cases_added:
        parts.append(f"{len(d.cases_added)} new case{'s' if len(d.cases_added) > 1 else ''}")
    if d.cases_removed:
        n = len(d.cases_removed)
        parts.append(f"{n} case{'s' if n > 1 else ''} removed")
    if d.roofs:
        parts.append(f"{len(d.roofs)} roof value(s) changed")
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + f" (threshold {threshold * 100:g}%)"
