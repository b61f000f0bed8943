"""The instruction roofline (Ding and Williams, PMBS 2019) against its published V100
ceilings, the access-pattern walls derived from the warp width, and the points."""

from __future__ import annotations

from typing import Any

import pytest

from roofgen.analysis.bounds import launch_bounds
from roofgen.analysis.instruction import (
    access_walls,
    instruction_ceilings,
    instruction_points,
    shared_walls,
)
from roofgen.model import Launch
from roofgen.spec import build

# The paper's V100: 80 SMs x 4 schedulers x 1.53 GHz; L1, L2 and HBM bandwidths whose
# 32-byte transactions give 437.5, 93.6 and 25.9 GTXN/s.
V100_DING: dict[str, Any] = {
    "id": "v100",
    "name": "V100",
    "clocks": {"sm": "1530 MHz"},
    "compute": [{"id": "fp64", "kind": "fp64", "peaks": {"fp64": "7.8 TFLOP/s"}}],
    "memory": [
        {"id": "hbm", "role": "device", "bandwidth": "828.8 GB/s", "transaction_size": "32 B"},
        {"id": "l2", "role": "llc", "bandwidth": "2995.2 GB/s", "transaction_size": "32 B"},
        {"id": "l1", "role": "l1", "bandwidth": "14000 GB/s", "transaction_size": "32 B"},
    ],
    "issue": {"sms": 80, "schedulers_per_sm": 4, "warp_size": 32},
}


def test_v100_published_ceilings():
    c = instruction_ceilings(build.machine(V100_DING))
    assert c is not None
    assert c.issue_per_s == pytest.approx(489.6e9)  # 80 x 4 x 1.53e9
    assert c.transactions_per_s["l1"] == pytest.approx(437.5e9)  # 14000e9 / 32
    assert c.transactions_per_s["l2"] == pytest.approx(93.6e9)  # 2995.2e9 / 32
    assert c.transactions_per_s["hbm"] == pytest.approx(25.9e9)  # 828.8e9 / 32
    assert c.warp_size == 32


def test_global_walls_for_32_threads_and_32_byte_sectors():
    walls = dict(access_walls(32, 32.0))
    assert walls == {
        "stride 0": 1.0,
        "unit stride, 4-byte words": pytest.approx(1 / 4),  # 128 B = 4 sectors
        "unit stride, 8-byte words": pytest.approx(1 / 8),
        "unit stride, 16-byte words": pytest.approx(1 / 16),
        "stride >= 32 B": pytest.approx(1 / 32),  # one sector per thread
    }
    assert dict(shared_walls(32)) == {
        "shared, no bank conflict": 1.0,
        "shared, 32-way bank conflict": pytest.approx(1 / 32),
    }


def test_walls_follow_the_warp_width():
    """A 64-wide AMD wavefront touches twice the bytes per instruction: every wall halves."""
    walls = dict(access_walls(64, 32.0))
    assert walls["unit stride, 4-byte words"] == pytest.approx(1 / 8)
    assert walls["unit stride, 8-byte words"] == pytest.approx(1 / 16)
    assert walls["stride >= 32 B"] == pytest.approx(1 / 64)
    assert walls["stride 0"] == 1.0
    shared = dict(shared_walls(64))
    assert shared["shared, no bank conflict"] == pytest.approx(1 / 2)  # 64 lanes, 32 banks
    assert shared["shared, 64-way bank conflict"] == pytest.approx(1 / 64)
    amd = {**V100_DING, "issue": {"sms": 220, "schedulers_per_sm": 4, "warp_size": 64}}
    c = instruction_ceilings(build.machine(amd))
    assert c is not None and c.warp_size == 64
    assert dict(c.global_walls)["stride >= 32 B"] == pytest.approx(1 / 64)


def test_no_issue_section_no_instruction_roofline():
    machine = build.machine({k: v for k, v in V100_DING.items() if k != "issue"})
    assert instruction_ceilings(machine) is None


def _launch(m: dict[str, Any]) -> Launch:
    return Launch("k", 1, build.measurement(m))


def test_points_count_shared_wavefronts_as_l1_transactions():
    machine = build.machine(V100_DING)
    m = build.measurement(
        {
            "time": "1 ms",
            "instructions": "4e8 inst",
            "transactions": {"l1": "1e8 txn", "l2": "5e7 txn"},
            "bytes": {"hbm": "640 MB"},  # no transactions: bytes / 32 B = 2e7
            "global_ldst_instructions": "2e7 inst",
            "global_transactions": "8e7 txn",
            "shared_ldst_instructions": "1e7 inst",
            "shared_wavefronts": "1e8 txn",
        }
    )
    points = {p.level: p for p in instruction_points(machine, m)}
    assert points["l1"].transactions == pytest.approx(2e8)  # 1e8 sectors + 1e8 wavefronts
    assert points["l1"].intensity == pytest.approx(2.0)
    assert points["l2"].intensity == pytest.approx(8.0)
    assert points["hbm"].transactions == pytest.approx(2e7)
    assert points["hbm"].intensity == pytest.approx(20.0)
    assert points["l1"].warp_ips == pytest.approx(4e11)  # 4e8 / 1 ms
    assert points["global"].intensity == pytest.approx(0.25)  # unit stride, 4-byte words
    assert points["global"].warp_ips == pytest.approx(2e10)
    assert points["shared"].intensity == pytest.approx(0.1)  # a 10-way conflict


def test_issue_resource_and_bytes_from_transactions():
    machine = build.machine(V100_DING)
    bounds = launch_bounds(
        machine,
        _launch(
            {"time": "1 ms", "instructions": "4.896e8 inst", "transactions": {"hbm": "2.59e7 txn"}}
        ),
    )
    assert bounds.seconds["issue"] == pytest.approx(1e-3)  # 4.896e8 / 489.6e9
    # HBM bytes from transactions x 32 B: 2.59e7 x 32 / 828.8e9 = 1 ms.
    assert bounds.seconds["memory.hbm"] == pytest.approx(2.59e7 * 32 / 828.8e9)
    assert "memory.l2" in bounds.unknown


def test_issue_rate_scales_with_the_measured_clock():
    machine = build.machine(V100_DING)
    bounds = launch_bounds(
        machine,
        _launch({"time": "1 ms", "instructions": "4.896e8 inst", "clocks": {"sm": "765 MHz"}}),
    )
    assert bounds.seconds["issue"] == pytest.approx(2e-3)  # half the clock, twice the time
