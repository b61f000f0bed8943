"""The method library (seed 001, section 8): cases gathered by the pattern they used,
by the bottleneck they addressed and by operator, each with its measured effect.

The effect of a case is its fastest variant against its first: the kernel speedup
(with its noise verdict), the end-to-end speedup where both were timed, and how the
binding resource moved (:class:`roofgen.site.listing.Effect`). Cases with a single
variant have no effect to show.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from roofgen.resources import class_label
from roofgen.site.listing import CaseListing
from roofgen.site.pagetypes import (
    IndexGroup,
    IndexPage,
    IndexRow,
    NavEntry,
    anchor,
)

__all__ = ["METHOD_PAGES", "method_nav", "method_pages"]

PATTERNS_PATH = "methods/patterns/index.md"
BOTTLENECKS_PATH = "methods/bottlenecks/index.md"
OPERATORS_PATH = "methods/operators/index.md"
METHOD_PAGES = (
    ("By pattern", PATTERNS_PATH),
    ("By bottleneck", BOTTLENECKS_PATH),
    ("By operator", OPERATORS_PATH),
)
COLUMNS = ("Change", "Kernel speedup", "Noise", "End-to-end speedup", "Binding")

PATTERNS = {
    "tiling": "Load each tile once into shared memory or registers and reuse it many times.",
    "fusion": "Compute neighbouring operators in one kernel; intermediates never leave the chip.",
    "online-reduction": "Running statistics, rescaled as they grow: one pass instead of several.",
    "persistent-kernel": "One grid sized to the GPU takes the work in a loop: no launch gaps.",
    "specialisation": "Warps or kernels specialised for one job (producer and consumer warps, "
    "shape-specific code).",
    "quantisation": "Fewer bits per value: fewer bytes to move, a higher compute roof.",
    "layout": "Data arranged for the access pattern: coalesced loads, swizzled tiles, L2 reuse.",
    "vectorisation": "Wide (16-byte) loads and stores: fewer instructions per byte.",
    "split-k": "The reduction dimension split across blocks so small problems fill the GPU.",
    "stream-k": "Work split evenly across a persistent grid: no tail of idle SMs.",
    "cuda-graphs": "A step's launches captured once and replayed with one launch.",
    "overlap": "Communication or copies run while computation proceeds.",
    "other": "Other changes.",
}


def _groups(
    keyed: Mapping[str, list[IndexRow]], labels: Mapping[str, str], prefix: str,
    descriptions: Mapping[str, str] | None = None,
) -> tuple[IndexGroup, ...]:  # fmt: skip
    return tuple(
        IndexGroup(
            key,
            labels.get(key, key),
            anchor(prefix, key),
            tuple(rows),
            (descriptions or {}).get(key, ""),
        )
        for key, rows in sorted(keyed.items())
    )


def _label(kind: str, names: set[str]) -> str:
    """``Device memory (HBM2, HBM3)``: the kind, and the resources' names where they differ."""
    label = class_label(kind)
    shown = sorted(names - {label})
    return f"{label} ({', '.join(shown)})" if shown else label


def method_pages(cases: Sequence[CaseListing]) -> tuple[IndexPage, ...]:
    """The three method-library pages: by pattern, by bottleneck, by operator."""
    by_pattern: dict[str, list[IndexRow]] = defaultdict(list)
    by_bottleneck: dict[str, list[IndexRow]] = defaultdict(list)
    by_operator: dict[str, list[IndexRow]] = defaultdict(list)
    bottleneck_names: dict[str, set[str]] = defaultdict(set)
    for c in cases:
        effect = c.effect
        if effect is None:  # one variant: no effect to show
            continue
        for pattern in effect.patterns:
            by_pattern[pattern].append(effect.row)
        by_bottleneck[effect.bottleneck].append(effect.row)
        if effect.bottleneck_name is not None:
            bottleneck_names[effect.bottleneck].add(effect.bottleneck_name)
        for op in effect.operators:
            by_operator[op].append(effect.row)
    bottleneck_labels = {k: _label(k, bottleneck_names[k]) for k in by_bottleneck}
    intro = (
        "Each case's fastest variant against its first: the kernel speedup with its "
        "interval and whether it clears the timing noise, the end-to-end speedup where both "
        "were timed, and how the binding resource moved."
    )
    return (
        IndexPage(
            PATTERNS_PATH,
            "Methods by pattern",
            "The optimisation patterns the cases used, each with its measured effect. " + intro,
            COLUMNS,
            _groups(by_pattern, {}, "pattern", PATTERNS),
        ),
        IndexPage(
            BOTTLENECKS_PATH,
            "Methods by bottleneck",
            "Cases by the resource that bound their baseline: what was tried against each "
            "bottleneck, and what it did. " + intro,
            COLUMNS,
            _groups(by_bottleneck, bottleneck_labels, "bottleneck"),
        ),
        IndexPage(
            OPERATORS_PATH,
            "Methods by operator",
            "Cases by the operators their kernels compute. " + intro,
            COLUMNS,
            _groups(by_operator, {}, "op"),
        ),
    )


def method_nav() -> tuple[NavEntry, ...]:
    return tuple(NavEntry(title, path) for title, path in METHOD_PAGES)
