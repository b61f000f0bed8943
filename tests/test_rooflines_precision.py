"""Precision and sparse rooflines: precisions on one unit add up, units run concurrently,
what a lower precision would give, 2:4 sparse points, and every sparse peak in specs/
twice its dense one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from roofgen.analysis.bounds import launch_bounds
from roofgen.analysis.precision import byte_scale, precision_options
from roofgen.analysis.sparse import sparse_points
from roofgen.model import Kernel, Launch, Operator
from roofgen.spec import build

SPECS = Path(__file__).resolve().parents[1] / "specs"
MiB = 2**20

H100: dict[str, Any] = {
    "id": "h100",
    "name": "H100",
    "clocks": {"sm": "1830 MHz"},
    "compute": [
        {
            "id": "tensor",
            "kind": "tensor",
            "peaks": {"bf16": "989 TFLOP/s", "fp8": "1979 TFLOP/s", "bf16-sparse": "1978 TFLOP/s"},
        },
        {"id": "fp32", "kind": "fp32", "peaks": {"fp32": "67 TFLOP/s"}},
        {"id": "sfu", "kind": "sfu", "peaks": {"transcendental": "3.9 TOP/s"}},
    ],
    "memory": [{"id": "hbm", "role": "device", "bandwidth": "3.35 TB/s"}],
}


def _launch(m: dict[str, Any]) -> Launch:
    return Launch("k", 1, build.measurement(m))


def test_precisions_on_one_unit_add_and_units_run_concurrently():
    """BF16 and FP8 share the tensor cores (1 ms + 1 ms); the FP32 pipe and the SFU
    (softmax's exp) run beside them: bound 2 ms, serial sum 4 ms."""
    machine = build.machine(H100)
    bounds = launch_bounds(
        machine,
        _launch(
            {
                "time": "2.5 ms",
                "flops": {
                    "tensor": {"bf16": "989e9 FLOP", "fp8": "1979e9 FLOP"},
                    "fp32": {"fp32": "67e9 FLOP"},
                    "sfu": {"transcendental": "3.9e9 OP"},
                },
            }
        ),
    )
    assert bounds.seconds["compute.tensor"] == pytest.approx(2e-3)
    assert bounds.seconds["compute.fp32"] == pytest.approx(1e-3)
    assert bounds.seconds["compute.sfu"] == pytest.approx(1e-3)
    assert bounds.bound_s == pytest.approx(2e-3)
    assert bounds.serial_s == pytest.approx(4e-3)
    assert bounds.ranked()[0][0] == "compute.tensor"


GEMM = Kernel(
    "gemm",
    "gemm",
    Operator("gemm", {"m": 8192, "n": 8192, "k": 8192}),
    {"a": "bf16", "b": "bf16", "c": "bf16", "accumulator": "fp32"},
)
GEMM_WORK = {
    "time": "4 ms",
    "flops": {"tensor": {"bf16": f"{2 * 8192**3} FLOP"}},
    "bytes": {"hbm": f"{3 * 128 * MiB} B"},
}


def test_no_fp8_on_a100_and_what_int8_would_give(a100):
    machine = build.machine(a100)
    launch = _launch(GEMM_WORK)
    bounds = launch_bounds(machine, launch)
    assert bounds.bound_s == pytest.approx(2 * 8192**3 / 312e12)  # 3.524 ms, tensor-bound
    options = {
        o.to_precision: o for o in precision_options(machine, launch, GEMM, bounds, "measured")
    }
    assert set(options) == {"fp8", "int8"}
    assert not options["fp8"].available and options["fp8"].bound_s is None
    int8 = options["int8"]
    assert int8.available
    assert int8.compute_s == pytest.approx(2 * 8192**3 / 624e12)  # 1.762 ms
    assert int8.byte_scale == pytest.approx(0.5)  # a, b, c shrink; the accumulator is not stored
    assert int8.bound_s == pytest.approx(2 * 8192**3 / 624e12)
    assert int8.speedup == pytest.approx(2.0)
    assert int8.binding == "compute.tensor"


def test_fp8_on_h100_keeps_other_units_and_scales_bytes():
    machine = build.machine(H100)
    m = {
        "time": "1 ms",
        "flops": {"tensor": {"bf16": "494.5e9 FLOP"}, "fp32": {"fp32": "33.5e9 FLOP"}},
        "bytes": {"hbm": "3.35 GB"},  # 1 ms: memory-bound
    }
    launch = _launch(m)
    bounds = launch_bounds(machine, launch)
    [fp8] = precision_options(machine, launch, GEMM, bounds, "measured")
    assert fp8.compute_s == pytest.approx(494.5e9 / 1979e12)  # 0.25 ms
    assert fp8.byte_scale == pytest.approx(0.5)
    assert fp8.bound_s == pytest.approx(0.5e-3)  # HBM 0.5 ms; FP32 pipe 0.5 ms
    assert fp8.speedup == pytest.approx(2.0)


def test_byte_scale_keeps_accumulators_and_fp32_statistics():
    attention = Kernel(
        "fa",
        "fa",
        Operator(
            "attention", {"batch": 1, "heads": 8, "kv_heads": 8, "seq": 1024, "head_dim": 128}
        ),
        {"q": "bf16", "k": "bf16", "v": "bf16", "o": "bf16", "lse": "fp32"},
    )
    # q, k, v, o: 1,048,576 elements each; lse: 8,192 fp32 values that keep their size.
    old = 4 * 1048576 * 16 + 8192 * 32
    new = 4 * 1048576 * 8 + 8192 * 32
    assert byte_scale(attention, "bf16", "fp8") == pytest.approx(new / old)
    softmax = Kernel("s", "s", Operator("softmax"), {"x": "fp16", "y": "fp32"})
    assert byte_scale(softmax, "fp16", "fp8") == pytest.approx((8 + 32) / (16 + 32))
    assert byte_scale(None, "fp32", "bf16") == pytest.approx(0.5)  # no dtypes: all shrink
    tf32 = Kernel(
        "t", "t", Operator("gemm", {"m": 64, "n": 64, "k": 64}), {"a": "fp32", "b": "fp32"}
    )
    assert byte_scale(tf32, "tf32", "bf16") == pytest.approx(1.0)  # TF32 is stored as FP32


def test_sparse_points_executed_against_dense_dense_equivalent_against_sparse(a100):
    machine = build.machine(a100)
    m = build.measurement(
        {
            "time": "4 ms",
            "flops": {"tensor": {"bf16-sparse": "1.248e12 FLOP"}},
            "bytes": {"hbm": "400 MB"},
            "sparsity": {"pattern": "2:4", "metadata_bytes": "40 MB"},
        }
    )
    [p] = sparse_points(machine, m)
    assert p.precision == "bf16"
    assert p.executed_flop == pytest.approx(0.624e12)
    assert p.dense_equivalent_flop == pytest.approx(1.248e12)
    assert p.executed_flop_per_s / p.dense_peak == pytest.approx(0.5)  # 156 of 312 TFLOP/s
    assert p.dense_equivalent_flop_per_s / p.sparse_peak == pytest.approx(0.5)  # 312 of 624
    assert p.metadata_share == pytest.approx(0.1)
    # Both need the same time on the unit: 1.248e12 / 624e12 = 0.624e12 / 312e12 = 2 ms.
    bounds = launch_bounds(machine, Launch("k", 1, m))
    assert bounds.seconds["compute.tensor"] == pytest.approx(2e-3)
    assert sparse_points(machine, build.measurement({"time": "1 ms", "flops": {}})) == []


def _spec_machines() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted((SPECS / "machines").glob("*.yaml")):
        out.append((path.stem, yaml.safe_load(path.read_text(encoding="utf-8"))))
    return out


@pytest.mark.parametrize(
    ("name", "data"), _spec_machines(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_spec_machines_sparse_peaks_are_twice_dense(name: str, data: dict[str, Any]):
    machine = build.machine(data)
    checked = 0
    for unit in machine.compute:
        for precision, roof in unit.peaks.items():
            if not precision.endswith("-sparse"):
                continue
            dense = unit.peaks[precision.removesuffix("-sparse")]
            assert roof.value("datasheet") == pytest.approx(
                2 * dense.value("datasheet"), rel=2e-3
            ), f"{name}: {unit.id} {precision}"
            checked += 1
    if name in ("a100-40gb-sxm", "h100-sxm"):
        assert checked >= 4
