"""The communication roofline: nccl-tests bus factors, the alpha-beta cost of a collective,
link bytes per direction, overlap (max) against no overlap (sum), and SMs lent to
collectives."""

from __future__ import annotations

from typing import Any

import pytest

from roofgen.analysis.bounds import launch_bounds
from roofgen.analysis.comm import bus_bytes, bus_factor, collective_seconds, half_bandwidth_size
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
    """2 x 7/8 x 64 MiB / 300 GB/s + 3 us = 391.47 + 3 = 394.47 us."""
    machine = build.machine(a100)
    link = machine.link("nvlink")
    assert link is not None
    c = _c("all-reduce", 64 * MiB, 8)
    expected = 3e-6 + 2 * 7 / 8 * 64 * MiB / 300e9
    assert expected == pytest.approx(394.47e-6, abs=0.01e-6)
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
    machine = build.machine(a100)
    link = machine.link("nvlink")
    assert link is not None
    assert half_bandwidth_size(link, 300e9) == pytest.approx(900e3)  # 3 us x 300 GB/s
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
    assert small.regime == "latency-bound"  # 458,752 bus bytes < 900 kB
    assert small.bound_s == pytest.approx(3e-6 + 1.75 * 256 * 1024 / 300e9)
    assert large.regime == "bandwidth-bound"
    assert large.bound_s == pytest.approx(3e-6 + 7 / 8 * 64 * MiB / 300e9)


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
    "collectives": [{"kind": "broadcast", "bytes": "89.1 MB", "ranks": 8, "link": "nvlink"}],
}  # 3 us + 89.1e6 / 300e9 = 300 us


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


def test_variant_overlap_is_the_default_of_its_launches():
    case = build.case(
        {
            "id": "c",
            "title": "c",
            "machines": ["a100"],
            "kernels": [{"id": "k", "operator": {"kind": "gemm"}}],
            "variants": [
                {
                    "id": "v",
                    "overlap": False,
                    "launches": [
                        {"kernel": "k", "measurement": {"time": "1 ms"}},
                        {"kernel": "k", "measurement": {"time": "1 ms"}, "overlap": True},
                    ],
                }
            ],
        }
    )
    assert [x.overlap for x in case.variants[0].launches] == [False, True]
