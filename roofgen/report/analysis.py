"""Analysis results as versioned JSON and as text for a terminal.

Each launch and each variant carries the results of every roofline kind under
``rooflines`` (:mod:`roofgen.analysis.kinds`), written by one rule
(:func:`roofline_json`): a result object becomes an object of its fields and its
properties, named with their units as in the analysis (``bound_s``, ``bus_b``,
``flop_per_j``). A kind added to the registry appears here without a change.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Iterator
from typing import Any

from roofgen.advice import Advice
from roofgen.analysis.analyse import (
    Analysis,
    CaseResult,
    LaunchResult,
    MachineResult,
    VariantResult,
)
from roofgen.analysis.kinds import LAUNCH_KINDS, VARIANT_KINDS
from roofgen.problems import Problem
from roofgen.report.jsontext import Spool, stream
from roofgen.report.sections import add_case_sections
from roofgen.units import fmt_percent, fmt_ratio, fmt_si, fmt_time
from roofgen.version import __version__

OUTPUT_VERSION = 1

UNITS = {
    "time_s": "s",
    "bound_s": "s",
    "lower_bound_s": "s",
    "serial_bound_s": "s",
    "flop": "FLOP",
    "ops": "OP",
    "achieved_flop_per_s": "FLOP/s",
    "attainable_flop_per_s": "FLOP/s",
    "attainable_by_level_flop_per_s": "FLOP/s",
    "intensity_flop_per_byte": "FLOP/B",
    "ridge_flop_per_byte": "FLOP/B",
    "efficiency": "fraction of the bound (bound / measured time)",
    "headroom": "measured time / bound",
    "end_to_end_s": "s",
}


def _coverage(c: Any) -> dict[str, list[str]]:
    return {"covered": list(c.covered), "unknown": list(c.unknown)}


def roofline_json(value: Any) -> Any:
    """A roofline kind's result as JSON values: a result object as an object of its
    fields then its properties (in the order the class defines them), tuples as arrays,
    a non-finite number as null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, str | int):
        return value
    if isinstance(value, dict):
        return {str(k): roofline_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [roofline_json(v) for v in value]
    cls: type = type(value)
    names = _result_names(cls)
    if names is None:
        return value
    return {name: roofline_json(getattr(value, name)) for name in names}


@functools.cache
def _result_names(cls: type) -> tuple[str, ...] | None:
    """A result class's fields then its properties, in the order the class defines
    them (read once per class: the JSON of 1,000 cases reads a million values); None
    for a class that is not a dataclass."""
    if not dataclasses.is_dataclass(cls):
        return None
    fields = tuple(f.name for f in dataclasses.fields(cls))
    return fields + tuple(n for n, attr in vars(cls).items() if isinstance(attr, property))


def _machine_json(m: MachineResult) -> dict[str, Any]:
    return {
        "id": m.machine.id,
        "name": m.machine.name,
        "version": m.machine.version,
        "ridge_flop_per_byte": m.ridge_flop_per_byte,
        "resources": list(m.resources),
        "instruction_ceilings": roofline_json(m.instruction_ceilings),
    }


def launch_json(r: LaunchResult) -> dict[str, Any]:
    return {
        "case": r.case,
        "kernel": r.kernel,
        "variant": r.variant,
        "machine": r.machine,
        "index": r.index,
        "calls": r.calls,
        "time_s": r.time_s,
        "time_statistic": r.time_statistic,
        "flop": r.flop,
        "ops": r.ops,
        "achieved_flop_per_s": r.achieved_flop_per_s,
        "intensity_flop_per_byte": r.intensity_flop_per_byte,
        "attainable_flop_per_s": r.attainable_flop_per_s,
        "attainable_by_level_flop_per_s": r.attainable_by_level_flop_per_s,
        "binding": r.binding,
        "runner_up": r.runner_up,
        "class": r.klass,
        "bound_s": r.bound_s,
        "bound_datasheet_s": r.bounds_datasheet_s,
        "lower_bound_s": r.lower_bound_s,
        "serial_bound_s": r.serial_bound_s,
        "efficiency": r.efficiency,
        "efficiency_by_basis": r.efficiency_by_basis,
        "headroom": r.headroom,
        "roof_basis": r.roof_basis,
        "coverage": _coverage(r.coverage),
        "clock_scale": r.clock_scale,
        "share_of_variant": r.share_of_variant,
        "verdict": r.verdict,
        "facts": list(r.facts),
        "rooflines": {key: roofline_json(r.get(kind)) for key, kind in LAUNCH_KINDS},
    }


def variant_json(v: VariantResult) -> dict[str, Any]:
    return {
        "case": v.case,
        "variant": v.variant,
        "machine": v.machine,
        "time_s": v.time_s,
        "achieved_flop_per_s": v.achieved_flop_per_s,
        "binding": v.binding,
        "runner_up": v.runner_up,
        "binding_shares": v.binding_shares,
        "class": v.klass,
        "bound_s": v.bound_s,
        "lower_bound_s": v.lower_bound_s,
        "serial_bound_s": v.serial_bound_s,
        "efficiency": v.efficiency,
        "efficiency_by_basis": v.efficiency_by_basis,
        "headroom": v.headroom,
        "speedup_vs_first": v.speedup_vs_first,
        "end_to_end_s": v.end_to_end_s,
        "end_to_end_speedup_vs_first": v.end_to_end_speedup_vs_first,
        "coverage": _coverage(v.coverage),
        "verdict": v.verdict,
        "facts": list(v.facts),
        "rooflines": {key: roofline_json(v.get(kind)) for key, kind in VARIANT_KINDS},
        "launches": [launch_json(x) for x in v.launches],
    }


def case_json(c: CaseResult, advice: Advice | None = None) -> dict[str, Any]:
    """One case of the analysis JSON: its variants and launches, and its sections."""
    doc = {
        "id": c.case.id,
        "title": c.case.title,
        "file": c.case.file,
        "variants": [variant_json(v) for v in c.variants],
    }
    return add_case_sections(doc, c, advice)


def analysis_fields(
    analysis: Analysis,
    problems: list[Problem] | None = None,
    advice: Advice | None = None,
    cases: Iterator[Any] | None = None,
) -> dict[str, Any]:
    """The top-level fields of :func:`analysis_json`, in order, with ``cases`` an
    iterator that makes each case's object when it is reached: written by
    :func:`roofgen.report.jsontext.stream`, one case is held as JSON values at a time.
    ``cases`` given: the cases' objects (or their text) come from it, not from
    ``analysis`` (:class:`CaseSpool`)."""
    t = analysis.thresholds
    return {
        "roofgen_output": OUTPUT_VERSION,
        "roofgen_version": __version__,
        "units": UNITS,
        "thresholds": {
            "co_bound_margin": t.co_bound_margin,
            "below_roofs_efficiency": t.below_roofs_efficiency,
        },
        "machines": [_machine_json(m) for m in analysis.machines],
        "cases": cases if cases is not None else (case_json(c, advice) for c in analysis.cases),
        "problems": [p.to_json() for p in problems or []],
    }


class CaseSpool:
    """The analysis JSON of cases analysed one at a time (:func:`roofgen.pipeline.check_each`):
    each case's object encoded when the case is handed over (:meth:`add`) and held
    compressed (:class:`roofgen.report.jsontext.Spool`), so that the document can be
    written whole after the check has passed (and nothing when it failed) without
    holding every case's results."""

    def __init__(self, indent: int | None = None) -> None:
        self._held = Spool(indent)

    def add(self, case: CaseResult, advice: Advice | None) -> None:
        self._held.add(case_json(case, advice))

    def chunks(self, analysis: Analysis, problems: list[Problem]) -> Iterator[str]:
        """The document's text in chunks: byte for byte what :func:`analysis_fields`
        of the whole analysis streams, with ``analysis`` holding the machines."""
        return stream(
            analysis_fields(analysis, problems, cases=iter(self._held)), self._held.indent
        )


def analysis_json(
    analysis: Analysis, problems: list[Problem] | None = None, advice: Advice | None = None
) -> dict[str, Any]:
    """The stable, versioned output of `roofgen analyze --format json` (recommendations
    from ``advice``, as `check` computed them with the team's rules), whole."""
    doc = analysis_fields(analysis, problems, advice)
    doc["cases"] = list(doc["cases"])
    return doc


def analysis_text(analysis: Analysis) -> str:
    lines: list[str] = []
    for c in analysis.cases:
        lines.append(f"{c.case.id}: {c.case.title}")
        for v in c.variants:
            speed = "" if v is c.variants[0] else f", {fmt_ratio(v.speedup_vs_first)} vs first"
            lines.append(f"  {v.variant} on {v.machine}: {fmt_time(v.time_s)}{speed}; {v.verdict}")
            for r in v.launches:
                calls = f" x{r.calls}" if r.calls != 1 else ""
                mean = " (mean time)" if r.time_statistic == "mean" else ""
                lines.append(
                    f"    {r.kernel}{calls}: {fmt_time(r.time_s)}, "
                    f"{fmt_si(r.achieved_flop_per_s, 'FLOP/s')}, "
                    f"bound {fmt_time(r.lower_bound_s)}, "
                    f"efficiency {fmt_percent(r.efficiency)}{mean}"
                )
                lines.append(f"      {r.verdict}")
                if r.coverage.unknown:
                    lines.append(f"      unknown: {', '.join(r.coverage.unknown)}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
