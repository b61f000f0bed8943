"""Facts the recommendations and verdicts read ("launch-bound", "power-limited",
"communication-serial", "sparse"), from the launch's bounds and its roofline kinds.
Pure."""

from __future__ import annotations

from roofgen.analysis.bounds import Bounds, Thresholds
from roofgen.analysis.energy import EnergyResult
from roofgen.analysis.inputs import LaunchInputs
from roofgen.analysis.runtime import RuntimeFloor, launches_per_call
from roofgen.model import Measurement

__all__ = ["fact_note", "launch_facts", "variant_facts"]


def launch_facts(inputs: LaunchInputs, t: Thresholds) -> tuple[str, ...]:
    """Facts the recommendations read: ``launch-bound`` (the launch overhead alone is within
    the co-bound margin of the measured time, or binds), ``power-limited``,
    ``communication-serial`` (link time adds to the rest), ``sparse``."""
    m, bounds, machine = inputs.measurement, inputs.bounds, inputs.machine
    facts = []
    launch_s = bounds.seconds.get("launch")
    ranked = bounds.ranked()
    if launch_s and (
        launch_s >= (1.0 - t.co_bound_margin) * m.time.value_s
        or (ranked and ranked[0][0] == "launch")
    ):
        facts.append("launch-bound")
    # Only a machine with a power limit and a launch with its clock can show the limit:
    # the energy is computed for those alone.
    if (
        machine.power is not None
        and m.sm_clock_hz is not None
        and inputs.get(EnergyResult).power_limited
    ):
        facts.append("power-limited")
    plain = max(bounds.seconds.values(), default=0.0)
    if bounds.added and (bounds.bound_s or 0.0) > 1.01 * plain:
        facts.append("communication-serial")
    if m.sparsity is not None:
        facts.append("sparse")
    return tuple(facts)


def variant_facts(floor: RuntimeFloor | None) -> tuple[str, ...]:
    """Facts of a step: ``launch-bound`` when its launch and sync costs fill its time."""
    return ("launch-bound",) if floor is not None and floor.launch_bound else ()


def fact_note(facts: tuple[str, ...], bounds: Bounds, m: Measurement) -> str:
    """A clause for the verdict naming the facts, with their numbers."""
    notes = []
    if "launch-bound" in facts:
        launch_s = bounds.seconds.get("launch", 0.0)
        n, syncs = launches_per_call(m), m.syncs or 0
        what = f"{n} launch{'es' if n != 1 else ''}"
        if syncs:
            what += f" and {syncs} sync{'s' if syncs != 1 else ''}"
        notes.append(
            f"launch-bound: {what} cost {launch_s * 1e6:.3g} us of {m.time.value_s * 1e6:.3g} us"
        )
    if "power-limited" in facts:
        notes.append("power-limited: SM clock below the roofs' clock with power at the limit")
    return "; ".join(notes)
