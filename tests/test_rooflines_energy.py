"""The energy roofline (Choi, Bedard, Fowler, Vuduc, IPDPS 2013) and the power limit:
energy = e_flop x FLOPs + e_byte x bytes + constant power x time; the power limit binds
through dynamic energy / (limit - constant power); measured energy never binds; a power-limited
launch is recognised by its clock. The coefficients below are test figures, not a
real machine's."""

from __future__ import annotations

from typing import Any

import pytest

from roofgen.analysis.analyse import analyse
from roofgen.analysis.bounds import Thresholds, dynamic_energy_j, launch_bounds
from roofgen.analysis.energy import energy_result, power_limited
from roofgen.charts.energy import arch_flop_per_j, roofline_power_w
from roofgen.charts.roofline_inputs import EnergyInput, EnergyModel
from roofgen.model import Launch, Specs
from roofgen.site.sections import case_sections
from roofgen.spec import build

MACHINE: dict[str, Any] = {
    "id": "m",
    "name": "Test GPU",
    "clocks": {"sm": "1410 MHz"},
    "compute": [
        {
            "id": "tensor",
            "kind": "tensor",
            "peaks": {"bf16": "312 TFLOP/s", "bf16-sparse": "624 TFLOP/s"},
        },
        {"id": "fp32", "kind": "fp32", "peaks": {"fp32": "19.5 TFLOP/s"}},
    ],
    "memory": [
        {"id": "hbm", "role": "device", "bandwidth": "1.555 TB/s"},
        {"id": "l2", "role": "llc", "bandwidth": "7 TB/s"},
    ],
    "power": {
        "limit": "400 W",
        "constant": "100 W",
        "energy_per_flop": {"bf16": "0.5 pJ/FLOP", "fp32": "2 pJ/FLOP"},
        "energy_per_byte": {"hbm": "10 pJ/B", "l2": "2 pJ/B"},
    },
}

WORK: dict[str, Any] = {
    "time": "5 ms",
    "flops": {"tensor": {"bf16": "1e12 FLOP"}, "fp32": {"fp32": "1e10 FLOP"}},
    "bytes": {"hbm": "1 GB", "l2": "2 GB"},
}
# 1e12 x 0.5 pJ + 1e10 x 2 pJ + 1e9 x 10 pJ + 2e9 x 2 pJ = 0.5 + 0.02 + 0.01 + 0.004 J
DYNAMIC_J = 0.534


def _launch(extra: dict[str, Any] | None = None) -> Launch:
    return Launch("k", 1, build.measurement({**WORK, **(extra or {})}))


def test_dynamic_energy_by_hand():
    machine = build.machine(MACHINE)
    assert dynamic_energy_j(machine, _launch().measurement) == pytest.approx(DYNAMIC_J)


def test_energy_with_constant_power_over_the_measured_time():
    e = energy_result(build.machine(MACHINE), _launch().measurement)
    assert e.dynamic_j == pytest.approx(DYNAMIC_J)
    assert e.constant_j == pytest.approx(0.5)  # 100 W x 5 ms
    assert e.modelled_j == pytest.approx(1.034)
    assert e.measured_j is None
    assert e.flop == pytest.approx(1.01e12)
    assert e.flop_per_j == pytest.approx(1.01e12 / 1.034)


def test_measured_energy_and_power():
    machine = build.machine(MACHINE)
    e = energy_result(machine, _launch({"average_power": "380 W"}).measurement)
    assert e.measured_j == pytest.approx(1.9)  # 380 W x 5 ms
    assert e.energy_j == pytest.approx(1.9)  # measured where there is one
    assert e.flop_per_j == pytest.approx(1.01e12 / 1.9)
    e = energy_result(machine, _launch({"energy": "2 J"}).measurement)
    assert e.average_power_w == pytest.approx(400.0)


def test_power_limit_binds_through_dynamic_energy():
    machine = build.machine(MACHINE)
    bounds = launch_bounds(machine, _launch())
    assert bounds.seconds["power"] == pytest.approx(DYNAMIC_J / (400 - 100))  # 1.78 ms


def test_measured_energy_never_binds():
    """An enforced limit caps average power: measured energy / limit <= measured time.
    The power resource is the model's, whatever energy was measured."""
    machine = build.machine(MACHINE)
    plain = launch_bounds(machine, _launch()).seconds["power"]
    measured = launch_bounds(machine, _launch({"energy": "2 J", "average_power": "400 W"}))
    assert measured.seconds["power"] == pytest.approx(plain)
    without = build.machine({**MACHINE, "power": {"limit": "400 W"}})
    bounds = launch_bounds(without, _launch({"energy": "2 J"}))
    assert "power" in bounds.unknown  # no coefficients: unknown, not measured energy / limit


def test_sparse_flops_cost_the_executed_half():
    machine = build.machine(MACHINE)
    m = build.measurement(
        {
            "time": "1 ms",
            "flops": {"tensor": {"bf16-sparse": "2e12 FLOP"}},
            "bytes": {"hbm": "0 B"},
            "sparsity": {"pattern": "2:4"},
        }
    )
    assert dynamic_energy_j(machine, m) == pytest.approx(0.5)  # 1e12 executed x 0.5 pJ


def test_power_limited_launch_is_recognised_by_its_clock():
    machine = build.machine(MACHINE)
    at_limit = {"average_power": "395 W", "clocks": {"sm": "1275 MHz"}}
    assert power_limited(machine, _launch(at_limit).measurement)
    assert not power_limited(machine, _launch({**at_limit, "average_power": "300 W"}).measurement)
    assert not power_limited(
        machine, _launch({**at_limit, "clocks": {"sm": "1410 MHz"}}).measurement
    )
    assert not power_limited(machine, _launch({"average_power": "395 W"}).measurement)


def test_energy_roofline_arch_and_power_by_hand():
    model = EnergyModel("bf16", 0.5e-12, 10e-12, 100.0, 312e12, 1.555e12)
    # Compute-bound at 1000 FLOP/B: constant power over 1/312e12 s per FLOP.
    expected = 1 / (0.5e-12 + 10e-12 / 1000 + 100 / 312e12)
    assert arch_flop_per_j(model, 1000.0) == pytest.approx(expected)
    # Memory-bound at 1 FLOP/B: runs at 1.555 TFLOP/s.
    assert arch_flop_per_j(model, 1.0) == pytest.approx(1 / (0.5e-12 + 10e-12 + 100 / 1.555e12))
    assert roofline_power_w(model, 1000.0) == pytest.approx(100 + (0.5e-12 + 1e-14) * 312e12)


def _case(launches: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "c",
        "title": "Energy case",
        "machines": ["m"],
        "kernels": [{"id": "k", "operator": {"kind": "gemm"}}],
        "variants": [
            {
                "id": "v",
                "launches": [{"kernel": "k", "calls": 2, "measurement": m} for m in launches],
            }
        ],
    }


def test_energy_to_solution_per_variant():
    """Two calls of 1.9 J measured each: 3.8 J per step; the model gives 2 x 1.034 J."""
    machine = build.machine(MACHINE)
    specs = Specs({"m": machine}, (build.case(_case([{**WORK, "average_power": "380 W"}])),))
    analysis = analyse(specs, Thresholds())
    sections = case_sections(analysis.cases[0], specs.machines, {}, Thresholds())
    energy = next(s for s in sections if s.id == "energy")
    [row] = energy.tables[0].rows
    variant, measured, model, flop_per_j, power, limited = row
    assert (variant, measured, model) == ("v", "3.8 J", "2.07 J")
    assert flop_per_j == "532 GFLOP/J"  # 2 x 1.01e12 FLOP / 3.8 J
    assert power == "380 W"
    assert limited == "none"


def test_no_coefficients_the_energy_chart_says_so():
    machine = build.machine({**MACHINE, "power": {"limit": "400 W"}})
    specs = Specs({"m": machine}, (build.case(_case([{**WORK, "average_power": "380 W"}])),))
    analysis = analyse(specs, Thresholds())
    sections = case_sections(analysis.cases[0], specs.machines, {}, Thresholds())
    energy = next(s for s in sections if s.id == "energy")
    inp = energy.charts[0].input
    assert isinstance(inp, EnergyInput)
    assert inp.model is None
    assert "No published energy coefficients" in inp.note
    assert any("No published energy coefficients" in n for n in energy.notes)
