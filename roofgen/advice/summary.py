"""The roof summary of one launch: how far it is from its binding roof, what is not
measured, and how the roof basis and the clock affect the figures. Pure.

One paragraph per point (plain text, not Markdown), most important first; the rule
engine (:mod:`roofgen.advice.engine`) adds the technique advice on top.
"""

from __future__ import annotations

from collections.abc import Mapping

from roofgen.analysis.analyse import LaunchResult
from roofgen.resources import beyond_roof
from roofgen.units import fmt_percent, fmt_ratio, fmt_time

__all__ = ["NEAR_ROOF_EFFICIENCY", "headline", "summary", "unmeasured"]

NEAR_ROOF_EFFICIENCY = 0.9  # at or above this fraction of the bound, tuning is nearly done


def _name(resource: str, names: Mapping[str, str] | None) -> str:
    if names and resource in names:
        return names[resource]
    return resource


def _insufficient(r: LaunchResult, names: Mapping[str, str] | None) -> str:
    missing = [x for x in r.coverage.unknown if x.startswith(("compute.", "memory."))]
    what = ", ".join(_name(x, names) for x in missing) or "FLOPs or bytes"
    return (
        f"Not enough data to place this launch on the roofline: no demand is known for "
        f"{what}. Record FLOP and byte counts (from a profiler or by hand) to get a bound."
    )


def _headline(r: LaunchResult, names: Mapping[str, str] | None) -> str:
    assert r.binding is not None
    top = _name(r.binding, names)
    eff = fmt_percent(r.efficiency)
    headroom = fmt_ratio(r.headroom)
    if r.klass == "below-roofs":
        serial = ""
        if r.serial_bound_s is not None and r.time_s > r.serial_bound_s:
            serial = (
                f" It takes longer ({fmt_time(r.time_s)}) than even the no-overlap serial bound "
                f"({fmt_time(r.serial_bound_s)}), so the time goes somewhere no roof models."
            )
        return (
            f"Below all roofs: {eff} of the {top} bound, so up to {headroom} is left before "
            f"any roof limits it. Look for latency, low occupancy, too few waves, launch or "
            f"synchronisation gaps, or uncounted work before changing the algorithm.{serial}"
        )
    if r.klass == "co-bound" and r.runner_up is not None:
        second = _name(r.runner_up, names)
        return (
            f"Co-bound by {top} and {second}: at most {headroom} by reaching the {top} roof, "
            f"but {second} needs nearly as long, so relieving one alone gains little; "
            f"{beyond_roof(r.binding)}, and the same for {second}."
        )
    if r.efficiency is not None and r.efficiency >= NEAR_ROOF_EFFICIENCY:
        return (
            f"Already at {eff} of the {top} roof: at most {headroom} is left from tuning; "
            f"{beyond_roof(r.binding)}."
        )
    return f"At most {headroom} by reaching the {top} roof; {beyond_roof(r.binding)}."


def unmeasured(r: LaunchResult, names: Mapping[str, str] | None = None) -> str | None:
    """A paragraph on the resources without demand data, or None."""
    if r.binding is None:
        return None
    unknown = [x for x in r.coverage.unknown if x != r.binding]
    if not unknown:
        return None
    listed = ", ".join(_name(x, names) for x in unknown)
    return (
        f"Not measured: {listed}. Unknown is not zero: any of these may need longer than "
        f"{_name(r.binding, names)} and bind instead, which would make the bound longer and "
        f"the headroom smaller."
    )


def headline(r: LaunchResult, names: Mapping[str, str] | None = None) -> str:
    """The gain to the binding roof and what helps beyond it (or why there is no bound)."""
    if r.klass == "insufficient-data" or r.binding is None:
        return _insufficient(r, names)
    return _headline(r, names)


def summary(launch_result: LaunchResult, names: Mapping[str, str] | None = None) -> list[str]:
    """One paragraph per point for ``launch_result``, most important first.

    ``names`` maps resources (``memory.hbm``) to display names (``HBM2``).
    """
    r = launch_result
    out = [headline(r, names)]
    if r.klass == "insufficient-data" or r.binding is None:
        return out
    rest = unmeasured(r, names)
    if rest:
        out.append(rest)
    datasheet = r.efficiency_by_basis.get("datasheet")
    if datasheet is not None and r.efficiency is not None and abs(datasheet - r.efficiency) >= 0.05:
        out.append(
            f"Against datasheet roofs the efficiency is {fmt_percent(datasheet)} (against "
            f"measured roofs {fmt_percent(r.efficiency)}): the gap is what the hardware itself "
            f"does not deliver."
        )
    if abs(r.clock_scale - 1.0) > 0.01:
        out.append(
            f"Measured at {fmt_percent(r.clock_scale)} of the machine's SM clock; each "
            f"clock-dependent roof was scaled from the clock it is stated at to the "
            f"measurement's (profilers such as Nsight Compute lock base clocks by default)."
        )
    return out
