"""Plausibility checks of measurements, driven by rules kept as data."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from roofgen.analysis.analyse import Analysis, LaunchResult
from roofgen.analysis.bounds import launch_bounds
from roofgen.analysis.findings import Finding, Hit, LaunchContext, PathKey, Rule
from roofgen.analysis.hygiene import LAUNCH_CHECKS
from roofgen.model import Launch, Roof, Specs
from roofgen.units import fmt_frequency, fmt_percent, fmt_time


def rules_from_data(data: dict[str, Any]) -> list[Rule]:
    return [
        Rule(r["id"], r["check"], r["severity"], r["message"], dict(r.get("params", {})))
        for r in data.get("rules", [])
    ]


def merge_rules(shipped: list[Rule], team: list[Rule]) -> list[Rule]:
    """A team's rule replaces the shipped rule with the same id."""
    by_id = {r.id: r for r in shipped}
    for rule in team:
        by_id[rule.id] = rule
    return list(by_id.values())


def check(specs: Specs, analysis: Analysis, rules: list[Rule]) -> list[Finding]:
    """Findings of the launch checks: per measurement, or per shape of a sweep. A finding
    the measurement accepts (``accepted: {rule: reason}``) is a note with the reason."""
    findings: list[Finding] = []
    active = [r for r in rules if r.severity != "off" and r.check in CHECKS]
    for case_result in analysis.cases:
        case = case_result.case
        for v_index, (variant, vres) in enumerate(
            zip(case.variants, case_result.variants, strict=True)
        ):
            machine = specs.machines[variant.machine]
            for l_index, (launch, lres) in enumerate(
                zip(variant.launches, vres.launches, strict=True)
            ):
                for path, one, result in _measured(launch, lres, v_index, l_index):
                    ctx = LaunchContext(case, machine, one, result, path)
                    for rule in active:
                        for sub, values in CHECKS[rule.check](ctx, rule.params):
                            findings.append(_finding(ctx, rule, sub, values))
    return findings


def _measured(
    launch: Launch, result: LaunchResult, v_index: int, l_index: int
) -> list[tuple[PathKey, Launch, LaunchResult]]:
    """The launch's measurement, or each shape of its sweep as a launch of its own."""
    path: PathKey = ("variants", v_index, "launches", l_index)
    if not launch.sweep:
        return [((*path, "measurement"), launch, result)]
    return [
        (
            (*path, "sweep", i, "measurement"),
            replace(launch, measurement=p.measurement, sweep=()),
            r.result,
        )
        for i, (p, r) in enumerate(zip(launch.sweep, result.sweep, strict=True))
    ]


def _finding(ctx: LaunchContext, rule: Rule, sub: PathKey, values: dict[str, str]) -> Finding:
    message = rule.message.format(**values, **rule.params)
    severity = rule.severity
    reason = ctx.launch.measurement.accepted.get(rule.id)
    if reason:
        severity, message = "note", f"{message} (accepted: {reason.strip().rstrip('.')})"
    return Finding(ctx.case.id, ctx.path + sub, rule.id, severity, message)


def _above_roof(ctx: LaunchContext, params: dict[str, Any]) -> Iterator[Hit]:
    tolerance = float(params.get("tolerance", 0.02))
    time_s = ctx.result.time_s
    bounds = launch_bounds(ctx.machine, ctx.launch, "datasheet")
    for resource, need in bounds.ranked():
        if resource.startswith(("compute.", "memory.")) and need > time_s * (1 + tolerance):
            field = "flops" if resource.startswith("compute.") else "bytes"
            yield (
                (field,),
                {
                    "resource": resource,
                    "need": fmt_time(need),
                    "time": fmt_time(time_s),
                    "ratio": fmt_percent(need / time_s),
                },
            )


def _spread(ctx: LaunchContext, params: dict[str, Any]) -> Iterator[Hit]:
    limit = float(params.get("max_spread", 0.05))
    t = ctx.launch.measurement.time
    if t.q1_s is not None and t.q3_s is not None:
        spread, how = (t.q3_s - t.q1_s) / t.value_s, "interquartile range"
    elif t.ci_low_s is not None and t.ci_high_s is not None:
        spread, how = (
            (t.ci_high_s - t.ci_low_s) / t.value_s,
            f"confidence interval of the {t.statistic}",
        )
    elif t.std_s is not None:
        spread, how = 2.0 * t.std_s / t.value_s, "mean plus and minus one standard deviation"
    else:
        return
    if spread > limit:
        yield ("time",), {"spread": fmt_percent(spread), "how": how, "limit": fmt_percent(limit),
                          "statistic": t.statistic}  # fmt: skip


def _no_warmup(ctx: LaunchContext, params: dict[str, Any]) -> Iterator[Hit]:
    t = ctx.launch.measurement.time
    if params.get("when") == "missing":
        if t.warmup is None and ctx.launch.measurement.timing != "ncu-replay":
            yield ("time",), {}
    elif t.warmup == 0:
        yield ("time", "warmup"), {}


def _few_repeats(ctx: LaunchContext, params: dict[str, Any]) -> Iterator[Hit]:
    repeats = ctx.launch.measurement.time.repeats
    if repeats is not None and repeats < int(params.get("min_repeats", 10)):
        yield (
            ("time", "repeats"),
            {"repeats": str(repeats), "statistic": ctx.launch.measurement.time.statistic},
        )


def _low_efficiency(ctx: LaunchContext, params: dict[str, Any]) -> Iterator[Hit]:
    """Efficiency (bound / measured time) so low that a unit slip is likelier."""
    limit = float(params.get("min_efficiency", 0.01))
    r = ctx.result
    if r.efficiency is not None and r.lower_bound_s is not None and r.efficiency < limit:
        yield (
            ("time",),
            {
                "bound": fmt_time(r.lower_bound_s),
                "time": fmt_time(r.time_s),
                "statistic": r.time_statistic,
                "efficiency": fmt_percent(r.efficiency),
                "limit": fmt_percent(limit),
            },
        )


def _profiler_clocks(ctx: LaunchContext, params: dict[str, Any]) -> Iterator[Hit]:
    m = ctx.launch.measurement
    if m.timing == "ncu-replay" and m.sm_clock_hz and m.sm_clock_hz < ctx.machine.sm_clock_hz:
        yield (
            ("clocks",),
            {
                "clock": fmt_frequency(m.sm_clock_hz),
                "fraction": fmt_percent(m.sm_clock_hz / ctx.machine.sm_clock_hz),
            },
        )


def _unlocked_roof_clock(ctx: LaunchContext, params: dict[str, Any]) -> Iterator[Hit]:
    """A measured roof taken with unlocked clocks is used as is; a launch at a clock far
    from the one it ran near is judged against a roof of other conditions."""
    limit = float(params.get("max_deviation", 0.05))
    m = ctx.launch.measurement
    if not m.sm_clock_hz:
        return
    for name, roof in _used_roofs(ctx):
        near = roof.conditions_clock_hz
        if roof.measured is None or near is None or abs(m.sm_clock_hz / near - 1) <= limit:
            continue
        power = f" under {roof.measured_power_w:.0f} W" if roof.measured_power_w else ""
        yield (
            ("clocks", "sm"),
            {
                "roof": name,
                "near": fmt_frequency(near),
                "power": power,
                "clock": fmt_frequency(m.sm_clock_hz),
                "fraction": fmt_percent(m.sm_clock_hz / near),
                "limit": fmt_percent(limit),
            },
        )


def _used_roofs(ctx: LaunchContext) -> Iterator[tuple[str, Roof]]:
    """The clock-scaled roofs the launch has demand on: compute peaks and cache levels."""
    m = ctx.launch.measurement
    for unit in ctx.machine.compute:
        for precision in (m.flops or {}).get(unit.id, {}):
            if precision in unit.peaks:
                yield f"compute.{unit.id} {precision}", unit.peaks[precision]
    for level in ctx.machine.memory:
        if level.clock_scaled and level.id in (m.bytes or {}):
            yield f"memory.{level.id}", level.bandwidth


CHECKS: dict[str, Callable[[LaunchContext, dict[str, Any]], Iterator[Hit]]] = {
    "above-roof": _above_roof,
    "spread": _spread,
    "no-warmup": _no_warmup,
    "few-repeats": _few_repeats,
    "profiler-clocks": _profiler_clocks,
    "low-efficiency": _low_efficiency,
    "unlocked-roof-clock": _unlocked_roof_clock,
    **LAUNCH_CHECKS,
}
