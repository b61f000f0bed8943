"""Benchmark hygiene checks (seed 001, section 3), run by the plausibility rules table.

Launch checks (per measurement, or per shape of a sweep): bytes against the operator
model's minimum, and a first call timed among the repeats. Case checks (once per
case): kernel time mixed with end-to-end time, and an environment or clock setting
left unrecorded. Rules that use these checks live in ``roofgen/rules/plausibility.yaml``
like every other plausibility rule; their thresholds are the rules' params.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from roofgen.analysis.findings import Finding, Hit, LaunchContext, Rule
from roofgen.units import fmt_ratio, fmt_si, fmt_time

if TYPE_CHECKING:
    from roofgen.analysis.analyse import Analysis, CaseResult
    from roofgen.model import Specs


__all__ = ["CASE_CHECKS", "LAUNCH_CHECKS", "check_cases"]


# --------------------------------------------------------------------------- launches


def _model_bytes(ctx: LaunchContext, params: dict[str, Any]) -> Iterator[Hit]:
    """Measured device-memory bytes against the operator model's compulsory minimum:
    ``above`` flags more than that factor of it, ``below`` less than that factor."""
    model = ctx.result.model
    minimum = model.bytes_min if model is not None else None
    measured = ctx.launch.measurement.bytes or {}
    level = ctx.machine.device_level
    if not minimum or level is None or level.id not in measured:
        return
    ratio = measured[level.id] / minimum
    above, below = params.get("above"), params.get("below")
    if (above is not None and ratio > float(above)) or (below is not None and ratio < float(below)):
        yield (
            ("bytes", level.id),
            {
                "level": level.name,
                "measured": fmt_si(measured[level.id], "B"),
                "minimum": fmt_si(minimum, "B"),
                "ratio": fmt_ratio(ratio),
            },
        )


def _first_call(ctx: LaunchContext, params: dict[str, Any]) -> Iterator[Hit]:
    """The slowest repeat far above the median: a first call (JIT, autotuning,
    allocation) was timed with the others."""
    t = ctx.launch.measurement.time
    limit = float(params.get("max_over_median", 2.0))
    if t.max_s is not None and t.max_s > limit * t.value_s:
        yield (
            ("time", "max"),
            {
                "max": fmt_time(t.max_s),
                "median": fmt_time(t.value_s),
                "statistic": t.statistic,
                "ratio": fmt_ratio(t.max_s / t.value_s),
            },
        )


LAUNCH_CHECKS: dict[str, Callable[[LaunchContext, dict[str, Any]], Iterator[Hit]]] = {
    "model-bytes": _model_bytes,
    "first-call": _first_call,
}


# --------------------------------------------------------------------------- cases


def _end_to_end_mix(case: CaseResult, params: dict[str, Any]) -> Iterator[Hit]:
    """End-to-end time shorter than the kernels it contains: the timings are mixed."""
    c = case.case
    for v in case.variants:
        e2e = c.end_to_end_s.get(v.variant)
        if e2e is None:
            continue
        longest = max(v.launches, key=lambda r: r.calls * r.time_s)
        calls = f"{longest.calls} x " if longest.calls != 1 else ""
        if longest.calls * longest.time_s > e2e:
            what = f"launch {longest.kernel} ({calls}{fmt_time(longest.time_s)})"
            kernel_time = fmt_time(longest.calls * longest.time_s)
        elif v.time_s > e2e:
            what, kernel_time = f"the sum of its {len(v.launches)} launches", fmt_time(v.time_s)
        else:
            continue
        yield (
            ("end_to_end", v.variant, "time"),
            {"what": what, "kernel_time": kernel_time, "e2e": fmt_time(e2e), "variant": v.variant},
        )


def _method_fields(case: CaseResult, params: dict[str, Any]) -> Iterator[Hit]:
    """Method fields (``params.fields``, comma-separated) the case does not record."""
    wanted = [f.strip() for f in str(params.get("fields", "")).split(",") if f.strip()]
    missing = [f for f in wanted if not case.case.method.get(f)]
    if missing:
        listed = ", ".join(f"method.{f}" for f in missing)
        yield ("method",), {"missing": listed}


CASE_CHECKS: dict[str, Callable[[CaseResult, dict[str, Any]], Iterator[Hit]]] = {
    "end-to-end-mix": _end_to_end_mix,
    "method-fields": _method_fields,
}


def check_cases(specs: Specs, analysis: Analysis, rules: list[Rule]) -> list[Finding]:
    """Findings of the case checks (``CASE_CHECKS``) among ``rules``."""
    active = [r for r in rules if r.severity != "off" and r.check in CASE_CHECKS]
    findings = []
    for case in analysis.cases:
        for rule in active:
            for path, values in CASE_CHECKS[rule.check](case, rule.params):
                message = rule.message.format(**values, **rule.params)
                findings.append(Finding(case.case.id, path, rule.id, rule.severity, message))
    return findings
