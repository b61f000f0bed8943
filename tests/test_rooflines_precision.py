"""Precision and sparse rooflines: precisions on one unit add up, units run concurrently,
what a lower precision (of the work, or of a decode's KV cache) would give, 2:4 sparse
points, and every sparse peak in specs/ twice its dense one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from roofgen.analysis.bounds import launch_bounds
from roofgen.analysis.precision import byte_scale, kv_cache_scale, precision_options
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


# Decode: batch 32, 32 query heads, 8 KV heads, a 8192-token KV cache, head_dim 128.
DECODE_SHAPE = {"batch": 32, "heads": 32, "kv_heads": 8, "seq": 8192, "head_dim": 128}
Q_ELEMENTS = 32 * 32 * 1 * 128  # one query token: 131,072 (and as many in O)
KV_ELEMENTS = 32 * 8 * 8192 * 128  # the cache: 268,435,456 in K (and as many in V)


def _decode(dtypes: dict[str, str], phase: str = "decode") -> Kernel:
    return Kernel("d", "d", Operator("attention", DECODE_SHAPE, phase), dtypes)


def test_decode_byte_scale_takes_one_query_token_not_the_cache_length():
    kernel = _decode({"q": "bf16", "k": "bf16", "v": "bf16", "o": "bf16", "lse": "fp32"})
    # Bits: Q and O 131,072 x 16 each, K and V 268,435,456 x 16 each, LSE 1024 x 32
    # (one per query head and token) that keeps its size.
    old = 2 * Q_ELEMENTS * 16 + 2 * KV_ELEMENTS * 16 + 32 * 32 * 32  # 8,594,161,664
    new = 2 * Q_ELEMENTS * 8 + 2 * KV_ELEMENTS * 8 + 32 * 32 * 32  # 4,297,097,216
    assert byte_scale(kernel, "bf16", "fp8") == pytest.approx(new / old)  # 0.500002
    # Taking seq (8192) as the query length weighed Q, O and LSE 8192x: 0.5135.
    assert byte_scale(kernel, "bf16", "fp8") != pytest.approx(0.5135, abs=1e-3)


def test_kv_cache_scale_shrinks_k_and_v_only():
    kernel = _decode({"q": "bf16", "k": "bf16", "v": "bf16", "o": "bf16"})
    old = 2 * Q_ELEMENTS * 16 + 2 * KV_ELEMENTS * 16  # 8,594,128,896 bits
    assert kv_cache_scale(kernel, "fp8") == pytest.approx(
        (2 * Q_ELEMENTS * 16 + 2 * KV_ELEMENTS * 8) / old  # 0.50024
    )
    assert kv_cache_scale(kernel, "fp4") == pytest.approx(
        (2 * Q_ELEMENTS * 16 + 2 * KV_ELEMENTS * 4) / old  # 0.25037
    )
    assert kv_cache_scale(GEMM, "fp8") is None  # no KV cache


# The decode's compulsory traffic at bf16: Q and O 262,144 B each, K and V 512 MiB each.
DECODE_BYTES = 2 * Q_ELEMENTS * 2 + 2 * KV_ELEMENTS * 2  # 1,074,266,112 B
DECODE_WORK = {
    "time": "400 us",
    "flops": {"tensor": {"bf16": f"{4 * 32 * 32 * 8192 * 128} FLOP"}},  # 4.29e9: 4.3 us
    "bytes": {"hbm": f"{DECODE_BYTES} B"},  # 320.7 us at 3.35 TB/s: HBM-bound
}


def test_an_fp8_kv_cache_gains_for_a_memory_bound_decode_without_fp8_arithmetic():
    machine = build.machine(H100)
    launch = _launch(DECODE_WORK)
    kernel = _decode({"q": "bf16", "k": "bf16", "v": "bf16", "o": "bf16"})
    bounds = launch_bounds(machine, launch)
    assert bounds.bound_s == pytest.approx(DECODE_BYTES / 3.35e12)  # 320.7 us
    options = precision_options(machine, launch, kernel, bounds, "measured")
    kv = {o.to_precision: o for o in options if o.moves == "kv-cache"}
    assert set(kv) == {"fp8", "fp4"}
    fp8 = kv["fp8"]
    assert (fp8.unit, fp8.from_precision, fp8.compute_s) == (None, "bf16", None)
    fp8_bytes = 2 * Q_ELEMENTS * 2 + 2 * KV_ELEMENTS * 1  # 537,395,200 B
    assert fp8.byte_scale == pytest.approx(fp8_bytes / DECODE_BYTES)
    assert fp8.bound_s == pytest.approx(fp8_bytes / 3.35e12)  # 160.4 us
    assert fp8.binding == "memory.hbm"
    assert fp8.speedup == pytest.approx(DECODE_BYTES / fp8_bytes)  # 1.999
    fp4_bytes = 2 * Q_ELEMENTS * 2 + 2 * KV_ELEMENTS // 2  # 268,959,744 B
    assert kv["fp4"].speedup == pytest.approx(DECODE_BYTES / fp4_bytes)  # 3.994
    # Moving the arithmetic to FP8 halves Q and O too, for nearly the same gain.
    [work] = [o for o in options if o.moves == "work"]
    assert (work.unit, work.to_precision, work.byte_scale) == ("tensor", "fp8", 0.5)


def test_a_kernel_stored_at_an_fp8_kv_cache_is_offered_fp4_only():
    machine = build.machine(H100)
    kernel = _decode({"q": "bf16", "o": "bf16", "kv_cache": "fp8-e4m3"})
    bytes_now = 2 * Q_ELEMENTS * 2 + 2 * KV_ELEMENTS * 1  # K and V at one byte: 537,395,200
    launch = _launch({**DECODE_WORK, "bytes": {"hbm": f"{bytes_now} B"}})
    bounds = launch_bounds(machine, launch)
    options = precision_options(machine, launch, kernel, bounds, "measured")
    [kv] = [o for o in options if o.moves == "kv-cache"]
    assert (kv.from_precision, kv.to_precision) == ("fp8", "fp4")
    assert kv.byte_scale == pytest.approx((2 * Q_ELEMENTS * 2 + KV_ELEMENTS) / bytes_now)
    # FP8 arithmetic shrinks Q and O (bf16); K and V are FP8 already.
    [work] = [o for o in options if o.moves == "work"]
    assert work.byte_scale == pytest.approx((2 * Q_ELEMENTS + 2 * KV_ELEMENTS) / bytes_now)


def test_prefill_has_no_kv_cache_option():
    machine = build.machine(H100)
    kernel = _decode({"q": "bf16", "k": "bf16", "v": "bf16", "o": "bf16"}, phase="prefill")
    launch = _launch(DECODE_WORK)
    options = precision_options(machine, launch, kernel, launch_bounds(machine, launch), "measured")
    assert [o.moves for o in options] == ["work"]


def test_precision_roofs_are_at_the_launch_clock_and_say_so():
    """H100 peaks are stated at 1830 MHz; a launch at 1098 MHz (0.6 of it) is measured
    against 0.6 x 989 TFLOP/s of BF16, and the chart's roofs are drawn there, with the
    clock in the subtitle. Without a recorded clock the roofs stay as stated."""
    from roofgen.analysis.precision import precision_work
    from roofgen.site.sections.precision import machine_ceilings

    machine = build.machine(H100)
    m = build.measurement(
        {
            "time": "1 ms",
            "clocks": {"sm": "1098 MHz"},
            "flops": {"tensor": {"bf16": "4e11 FLOP"}},
            "bytes": {"hbm": "1 GB"},
        }  # fmt: skip
    )
    (w,) = precision_work(machine, m)
    assert w.peak_per_s == pytest.approx(989e12 * 1098 / 1830)
    assert w.clock_hz == pytest.approx(1098e6)
    assert w.share_of_peak == pytest.approx(4e14 / (989e12 * 0.6))
    ceilings = {c.precision: c.value for c in machine_ceilings(machine, clock_hz=1098e6)}
    assert ceilings["bf16"] == pytest.approx(989e12 * 0.6)
    assert ceilings["fp32"] == pytest.approx(67e12 * 0.6)
    unknown = build.measurement(
        {"time": "1 ms", "flops": {"tensor": {"bf16": "4e11 FLOP"}}, "bytes": {"hbm": "1 GB"}}
    )
    (w,) = precision_work(machine, unknown)
    assert w.peak_per_s == pytest.approx(989e12) and w.clock_hz is None


def test_the_example_precision_charts_state_the_clock_of_their_roofs():
    """softmax-fusion records 1410 MHz on every launch (the A100's roofs' own clock);
    decode-launches-h100 records none."""
    from roofgen.api import check
    from roofgen.site.context import build_context

    r = check([SPECS])
    assert r.analysis is not None and r.specs is not None
    ctx = build_context(r.analysis, r.specs.machines, name="t", findings=r.findings)
    subtitles = {s.key: getattr(s.input, "subtitle", "") for s in ctx.charts}
    assert subtitles["case:softmax-fusion:a100-40gb-sxm:precision"].endswith(
        "roofs at 1.41 GHz, the launches' SM clock"
    )
    assert subtitles["case:decode-launches-h100:h100-sxm:precision"].endswith(
        "roofs at their stated clocks (the launches' clock is not recorded)"
    )
