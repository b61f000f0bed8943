"""A clock per peak: each roof scales from the clock it is stated at.

Every expected value is the hand arithmetic written out beside it.
"""

from __future__ import annotations

from typing import Any

import pytest

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
