"""A clock per peak, and measured roofs with the conditions they were measured under.

Every expected value is the hand arithmetic written out beside it.
"""

from __future__ import annotations

from typing import Any

import pytest
from specdata import plausibility_findings

from roofgen.analysis.bounds import launch_bounds
from roofgen.model import Launch
from roofgen.spec import build

# H100 SXM5 as NVIDIA's whitepaper states it: the tensor peaks at the 1830 MHz tensor
# boost clock, the FP32 / FP64 / FP64-tensor peaks at the 1980 MHz SM boost clock
# (NVIDIA developer forum thread 244727 on the whitepaper's Table 3; glennklockwood.com,
# "1.83 GHz (low precision), 1.98 GHz (high precision)").
H100: dict[str, Any] = {
    "id": "h100",
    "name": "H100 SXM5",
    "clocks": {"sm": "1980 MHz"},
    "compute": [
        {
            "id": "tensor",
            "kind": "tensor",
            "clock": "1830 MHz",
            "peaks": {
                "bf16": "989.5 TFLOP/s",
                "fp64": {"datasheet": "67 TFLOP/s", "clock": "1980 MHz"},
            },
        },
        {"id": "fp32", "kind": "fp32", "peaks": {"fp32": "67 TFLOP/s"}},
    ],
    "memory": [
        {"id": "hbm", "role": "device", "bandwidth": "3.35 TB/s"},
        {"id": "l1", "role": "l1", "bandwidth": {"datasheet": "30.92 TB/s", "clock": "1830 MHz"}},
    ],
}


def bounds(machine: dict[str, Any], measurement: dict[str, Any], basis: str = "measured"):
    launch = Launch("k", 1, build.measurement(measurement))
    return launch_bounds(build.machine(machine), launch, basis)  # type: ignore[arg-type]


def test_each_peak_scales_from_the_clock_it_is_stated_at():
    m = {"time": "1 ms", "clocks": {"sm": "1980 MHz"},
         "flops": {"fp32": {"fp32": 67e9}, "tensor": {"fp64": 67e9}}}  # fmt: skip
    b = bounds(H100, m)
    # FP32 stated at 1980 MHz, launch at 1980 MHz: 67e9 FLOP / 67e12 FLOP/s = 1 ms.
    assert b.seconds["compute.fp32"] == pytest.approx(67e9 / 67e12)
    # FP64 tensor states its own 1980 MHz over the unit's 1830: unchanged, 1 ms.
    assert b.seconds["compute.tensor"] == pytest.approx(67e9 / 67e12)


def test_a_peak_without_a_clock_takes_its_units():
    m = {"time": "1 ms", "clocks": {"sm": "1980 MHz"}, "flops": {"tensor": {"bf16": 1e12}}}
    # BF16 at the unit's 1830 MHz: at 1980 MHz the roof is 989.5 x 1980 / 1830 = 1070.6 TFLOP/s.
    roof = 989.5e12 * 1980 / 1830
    assert bounds(H100, m).seconds["compute.tensor"] == pytest.approx(1e12 / roof)


def test_a_derived_cache_roof_scales_from_its_own_clock():
    m = {"time": "1 ms", "clocks": {"sm": "1095 MHz"}, "bytes": {"l1": 1e9}}
    # L1 stated at 1830 MHz; at 1095 MHz: 30.92 TB/s x 1095 / 1830 = 18.50 TB/s.
    assert bounds(H100, m).seconds["memory.l1"] == pytest.approx(1e9 / (30.92e12 * 1095 / 1830))


def test_without_a_launch_clock_every_roof_is_taken_as_stated():
    m = {"time": "1 ms", "flops": {"fp32": {"fp32": 67e9}, "tensor": {"bf16": 989.5e9}}}
    b = bounds(H100, m)
    assert b.seconds["compute.fp32"] == pytest.approx(1e-3)  # 67e9 / 67e12
    assert b.seconds["compute.tensor"] == pytest.approx(1e-3)  # 989.5e9 / 989.5e12


def test_the_unit_and_roof_clocks_are_in_the_model():
    machine = build.machine(H100)
    tensor, fp32 = machine.compute
    assert tensor.clock_hz == pytest.approx(1830e6)
    assert tensor.peaks["bf16"].clock_hz == pytest.approx(1830e6)
    assert tensor.peaks["fp64"].clock_hz == pytest.approx(1980e6)
    assert fp32.peaks["fp32"].clock_hz == pytest.approx(1980e6)  # the machine's clocks.sm
    assert machine.memory[0].bandwidth.clock_hz is None  # device memory: not the SM clock


def test_a_measurement_at_a_locked_clock_is_restated_at_the_roofs_clock():
    machine = {**H100, "compute": [
        {"id": "fp32", "kind": "fp32",
         "peaks": {"fp32": {"datasheet": "67 TFLOP/s", "measured": "50 TFLOP/s",
                            "measured_clock": "1500 MHz"}}}]}  # fmt: skip
    # 50 TFLOP/s at a locked 1500 MHz is 50 x 1980 / 1500 = 66 TFLOP/s at the roof's 1980 MHz,
    # and 50 x 1095 / 1500 = 36.5 TFLOP/s at a launch's 1095 MHz.
    assert build.machine(machine).compute[0].peaks["fp32"].measured == pytest.approx(66e12)
    m = {"time": "1 ms", "clocks": {"sm": "1095 MHz"}, "flops": {"fp32": {"fp32": 36.5e9}}}
    assert bounds(machine, m).seconds["compute.fp32"] == pytest.approx(1e-3)


# A100 SXM4 40GB: 312 TFLOP/s BF16 at the 1410 MHz boost clock (NVIDIA A100 datasheet;
# the forum thread above: 108 SMs x 2048 FLOP/clk x 1410 MHz = 311.9 TFLOP/s). MAMF,
# stas00/ml-engineering @b9e29720: 271.2 TFLOP/s BF16, measured with unlocked clocks.
def a100(measured: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "a100",
        "name": "A100",
        "clocks": {"sm": "1410 MHz"},
        "compute": [
            {
                "id": "tensor",
                "kind": "tensor",
                "peaks": {"bf16": {"datasheet": "312 TFLOP/s", **measured}},
            }
        ],
        "memory": [{"id": "hbm", "role": "device", "bandwidth": "1.555 TB/s"}],
    }


AT_BASE = {"time": "1 ms", "clocks": {"sm": "1095 MHz"}, "flops": {"tensor": {"bf16": 1e11}}}


def test_a_measurement_at_a_locked_clock_is_rescaled_to_the_launchs_clock():
    machine = a100({"measured": "200 TFLOP/s", "measured_clock": "1000 MHz"})
    # 200 TFLOP/s at 1000 MHz is 200 x 1095 / 1000 = 219 TFLOP/s at the launch's 1095 MHz.
    assert bounds(machine, AT_BASE).seconds["compute.tensor"] == pytest.approx(1e11 / 219e12)


def test_an_unlocked_measurement_is_used_as_is_never_rescaled():
    machine = a100({"measured": "271.2 TFLOP/s", "measured_unlocked": {"power": "400 W"}})
    # Used as measured, 271.2 TFLOP/s, at any launch clock: 1e11 / 271.2e12 s.
    assert bounds(machine, AT_BASE).seconds["compute.tensor"] == pytest.approx(1e11 / 271.2e12)
    # The datasheet basis still scales: 312 x 1095 / 1410 = 242.3 TFLOP/s.
    datasheet = bounds(machine, AT_BASE, "datasheet").seconds["compute.tensor"]
    assert datasheet == pytest.approx(1e11 / (312e12 * 1095 / 1410))


def test_an_unlocked_measurement_is_not_restated_at_build():
    peak = build.machine(a100({"measured": "271.2 TFLOP/s", "measured_unlocked": {}}))
    roof = peak.compute[0].peaks["bf16"]
    assert roof.measured == pytest.approx(271.2e12)
    assert roof.measured_unlocked
    assert roof.conditions_clock_hz == pytest.approx(1410e6)  # the roof's clock by default


def rules_fired(machine: dict[str, Any], measurement: dict[str, Any]) -> dict[str, str]:
    return {f.rule: f.message for f in plausibility_findings(machine, measurement)}


def test_a_launch_far_from_an_unlocked_measurements_clock_is_warned_about():
    machine = a100({"measured": "271.2 TFLOP/s", "measured_unlocked": {"power": "400 W"}})
    # 1095 / 1410 = 77.7%: 22.3% from the clock the measurement ran near, beyond 5%.
    message = rules_fired(machine, AT_BASE)["unlocked-roof-clock"]
    assert "compute.tensor bf16" in message
    assert "under 400 W" in message
    assert "78%" in message or "77.7%" in message


def test_a_launch_within_five_percent_of_the_unlocked_clock_is_not():
    machine = a100({"measured": "271.2 TFLOP/s", "measured_unlocked": {"clock": "1400 MHz"}})
    # 1350 / 1400 = 96.4%: 3.6% away, within 5%.
    near = {**AT_BASE, "clocks": {"sm": "1350 MHz"}}
    assert "unlocked-roof-clock" not in rules_fired(machine, near)
    # 1300 / 1400 = 92.9%: 7.1% away.
    far = {**AT_BASE, "clocks": {"sm": "1300 MHz"}}
    assert "unlocked-roof-clock" in rules_fired(machine, far)


def test_a_launch_without_a_clock_is_not_warned_about():
    machine = a100({"measured": "271.2 TFLOP/s", "measured_unlocked": {}})
    assert "unlocked-roof-clock" not in rules_fired(machine, {**AT_BASE, "clocks": {}})


def test_an_unlocked_measurement_ran_near_its_own_roofs_clock_by_default():
    # NVIDIA caps H100 SXM tensor work at the 1830 MHz tensor boost clock (whitepaper
    # Table 3), so an unlocked BF16 benchmark ran near 1830 MHz, not the 1980 MHz SM boost.
    tensor = {**H100["compute"][0], "peaks": {"bf16": {
        "datasheet": "989.5 TFLOP/s", "measured": "794.5 TFLOP/s",
        "measured_unlocked": {"power": "700 W"}}}}  # fmt: skip
    machine = {**H100, "id": "a100", "compute": [tensor]}  # the id rules_fired's case names
    work = {"time": "2 ms", "flops": {"tensor": {"bf16": 1e12}}}
    # 1830 / 1830 = 100%: no warning. 1980 / 1830 = 108.2%: 8.2% away, beyond 5%.
    assert "unlocked-roof-clock" not in rules_fired(machine, {**work, "clocks": {"sm": "1830 MHz"}})
    assert "unlocked-roof-clock" in rules_fired(machine, {**work, "clocks": {"sm": "1980 MHz"}})
