"""The notes and clocks of an imported launch: which clock the replay ran at (the
profile's, the timing file's, or the machine's base clock when Nsight Compute locked
it), what is unknown, and what does not pair (flushed-cache bytes with warm times)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roofgen.importers.ncu_derived import Derived, Figure, MachineView, quantity
from roofgen.importers.ncu_metrics import FLOP_WEIGHTS_VERSION

if TYPE_CHECKING:
    from roofgen.importers.ncu_case import Group, Options
    from roofgen.importers.timing import Timing


def unknown_clock(clock_control: str) -> str:
    why = "no base clock to assume" if clock_control == "base" else "clocks not locked"
    return (
        f"SM clock unknown (no clock metric, {why}): collect "
        "sm__cycles_elapsed.avg.per_second"
        + (", or give the machine clocks.base_sm" if clock_control == "base" else "")
    )


def replay_clocks(
    derived: Derived, timing: Timing | None, machine: MachineView, options: Options
) -> dict[str, Figure]:
    """The clocks of a launch timed by Nsight Compute's replay: the profile's clock
    metrics, else the timing file's, else the machine's base clock when the replay
    locked it (--clock-control base); none for a time measured outside the replay."""
    if timing is not None and timing.kind != "ncu-replay":
        return {}
    if derived.clocks:
        return dict(derived.clocks)
    if timing is not None and timing.sm_clock is not None:
        return {"sm": Figure(timing.sm_clock, "Hz", timing.clock_origin)}
    base = machine.base_sm_hz()
    if options.clock_control == "base" and base is not None:
        return {"sm": Figure(base, "Hz", f"machine {machine.id}'s clocks.base_sm: {_LOCKED}")}
    return {}


_LOCKED = "no clock metric; --clock-control base locks the SM clock to it"


def pairing_warnings(derived: Derived, timing: Timing | None, options: Options) -> list[str]:
    if timing is None or timing.kind == "ncu-replay" or options.cache_control != "all":
        return []
    if not derived.bytes:
        return []
    return [
        f"the bytes were counted by Nsight Compute with caches flushed before each replay "
        f"(--cache-control all), the time comes from {timing.kind} runs, whose caches stay "
        "warm between launches: device-memory bytes may exceed what the timed launches "
        "moved (profile with --cache-control none, or time with a flushed L2)"
    ]


def notes(
    group: Group, derived: Derived, timing: Timing | None, machine: MachineView, options: Options
) -> str:
    sources = ", ".join(sorted({launch.source for launch in group.launches}))
    clocks = replay_clocks(derived, timing, machine, options)
    clock = clocks.get("sm")
    at = f", SM clock {quantity(clock)}" if clock is not None else ""
    text = (
        f"Imported by roofgen import ncu from {sources} (FLOP weight table "
        f"v{FLOP_WEIGHTS_VERSION}): Nsight Compute replay with --clock-control "
        f"{options.clock_control}{at}, --cache-control {options.cache_control}."
    )
    if clock is not None and not derived.clocks and (timing is None or timing.sm_clock is None):
        text += (
            f" The profile has no clock metric: the SM clock is machine {machine.id}'s base "
            "clock, to which --clock-control base locks it."
        )
    elif clock is None and (timing is None or timing.kind == "ncu-replay"):
        text += " The SM clock is unknown: the profile has no clock metric " + (
            f"and machine {machine.id} states no base clock (clocks.base_sm)."
            if options.clock_control == "base"
            else "and the clocks were not locked."
        )
    if timing is not None and timing.kind != "ncu-replay":
        text += (
            f" The time is from {timing.origin}, not from the replay; that run's clocks are "
            "not recorded, so the roofs are not scaled for them."
        )
        if options.cache_control == "all" and derived.bytes:
            text += (
                " Its caches were warm, while the bytes were counted with caches flushed "
                "(--cache-control all)."
            )
    elif timing is not None:
        text += f" The time is from {timing.origin}."
    if derived.time_statistic == "mean" and timing is None:
        text += " The time is the mean over the profiled invocations (Nsight Compute's summary)."
    for note in derived.notes:
        text += f" {note}"
    return text
