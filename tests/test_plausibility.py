"""Plausibility rules: they fire on wrong data and stay quiet on normal data."""

from __future__ import annotations

from typing import Any

from specdata import plausibility_findings

A100: dict[str, Any] = {
    "id": "a100",
    "name": "A100",
    "clocks": {"sm": "1410 MHz"},
    "compute": [{"id": "tensor", "kind": "tensor", "peaks": {"bf16": "312 TFLOP/s"}}],
    "memory": [
        {"id": "hbm", "role": "device", "bandwidth": "1.555 TB/s"},
        {"id": "l2", "role": "llc", "bandwidth": "7050 GB/s"},
        {"id": "l1", "role": "l1", "bandwidth": "19.5 TB/s"},
    ],
}

GOOD_TIME = {"median": "1 ms", "q1": "0.99 ms", "q3": "1.01 ms", "repeats": 100, "warmup": 10}


def findings(measurement: dict[str, Any]) -> dict[str, str]:
    return {f.rule: f.severity for f in plausibility_findings(A100, measurement)}


def test_normal_data_raises_nothing_even_with_l1_below_l2():
    # With TMA, loads bypass L1: L1 bytes below L2 bytes is normal.
    m = {"time": GOOD_TIME, "flops": {"tensor": {"bf16": 200e9}},
         "bytes": {"hbm": 1e9, "l2": 4e9, "l1": 1e9}}  # fmt: skip
    assert findings(m) == {}


def test_achieved_above_a_datasheet_roof_is_a_warning():
    m = {"time": GOOD_TIME, "flops": {"tensor": {"bf16": 400e9}}, "bytes": {"hbm": 1e9}}
    assert findings(m) == {"achieved-above-roof": "warning"}


def test_spread_is_judged_by_the_interquartile_range_not_max_minus_min():
    wide_tails = {**GOOD_TIME, "min": "0.5 ms", "max": "3 ms"}
    m = {"time": wide_tails, "flops": {"tensor": {"bf16": 1e9}}, "bytes": {"hbm": 1e9}}
    assert "noisy-timing" not in findings(m)
    noisy = {**GOOD_TIME, "q1": "0.9 ms", "q3": "1.1 ms"}
    m = {"time": noisy, "flops": {"tensor": {"bf16": 1e9}}, "bytes": {"hbm": 1e9}}
    assert findings(m)["noisy-timing"] == "warning"


def test_profiler_replay_at_base_clocks_is_a_note_not_a_warning():
    m = {"time": {"median": "1.8 ms", "repeats": 1}, "timing": "ncu-replay",
         "clocks": {"sm": "765 MHz"}, "flops": {"tensor": {"bf16": 1e9}},
         "bytes": {"hbm": 1e9}}  # fmt: skip
    found = findings(m)
    assert found.get("profiler-clocks") == "note"
    assert "warning" not in found.values()


def test_no_warmup_is_a_warning():
    m = {"time": {**GOOD_TIME, "warmup": 0}, "flops": {"tensor": {"bf16": 1e9}},
         "bytes": {"hbm": 1e9}}  # fmt: skip
    assert findings(m) == {"no-warmup": "warning"}
