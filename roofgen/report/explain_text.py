"""``roofgen explain`` as text for a terminal: per launch, what binds and how far the
launch is from it, the runner-up, the time every resource needs, what is unknown,
and the check's recommendations; then the kernel's time in every variant."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from roofgen.model import Measurement
from roofgen.report.explain import Explanation, LaunchExplanation, ResourceRow, VariantExplanation
from roofgen.units import fmt_percent, fmt_ratio, fmt_si, fmt_time

__all__ = ["explanation_text"]


def explanation_text(e: Explanation) -> str:
    """The explanation as text, one block per launch."""
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
    count = len(ve.variant.launches)
    calls = f"{r.calls} calls" if r.calls != 1 else "1 call"
    out = [
        f"{r.case}/{r.kernel}/{r.variant} on {le.machine.id} ({le.machine.name}): launch "
        f"{r.index + 1} of {count}, {calls} per step",
        f"  measured   {fmt_time(r.time_s)} per call{_stats(le.launch.measurement)}",
    ]
    out += _verdict(le, e.thresholds.co_bound_margin)
    out += ["", "  time each resource needs (demand / capacity; units run concurrently):"]
    out += ["    " + line for line in _table(le.rows)]
    out.append(
        f"    lower bound (max) {fmt_time(r.lower_bound_s)}, serial bound (no overlap) "
        f"{fmt_time(r.serial_bound_s)}, measured {fmt_time(r.time_s)}"
    )
    if abs(r.clock_scale - 1.0) > 0.01:
        out.append(
            f"    measured at {fmt_percent(r.clock_scale)} of the machine's SM clock; each "
            "clock-dependent roof scaled from its own clock to the measurement's"
        )
    unknown = [row for row in le.rows if row.seconds is None]
    covered = len(le.rows) - len(unknown)
    out += ["", f"  coverage   {covered} of {len(le.rows)} resources known"]
    if unknown:
        out.append("  unknown (not zero: any of these may need longer and bind instead):")
        out += [f"    {row.name} ({row.resource}): {row.note}" for row in unknown]
    return out + ["", "  what to try (recommendation rules):"] + _recommendations(le)


def _verdict(le: LaunchExplanation, margin: float) -> list[str]:
    """What binds, the verdict, how far the launch is from the bound, the runner-up."""
    r = le.result
    if r.binding is None or r.lower_bound_s is None:
        return [f"  verdict    {r.verdict}"]
    by = {row.resource: row for row in le.rows}
    top = by[r.binding]
    ds = r.efficiency_by_basis.get("datasheet")
    out = [
        f"  binds      {top.name} ({r.binding}): it needs {fmt_time(top.seconds)} of the "
        f"{fmt_time(r.time_s)} measured",
        f"  verdict    {r.verdict}",
        f"  how far    {fmt_percent(r.efficiency)} of the bound against measured roofs, "
        f"{fmt_percent(ds)} against datasheet roofs; headroom {fmt_ratio(r.headroom)} "
        f"(at best {fmt_time(r.lower_bound_s)})",
    ]
    if r.runner_up is not None and top.seconds:
        second = by[r.runner_up]
        ratio = (second.seconds or 0.0) / top.seconds
        close = (
            f"within the co-bound margin ({fmt_percent(margin)})"
            if ratio >= 1.0 - margin
            else f"not close (co-bound from {fmt_percent(1.0 - margin)})"
        )
        out.append(
            f"  runner-up  {second.name} ({r.runner_up}) needs {fmt_time(second.seconds)}, "
            f"{fmt_percent(ratio)} of the binding time: {close}"
        )
    return out


def _recommendations(le: LaunchExplanation) -> list[str]:
    """The check's recommendations for the launch, numbered; or that there are none."""
    if not le.recommendations:
        return ["    nothing: no rule applies to this launch"]
    out: list[str] = []
    for i, rec in enumerate(le.recommendations, 1):
        out += _wrapped(f"{i}. {rec.title}: {rec.text}", "    ", "       ")
        if rec.gain_text and rec.gain_text not in rec.text:
            out += _wrapped(f"gain: {rec.gain_text}", "       ", "       ")
        if rec.techniques:
            names = ", ".join(t.name for t in rec.techniques)
            out += _wrapped(f"techniques: {names}", "       ", "       ")
    return out


def _wrapped(text: str, first: str, rest: str, width: int = 100) -> list[str]:
    return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest,
                         break_on_hyphens=False, break_long_words=False)  # fmt: skip


def _stats(m: Measurement) -> str:
    t = m.time
    parts = []
    if t.repeats:
        parts.append(f"{t.statistic} of {t.repeats} repeats")
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
