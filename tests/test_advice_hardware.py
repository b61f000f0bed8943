"""Advice that depends on the machine: tensor cores only where they are faster at the
launch's precision, the matrix instructions and libraries of each architecture, faster
precisions, advice at and below a compute roof, short launches, cache levels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from roofgen.cli import main

# A GEMM of 8192 x 8192 x 8192 in FP64: 2 x 8192^3 = 1,099,511,627,776 FLOP; A, B and C
# once through HBM: 3 x 8192^2 x 8 B = 1,610,612,736 B.
GEMM_FLOP = 2 * 8192**3
GEMM_BYTES = 3 * 8192**2 * 8

# Peaks (TFLOP/s) as the vendors publish them:
# - V100 SXM2: NVIDIA Tesla V100 GPU Architecture whitepaper (WP-08608-001_v1.1), Table 1:
#   FP64 7.8, FP32 15.7, Tensor 125 (FP16 inputs, the only tensor precision Volta has:
#   no FP64 tensor cores); HBM2 900 GB/s; boost 1530 MHz.
# - A100 SXM4: NVIDIA A100 datasheet: FP64 9.7, FP64 Tensor Core 19.5, FP32 19.5, TF32
#   Tensor Core 156, BF16/FP16 Tensor Core 312; HBM2 1555 GB/s (40 GB).
# - H100 SXM5: NVIDIA H100 datasheet: FP64 34, FP64 Tensor Core 67, FP32 67;
#   HBM3 3.35 TB/s.
# - B200: NVIDIA HGX B200 datasheet: "FP64 / FP64 Tensor Core 37 TFLOPS" (one figure for
#   both), FP32 75; HBM3e 8 TB/s.
# - MI250X: AMD Instinct MI250X datasheet: FP64 vector 47.9, FP64 matrix 95.7, FP32 vector
#   47.9; HBM2e 3.2 TB/s.
MACHINES: dict[str, dict[str, Any]] = {
    "v100-sxm2": {"vendor": "NVIDIA", "fp64": 7.8, "fp32": 15.7, "tensor": {"fp16": 125},
                  "hbm": "900 GB/s"},
    "a100-40gb-sxm": {"vendor": "NVIDIA", "fp64": 9.7, "fp32": 19.5,
                      "tensor": {"fp64": 19.5, "tf32": 156, "bf16": 312, "fp16": 312},
                      "hbm": "1555 GB/s"},
    "h100-sxm": {"vendor": "NVIDIA", "fp64": 34, "fp32": 67, "tensor": {"fp64": 67},
                 "hbm": "3.35 TB/s"},
    "b200-sxm": {"vendor": "NVIDIA", "fp64": 37, "fp32": 75, "tensor": {"fp64": 37},
                 "hbm": "8 TB/s"},
    "mi250x": {"vendor": "AMD", "fp64": 47.9, "fp32": 47.9, "tensor": {"fp64": 95.7},
               "hbm": "3.2 TB/s"},
}  # fmt: skip


def machine_yaml(ident: str, spec: dict[str, Any], extra: str = "") -> str:
    tensor = ", ".join(f"{p}: {v} TFLOP/s" for p, v in spec["tensor"].items())
    return (
        f"roofgen: 1\nkind: machine\nid: {ident}\nname: {ident}\nvendor: {spec['vendor']}\n"
        "clocks: {sm: 1000 MHz}\n"
        "compute:\n"
        f"  - {{id: tensor, name: Tensor cores, kind: tensor, peaks: {{{tensor}}}}}\n"
        f"  - {{id: fp64, name: FP64 pipe, kind: fp64, peaks: {{fp64: {spec['fp64']} TFLOP/s}}}}\n"
        f"  - {{id: fp32, name: FP32 pipe, kind: fp32, peaks: {{fp32: {spec['fp32']} TFLOP/s}}}}\n"
        "memory:\n"
        f"  - {{id: hbm, name: HBM, role: device, bandwidth: {spec['hbm']}}}\n" + extra
    )


def case_yaml(machine: str, kernel: str, measurement: str) -> str:
    return (
        "roofgen: 1\nkind: case\nid: c\ntitle: C\n"
        f"machines: [{machine}]\n"
        'method: {gpu: GPU, driver: "1", clock_control: locked}\n'
        f"kernels:\n  - {kernel}\n"
        "variants:\n  - id: v\n    launches:\n      - kernel: k\n        measurement:\n"
        + "".join(f"          {line}\n" for line in measurement.strip().splitlines())
    )


def gemm_case(machine: str, dtype: str, unit: str, time_ms: float) -> str:
    return case_yaml(
        machine,
        "{id: k, operator: {kind: gemm, shape: {m: 8192, n: 8192, k: 8192}}, "
        f"dtypes: {{a: {dtype}, b: {dtype}, c: {dtype}}}}}",
        f"time: {{median: {time_ms!r} ms, q1: {time_ms * 0.999!r} ms, "
        f"q3: {time_ms * 1.001!r} ms, repeats: 100, warmup: 10}}\n"
        f"flops: {{{unit}: {{{dtype}: {GEMM_FLOP} FLOP}}}}\n"
        f"bytes: {{hbm: {GEMM_BYTES} B}}",
    )


def explain(tmp_path: Path, monkeypatch: Any, capsys: Any, machine: str, case: str) -> Any:
    (tmp_path / "machine.yaml").write_text(machine, encoding="utf-8")
    (tmp_path / "case.yaml").write_text(case, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["explain", "c/k", "-q", "--format", "json", "machine.yaml", "case.yaml"]) == 0
    doc = json.loads(capsys.readouterr().out)
    return doc["variants"][0]["launches"][0]


def recommendations(launch: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["rule"]: r for r in launch["recommendations"]}


def test_explain_on_a_v100_fp64_gemm_recommends_no_tensor_cores(tmp_path, monkeypatch, capsys):
    # 1.0995e12 FLOP at 7.8 TFLOP/s = 140.96 ms; measured 176.2 ms: 80% of the FP64 roof.
    # HBM: 1.61e9 B at 900 GB/s = 1.79 ms. Volta's tensor cores take FP16 inputs only.
    bound_ms = GEMM_FLOP / 7.8e12 * 1e3
    machine = machine_yaml("v100-sxm2", MACHINES["v100-sxm2"])
    launch = explain(
        tmp_path, monkeypatch, capsys, machine,
        gemm_case("v100-sxm2", "fp64", "fp64", round(bound_ms / 0.8, 3)),
    )  # fmt: skip
    assert launch["binding"] == "compute.fp64"
    recs = recommendations(launch)
    assert "matrix-on-vector-pipe" not in recs
    assert set(recs) == {"matrix-on-vector-pipe-no-tensor", "faster-precision"}
    for rec in recs.values():
        assert "Tensor Cores" not in rec["techniques"]  # names of the techniques
        assert "mma" not in rec["text"] and rec["title"] != "Use the tensor cores"
    assert "a tuned library (cuBLAS or cuBLASLt, CUTLASS)" in recs[
        "matrix-on-vector-pipe-no-tensor"]["text"]  # fmt: skip
    # The next narrower precision: FP32 at 15.7 TFLOP/s, 15.7 / 7.8 = 2.01x.
    assert "FP32 on the FP32 pipe (15.7 TFLOP/s, 2.01x)" in recs["faster-precision"]["text"]


def test_the_library_v100_gets_no_tensor_core_advice_for_fp64(tmp_path, monkeypatch, capsys):
    # roofgen's own V100 (version 1) lists tensor peaks at FP16 only, as the whitepaper
    # does; its FP64 roof is the measured 7068.86 GFLOP/s (NERSC ERT): 80% of it.
    time_ms = round(GEMM_FLOP / 7068.86e9 * 1e3 / 0.8, 3)
    case = gemm_case("{id: v100-sxm2, version: 1}", "fp64", "fp64", time_ms)
    (tmp_path / "case.yaml").write_text(case, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["explain", "c/k", "-q", "case.yaml"]) == 0
    text = capsys.readouterr().out
    assert "binds      FP64 pipe (compute.fp64)" in text
    assert "Reach the vector pipe's roof:" in text
    assert "Use the tensor cores" not in text and "mma" not in text
    assert "Tensor Cores" not in text  # the technique's name


@pytest.mark.parametrize(
    ("ident", "ratio", "instructions", "library"),
    [
        ("a100-40gb-sxm", 19.5 / 9.7, "warp-level mma.sync", "cuBLAS"),  # 2.01x
        ("h100-sxm", 67 / 34, "warpgroup wgmma", "cuBLAS"),  # 1.97x
        ("mi250x", 95.7 / 47.9, "MFMA (v_mfma)", "hipBLASLt"),  # 2.00x
    ],
)
def test_tensor_core_advice_names_the_architectures_instructions_libraries_first(
    tmp_path, monkeypatch, capsys, ident, ratio, instructions, library
):
    spec = MACHINES[ident]
    time_ms = round(GEMM_FLOP / (spec["fp64"] * 1e12) * 1e3 / 0.8, 3)  # 80% of the FP64 roof
    launch = explain(
        tmp_path, monkeypatch, capsys, machine_yaml(ident, spec),
        gemm_case(ident, "fp64", "fp64", time_ms),
    )  # fmt: skip
    rec = recommendations(launch)["matrix-on-vector-pipe"]
    assert f"run fp64 at {ratio:.2f}x that pipe's peak" in rec["text"]
    call, hand = rec["text"].split("Call a library that uses them (")[1].split("); ")
    assert call.startswith(library)
    assert hand.startswith(f"a hand-written kernel needs {instructions}")


def test_no_tensor_core_advice_where_the_tensor_peak_equals_the_pipes(
    tmp_path, monkeypatch, capsys
):
    # B200: FP64 tensor 37 = FP64 pipe 37 TFLOP/s, 1.0x: nothing to gain by moving.
    spec = MACHINES["b200-sxm"]
    time_ms = round(GEMM_FLOP / 37e12 * 1e3 / 0.8, 3)
    launch = explain(
        tmp_path, monkeypatch, capsys, machine_yaml("b200-sxm", spec),
        gemm_case("b200-sxm", "fp64", "fp64", time_ms),
    )  # fmt: skip
    recs = recommendations(launch)
    assert "matrix-on-vector-pipe" not in recs
    assert "matrix-on-vector-pipe-no-tensor" in recs
    assert "FP32 on the FP32 pipe (75 TFLOP/s, 2.03x)" in recs["faster-precision"]["text"]


@pytest.mark.parametrize(("efficiency", "expected"), [
    (0.8, {"matrix-on-vector-pipe-no-tensor", "faster-precision"}),
    (0.95, {"compute-at-roof", "faster-precision"}),
])  # fmt: skip
def test_a_compute_bound_launch_below_and_at_its_roof_gets_advice(
    tmp_path, monkeypatch, capsys, efficiency, expected
):
    # An FP32 GEMM on the A100's FP32 pipe (19.5 TFLOP/s): no FP32 tensor peak, but the
    # next narrower precisions run on the tensor cores: BF16 and FP16 at 312 / 19.5 =
    # 16.0x, TF32 at 156 / 19.5 = 8.00x.
    spec = MACHINES["a100-40gb-sxm"]
    time_ms = GEMM_FLOP / 19.5e12 * 1e3 / efficiency
    launch = explain(
        tmp_path, monkeypatch, capsys, machine_yaml("a100-40gb-sxm", spec),
        gemm_case("a100-40gb-sxm", "fp32", "fp32", round(time_ms, 4)),
    )  # fmt: skip
    recs = recommendations(launch)
    assert set(recs) == expected
    assert (
        "BF16 on the Tensor cores (312 TFLOP/s, 16.00x); FP16 on the Tensor cores "
        "(312 TFLOP/s, 16.00x); TF32 on the Tensor cores (156 TFLOP/s, 8.00x)"
    ) in recs["faster-precision"]["text"]
    if efficiency > 0.9:
        assert "only less work" in recs["compute-at-roof"]["text"]


ROUND = {"vendor": "NVIDIA", "fp64": 1, "fp32": 10, "tensor": {"bf16": 100}, "hbm": "1 TB/s"}
ISSUE = "issue: {sms: 100, schedulers_per_sm: 4}\n"


@pytest.mark.parametrize(("time", "gb", "rule"), [
    # 4 MB at 1 TB/s = 4 us of a 10 us launch (40%): short, under 20 us.
    ("10 us", 0.004, "below-roofs-short"),
    # 10 TB at 1 TB/s = 10 s of a 33.5 s launch (30%): not short.
    ("33.5 s", 10000, "below-roofs-stalls"),
])  # fmt: skip
def test_a_short_launch_is_one_under_20_us_and_the_advice_says_so(
    tmp_path, monkeypatch, capsys, time, gb, rule
):
    case = case_yaml(
        "gpu",
        "{id: k, operator: {kind: elementwise}}",
        f"time: {{median: {time}, q1: {time}, q3: {time}, repeats: 100, warmup: 10}}\n"
        f"flops: {{fp32: {{fp32: 1e6 FLOP}}}}\nbytes: {{hbm: {gb} GB}}\n"
        "grid: [200]\nblock: [256]\noccupancy: 0.8",
    )
    launch = explain(tmp_path, monkeypatch, capsys, machine_yaml("gpu", ROUND, ISSUE), case)
    assert launch["class"] == "below-roofs"
    recs = recommendations(launch)
    assert rule in recs and {"below-roofs-short", "below-roofs-stalls"} - {rule} - set(recs)
    if rule == "below-roofs-short":
        assert "Under 20 us a launch is short" in recs[rule]["text"]


def test_record_the_cache_traffic_lists_only_cache_levels(tmp_path, monkeypatch, capsys):
    levels = (
        "  - {id: l2, name: L2, role: llc, bandwidth: 5 TB/s}\n"
        "  - {id: l1, name: L1 and shared, role: l1, bandwidth: 20 TB/s}\n"
        "links:\n  - {id: nvlink, name: NVLink, kind: nvlink, bandwidth_per_direction: 450 GB/s}\n"
        "  - {id: pcie, name: PCIe, kind: pcie, bandwidth_per_direction: 64 GB/s}\n"
        "power: {limit: 700 W}\n" + ISSUE
    )
    case = case_yaml(
        "gpu",
        "{id: k, operator: {kind: elementwise}}",
        "time: {median: 1 ms, q1: 0.99 ms, q3: 1.01 ms, repeats: 100, warmup: 10}\n"
        "flops: {fp32: {fp32: 1e9 FLOP}}\nbytes: {hbm: 0.8 GB}",
    )
    launch = explain(tmp_path, monkeypatch, capsys, machine_yaml("gpu", ROUND, levels), case)
    rec = recommendations(launch)["measure-cache-bytes"]
    assert rec["text"].startswith("The cache levels' bytes are not recorded (L2, L1 and shared),")
    for other in ("NVLink", "PCIe", "issue", "Power"):
        assert other not in rec["text"]


@pytest.mark.parametrize(("ident", "vendor", "family"), [
    ("v100-sxm2", "NVIDIA", "mma.sync"),  # Volta, sm_70
    ("a100-80gb-sxm", "NVIDIA", "mma.sync"),  # Ampere, sm_80
    ("l40s", "NVIDIA", "mma.sync"),  # Ada, sm_89
    ("rtx-5090", "NVIDIA", "mma.sync"),  # consumer Blackwell, sm_120: no wgmma or tcgen05
    ("h200-sxm", "NVIDIA", "wgmma"),  # Hopper, sm_90a
    ("b200-sxm", "NVIDIA", "tcgen05"),  # datacenter Blackwell, sm_100a
    ("mi300x", "AMD", "MFMA"),  # CDNA 3
    ("my-amd-gpu", "AMD", "MFMA"),  # by vendor
])  # fmt: skip
def test_the_matrix_instructions_are_named_per_architecture(ident, vendor, family):
    from roofgen.advice.hardware import architecture
    from roofgen.model import Machine

    arch = architecture(Machine(ident, ident, 1e9, (), (), vendor=vendor))
    assert arch.instructions.split("(")[0].split()[-1].startswith(family)
    others = {"mma.sync", "wgmma", "tcgen05", "MFMA"} - {family}
    assert not any(o in arch.instructions for o in others)
