"""The resource model's maths against hand-computed values and published figures."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofgen.analysis.analyse import analyse, machine_result
from roofgen.analysis.bounds import Thresholds, launch_bounds
from roofgen.model import Specs
from roofgen.spec import build

SEED_MACHINE: dict[str, Any] = {
    "id": "seed",
    "name": "Seed demo",
    "clocks": {"sm": "1410 MHz"},
    "compute": [{"id": "tensor", "kind": "tensor", "peaks": {"fp16": "312 TFLOP/s"}}],
    "memory": [{"id": "hbm", "role": "device", "bandwidth": "1.5 TB/s"}],
}

# NERSC hierarchical roofline of V100 (Yang, Kurth, Williams, CUG 2019; data
# from cyanguwa/nersc-roofline Plotting/data_hierarchical.txt).
V100: dict[str, Any] = {
    "id": "v100",
    "name": "V100",
    "clocks": {"sm": "1530 MHz"},
    "compute": [
        {
            "id": "fp64",
            "kind": "fp64",
            "peaks": {"fp64": {"datasheet": "7.8 TFLOP/s", "measured": "7068.86 GFLOP/s"}},
            "ceilings": [{"id": "no-fma", "precision": "fp64", "value": "3535.79 GFLOP/s"}],
        }
    ],
    "memory": [
        {
            "id": "hbm",
            "role": "device",
            "bandwidth": {"datasheet": "900 GB/s", "measured": "828.758 GB/s"},
        },
        {"id": "l2", "role": "llc", "bandwidth": {"measured": "2996.77 GB/s"}},
        {"id": "l1", "role": "l1", "bandwidth": "14336 GB/s"},
    ],
    "issue": {"sms": 80, "schedulers_per_sm": 4},
}

# BerkeleyGW GPP on V100: nw -> (AI_L1, AI_L2, AI_HBM, GFLOP/s).
GPP = {
    1: (0.865326481, 2.250285265, 2.584785579, 2085.756683),
    2: (1.556526957, 3.34359685, 4.738878073, 3593.593112),
    3: (2.222121895, 3.245471837, 6.892970567, 4381.739349),
    4: (2.863508257, 3.766406852, 9.047063062, 4625.535516),
    5: (3.446245893, 4.356477696, 11.08619259, 4599.764097),
    6: (4.034947498, 5.182021625, 13.21154434, 4692.209405),
}


def case(machine: str, launches: list[dict[str, Any]], variants: int = 1) -> dict[str, Any]:
    return {
        "id": "c",
        "title": "c",
        "machines": [machine],
        "kernels": [{"id": f"k{i}", "operator": {"kind": "other"}} for i in range(len(launches))],
        "variants": [
            {
                "id": f"v{v}",
                "launches": [{"kernel": f"k{i}", "measurement": m} for i, m in enumerate(launches)],
            }
            for v in range(variants)
        ],
    }


def run(machine: dict[str, Any], launches: list[dict[str, Any]], **kw: Any):
    specs = Specs(
        {machine["id"]: build.machine(machine)}, (build.case(case(machine["id"], launches)),)
    )
    return analyse(specs, Thresholds(**kw))


def test_seed_ridge_is_208_flop_per_byte():
    ridge = machine_result(build.machine(SEED_MACHINE)).ridge_flop_per_byte
    assert ridge == {"compute.tensor.fp16": {"hbm": pytest.approx(208.0)}}


def test_a100_ridges(a100):
    ridge = machine_result(build.machine(a100)).ridge_flop_per_byte
    assert ridge["compute.tensor.bf16"]["hbm"] == pytest.approx(200.6, abs=0.05)
    assert ridge["compute.fp32.fp32"]["hbm"] == pytest.approx(12.54, abs=0.01)


def test_attainable_at_intensity_one_is_bandwidth():
    # 1 FLOP per byte on the seed machine: 1.5 TFLOP/s attainable, HBM-bound.
    a = run(
        SEED_MACHINE, [{"time": "1 ms", "flops": {"tensor": {"fp16": 1e9}}, "bytes": {"hbm": 1e9}}]
    )
    r = a.cases[0].variants[0].launches[0]
    assert r.intensity_flop_per_byte == {"hbm": pytest.approx(1.0)}
    assert r.attainable_flop_per_s == pytest.approx(1.5e12)
    assert r.attainable_by_level_flop_per_s["hbm"] == pytest.approx(1.5e12)
    assert r.binding == "memory.hbm"
    assert r.lower_bound_s == pytest.approx(1e9 / 1.5e12)
    assert r.efficiency == pytest.approx((1e9 / 1.5e12) / 1e-3)
    assert r.klass == "bound"


def test_compute_bound_beyond_the_ridge():
    a = run(
        SEED_MACHINE,
        [{"time": "1.25 ms", "flops": {"tensor": {"fp16": 312e9}}, "bytes": {"hbm": 0.3e9}}],
    )
    r = a.cases[0].variants[0].launches[0]
    assert r.binding == "compute.tensor"
    assert r.attainable_flop_per_s == pytest.approx(312e12)
    assert r.efficiency == pytest.approx(1e-3 / 1.25e-3)
    assert r.headroom == pytest.approx(1.25)


def test_co_bound_at_the_ridge_and_thresholds_in_the_verdict():
    # 208 FLOP/B exactly: both resources need 1 ms.
    a = run(
        SEED_MACHINE,
        [{"time": "1.1 ms", "flops": {"tensor": {"fp16": 312e9}}, "bytes": {"hbm": 1.5e9}}],
    )
    r = a.cases[0].variants[0].launches[0]
    assert r.klass == "co-bound"
    assert "co-bound margin 15%" in r.verdict and "below-roofs threshold 50%" in r.verdict


def test_precisions_on_one_unit_add_up_units_take_the_max(a100):
    machine = build.machine(a100)
    m = {
        "time": "10 ms",
        "flops": {"tensor": {"bf16": 312e9, "fp16": 312e9}, "fp32": {"fp32": 19.5e9}},
        "bytes": {"hbm": 1e6},
    }
    b = launch_bounds(machine, build.case(case("a100", [m])).variants[0].launches[0])
    assert b.seconds["compute.tensor"] == pytest.approx(2e-3)  # 1 ms + 1 ms on one unit
    assert b.seconds["compute.fp32"] == pytest.approx(1e-3)
    assert b.bound_s == pytest.approx(2e-3)  # different units overlap: max
    assert b.serial_s == pytest.approx(2e-3 + 1e-3 + 1e6 / 1.555e12)


def test_unknown_is_not_zero(a100):
    a = run(a100, [{"time": "1 ms", "flops": {"tensor": {"bf16": 1e9}}, "bytes": {"hbm": 1e9}}])
    r = a.cases[0].variants[0].launches[0]
    assert "memory.l2" in r.coverage.unknown
    assert "memory.l2" not in r.bound_s
    # FLOPs of another unit say nothing of the FP32 pipe's: unknown, not 0 s.
    assert "compute.fp32" in r.coverage.unknown
    assert "compute.fp32" not in r.bound_s


def test_fp32_flops_of_a_kernel_without_units_leave_the_tensor_demand_unknown(a100):
    """FP32 19.5e9 FLOP at 19.5 TFLOP/s = 1 ms, HBM 0.7775 GB at 1.555 TB/s = 0.5 ms, in
    1.25 ms: FP32-bound, 1 / 1.25 = 80% of the known bound. The tensor cores' demand is
    unknown, so the efficiency is at least 80% and the headroom at most 1.25x."""
    launch = {"time": "1.25 ms", "flops": {"fp32": {"fp32": 19.5e9}}, "bytes": {"hbm": 0.7775e9}}
    r = run(a100, [launch]).cases[0].variants[0].launches[0]
    assert "compute.tensor" in r.coverage.unknown
    assert "compute.tensor" not in r.bound_s
    assert r.binding == "compute.fp32"
    assert r.klass == "bound"  # the known bound is still a valid lower bound
    assert r.efficiency == pytest.approx(0.8)
    assert "efficiency at least 80%, headroom at most 1.25x" in r.verdict
    assert "compute.tensor" in r.verdict


def test_a_unit_is_known_idle_only_by_an_explicit_zero_or_the_kernels_units(a100):
    """The same FP32 launch: tensor demand 0 s when the FLOPs say 0, or when the kernel
    declares it runs on the FP32 pipe only; either way no "at least" qualifier."""
    explicit = {
        "time": "1.25 ms",
        "flops": {"fp32": {"fp32": 19.5e9}, "tensor": {"bf16": 0}},
        "bytes": {"hbm": 0.7775e9, "l2": 0},
    }
    r = run(a100, [explicit]).cases[0].variants[0].launches[0]
    assert r.bound_s["compute.tensor"] == 0.0
    assert "at least" not in r.verdict
    machine = build.machine(a100)
    spec = case("a100", [{**explicit, "flops": {"fp32": {"fp32": 19.5e9}}}])
    spec["kernels"][0]["units"] = ["fp32"]
    declared = build.case(spec)
    b = launch_bounds(machine, declared.variants[0].launches[0], units=("fp32",))
    assert b.seconds["compute.tensor"] == 0.0
    assert "compute.tensor" not in b.unknown
    r = analyse(Specs({"a100": machine}, (declared,)), Thresholds()).cases[0].variants[0]
    assert r.launches[0].bound_s["compute.tensor"] == 0.0


def test_missing_bytes_is_insufficient_data(a100):
    a = run(a100, [{"time": "1 ms", "flops": {"tensor": {"bf16": 1e9}}}])
    r = a.cases[0].variants[0].launches[0]
    assert r.klass == "insufficient-data"
    assert r.efficiency is None
    assert "memory.hbm" in r.verdict


def test_below_all_roofs():
    a = run(
        SEED_MACHINE, [{"time": "10 ms", "flops": {"tensor": {"fp16": 1e9}}, "bytes": {"hbm": 1e9}}]
    )
    r = a.cases[0].variants[0].launches[0]
    assert r.klass == "below-roofs"
    assert r.efficiency == pytest.approx(1e9 / 1.5e12 / 10e-3)


def test_measured_basis_and_efficiency_against_both():
    v100 = build.machine(V100)
    m = {"time": "1 s", "flops": {"fp64": {"fp64": 1e12}}, "bytes": {"hbm": 828.758e9}}
    a = analyse(Specs({"v100": v100}, (build.case(case("v100", [m])),)))
    r = a.cases[0].variants[0].launches[0]
    assert r.roof_basis["memory.hbm"] == "measured"
    assert r.efficiency_by_basis["measured"] == pytest.approx(1.0)
    assert r.efficiency_by_basis["datasheet"] == pytest.approx(828.758 / 900)


def test_clock_dependent_roofs_scale_to_the_measurement_clock(a100):
    # Nsight Compute locks an A100 to 765 MHz; compute and L2 roofs scale, HBM does not.
    m = {
        "time": "1 ms",
        "clocks": {"sm": "765 MHz"},
        "flops": {"tensor": {"bf16": 1e9}},
        "bytes": {"hbm": 1e6, "l2": 1e6},
    }
    b = launch_bounds(build.machine(a100), build.case(case("a100", [m])).variants[0].launches[0])
    assert b.seconds["compute.tensor"] == pytest.approx(1e9 / (312e12 * 765 / 1410))
    assert b.seconds["memory.l2"] == pytest.approx(1e6 / (7050e9 * 765 / 1410))
    assert b.seconds["memory.hbm"] == pytest.approx(1e6 / 1.555e12)


def test_v100_issue_ceiling_is_489_6_warp_gips():
    v100 = build.machine(V100)
    assert v100.issue is not None
    assert v100.issue.rate_per_s(v100.sm_clock_hz) == pytest.approx(489.6e9)


def gpp_launch(nw: int) -> Any:
    """The published GPP point ``nw`` as 10 ms of work on the V100, analysed."""
    ai_l1, ai_l2, ai_hbm, gflops = GPP[nw]
    time_s = 0.01
    flop = gflops * 1e9 * time_s
    m = {
        "time": time_s,
        "flops": {"fp64": {"fp64": flop}},
        "bytes": {"l1": flop / ai_l1, "l2": flop / ai_l2, "hbm": flop / ai_hbm},
    }
    a = analyse(Specs({"v100": build.machine(V100)}, (build.case(case("v100", [m])),)))
    return a.cases[0].variants[0].launches[0]


@pytest.mark.parametrize("nw", sorted(GPP))
def test_berkeleygw_gpp_points_on_the_v100_roofs(nw):
    """The published GPP points sit where the NERSC paper puts them."""
    ai_l1, ai_l2, ai_hbm, gflops = GPP[nw]
    r = gpp_launch(nw)
    assert r.intensity_flop_per_byte["hbm"] == pytest.approx(ai_hbm)
    assert r.achieved_flop_per_s == pytest.approx(gflops * 1e9)
    hbm_roof = 828.758e9 * ai_hbm
    fraction_of_roof = gflops * 1e9 / min(hbm_roof, 7068.86e9)
    # The ridge is 7068.86 / 828.758 = 8.53 FLOP/B: nw 1-3 sit left of it (HBM-bound),
    # nw 4-6 right of it under the FMA roof (the paper: "bound by HBM at low nw and
    # saturates as nw increases").
    expected = "memory.hbm" if ai_hbm < 7068.86 / 828.758 else "compute.fp64"
    assert r.binding == ("memory.hbm" if nw <= 3 else "compute.fp64") == expected
    assert r.efficiency == pytest.approx(fraction_of_roof)
    # Nothing sits above a roof; L1 and L2 never bind.
    assert r.bound_s["memory.l1"] < r.lower_bound_s and r.bound_s["memory.l2"] < r.lower_bound_s


def test_gpp_nw1_is_97_percent_of_the_hbm_roof():
    # nw=1: 2085.756683 GFLOP/s at 2.584785579 FLOP per HBM byte; the measured HBM roof
    # is 828.758 GB/s, so HBM allows 828.758 x 2.584785579 = 2142.16 GFLOP/s: 97.37%.
    # L2 (2996.77 x 2.250 = 6744 GFLOP/s), L1 and FP64 (7068.86) allow more.
    by_hand = 2085.756683 / (828.758 * 2.584785579)
    assert by_hand == pytest.approx(0.9737, abs=1e-4)
    r = gpp_launch(1)
    assert r.binding == "memory.hbm" and r.roof_basis["memory.hbm"] == "measured"
    assert r.efficiency == pytest.approx(by_hand, rel=1e-9)
    # nw=6: 4692.209405 GFLOP/s at 13.2 FLOP/B is past the ridge: 66.38% of FP64.
    by_hand = 4692.209405 / 7068.86
    assert by_hand == pytest.approx(0.6638, abs=1e-4)
    r = gpp_launch(6)
    assert r.binding == "compute.fp64" and r.roof_basis["compute.fp64"] == "measured"
    assert r.efficiency == pytest.approx(by_hand, rel=1e-9)


def test_variant_of_several_launches_sums_bounds_and_times():
    launches = [
        {"time": "1 ms", "flops": {"tensor": {"fp16": 1e9}}, "bytes": {"hbm": 1.2e9}},
        {"time": "2 ms", "flops": {"tensor": {"fp16": 1e9}}, "bytes": {"hbm": 2.4e9}},
    ]
    v = run(SEED_MACHINE, launches).cases[0].variants[0]
    assert v.time_s == pytest.approx(3e-3)
    assert v.lower_bound_s == pytest.approx(3.6e9 / 1.5e12)
    assert v.efficiency == pytest.approx(3.6e9 / 1.5e12 / 3e-3)
    assert [x.share_of_variant for x in v.launches] == [pytest.approx(1 / 3), pytest.approx(2 / 3)]


rates = st.floats(min_value=1e9, max_value=1e16, allow_nan=False, allow_infinity=False)
amounts = st.floats(min_value=1.0, max_value=1e15, allow_nan=False, allow_infinity=False)


def _bounds_for(peak: float, bw: float, flop: float, moved: float, time_s: float):
    machine = {
        **SEED_MACHINE,
        "compute": [{"id": "tensor", "kind": "tensor", "peaks": {"fp16": peak}}],
        "memory": [{"id": "hbm", "role": "device", "bandwidth": bw}],
    }
    return run(
        machine, [{"time": time_s, "flops": {"tensor": {"fp16": flop}}, "bytes": {"hbm": moved}}]
    )


@settings(max_examples=60, deadline=None)
@given(peak=rates, bw=rates, flop=amounts, moved=amounts)
def test_attainable_never_above_a_roof(peak, bw, flop, moved):
    r = _bounds_for(peak, bw, flop, moved, 1.0).cases[0].variants[0].launches[0]
    intensity = flop / moved
    assert r.attainable_flop_per_s <= peak * (1 + 1e-9)
    assert r.attainable_flop_per_s <= bw * intensity * (1 + 1e-9)
    assert r.attainable_flop_per_s == pytest.approx(min(peak, bw * intensity), rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(peak=rates, bw=rates, flop=amounts, m1=amounts, m2=amounts)
def test_attainable_non_decreasing_in_intensity(peak, bw, flop, m1, m2):
    lo, hi = sorted((m1, m2), reverse=True)  # more bytes: lower intensity
    a = _bounds_for(peak, bw, flop, lo, 1.0).cases[0].variants[0].launches[0]
    b = _bounds_for(peak, bw, flop, hi, 1.0).cases[0].variants[0].launches[0]
    assert a.attainable_flop_per_s <= b.attainable_flop_per_s * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(peak=rates, bw=rates, flop=amounts, moved=amounts, t=st.floats(min_value=1e-6, max_value=10))
def test_binding_attains_the_max_and_efficiency_times_headroom_is_one(peak, bw, flop, moved, t):
    r = _bounds_for(peak, bw, flop, moved, t).cases[0].variants[0].launches[0]
    assert r.bound_s[r.binding] == max(r.bound_s.values())
    assert r.lower_bound_s == r.bound_s[r.binding]
    assert r.serial_bound_s >= r.lower_bound_s
    assert math.isclose(r.efficiency * r.headroom, 1.0, rel_tol=1e-12)


def test_variant_binding_is_a_resource_that_binds_some_launch(a100):
    # Launch A: tensor 1 ms, L2 0.9 ms. Launch B: HBM 1 ms, L2 0.9 ms. Summed per resource,
    # L2 (1.8 ms) would lead although it limits neither launch.
    launches = [
        {"time": "1.2 ms", "flops": {"tensor": {"bf16": 312e9}}, "bytes": {"l2": 0.9e-3 * 7050e9}},
        {
            "time": "1.2 ms",
            "flops": {},  # an empty map: no floating-point work on any unit
            "bytes": {"hbm": 1.555e9, "l2": 0.9e-3 * 7050e9},
        },
    ]
    v = run(a100, launches).cases[0].variants[0]
    assert [x.binding for x in v.launches] == ["compute.tensor", "memory.hbm"]
    assert v.bound_s["memory.l2"] == pytest.approx(1.8e-3)
    assert {v.binding, v.runner_up} == {"compute.tensor", "memory.hbm"}
    assert v.klass == "co-bound"


def test_launches_each_cleanly_bound_by_another_resource_do_not_make_the_variant_co_bound(a100):
    # A100: tensor BF16 312 TFLOP/s, HBM 1.555 TB/s.
    # Launch A: tensor 561.6e9 / 312e12 = 1.8 ms, HBM 0.311e9 / 1.555e12 = 0.2 ms.
    # Launch B: HBM 1.0885e9 / 1.555e12 = 0.7 ms, tensor 31.2e9 / 312e12 = 0.1 ms.
    # The bound is 1.8 + 0.7 = 2.5 ms: 1.8 / 2.5 = 72% in tensor-bound launches, 28% in
    # HBM-bound ones. Without the tensor cores it would be 0.2 + 0.7 = 0.9 ms (36%, HBM),
    # far from the 85% a co-bound class needs.
    launches = [
        {"time": "2 ms", "flops": {"tensor": {"bf16": 561.6e9}}, "bytes": {"hbm": 0.311e9}},
        {"time": "1 ms", "flops": {"tensor": {"bf16": 31.2e9}}, "bytes": {"hbm": 1.0885e9}},
    ]
    v = run(a100, launches).cases[0].variants[0]
    assert [x.binding for x in v.launches] == ["compute.tensor", "memory.hbm"]
    assert v.lower_bound_s == pytest.approx(2.5e-3)
    assert v.binding_shares == {
        "compute.tensor": pytest.approx(0.72), "memory.hbm": pytest.approx(0.28),
    }  # fmt: skip
    assert (v.binding, v.runner_up, v.klass) == ("compute.tensor", "memory.hbm", "bound")
    from roofgen.report.analysis import variant_json

    assert variant_json(v)["binding_shares"] == v.binding_shares
    assert v.verdict == (
        "compute.tensor-bound at 83% of the bound; of the bound time 72% in compute.tensor-bound "
        "launches, 28% in memory.hbm-bound launches; runner-up memory.hbm: without "
        "compute.tensor the bound would be 36% of it (co-bound margin 15%, below-roofs "
        "threshold 50%)"
    )  # efficiency 2.5 ms / 3 ms = 83%


def test_the_variant_runner_up_is_what_binds_without_the_binding_resource(a100):
    # A100: HBM 1.555 TB/s, L2 7.05 TB/s. Launches A and B: HBM 1 ms (1.555e9 B), L2
    # 0.68 ms (4.794e9 B) each; launch C: L2 0.1 ms (0.705e9 B), HBM 0.05 ms (77.75e6 B).
    # L2 binds only C (0.1 of the 2.1 ms bound: 5%), but without HBM the bound would be
    # 0.68 + 0.68 + 0.1 = 1.46 ms, 1.46 / 2.1 = 70% of it: L2 is the runner-up at 70%, not 5%.
    flops = {"tensor": {"bf16": 1e9}}  # 3.2 us: binds nothing
    launches = [
        {"time": "1.2 ms", "flops": flops, "bytes": {"hbm": 1.555e9, "l2": 4.794e9}},
        {"time": "1.2 ms", "flops": flops, "bytes": {"hbm": 1.555e9, "l2": 4.794e9}},
        {"time": "0.2 ms", "flops": flops, "bytes": {"hbm": 77.75e6, "l2": 0.705e9}},
    ]
    v = run(a100, launches).cases[0].variants[0]
    assert v.lower_bound_s == pytest.approx(2.1e-3)
    assert v.binding_shares["memory.hbm"] == pytest.approx(2.0 / 2.1)
    assert (v.binding, v.runner_up, v.klass) == ("memory.hbm", "memory.l2", "bound")
    assert "95% in memory.hbm-bound launches, 5% in memory.l2-bound launches" in v.verdict
    assert "runner-up memory.l2: without memory.hbm the bound would be 70% of it" in v.verdict


def test_a_measured_roof_taken_at_another_clock_is_restated_at_the_machine_clock(a100):
    machine = {**a100, "compute": [
        {"id": "tensor", "kind": "tensor",
         "peaks": {"bf16": {"datasheet": "312 TFLOP/s", "measured": "200 TFLOP/s",
                            "measured_clock": "1000 MHz"}}}]}  # fmt: skip
    peak = build.machine(machine).compute[0].peaks["bf16"]
    assert peak.measured == pytest.approx(200e12 * 1410 / 1000)
    assert peak.measured_clock_hz == pytest.approx(1e9)
