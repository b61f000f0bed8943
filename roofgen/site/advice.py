"""Recommendations for one launch, from its analysis: verdict, binding roof, headroom.

A small, deliberately plain set of rules; each returns one paragraph of text (plain
text, not Markdown: the page escapes it). A fuller rules engine comes later.
"""

from __future__ import annotations

from collections.abc import Mapping

from roofgen.analysis.analyse import LaunchResult
from roofgen.units_format import fmt_percent, fmt_ratio, fmt_time

__all__ = ["recommendations", "resource_kind"]

NEAR_ROOF_EFFICIENCY = 0.9  # at or above this fraction of the bound, tuning is nearly done


def resource_kind(resource: str) -> str:
    """``compute``, ``memory``, ``link``, ``issue``, ``power`` or ``launch``."""
    return resource.split(".", 1)[0]


def _name(resource: str, names: Mapping[str, str] | None) -> str:
    if names and resource in names:
        return names[resource]
    return resource


def _beyond(resource: str) -> str:
    """What helps once a launch runs at the roof of ``resource``."""
    kind = resource_kind(resource)
    if kind == "memory":
        return (
            "beyond that only fewer bytes help (fusion, reuse through a nearer cache level, "
            "a smaller data type)"
        )
    if kind == "compute":
        return (
            "beyond that only less arithmetic or a faster unit helps (tensor cores, a lower "
            "precision, a cheaper algorithm)"
        )
    if kind == "link":
        return "beyond that only less traffic over the link helps (overlap or compression)"
    if kind == "issue":
        return "beyond that only fewer instructions help (vector loads, less address arithmetic)"
    if kind == "power":
        return "beyond that only less energy per result helps (fewer bytes from far memory)"
    return "beyond that only fewer launches or synchronisations help (fusion, CUDA graphs)"


def recommendations(
    launch_result: LaunchResult, names: Mapping[str, str] | None = None
) -> list[str]:
    """One paragraph per finding for ``launch_result``, most important first.

    ``names`` maps resources (``memory.hbm``) to display names (``HBM2``).
    """
    r = launch_result
    out: list[str] = []
    if r.klass == "insufficient-data" or r.binding is None:
        missing = [x for x in r.coverage.unknown if x.startswith(("compute.", "memory."))]
        what = ", ".join(_name(x, names) for x in missing) or "FLOPs or bytes"
        out.append(
            f"Not enough data to place this launch on the roofline: no demand is known for "
            f"{what}. Record FLOP and byte counts (from a profiler or by hand) to get a bound."
        )
        return out

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
        out.append(
            f"Below all roofs: {eff} of the {top} bound, so up to {headroom} is left before "
            f"any roof limits it. Look for latency, low occupancy, too few waves, launch or "
            f"synchronisation gaps, or uncounted work before changing the algorithm.{serial}"
        )
    elif r.klass == "co-bound" and r.runner_up is not None:
        second = _name(r.runner_up, names)
        out.append(
            f"Co-bound by {top} and {second}: at most {headroom} by reaching the {top} roof, "
            f"but {second} needs nearly as long, so relieving one alone gains little; "
            f"{_beyond(r.binding)}, and the same for {second}."
        )
    elif r.efficiency is not None and r.efficiency >= NEAR_ROOF_EFFICIENCY:
        out.append(
            f"Already at {eff} of the {top} roof: at most {headroom} is left from tuning; "
            f"{_beyond(r.binding)}."
        )
    else:
        out.append(f"At most {headroom} by reaching the {top} roof; {_beyond(r.binding)}.")

    unknown = [x for x in r.coverage.unknown if x != r.binding]
    if unknown:
        listed = ", ".join(_name(x, names) for x in unknown)
        out.append(
            f"Not measured: {listed}. Unknown is not zero: any of these may need longer than "
            f"{top} and bind instead, which would make the bound longer and the headroom smaller."
        )
    datasheet = r.efficiency_by_basis.get("datasheet")
    if datasheet is not None and r.efficiency is not None and abs(datasheet - r.efficiency) >= 0.05:
        out.append(
            f"Against datasheet roofs the efficiency is {fmt_percent(datasheet)} (against "
            f"measured roofs {eff}): the gap is what the hardware itself does not deliver."
        )
    if abs(r.clock_scale - 1.0) > 0.01:
        out.append(
            f"Measured at {fmt_percent(r.clock_scale)} of the clock the roofs are stated at; "
            f"the clock-scaled roofs were used (profilers such as Nsight Compute lock base "
            f"clocks by default)."
        )
    return out
