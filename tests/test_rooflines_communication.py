"""The communication roofline: nccl-tests bus factors, the alpha-beta cost of a collective,
link bytes per direction, overlap (max) against no overlap (sum), and SMs lent to
collectives."""

from __future__ import annotations

from typing import Any

import pytest

from roofgen.analysis.bounds import launch_bounds
from roofgen.analysis.comm import (
    bus_bytes,
    bus_factor,
    collective_seconds,
    half_bandwidth_size,
    latency_s,
    latency_steps,
)
from roofgen.analysis.communication import collective_costs, link_bytes_by_link
from roofgen.model import Collective, Launch
from roofgen.spec import build

MiB = 2**20


def _c(kind: str, size: float, ranks: int, **kw: Any) -> Collective:
    return Collective(kind, size, ranks, "nvlink", **kw)


@pytest.mark.parametrize(
    ("kind", "factor"),
    [
        ("all-reduce", 2 * 7 / 8),
        ("reduce-scatter", 7 / 8),
        ("all-gather", 7 / 8),
        ("all-to-all", 7 / 8),
        ("broadcast", 1.0),
        ("reduce", 1.0),
        ("send-recv", 1.0),
    ],
)
def test_nccl_tests_bus_factors_at_eight_ranks(kind: str, factor: float):
    assert bus_factor(_c(kind, 1.0, 8)) == pytest.approx(factor)


def test_in_network_reduction_factor_comes_from_the_spec():
    assert bus_factor(_c("all-reduce", 1.0, 8, bus_factor=1.0)) == 1.0
    assert bus_factor(_c("all-reduce", 1.0, 1)) == 0.0  # one rank sends nothing


def test_a100_nvlink_all_reduce_of_64_mib_over_8_ranks(a100):
    """A ring all-reduce pays 2(n-1) = 14 latencies of 3 us:
    2 x 7/8 x 64 MiB / 300 GB/s + 14 x 3 us = 391.47 + 42 = 433.47 us."""
    machine = build.machine(a100)
    link = machine.link("nvlink")
    assert link is not None
    c = _c("all-reduce", 64 * MiB, 8)
    expected = 14 * 3e-6 + 2 * 7 / 8 * 64 * MiB / 300e9
    assert expected == pytest.approx(433.47e-6, abs=0.01e-6)
    assert bus_bytes(c) == pytest.approx(117_440_512)
    assert collective_seconds(c, link, 300e9) == pytest.approx(expected)
    bounds = launch_bounds(
        machine,
        Launch(
            "ar",
            1,
            build.measurement(
                {
                    "time": "450 us",
                    "collectives": [
                        {
                            "kind": "all-reduce",
                            "bytes": "64 MiB",
                            "ranks": 8,
                            "link": "nvlink",
                            "topology": "NVSwitch",
                        }
                    ],
                }
            ),
        ),
    )
    assert bounds.seconds["link.nvlink"] == pytest.approx(expected)
    assert "link.pcie" in bounds.unknown  # no link bytes and no collective on it
    assert bounds.bound_s == pytest.approx(expected)


def test_latency_and_bandwidth_regimes(a100):
    """Ring all-reduce over 8 ranks: 14 x 3 us x 300 GB/s = 12.6 MB of bus bytes where
    latency and bandwidth cost the same; ring all-gather: 7 x 3 us x 300 GB/s = 6.3 MB."""
    machine = build.machine(a100)
    link = machine.link("nvlink")
    assert link is not None
    assert half_bandwidth_size(_c("all-reduce", 1.0, 8), link, 300e9) == pytest.approx(12.6e6)
    assert half_bandwidth_size(_c("all-gather", 1.0, 8), link, 300e9) == pytest.approx(6.3e6)
    m = build.measurement(
        {
            "time": "1 ms",
            "collectives": [
                {"kind": "all-reduce", "bytes": "256 KiB", "ranks": 8, "link": "nvlink"},
                {"kind": "all-gather", "bytes": "64 MiB", "ranks": 8, "link": "nvlink"},
            ],
        }
    )
    small, large = collective_costs(machine, m)
    assert small.regime == "latency-bound"  # 458,752 bus bytes < 12.6 MB
    assert small.bound_s == pytest.approx(14 * 3e-6 + 1.75 * 256 * 1024 / 300e9)
    assert large.regime == "bandwidth-bound"  # 58.7 MB > 6.3 MB
    assert large.bound_s == pytest.approx(7 * 3e-6 + 7 / 8 * 64 * MiB / 300e9)


def test_link_bytes_per_direction_busier_one_binds(a100):
    machine = build.machine(a100)
    m = {"time": "1 ms", "link_bytes": {"nvlink": {"out": "3 GB", "in": "1.5 GB"}}}
    bounds = launch_bounds(machine, Launch("k", 1, build.measurement(m)))
    assert bounds.seconds["link.nvlink"] == pytest.approx(10e-3)  # 3 GB / 300 GB/s
    assert bounds.seconds["link.pcie"] == 0.0  # link bytes given: none over PCIe
    assert link_bytes_by_link(build.measurement(m)) == {"nvlink": 3e9}


GEMM_AND_ALL_REDUCE: dict[str, Any] = {
    "time": "1 ms",
    "flops": {"tensor": {"bf16": "62.4e9 FLOP"}},  # 200 us at 312 TFLOP/s
    "bytes": {"hbm": "155.5 MB"},  # 100 us
    "collectives": [{"kind": "send-recv", "bytes": "89.1 MB", "ranks": 2, "link": "nvlink"}],
}  # one step: 3 us + 89.1e6 / 300e9 = 300 us


def test_overlapped_communication_joins_the_max(a100):
    machine = build.machine(a100)
    bounds = launch_bounds(machine, Launch("k", 1, build.measurement(GEMM_AND_ALL_REDUCE), True))
    assert bounds.seconds["link.nvlink"] == pytest.approx(300e-6)
    assert bounds.bound_s == pytest.approx(300e-6)
    assert bounds.serial_s == pytest.approx(600e-6)


def test_communication_without_overlap_adds_to_compute(a100):
    machine = build.machine(a100)
    bounds = launch_bounds(machine, Launch("k", 1, build.measurement(GEMM_AND_ALL_REDUCE), False))
    assert bounds.added == ("link.nvlink",)
    assert bounds.bound_s == pytest.approx(200e-6 + 300e-6)  # compute then communication


def test_overlapped_collective_takes_sms_from_compute(a100):
    machine = build.machine(a100)
    m = dict(GEMM_AND_ALL_REDUCE)
    m["collectives"] = [{**m["collectives"][0], "sms": 27}]  # a quarter of 108 SMs
    overlapped = launch_bounds(machine, Launch("k", 1, build.measurement(m), True))
    assert overlapped.seconds["compute.tensor"] == pytest.approx(200e-6 / 0.75)
    serial = launch_bounds(machine, Launch("k", 1, build.measurement(m), False))
    assert serial.seconds["compute.tensor"] == pytest.approx(200e-6)  # SMs are free again


@pytest.mark.parametrize("key", ["overlap", "links_overlap"])
def test_a_variants_overlap_settings_are_the_default_of_its_launches(key: str):
    case = build.case(
        {
            "id": "c",
            "title": "c",
            "machines": ["a100"],
            "kernels": [{"id": "k", "operator": {"kind": "gemm"}}],
            "variants": [
                {
                    "id": "v",
                    key: False,
                    "launches": [
                        {"kernel": "k", "measurement": {"time": "1 ms"}},
                        {"kernel": "k", "measurement": {"time": "1 ms"}, key: True},
                    ],
                }
            ],
        }
    )
    assert [getattr(x, key) for x in case.variants[0].launches] == [False, True]


# HBM 10 ms (15.55 GB at 1.555 TB/s), compute 1 ms (312e9 FLOP at 312 TFLOP/s) and a
# reduce-scatter whose 876 MB each way take 2.92 ms at 300 GB/s per direction.
NOT_OVERLAPPED: dict[str, Any] = {
    "time": "15 ms",
    "flops": {"tensor": {"bf16": "312e9 FLOP"}},
    "bytes": {"hbm": "15.55 GB"},
    "link_bytes": {"nvlink": {"out": "876 MB", "in": "876 MB"}},
}


def test_communication_without_overlap_adds_to_the_max_of_every_other_resource(a100):
    """The link time adds to the longest other resource (HBM 10 ms), not to the compute
    (1 ms): 10 + 2.92 = 12.92 ms."""
    machine = build.machine(a100)
    bounds = launch_bounds(machine, Launch("k", 1, build.measurement(NOT_OVERLAPPED), False))
    assert bounds.seconds["memory.hbm"] == pytest.approx(10e-3)
    assert bounds.seconds["compute.tensor"] == pytest.approx(1e-3)
    assert bounds.seconds["link.nvlink"] == pytest.approx(2.92e-3)
    assert bounds.bound_s == pytest.approx(12.92e-3)
    # Serial: compute 1 + the slowest memory level 10 + the link 2.92 = 13.92 ms.
    assert bounds.serial_s == pytest.approx(13.92e-3)


def test_several_non_overlapped_links_overlap_unless_the_spec_says_they_add(a100):
    """NVLink 2.92 ms and PCIe 96 MB / 32 GB/s = 3 ms beside HBM 10 ms. Overlapping
    links: 10 + max(2.92, 3) = 13 ms; adding links: 10 + 2.92 + 3 = 15.92 ms."""
    machine = build.machine(a100)
    m = {**NOT_OVERLAPPED, "time": "20 ms"}
    m["link_bytes"] = {**m["link_bytes"], "pcie": {"out": "96 MB", "in": "0 B"}}
    together = launch_bounds(machine, Launch("k", 1, build.measurement(m), False))
    assert together.bound_s == pytest.approx(13e-3)
    apart = launch_bounds(machine, Launch("k", 1, build.measurement(m), False, links_overlap=False))
    assert apart.bound_s == pytest.approx(15.92e-3)


def test_serial_bound_never_adds_issue_power_or_nested_memory_levels(a100):
    """Tensor 1 ms + FP32 1 ms (19.5e9 FLOP at 19.5 TFLOP/s) add; HBM 10 ms and L2
    (35.25 GB at 7050 GB/s = 5 ms) do not: only the slowest level counts, 10 ms.
    Issue: 108 SMs x 4 x 1.41 GHz = 609.12e9 warp instructions/s; 609.12e6 of them take
    1 ms and do not add. Serial = 1 + 1 + 10 = 12 ms."""
    machine = build.machine(a100)
    m = {
        "time": "15 ms",
        "flops": {"tensor": {"bf16": "312e9 FLOP"}, "fp32": {"fp32": "19.5e9 FLOP"}},
        "bytes": {"hbm": "15.55 GB", "l2": "35.25 GB"},
        "instructions": 609.12e6,
    }
    bounds = launch_bounds(machine, Launch("k", 1, build.measurement(m)))
    assert bounds.seconds["memory.l2"] == pytest.approx(5e-3)
    assert bounds.seconds["issue"] == pytest.approx(1e-3)
    assert bounds.serial_s == pytest.approx(12e-3)


@pytest.mark.parametrize(
    ("kind", "algorithm", "ranks", "steps"),
    [
        ("all-reduce", "ring", 8, 2 * 7),  # reduce-scatter then all-gather: 2(n-1)
        ("reduce-scatter", "ring", 8, 7),  # n-1
        ("all-gather", "ring", 8, 7),
        ("all-to-all", "ring", 8, 7),
        ("broadcast", "ring", 8, 7),  # a pipelined chain: n-1 hops
        ("send-recv", "ring", 2, 1),
        ("all-reduce", "tree", 8, 2 * 3),  # up and down a tree of depth log2 8 = 3
        ("all-reduce", "tree", 6, 2 * 3),  # ceil(log2 6) = 3
        ("broadcast", "tree", 16, 4),  # log2 16
        ("all-reduce", "in-network", 8, 2),  # up to the switch and back
        ("all-gather", "in-network", 8, 1),
        ("all-reduce", "ring", 1, 0),  # one rank communicates nothing
    ],
)
def test_latency_is_paid_once_per_step_of_the_algorithm(kind, algorithm, ranks, steps, a100):
    link = build.machine(a100).link("nvlink")
    assert link is not None
    c = _c(kind, 1.0, ranks, algorithm=algorithm)
    assert latency_steps(c) == steps
    assert latency_s(c, link) == pytest.approx(steps * 3e-6)


def test_1_kib_all_reduce_without_latency_is_not_called_bandwidth_bound(a100):
    """PCIe states no latency: the 1 KiB all-reduce over 8 ranks costs at least its
    bandwidth term, 2 x 7/8 x 1024 B / 32 GB/s = 56 ns, and its regime is unknown."""
    machine = build.machine(a100)
    m = build.measurement(
        {
            "time": "30 us",
            "collectives": [{"kind": "all-reduce", "bytes": "1 KiB", "ranks": 8, "link": "pcie"}],
        }
    )
    [cost] = collective_costs(machine, m)
    assert cost.latency_s is None
    assert cost.regime is None
    assert cost.bound_s == pytest.approx(2 * 7 / 8 * 1024 / 32e9)
    assert cost.bound_s == pytest.approx(56e-9)
    bounds = launch_bounds(machine, Launch("ar", 1, m))
    assert bounds.seconds["link.pcie"] == pytest.approx(56e-9)  # a lower bound, not 0 latency


def test_tree_algorithm_is_read_from_the_spec():
    m = build.measurement(
        {
            "time": "1 ms",
            "collectives": [
                {"kind": "all-reduce", "bytes": "1 MiB", "ranks": 8, "link": "nvlink",
                 "algorithm": "tree"}
            ],
        }
    )  # fmt: skip
    assert m.collectives[0].algorithm == "tree"
