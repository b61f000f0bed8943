"""Operator models against hand-computed values; shape checks with located messages;
modelled FLOPs and bytes; bytes against the model in the plausibility rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from specdata import GPU_MACHINE_YAML, a100_machine

from roofgen.analysis.analyse import analyse
from roofgen.analysis.plausibility import check as plausibility_check
from roofgen.api import check, shipped_rules
from roofgen.cli import main
from roofgen.model import Specs
from roofgen.operators.models import SHAPE_KEYS, check_shape, operator_model
from roofgen.spec import build

BF16 = {"a": "bf16", "b": "bf16", "c": "bf16", "accumulator": "fp32"}
QKVO = {"q": "bf16", "k": "bf16", "v": "bf16", "o": "bf16"}


def model(kind: str, shape: dict[str, Any], dtypes: dict[str, str], **op: Any) -> Any:
    outcome = operator_model(kind, shape, dtypes, **op)
    assert outcome.model is not None, outcome.reason
    return outcome.model


# --------------------------------------------------------------------------- formulas


def test_gemm_8192_cube_bf16():
    m = model("gemm", {"m": 8192, "n": 8192, "k": 8192}, BF16)
    assert m.matrix_flop == 2 * 8192**3 == 1_099_511_627_776
    assert m.vector_flop == 0 and m.flop == 2 * 8192**3
    assert m.bytes_min == 3 * 8192**2 * 2 == 402_653_184  # A, B read once; C written once
    assert m.matrix_precision == "bf16"


def test_gemm_bytes_follow_each_tensors_dtype_and_an_optional_bias():
    m = model("gemm", {"m": 4, "n": 8, "k": 16}, {"a": "fp8-e4m3", "b": "fp8-e4m3", "c": "fp32"})
    assert m.bytes_min == 4 * 16 * 1 + 16 * 8 * 1 + 4 * 8 * 4  # 64 + 128 + 128 = 320
    assert m.matrix_precision == "fp8"
    with_bias = model("gemm", {"m": 4, "n": 8, "k": 16}, {**BF16, "bias": "fp32"})
    assert with_bias.bytes_min == (4 * 16 + 16 * 8 + 4 * 8) * 2 + 8 * 4  # + n fp32 = 480


def test_batched_gemm_multiplies_by_the_batch():
    m = model("batched-gemm", {"batch": 128, "m": 4096, "n": 4096, "k": 128}, BF16)
    assert m.flop == 2 * 128 * 4096 * 4096 * 128 == 549_755_813_888
    assert m.bytes_min == 128 * (4096 * 128 * 2 * 2 + 4096 * 4096 * 2) == 4_563_402_752


def test_attention_prefill_causal_halves_qk_and_pv():
    shape = {"batch": 4, "heads": 32, "kv_heads": 8, "seq": 4096, "head_dim": 128}
    full = model("attention", shape, QKVO, phase="prefill")
    causal = model("attention", shape, QKVO, phase="prefill", causal=True)
    # Q.K^T and P.V: 2 x s x s x d FLOP each, per head and sequence.
    assert full.matrix_flop == 4 * 4 * 32 * 4096**2 * 128 == 1_099_511_627_776
    assert causal.matrix_flop == full.matrix_flop / 2 == 549_755_813_888
    assert causal.transcendental_op == 4 * 32 * 4096**2 / 2 == 1_073_741_824  # one exp a score
    assert causal.vector_flop == 5 * causal.transcendental_op  # softmax: 5 FLOP a score
    assert causal.bytes_min == full.bytes_min  # the mask saves arithmetic, not traffic


def test_attention_gqa_and_mqa_shrink_k_and_v_by_heads_over_kv_heads():
    base = {"batch": 4, "heads": 32, "seq": 4096, "head_dim": 128}
    q_o = 2 * 4 * 32 * 4096 * 128 * 2  # Q read, O written: 268,435,456 B
    mha = model("attention", base, QKVO)
    gqa = model("attention", {**base, "kv_heads": 8}, QKVO)
    mqa = model("attention", {**base, "kv_heads": 1}, QKVO)
    assert mha.bytes_min == q_o + 2 * 4 * 32 * 4096 * 128 * 2
    assert gqa.bytes_min - q_o == (mha.bytes_min - q_o) / 4 == 67_108_864  # 32 / 8
    assert mqa.bytes_min - q_o == (mha.bytes_min - q_o) / 32
    assert gqa.flop == mha.flop  # every query head still does its own work
    with_lse = model("attention", {**base, "kv_heads": 8}, {**QKVO, "lse": "fp32"})
    assert with_lse.bytes_min == gqa.bytes_min + 4 * 32 * 4096 * 4 == 337_641_472


def test_attention_decode_reads_the_whole_kv_cache_once():
    shape = {"batch": 32, "heads": 32, "kv_heads": 8, "seq_q": 1, "seq_kv": 8192, "head_dim": 128}
    m = model("attention", shape, QKVO, phase="decode", causal=True)
    kv_cache = 32 * 8 * 8192 * 128 * 2 * 2  # K and V, bf16: 1 GiB
    assert kv_cache == 2**30
    assert m.bytes_min == kv_cache + 2 * 32 * 32 * 128 * 2 == 1_074_266_112  # + Q + O
    assert m.matrix_flop == 4 * 32 * 32 * 8192 * 128 == 4_294_967_296  # no causal halving
    assert m.transcendental_op == 32 * 32 * 8192 == 8_388_608
    # In decode, seq is the KV length, with one query token.
    by_seq = model(
        "attention",
        {"batch": 32, "heads": 32, "kv_heads": 8, "seq": 8192, "head_dim": 128},
        QKVO,
        phase="decode",
    )
    assert by_seq.bytes_min == m.bytes_min and by_seq.flop == m.flop


def test_softmax_layernorm_rmsnorm():
    rows, cols = 4096, 32768
    n = rows * cols
    sm = model("softmax", {"rows": rows, "cols": cols}, {"x": "fp16", "y": "fp16"})
    assert sm.vector_flop == 5 * n and sm.transcendental_op == n
    assert sm.bytes_min == n * 2 + n * 2 == 536_870_912
    causal = model("softmax", {"rows": rows, "cols": cols}, {"x": "bf16", "y": "bf16"}, causal=True)
    assert causal.vector_flop == 5 * n / 2 and causal.bytes_min == sm.bytes_min
    affine = {"x": "bf16", "y": "bf16", "weight": "fp32", "bias": "fp32"}
    ln = model("layernorm", {"rows": 8, "cols": 1024}, affine)
    assert ln.vector_flop == 7 * 8 * 1024 and ln.transcendental_op == 8  # one rsqrt a row
    assert ln.bytes_min == 8 * 1024 * 2 * 2 + 1024 * 4 * 2 == 40_960
    rms = model("rmsnorm", {"rows": 8, "cols": 1024}, {"x": "bf16", "y": "bf16", "weight": "bf16"})
    assert rms.vector_flop == 4 * 8 * 1024 and rms.transcendental_op == 8
    assert rms.bytes_min == 8 * 1024 * 2 * 2 + 1024 * 2 == 34_816


def test_elementwise_and_reduction():
    add = model("elementwise", {"n": 2**28, "inputs": 2, "outputs": 1}, {"a": "fp32", "c": "fp32"})
    assert add.flop == 2**28  # inputs - 1 FLOP an element by default
    assert add.bytes_min == 3 * 2**28 * 4 == 3 * 2**30  # the vector add's 3 GiB
    scale = model("elementwise", {"n": 1000, "inputs": 1, "outputs": 1, "flop_per_element": 3},
                  {"x": "fp16", "y": "fp32"})  # fmt: skip
    assert scale.flop == 3000 and scale.bytes_min == 1000 * 2 + 1000 * 4
    rmax = model("reduction", {"n": 2**27, "out": 4096}, {"x": "fp16", "y": "fp32"})
    assert rmax.flop == 2**27 - 4096
    assert rmax.bytes_min == 2**27 * 2 + 4096 * 4 == 268_451_840
    total = model("reduction", {"n": 100}, {"x": "fp64"})
    assert total.flop == 99 and total.bytes_min == 100 * 8 + 8 and total.vector_precision == "fp64"


def test_conv2d_resnet_stem():
    shape = {"n": 1, "c": 3, "h": 224, "w": 224, "k": 64, "r": 7, "s": 7, "stride": 2, "padding": 3}
    m = model("conv2d", shape, {"x": "fp16", "w": "fp16", "y": "fp16"})
    # 112 x 112 outputs: (224 + 2 x 3 - 7) // 2 + 1 = 112; 118,013,952 multiply-adds.
    assert m.matrix_flop == 2 * 64 * 112 * 112 * 3 * 7 * 7 == 236_027_904
    assert m.bytes_min == (3 * 224 * 224 + 64 * 3 * 7 * 7 + 64 * 112 * 112) * 2 == 1_925_504


def test_no_model_says_why():
    assert operator_model("other", {"x": 1}, {}).reason == "no operator model for kind 'other'"
    lacking = operator_model("elementwise", {"n": 10}, {"x": "fp32"})
    assert lacking.model is None and lacking.reason == "the shape lacks inputs, outputs"
    untyped = model("gemm", {"m": 2, "n": 2, "k": 2}, {})
    assert untyped.flop == 16 and untyped.bytes_min is None and untyped.untyped == ("a", "b", "c")


# --------------------------------------------------------------------------- shapes


def test_unknown_shape_keys_name_the_valid_keys():
    assert check_shape("gemm", {"m": 1, "n": 1, "k": 1, "batch": 2}) == [
        ("batch", "unknown shape key 'batch' for operator kind 'gemm'; valid keys: m, n, k, layout")
    ]
    assert check_shape("other", {"anything": True}) == []
    assert check_shape("softmax", {"rows": 0, "cols": "wide"}) == [
        ("rows", "rows (rows) must be a positive integer"),
        ("cols", "cols (elements per row) must be a positive integer"),
    ]
    assert set(SHAPE_KEYS) == {
        "gemm", "batched-gemm", "attention", "softmax", "layernorm", "rmsnorm",
        "elementwise", "reduction", "conv2d",
    }  # fmt: skip


def case_yaml(kernel: str, measurement: str, extra: str = "") -> str:
    return f"""\
roofgen: 1
kind: case
id: c
title: C
machines: [gpu]
method: {{gpu: GPU, driver: "1", clock_control: locked}}
kernels:
  - {kernel}
variants:
  - id: v
    launches:
      - kernel: k
{measurement}{extra}"""


def write(tmp_path: Path, case: str) -> Path:
    (tmp_path / "machine.yaml").write_text(GPU_MACHINE_YAML, encoding="utf-8")
    (tmp_path / "case.yaml").write_text(case, encoding="utf-8")
    return tmp_path


GEMM_1024 = (
    "{id: k, operator: {kind: gemm, shape: {m: 1024, n: 1024, k: 1024}}, "
    "dtypes: {a: bf16, b: bf16, c: bf16}}"
)
TIME = "{median: 1 ms, q1: 0.99 ms, q3: 1.01 ms, repeats: 100, warmup: 10}"


def test_unknown_shape_key_is_a_located_error(tmp_path, capsys, monkeypatch):
    kernel = (
        "{id: k, operator: {kind: attention, shape: {batch: 1, heads: 8, kv_len: 64, "
        "head_dim: 64}}}"
    )
    write(tmp_path, case_yaml(kernel, f"        measurement: {{time: {TIME}}}\n"))
    monkeypatch.chdir(tmp_path)
    assert main(["check", "."]) == 1
    err = capsys.readouterr().err
    assert (
        "case.yaml:8:69: kernels[0].operator.shape.kv_len: unknown shape key 'kv_len' for "
        "operator kind 'attention'; valid keys: batch, heads, kv_heads, seq, seq_q, seq_kv, "
        "head_dim"
    ) in err


# --------------------------------------------------------------------------- modelled


def test_missing_flops_and_bytes_come_from_the_model_and_are_marked(tmp_path):
    kernel = GEMM_1024[:-1] + ", units: [tensor]}"
    write(tmp_path, case_yaml(kernel, f"        measurement: {{time: {TIME}}}\n"))
    result = check([tmp_path])
    assert result.analysis is not None and not result.failed(strict=True)
    r = result.analysis.cases[0].variants[0].launches[0]
    assert r.modelled == ("flops", "bytes.hbm")
    assert r.flop == 2 * 1024**3
    assert r.bytes_b == {"hbm": 3 * 1024**2 * 2}
    assert r.bound_s["compute.tensor"] == pytest.approx(2 * 1024**3 / 100e12)
    assert r.bound_s["memory.hbm"] == pytest.approx(3 * 1024**2 * 2 / 1e12)
    assert r.klass == "below-roofs" and r.binding == "compute.tensor"


def test_measured_values_are_never_replaced(tmp_path):
    kernel = GEMM_1024
    m = f"        measurement: {{time: {TIME}, flops: {{tensor: {{bf16: 3e9 FLOP}}}}}}\n"
    write(tmp_path, case_yaml(kernel, m))
    r = check([tmp_path]).analysis.cases[0].variants[0].launches[0]  # type: ignore[union-attr]
    assert r.modelled == ("bytes.hbm",) and r.flop == 3e9


def test_modelled_values_in_the_json(tmp_path, capsys, monkeypatch):
    kernel = (
        "{id: k, operator: {kind: softmax, shape: {rows: 1024, cols: 1024}}, "
        "dtypes: {x: bf16, y: bf16}}"
    )
    write(tmp_path, case_yaml(kernel, f"        measurement: {{time: {TIME}}}\n"))
    monkeypatch.chdir(tmp_path)
    assert main(["analyze", "--format", "json", "-q", "."]) == 0
    launch = json.loads(capsys.readouterr().out)["cases"][0]["variants"][0]["launches"][0]
    assert launch["modelled"] == ["flops", "bytes.hbm"]
    assert launch["model"]["vector_flop"] == 5 * 1024**2
    assert launch["model"]["transcendental_op"] == 1024**2
    assert launch["model"]["bytes_min"] == 2 * 1024**2 * 2


# --------------------------------------------------------------------------- plausibility

GOOD = {"median": "1 ms", "q1": "0.99 ms", "q3": "1.01 ms", "repeats": 100, "warmup": 10}


def findings(hbm: float, accepted: dict[str, str] | None = None) -> dict[str, tuple[str, str]]:
    measurement: dict[str, Any] = {
        "time": GOOD,
        "flops": {"tensor": {"bf16": 2 * 4096**3}},
        "bytes": {"hbm": hbm},
    }
    if accepted:
        measurement["accepted"] = accepted
    case = {
        "id": "c",
        "title": "c",
        "machines": ["a100"],
        "kernels": [
            {
                "id": "k",
                "operator": {"kind": "gemm", "shape": {"m": 4096, "n": 4096, "k": 4096}},
                "dtypes": {"a": "bf16", "b": "bf16", "c": "bf16"},
            }
        ],
        "variants": [{"id": "v", "launches": [{"kernel": "k", "measurement": measurement}]}],
    }
    specs = Specs({"a100": build.machine(a100_machine())}, (build.case(case),))
    found = plausibility_check(specs, analyse(specs), shipped_rules())
    return {f.rule: (f.severity, f.message) for f in found}


MINIMUM = 3 * 4096**2 * 2  # 100,663,296 B


def test_bytes_well_above_the_model_are_a_warning():
    assert findings(1.4 * MINIMUM) == {}
    severity, message = findings(2 * MINIMUM)["bytes-above-model"]
    assert severity == "warning"
    assert message.startswith("HBM moved 201 MB, 2.00x the operator model's minimum of 101 MB")


def test_bytes_below_the_model_are_a_note_not_a_warning():
    found = findings(0.9 * MINIMUM)
    assert found["bytes-below-model"][0] == "note"
    assert "dirty lines stay in L2" in found["bytes-below-model"][1]


def test_an_accepted_finding_is_a_note_with_its_reason():
    found = findings(7 * MINIMUM, {"bytes-above-model": "tiles re-read A and B."})
    assert found["bytes-above-model"][0] == "note"
    assert found["bytes-above-model"][1].endswith("(accepted: tiles re-read A and B)")


def test_the_factor_is_a_rule_parameter(tmp_path, capsys, monkeypatch):
    kernel = GEMM_1024
    m = (
        f"        measurement: {{time: {TIME}, flops: {{tensor: {{bf16: 2e9 FLOP}}}}, "
        "bytes: {hbm: 12 MB}}\n"
    )
    write(tmp_path, case_yaml(kernel, m))  # 12 MB is 1.9x the 6.3 MB minimum
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--strict", "."]) == 1
    assert "bytes-above-model" not in capsys.readouterr().err  # the code is not printed
    (tmp_path / "rules.yaml").write_text(
        "roofgen: 1\nrules:\n  - id: bytes-above-model\n    check: model-bytes\n"
        "    severity: warning\n    params: {above: 2.5}\n    message: too many bytes\n",
        encoding="utf-8",
    )
    (tmp_path / "roofgen.toml").write_text('rules = "rules.yaml"\n', encoding="utf-8")
    assert main(["check", "--strict", "case.yaml", "machine.yaml"]) == 0
