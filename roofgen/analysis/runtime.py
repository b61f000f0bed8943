"""The runtime roofline: kernel launches and synchronisations per step with their cost.
Pure.

Launches, graph nodes and synchronisations per step times their cost are a floor under
the step's time (a stream launch, a CUDA graph node and a programmatic dependent launch
cost differently). A step whose time is within the co-bound margin of that floor is
launch-bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from roofgen.analysis.bounds import Bounds, Thresholds
from roofgen.analysis.inputs import VariantInputs
from roofgen.model import Machine, Measurement, Variant

__all__ = ["RuntimeFloor", "RuntimeResult", "launch_floor_s", "launches_per_call", "runtime_floor"]


def launches_per_call(m: Measurement) -> int:
    """Kernel launches of one call: the measured count, else one."""
    return m.launches if m.launches is not None else 1


@dataclass(frozen=True)
class RuntimeFloor:
    """The runtime roofline of a step (one variant): launches and syncs with their cost.

    ``launches`` and ``syncs``: per step (calls x per call); ``mechanisms``: how the
    launches were launched (stream, graph, pdl), in launch order; ``time_s``: the step's
    measured time (s); ``floor_s`` is the launch resource's time summed over the step (s;
    ``None`` when a launch's count or cost is unknown); ``by_mechanism`` what the same
    launches would cost as stream launches, graph nodes and PDL launches, plus the syncs
    (s); ``launch_bound``: the floor is within the co-bound margin of the measured time.
    """

    launches: int
    syncs: int
    mechanisms: tuple[str, ...]
    time_s: float
    floor_s: float | None
    by_mechanism: dict[str, float]
    launch_bound: bool


def launch_floor_s(bounds: list[Bounds], calls: list[int]) -> float | None:
    """The launch resource's time over a step (s): calls x each launch's launch time;
    ``None`` when a launch's is unknown."""
    if any("launch" not in b.seconds for b in bounds):
        return None
    return sum(c * b.seconds["launch"] for b, c in zip(bounds, calls, strict=True))


def runtime_floor(
    machine: Machine, variant: Variant, bounds: list[Bounds], t: Thresholds, time_s: float
) -> RuntimeFloor | None:
    """The runtime floor of ``variant``'s step (``bounds``: each launch's, in order;
    ``time_s``: the step's measured time, :attr:`VariantInputs.time_s`); ``None`` when the
    machine states no launch costs."""
    rt = machine.runtime
    if rt is None:
        return None
    calls = [x.calls for x in variant.launches]
    launches = sum(
        c * launches_per_call(x.measurement) for c, x in zip(calls, variant.launches, strict=True)
    )
    syncs = sum(
        c * (x.measurement.syncs or 0) for c, x in zip(calls, variant.launches, strict=True)
    )
    floor = launch_floor_s(bounds, calls)
    sync_s = syncs * (rt.sync_overhead_s or 0.0)
    by_mechanism = {
        mech: launches * cost + sync_s
        for mech in ("stream", "graph", "pdl")
        if (cost := rt.launch_cost_s(mech)) is not None
    }
    mechanisms = tuple(dict.fromkeys(x.measurement.mechanism for x in variant.launches))
    bound = floor is not None and floor >= (1.0 - t.co_bound_margin) * time_s
    return RuntimeFloor(launches, syncs, mechanisms, time_s, floor, by_mechanism, bound)


@dataclass(frozen=True)
class RuntimeResult:
    """The runtime roofline of one step: its floor (``None`` when the machine states no
    launch costs), and whether any launch of the step counts its launches or syncs."""

    floor: RuntimeFloor | None
    counted: bool

    @classmethod
    def of(cls, inputs: VariantInputs) -> RuntimeResult:
        launches = inputs.variant.launches
        return cls(
            runtime_floor(
                inputs.machine,
                inputs.variant,
                [x.bounds for x in inputs.launches],
                inputs.thresholds,
                inputs.time_s,
            ),
            any(
                x.measurement.launches is not None or x.measurement.syncs is not None
                for x in launches
            ),
        )
