"""The method library (seed 001, section 8): cases gathered by the pattern they used,
by the bottleneck they addressed and by operator, each with its measured effect.

The effect of a case is its fastest variant against its first: the kernel speedup
(with its noise verdict), the end-to-end speedup where both were timed, and how the
binding resource moved. Cases with a single variant have no effect to show.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from roofgen.analysis.analyse import CaseResult, VariantResult
from roofgen.model import Machine
from roofgen.resources import class_label, resource_class, resource_names
from roofgen.site.comparison import fmt_speedup
from roofgen.site.pagetypes import (
    IndexGroup,
    IndexPage,
    IndexRow,
    Link,
    NavEntry,
    anchor,
    case_path,
)
from roofgen.units import fmt_ratio

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


def _kind(resource: str | None, machine: Machine) -> str:
    """``memory.hbm`` -> ``memory.device``; ``compute.tensor`` -> ``compute.<unit kind>``."""
    return "insufficient-data" if resource is None else resource_class(resource, machine)


def _best(case: CaseResult) -> VariantResult:
    return max(case.variants[1:], key=lambda v: (v.speedup_vs_first, -case.variants.index(v)))


def _effect(case: CaseResult, machines: Mapping[str, Machine]) -> IndexRow:
    comparison = case.comparison
    best = _best(case)
    vc = comparison.variant(best.variant)
    assert vc is not None
    names = resource_names(machines[best.machine])
    e2e = next((e for e in comparison.end_to_end if e.variant == best.variant), None)
    return IndexRow(
        Link(case.case.title, case_path(case.case.id)),
        (
            f"{case.variants[0].variant} → {best.variant}",
            fmt_speedup(vc.speedup),
            vc.speedup.noise,
            fmt_ratio(e2e.measured) if e2e is not None else "n/a",
            vc.movement.text(names),
        ),
    )


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


def method_pages(
    cases: Sequence[CaseResult], machines: Mapping[str, Machine]
) -> tuple[IndexPage, ...]:
    """The three method-library pages: by pattern, by bottleneck, by operator."""
    with_effect = [c for c in cases if len(c.variants) > 1]
    effects = {c.case.id: _effect(c, machines) for c in with_effect}
    by_pattern: dict[str, list[IndexRow]] = defaultdict(list)
    by_bottleneck: dict[str, list[IndexRow]] = defaultdict(list)
    by_operator: dict[str, list[IndexRow]] = defaultdict(list)
    bottleneck_names: dict[str, set[str]] = defaultdict(set)
    for c in with_effect:
        row = effects[c.case.id]
        for pattern in c.case.patterns or ("other",):
            by_pattern[pattern].append(row)
        base = c.variants[0]
        machine = machines[base.machine]
        kind = _kind(base.binding, machine)
        by_bottleneck[kind].append(row)
        if base.binding is not None:
            bottleneck_names[kind].add(resource_names(machine).get(base.binding, base.binding))
        for op in dict.fromkeys(k.operator.kind for k in c.case.kernels):
            by_operator[op].append(row)
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
