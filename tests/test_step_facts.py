"""Facts of a step computed once by the analysis and read by everyone: the step's time
(the variant, its runtime floor and its energy), each launch's number among the
launches of its kernel, and each kernel's time per step and its speedup, which
``roofgen explain`` shows. Expected values are worked out by hand below."""

from __future__ import annotations

from typing import Any

import pytest

from roofgen.advice import Advice
from roofgen.analysis.analyse import Analysis, analyse
from roofgen.analysis.bounds import Thresholds
from roofgen.analysis.energy import StepEnergy
from roofgen.analysis.runtime import RuntimeResult
from roofgen.model import Specs
from roofgen.report.explain import explain
from roofgen.report.explain_json import explanation_json
from roofgen.report.explain_text import explanation_text
from roofgen.spec import build

MACHINE: dict[str, Any] = {
    "id": "m",
    "name": "Test GPU",
    "clocks": {"sm": "1000 MHz"},
    "compute": [{"id": "vector", "kind": "fp32", "peaks": {"fp32": "10 TFLOP/s"}}],
    "memory": [{"id": "hbm", "role": "device", "bandwidth": "1 TB/s"}],
    "runtime": {"launch_overhead": "3 us"},
}


def _launch(kernel: str, time: str, calls: int = 1) -> dict[str, Any]:
    # 1e6 FLOP at 10 TFLOP/s: 0.1 us; 1 MB at 1 TB/s: 1 us: the HBM binds, the vector
    # unit is the runner-up.
    flops = {"vector": {"fp32": "1e6 FLOP"}}
    measurement = {"time": time, "flops": flops, "bytes": {"hbm": "1 MB"}}
    return {"kernel": kernel, "calls": calls, "measurement": measurement}


def _analysis() -> tuple[Specs, Analysis]:
    """base launches a, b, a; fused launches a then the new kernel c; faster launches c
    only, twice as fast as in fused."""
    case = {
        "id": "c",
        "title": "c",
        "machines": ["m"],
        "kernels": [{"id": k, "operator": {"kind": "other"}} for k in ("a", "b", "c")],
        "variants": [
            {
                "id": "base",
                "launches": [_launch("a", "10 us", 2), _launch("b", "5 us"), _launch("a", "20 us")],
            },
            {"id": "fused", "launches": [_launch("a", "8 us", 2), _launch("c", "12 us", 3)]},
            {"id": "faster", "launches": [_launch("c", "6 us", 3)]},
        ],
    }
    specs = Specs({"m": build.machine(MACHINE)}, (build.case(case),))
    return specs, analyse(specs, Thresholds())


def test_the_step_time_is_one_number_read_by_the_variant_its_floor_and_its_energy() -> None:
    _, analysis = _analysis()
    base = analysis.cases[0].variants[0]
    # 2 x 10 us + 1 x 5 us + 1 x 20 us
    assert base.time_s == pytest.approx(45e-6)
    floor = base.get(RuntimeResult).floor
    assert floor is not None
    assert base.inputs.time_s == base.time_s
    assert floor.time_s == base.time_s
    assert base.get(StepEnergy).time_s == base.time_s


def test_each_launch_is_numbered_among_the_launches_of_its_kernel() -> None:
    _, analysis = _analysis()
    base, fused, _ = analysis.cases[0].variants
    assert [(r.kernel, r.occurrence) for r in base.launches] == [("a", 1), ("b", 1), ("a", 2)]
    assert [(r.kernel, r.occurrence) for r in fused.launches] == [("a", 1), ("c", 1)]
    # fused's a is paired with base's first a (not the second): 10 us / 8 us per call
    pair = analysis.cases[0].comparison.launch("fused", 0)
    assert pair is not None and pair.base_index == 0
    assert pair.speedup.value == pytest.approx(1.25)


def test_kernel_time_and_speedup_are_against_the_first_variant_that_launches_it() -> None:
    _, analysis = _analysis()
    case = analysis.cases[0]
    base, fused, faster = case.variants
    assert base.kernel_time_s == pytest.approx({"a": 40e-6, "b": 5e-6})  # 2 x 10 + 20 us
    assert fused.kernel_time_s == pytest.approx({"a": 16e-6, "c": 36e-6})  # 2 x 8; 3 x 12 us
    assert faster.kernel_time_s == pytest.approx({"c": 18e-6})  # 3 x 6 us
    assert case.comparison.kernel_speedups == pytest.approx(
        {
            ("base", "a"): 1.0,
            ("base", "b"): 1.0,
            ("fused", "a"): 2.5,  # 40 / 16 us
            ("fused", "c"): 1.0,  # c is new in fused
            ("faster", "c"): 2.0,  # 36 / 18 us
        }
    )


def test_explain_reads_the_kernel_time_speedup_and_roles_of_the_analysis() -> None:
    specs, analysis = _analysis()
    e = explain(analysis, specs, Advice(), "c", "c")
    assert e.absent == ("base",)
    assert [ve.kernel_time_s for ve in e.variants] == pytest.approx([36e-6, 18e-6])
    assert [ve.speedup_vs_first for ve in e.variants] == pytest.approx([1.0, 2.0])
    text = explanation_text(e)
    assert "  faster: 18 us  2.00x vs fused\n" in text
    assert "  base: does not launch c\n" in text
    roles = {row.resource: row.role for row in e.variants[0].launches[0].rows}
    assert roles["memory.hbm"] == "binds"
    assert roles["compute.vector"] == "runner-up"


def test_explain_of_one_variant_gives_its_speedup_against_the_first_not_one() -> None:
    """Asked for one variant, explain used to compare the variant with itself (1.0)."""
    specs, analysis = _analysis()
    (ve,) = explanation_json(explain(analysis, specs, Advice(), "c", "a", "fused"))["variants"]
    assert ve["kernel_time_s"] == pytest.approx(16e-6)
    assert ve["speedup_vs_first"] == pytest.approx(2.5)  # base's 40 us / fused's 16 us
