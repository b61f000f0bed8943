"""The runtime roofline: launch costs by mechanism (stream, CUDA graph, PDL) and syncs as
a floor on a step's time, and the launch-bound fact."""

from __future__ import annotations

from typing import Any

import pytest

from roofgen.analysis.analyse import analyse
from roofgen.analysis.bounds import Thresholds, launch_bounds
from roofgen.analysis.runtime import runtime_floor
from roofgen.model import Launch, Specs
from roofgen.spec import build

MACHINE: dict[str, Any] = {
    "id": "m",
    "name": "Test GPU",
    "clocks": {"sm": "1830 MHz"},
    "compute": [{"id": "tensor", "kind": "tensor", "peaks": {"bf16": "989 TFLOP/s"}}],
    "memory": [{"id": "hbm", "role": "device", "bandwidth": "3.35 TB/s"}],
    "runtime": {
        "launch_overhead": "3 us",
        "graph_launch_overhead": "1 us",
        "pdl_launch_overhead": "0.6 us",
        "sync_overhead": "8 us",
    },
}

STEP: dict[str, Any] = {
    "flops": {"tensor": {"bf16": "3.2e8 FLOP"}},
    "bytes": {"hbm": "335 MB"},  # 100 us
    "launches": 200,
    "syncs": 1,
}


def _m(mechanism: str | None, time: str, **extra: Any) -> dict[str, Any]:
    m = {**STEP, "time": time, **extra}
    if mechanism is not None:
        m["launch_mechanism"] = mechanism
    return m


@pytest.mark.parametrize(
    ("mechanism", "floor"),
    [("stream", 200 * 3e-6 + 8e-6), ("graph", 200 * 1e-6 + 8e-6), ("pdl", 200 * 0.6e-6 + 8e-6)],
)
def test_launch_cost_by_mechanism(mechanism: str, floor: float):
    machine = build.machine(MACHINE)
    bounds = launch_bounds(machine, Launch("k", 1, build.measurement(_m(mechanism, "1 ms"))))
    assert bounds.seconds["launch"] == pytest.approx(floor)


def test_graph_flag_and_default_mechanism():
    machine = build.machine(MACHINE)
    graph = launch_bounds(machine, Launch("k", 1, build.measurement(_m(None, "1 ms", graph=True))))
    assert graph.seconds["launch"] == pytest.approx(208e-6)
    stream = launch_bounds(machine, Launch("k", 1, build.measurement(_m(None, "1 ms"))))
    assert stream.seconds["launch"] == pytest.approx(608e-6)


def test_pdl_without_a_cost_is_unknown():
    no_pdl = {**MACHINE, "runtime": {"launch_overhead": "3 us", "sync_overhead": "8 us"}}
    bounds = launch_bounds(
        build.machine(no_pdl), Launch("k", 1, build.measurement(_m("pdl", "1 ms")))
    )
    assert "launch" in bounds.unknown


def _analysis(measurements: list[dict[str, Any]]):
    case = {
        "id": "c",
        "title": "c",
        "machines": ["m"],
        "kernels": [{"id": "step", "operator": {"kind": "other"}}],
        "variants": [
            {"id": f"v{i}", "launches": [{"kernel": "step", "measurement": m}]}
            for i, m in enumerate(measurements)
        ],
    }
    specs = Specs({"m": build.machine(MACHINE)}, (build.case(case),))
    return specs, analyse(specs, Thresholds())


def test_launch_bound_step_is_a_fact_with_a_verdict():
    _, analysis = _analysis([_m("stream", "641 us"), _m("graph", "252 us"), _m("graph", "600 us")])
    eager, graph, slow = analysis.cases[0].variants
    r = eager.launches[0]
    assert r.binding == "launch" and r.klass == "bound"
    assert r.lower_bound_s == pytest.approx(608e-6)  # 95% of 641 us
    assert "launch-bound" in r.facts and "launch-bound" in eager.facts
    assert "launch-bound: 200 launches and 1 sync cost 608 us of 641 us" in r.verdict
    assert "launch-bound" in graph.launches[0].facts  # binds at 83%
    # 208 us of launches in 600 us: something else takes the time, not launching.
    assert slow.launches[0].binding == "launch"
    assert slow.launches[0].klass == "below-roofs"
    assert "launch-bound" not in slow.facts


def test_runtime_floor_of_a_step():
    specs, _ = _analysis([_m("stream", "641 us")])
    machine = specs.machines["m"]
    variant = specs.cases[0].variants[0]
    floor = runtime_floor(
        machine,
        variant,
        [launch_bounds(machine, x) for x in variant.launches],
        Thresholds(),
        641e-6,  # one call of 641 us: the step's time
    )
    assert floor is not None
    assert (floor.launches, floor.syncs, floor.mechanisms) == (200, 1, ("stream",))
    assert floor.floor_s == pytest.approx(608e-6)
    assert floor.by_mechanism == pytest.approx({"stream": 608e-6, "graph": 208e-6, "pdl": 128e-6})
    assert floor.launch_bound
    assert floor.time_s == 641e-6
