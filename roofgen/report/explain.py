"""``roofgen explain``: the analysis of one kernel's launches, in words and numbers.

For each launch of the kernel (in one variant, or in every variant that launches
it): what binds and how far the launch is from that roof (efficiency against the
measured and the datasheet roofs, headroom), the runner-up and how close it is,
the time every resource needs (demand / capacity beside the measured time), what
is unknown, and what to try. Recommendations come from :mod:`roofgen.advice` when
this roofgen has it, else from the launch's verdict.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roofgen.analysis.analyse import Analysis, CaseResult, LaunchResult, VariantResult
from roofgen.analysis.bounds import dynamic_energy_j, level_bytes, resources
from roofgen.model import Launch, Machine, Measurement, Specs
from roofgen.units import fmt_percent, fmt_ratio, fmt_si, fmt_time

__all__ = [
    "ExplainError",
    "Explanation",
    "LaunchExplanation",
    "ResourceRow",
    "VariantExplanation",
    "explain",
    "explanation_json",
    "explanation_text",
]


class ExplainError(Exception):
    """The selector names nothing in the specs; the message says what exists."""


@dataclass(frozen=True)
class ResourceRow:
    """One resource of one launch: its demand, its capacity and the time it needs."""

    resource: str  # memory.hbm
    name: str  # HBM2
    demand: float | None
    demand_unit: str
    capacity: float | None  # at the measurement's clocks (demand / time where both known)
    capacity_unit: str
    seconds: float | None  # demand / capacity on the roof basis used (None: unknown)
    datasheet_seconds: float | None
    share_of_measured: float | None  # seconds / the measured time
    role: str  # "binds", "runner-up" or ""
    note: str = ""  # what the demand is made of, or why it is unknown


@dataclass(frozen=True)
class Recommendation:
    title: str
    text: str
    gain: str = ""
    severity: str = ""
    rule: str = ""
    techniques: tuple[str, ...] = ()


@dataclass(frozen=True)
class LaunchExplanation:
    result: LaunchResult
    machine: Machine
    launch: Launch
    rows: tuple[ResourceRow, ...]
    recommendations: tuple[Recommendation, ...]
    source: str  # where the recommendations came from: "roofgen.advice" or "verdict"


@dataclass(frozen=True)
class VariantExplanation:
    variant: VariantResult
    launches: tuple[LaunchExplanation, ...]
    kernel_time_s: float  # this kernel's time per step (calls x median, summed)
    speedup_vs_first: float | None  # the first variant's kernel time / this one's


@dataclass(frozen=True)
class Explanation:
    case: CaseResult
    kernel: str
    variant: str | None  # as asked; None: every variant
    variants: tuple[VariantExplanation, ...]
    absent: tuple[str, ...]  # variants that do not launch the kernel
    thresholds: Any


# --------------------------------------------------------------------------- building


def parse_selector(text: str) -> tuple[str, str, str | None]:
    """``CASE/KERNEL[/VARIANT]`` -> its parts; ValueError when malformed."""
    parts = text.split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise ValueError(f"{text!r}: write CASE/KERNEL or CASE/KERNEL/VARIANT")
    return parts[0], parts[1], parts[2] if len(parts) == 3 else None


def explain(
    analysis: Analysis,
    specs: Specs,
    case_id: str,
    kernel: str,
    variant: str | None = None,
    *,
    rules_file: Path | None = None,
) -> Explanation:
    """Explain ``kernel``'s launches in ``case_id`` (one variant, or all of them)."""
    case = next((c for c in analysis.cases if c.case.id == case_id), None)
    if case is None:
        known = ", ".join(c.case.id for c in analysis.cases) or "none"
        raise ExplainError(f"no case {case_id!r} in the specs (cases: {known})")
    if case.case.kernel(kernel) is None:
        known = ", ".join(k.id for k in case.case.kernels)
        raise ExplainError(f"case {case_id!r} has no kernel {kernel!r} (kernels: {known})")
    variants = case.variants
    if variant is not None:
        variants = tuple(v for v in variants if v.variant == variant)
        if not variants:
            known = ", ".join(v.variant for v in case.variants)
            raise ExplainError(f"case {case_id!r} has no variant {variant!r} (variants: {known})")
    advice = _advice(analysis, rules_file)
    out: list[VariantExplanation] = []
    absent: list[str] = []
    first_time: float | None = None
    for v in variants:
        index = [i for i, x in enumerate(case.variants) if x is v][0]
        spec_variant = case.case.variants[index]
        mine = [r for r in v.launches if r.kernel == kernel]
        if not mine:
            absent.append(v.variant)
            continue
        machine = specs.machines[v.machine]
        names = display_names(machine)
        launches = tuple(
            _launch(r, machine, spec_variant.launches[r.index], names, advice) for r in mine
        )
        kernel_time = sum(r.calls * r.time_s for r in mine)
        first_time = kernel_time if first_time is None else first_time
        out.append(VariantExplanation(v, launches, kernel_time, first_time / kernel_time))
    if variant is not None and not out:
        raise ExplainError(f"variant {variant!r} of case {case_id!r} does not launch {kernel!r}")
    return Explanation(case, kernel, variant, tuple(out), tuple(absent), analysis.thresholds)


def display_names(machine: Machine) -> dict[str, str]:
    names = {f"compute.{u.id}": u.name for u in machine.compute}
    names |= {f"memory.{m.id}": m.name for m in machine.memory}
    names |= {f"link.{k.id}": k.name for k in machine.links}
    return names | {"issue": "Instruction issue", "power": "Power limit", "launch": "Launch"}


def _launch(r: LaunchResult, machine: Machine, launch: Launch, names: Mapping[str, str],
            advice: Any) -> LaunchExplanation:  # fmt: skip
    rows = tuple(_row(res, r, machine, launch.measurement, names) for res in resources(machine))
    recs, source = _recommendations(r, advice, names)
    return LaunchExplanation(r, machine, launch, rows, recs, source)


def _row(resource: str, r: LaunchResult, machine: Machine, m: Measurement,
         names: Mapping[str, str]) -> ResourceRow:  # fmt: skip
    seconds = r.bound_s.get(resource)
    demand, unit, rate_unit, note = _demand(resource, machine, m)
    capacity = None
    if resource == "launch":
        capacity = None  # launches and syncs cost different times: no single rate
    elif seconds is not None and demand is not None and demand > 0 and seconds > 0:
        capacity = demand / seconds
    elif resource.startswith("link.") and seconds is not None:
        link = machine.link(resource.removeprefix("link."))
        capacity = link.bandwidth_per_direction.value() if link else None
    role = "binds" if resource == r.binding else "runner-up" if resource == r.runner_up else ""
    if seconds is None:
        note = _why_unknown(resource, machine, m)
    return ResourceRow(
        resource=resource,
        name=names.get(resource, resource),
        demand=demand if seconds is not None else None,
        demand_unit=unit,
        capacity=capacity,
        capacity_unit=rate_unit,
        seconds=seconds,
        datasheet_seconds=r.bounds_datasheet_s.get(resource),
        share_of_measured=seconds / r.time_s if seconds is not None and r.time_s else None,
        role=role,
        note=note,
    )


def _demand(resource: str, machine: Machine, m: Measurement) -> tuple[float | None, str, str, str]:
    """(demand, its unit, the capacity's unit, a note) of one resource."""
    kind, _, ident = resource.partition(".")
    if kind == "compute":
        work = (m.flops or {}).get(ident, {})
        ints = [p for p in work if p.startswith("int") or p == "transcendental"]
        unit = "OP" if work and len(ints) == len(work) else "FLOP"
        note = ", ".join(f"{p} {fmt_si(v, 'OP' if p in ints else 'FLOP')}" for p, v in work.items())
        return sum(work.values()), unit, f"{unit}/s", note if len(work) > 1 else ""
    if kind == "memory":
        level = machine.level(ident)
        moved = level_bytes(level, m) if level is not None else None
        return moved, "B", "B/s", ""
    if kind == "link":
        out_b, in_b = (m.link_bytes or {}).get(ident, (0.0, 0.0))
        count = sum(1 for c in m.collectives if c.link == ident)
        note = f"one way; plus {count} collective(s) and the link latency" if count else "one way"
        return max(out_b, in_b), "B", "B/s", note
    if resource == "issue":
        return m.instructions, "inst", "inst/s", "warp instructions"
    if resource == "power":
        return dynamic_energy_j(machine, m), "J", "W", "dynamic energy over the power above idle"
    if resource == "launch":
        count = (m.launches or 0) + (m.syncs or 0)
        return float(count), "launch", "", f"{m.launches or 0} launch(es), {m.syncs or 0} sync(s)"
    return None, "", "", ""


def _why_unknown(resource: str, machine: Machine, m: Measurement) -> str:
    kind, _, ident = resource.partition(".")
    if kind == "compute":
        return "no FLOP counts (measurement.flops)"
    if kind == "memory":
        return f"no bytes for this level (measurement.bytes.{ident})"
    if kind == "link":
        return f"no link bytes or collectives (measurement.link_bytes.{ident}, collectives)"
    if resource == "issue":
        return "no instruction count (measurement.instructions)"
    if resource == "power":
        if machine.power is not None and not machine.power.energy_per_flop_j:
            return "the machine has no energy coefficients (power.energy_per_flop, energy_per_byte)"
        return "needs FLOPs, bytes and the machine's energy coefficients"
    if resource == "launch":
        return "no launch or sync counts (measurement.launches, syncs)"
    return "no demand data"


# --------------------------------------------------------------------------- advice


def _advice(analysis: Analysis, rules_file: Path | None) -> Any:
    """roofgen.advice's recommendations for the analysis, or None without that package."""
    if importlib.util.find_spec("roofgen.advice") is None:
        return None
    try:
        from roofgen.advice import advise
        from roofgen.advice.load import shipped_ruleset

        rules = shipped_ruleset()
        if rules_file is not None and rules_file.is_file():
            rules = _team_rules(rules, rules_file)
        return advise(analysis, rules)
    except Exception:  # the package is there but cannot advise: fall back to the verdict
        return None


def _team_rules(base: Any, path: Path) -> Any:
    from roofgen.advice.load import team_ruleset
    from roofgen.spec.yamlload import load_file

    doc, problems = load_file(path)
    if doc is None or problems:
        return base
    rules, _ = team_ruleset(base, doc)
    return rules


def _recommendations(r: LaunchResult, advice: Any, names: Mapping[str, str]
                     ) -> tuple[tuple[Recommendation, ...], str]:  # fmt: skip
    if advice is not None:
        try:
            found = advice.for_launch(r.case, r.variant, r.index)
            return tuple(
                Recommendation(
                    title=str(x.title),
                    text=str(x.text),
                    gain=str(x.gain_text or ""),
                    severity=str(x.severity),
                    rule=str(x.rule),
                    techniques=tuple(str(t.name) for t in x.techniques),
                )  # fmt: skip
                for x in found
            ), "roofgen.advice"
        except Exception:
            pass
    return _from_verdict(r, names), "verdict"


def _from_verdict(r: LaunchResult, names: Mapping[str, str]) -> tuple[Recommendation, ...]:
    """What the verdict alone says to try."""
    top = names.get(r.binding or "", r.binding or "")
    if r.klass == "insufficient-data" or r.binding is None:
        return (
            Recommendation(
                "Measure the work and the bytes",
                "Record FLOP counts and bytes per memory level (Nsight Compute, or by hand "
                "from the shapes) so the launch can be placed under its roofs.",
            ),
        )
    if r.klass == "below-roofs":
        return (
            Recommendation(
                "Find the time no roof explains",
                f"The launch reaches {fmt_percent(r.efficiency)} of the {top} bound: look at "
                "latency, occupancy, waves and launch gaps before changing the algorithm.",
            ),
        )
    if r.klass == "co-bound":
        second = names.get(r.runner_up or "", r.runner_up or "")
        return (
            Recommendation(
                "Relieve both roofs",
                f"{top} and {second} need nearly the same time: relieving one alone gains little.",
            ),
        )
    kind = (r.binding or "").split(".")[0]
    what = {
        "memory": "move fewer bytes at that level (fusion, reuse in a nearer cache, smaller types)",
        "compute": "do less arithmetic or use a faster unit (tensor cores, lower precision)",
        "link": "send less over the link or overlap it with compute",
        "issue": "issue fewer instructions (vector loads, less address arithmetic)",
        "power": "spend less energy per result",
    }.get(kind, "launch and synchronise less (fusion, CUDA graphs)")
    return (
        Recommendation(
            f"Work on the {top} roof",
            f"At most {fmt_ratio(r.headroom)} is left by reaching it; beyond that, {what}.",
        ),
    )


# --------------------------------------------------------------------------- text


def explanation_text(e: Explanation) -> str:
    lines: list[str] = [f"{e.case.case.id}/{e.kernel}: {e.case.case.title}"]
    for ve in e.variants:
        for le in ve.launches:
            lines += [""] + _launch_text(e, ve, le)
    if len(e.variants) > 1 or e.absent:
        lines += ["", f"{e.kernel}'s time per step, by variant:"]
        first = e.variants[0].variant.variant if e.variants else ""
        for ve in e.variants:
            speed = "" if ve is e.variants[0] else f"  {fmt_ratio(ve.speedup_vs_first)} vs {first}"
            lines.append(f"  {ve.variant.variant}: {fmt_time(ve.kernel_time_s)}{speed}")
        for name in e.absent:
            lines.append(f"  {name}: does not launch {e.kernel}")
    return "\n".join(lines).rstrip() + "\n"


def _launch_text(e: Explanation, ve: VariantExplanation, le: LaunchExplanation) -> list[str]:
    r = le.result
    t = e.thresholds
    count = len(ve.variant.launches)
    calls = f"{r.calls} calls" if r.calls != 1 else "1 call"
    out = [
        f"{r.case}/{r.kernel}/{r.variant} on {le.machine.id} ({le.machine.name}): launch "
        f"{r.index + 1} of {count}, {calls} per step",
        f"  measured   {fmt_time(r.time_s)} per call{_stats(le.launch.measurement)}",
    ]
    names = {row.resource: row.name for row in le.rows}
    by = {row.resource: row for row in le.rows}
    if r.binding is None or r.lower_bound_s is None:
        out.append(f"  verdict    {r.verdict}")
    else:
        top = by[r.binding]
        out.append(
            f"  binds      {top.name} ({r.binding}): it needs {fmt_time(top.seconds)} of the "
            f"{fmt_time(r.time_s)} measured"
        )
        out.append(f"  verdict    {r.verdict}")
        ds = r.efficiency_by_basis.get("datasheet")
        out.append(
            f"  how far    {fmt_percent(r.efficiency)} of the bound against measured roofs, "
            f"{fmt_percent(ds)} against datasheet roofs; headroom {fmt_ratio(r.headroom)} "
            f"(at best {fmt_time(r.lower_bound_s)})"
        )
        if r.runner_up is not None and top.seconds:
            second = by[r.runner_up]
            ratio = (second.seconds or 0.0) / top.seconds
            close = ratio >= 1.0 - t.co_bound_margin
            out.append(
                f"  runner-up  {second.name} ({r.runner_up}) needs {fmt_time(second.seconds)}, "
                f"{fmt_percent(ratio)} of the binding time: "
                + (
                    f"within the co-bound margin ({fmt_percent(t.co_bound_margin)})"
                    if close
                    else f"not close (co-bound from {fmt_percent(1.0 - t.co_bound_margin)})"
                )
            )
    out += ["", "  time each resource needs (demand / capacity; units run concurrently):"]
    out += ["    " + line for line in _table(le.rows)]
    out.append(
        f"    lower bound (max) {fmt_time(r.lower_bound_s)}, serial bound (no overlap) "
        f"{fmt_time(r.serial_bound_s)}, measured {fmt_time(r.time_s)}"
    )
    if abs(r.clock_scale - 1.0) > 0.01:
        out.append(f"    clock-dependent roofs scaled to {fmt_percent(r.clock_scale)} of the "
                   "machine's clock (the clock the measurement ran at)")  # fmt: skip
    unknown = [row for row in le.rows if row.seconds is None]
    covered = len(le.rows) - len(unknown)
    out += ["", f"  coverage   {covered} of {len(le.rows)} resources known"]
    if unknown:
        out.append("  unknown (not zero: any of these may need longer and bind instead):")
        out += [f"    {names[row.resource]} ({row.resource}): {row.note}" for row in unknown]
    source = "recommendation rules" if le.source == "roofgen.advice" else "from the verdict"
    out += ["", f"  what to try ({source}):"]
    for i, rec in enumerate(le.recommendations, 1):
        out += _wrapped(f"{i}. {rec.title}: {rec.text}", "    ", "       ")
        if rec.gain and rec.gain not in rec.text:
            out += _wrapped(f"gain: {rec.gain}", "       ", "       ")
        if rec.techniques:
            out += _wrapped(f"techniques: {', '.join(rec.techniques)}", "       ", "       ")
    if not le.recommendations:
        out.append("    nothing: no rule applies to this launch")
    return out


def _wrapped(text: str, first: str, rest: str, width: int = 100) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest,
                         break_on_hyphens=False, break_long_words=False)  # fmt: skip


def _stats(m: Measurement) -> str:
    t = m.time
    parts = []
    if t.repeats:
        parts.append(f"median of {t.repeats} repeats")
    if t.q1_s is not None and t.q3_s is not None:
        parts.append(f"q1 {fmt_time(t.q1_s)}, q3 {fmt_time(t.q3_s)}")
    if m.timing:
        parts.append(m.timing)
    return f" ({'; '.join(parts)})" if parts else ""


def _table(rows: Sequence[ResourceRow]) -> list[str]:
    header = ("resource", "demand", "capacity", "time", "of measured", "")
    cells = [header]
    for row in rows:
        if row.seconds is None:
            cells.append((f"{row.name} ({row.resource})", "unknown", "", "", "", ""))
            continue
        demand = fmt_si(row.demand, row.demand_unit) if row.demand is not None else ""
        if row.resource == "launch":
            demand = row.note
        cells.append(
            (
                f"{row.name} ({row.resource})",
                demand,
                fmt_si(row.capacity, row.capacity_unit) if row.capacity is not None else "-",
                fmt_time(row.seconds),
                fmt_percent(row.share_of_measured),
                row.role,
            )
        )
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    right = {1, 2, 3, 4}
    return [
        "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(line, widths, strict=True))
        ).rstrip()
        for line in cells
    ]


# --------------------------------------------------------------------------- JSON


def explanation_json(e: Explanation) -> dict[str, Any]:
    from roofgen.report.analysis import launch_json
    from roofgen.version import __version__

    t = e.thresholds
    return {
        "roofgen_output": 1,
        "roofgen_version": __version__,
        "case": e.case.case.id,
        "title": e.case.case.title,
        "kernel": e.kernel,
        "variant": e.variant,
        "thresholds": {
            "co_bound_margin": t.co_bound_margin,
            "below_roofs_efficiency": t.below_roofs_efficiency,
        },
        "variants": [
            {
                "variant": ve.variant.variant,
                "machine": ve.variant.machine,
                "kernel_time_s": ve.kernel_time_s,
                "speedup_vs_first": ve.speedup_vs_first,
                "launches": [
                    {
                        **launch_json(le.result),
                        "resources": [_row_json(row) for row in le.rows],
                        "recommendations": [
                            vars(rec) | {"techniques": list(rec.techniques)}
                            for rec in le.recommendations
                        ],  # fmt: skip
                        "recommendations_from": le.source,
                    }
                    for le in ve.launches
                ],
            }
            for ve in e.variants
        ],
        "absent_from": list(e.absent),
    }


def _row_json(row: ResourceRow) -> dict[str, Any]:
    return {
        "resource": row.resource,
        "name": row.name,
        "known": row.seconds is not None,
        "demand": row.demand,
        "demand_unit": row.demand_unit,
        "capacity": row.capacity,
        "capacity_unit": row.capacity_unit,
        "seconds": row.seconds,
        "datasheet_seconds": row.datasheet_seconds,
        "share_of_measured": row.share_of_measured,
        "role": row.role,
        "note": row.note,
    }
