"""Operator models against hand-computed values; shape checks with located messages;
modelled FLOPs and bytes; bytes against the model in the plausibility rules."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from specdata import GPU_MACHINE_YAML, a100_machine

from roofgen.analysis.analyse import analyse
from roofgen.analysis.plausibility import check as plausibility_check
from roofgen.api import check, shipped_rules
from roofgen.cli import main
from roofgen.model import Specs
from roofgen.operators import models
from roofgen.operators.causal import causal_alignment, causal_pairs
from roofgen.operators.models import SHAPE_KEYS, check_shape, operator_model, shape_error
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


def test_attention_prefill_causal_keeps_the_lower_triangle_and_its_diagonal():
    shape = {"batch": 4, "heads": 32, "kv_heads": 8, "seq": 4096, "head_dim": 128}
    full = model("attention", shape, QKVO, phase="prefill")
    causal = model("attention", shape, QKVO, phase="prefill", causal=True)
    # Q.K^T and P.V: 2 x s x s x d FLOP each, per head and sequence.
    assert full.matrix_flop == 4 * 4 * 32 * 4096**2 * 128 == 1_099_511_627_776
    # Query i sees keys 0..i: 1 + 2 + ... + 4096 = 4096 x 4097 / 2 = 8,390,656 scores a
    # head, half the square (8,388,608) plus half the diagonal (2,048).
    assert causal.matrix_flop == 4 * 4 * 32 * 128 * (4096 * 4097 // 2) == 549_890_031_616
    assert causal.transcendental_op == 4 * 32 * 8_390_656 == 1_074_003_968  # one exp a score
    assert causal.vector_flop == 5 * causal.transcendental_op  # softmax: 5 FLOP a score
    assert causal.bytes_min == full.bytes_min  # the mask saves arithmetic, not traffic


# Scores a head keeps over 4096 keys, summed by hand. Top-left: query i sees keys 0..i,
# at most 4096. Bottom-right: query i sees keys 0..4096 - seq_q + i (none while negative).
SQUARE = (1 + 4096) * 4096 // 2  # 1 + 2 + ... + 4096 = 8,390,656
CAUSAL_OVER_4096_KEYS = [
    # 1024 queries: 1 + 2 + ... + 1024 = 524,800
    (1024, "top-left", (1 + 1024) * 1024 // 2),
    # 1024 queries: 3073 + 3074 + ... + 4096 = 3,670,528 (7.0x the top-left count)
    (1024, "bottom-right", (3073 + 4096) * 1024 // 2),
    (4096, "top-left", SQUARE),
    (4096, "bottom-right", SQUARE),
    # 6144 queries: 1 + ... + 4096, then 2048 queries that see all 4096 keys = 16,779,264
    (6144, "top-left", SQUARE + 2048 * 4096),
    # 6144 queries: 2048 that see no key, then 1 + ... + 4096 = 8,390,656
    (6144, "bottom-right", 2048 * 0 + SQUARE),
    # 16384 queries: 1 + ... + 4096, then 12288 x 4096 = 58,722,304
    (16384, "top-left", SQUARE + 12288 * 4096),
    (16384, "bottom-right", 12288 * 0 + SQUARE),
]


@pytest.mark.parametrize(("seq_q", "alignment", "pairs"), CAUSAL_OVER_4096_KEYS)
def test_causal_attention_counts_each_query_key_pair_once(seq_q, alignment, pairs):
    assert causal_pairs(seq_q, 4096, alignment) == pairs
    shape = {"batch": 2, "heads": 16, "kv_heads": 4, "seq_q": seq_q, "seq_kv": 4096}
    m = model("attention", {**shape, "head_dim": 128}, QKVO, phase="prefill", causal=alignment)
    assert m.transcendental_op == 2 * 16 * pairs  # one exp a kept score, per head
    assert m.matrix_flop == 4 * 128 * 2 * 16 * pairs  # Q.K^T and P.V: 2 x 128 FLOP each


def test_causal_attention_at_6144_queries_over_4096_keys():
    """The old count, 6144 x 4096 - 6144^2 / 2 = 6,291,456 a head, was 25% low."""
    shape = {"batch": 1, "heads": 1, "seq_q": 6144, "seq_kv": 4096, "head_dim": 64}
    top_left = model("attention", shape, QKVO, causal=True)  # PyTorch is_causal's alignment
    # 4096 x 4097 / 2 = 8,390,656 in the first 4096 rows + 2048 full rows of 4096 keys
    assert top_left.transcendental_op == 8_390_656 + 2048 * 4096 == 16_779_264
    assert top_left.matrix_flop == 4 * 64 * 16_779_264
    bottom_right = model("attention", shape, QKVO, causal="bottom-right")
    assert bottom_right.transcendental_op == 8_390_656
    assert bottom_right.notes == (
        "causal mask (bottom-right): masked scores are not counted",
        "the first 2048 queries see no key",
    )


def test_causal_true_is_top_left_but_bottom_right_in_decode():
    assert causal_alignment(True) == causal_alignment(True, "prefill") == "top-left"
    assert causal_alignment(True, "decode") == "bottom-right"  # the newest tokens
    assert causal_alignment(False) is None and causal_alignment(None, "decode") is None
    assert causal_alignment("top-left", "decode") == "top-left"  # as written
    # Speculative decode: 4 draft tokens at the end of a 1024-token cache see
    # 1021, 1022, 1023 and 1024 keys: 4090 scores a head.
    draft = {"batch": 1, "heads": 1, "seq_q": 4, "seq_kv": 1024, "head_dim": 64}
    assert model("attention", draft, QKVO, phase="decode", causal=True).transcendental_op == (
        1021 + 1022 + 1023 + 1024
    )


def _mask_pairs(seq_q: int, seq_kv: int, alignment: str) -> int:
    """The mask itself, element by element: key j is kept for query i when j <= i
    (top-left) or j <= i + seq_kv - seq_q (bottom-right)."""
    shift = 0 if alignment == "top-left" else seq_kv - seq_q
    return sum(1 for i in range(seq_q) for j in range(seq_kv) if j <= i + shift)


@given(
    seq_q=st.integers(1, 40),
    seq_kv=st.integers(1, 40),
    alignment=st.sampled_from(["top-left", "bottom-right"]),
)
def test_causal_pairs_equal_the_mask_counted_element_by_element(seq_q, seq_kv, alignment):
    assert causal_pairs(seq_q, seq_kv, alignment) == _mask_pairs(seq_q, seq_kv, alignment)


_ANY_COUNT = st.integers(1, 1 << 20)


@given(
    seq_q=_ANY_COUNT,
    seq_kv=_ANY_COUNT,
    heads=st.integers(1, 64),
    causal=st.sampled_from([False, True, "top-left", "bottom-right"]),
    phase=st.sampled_from([None, "prefill", "decode"]),
)
def test_no_attention_shape_gives_a_negative_count(seq_q, seq_kv, heads, causal, phase):
    shape = {"batch": 3, "heads": heads, "seq_q": seq_q, "seq_kv": seq_kv, "head_dim": 64}
    m = model("attention", shape, QKVO, phase=phase, causal=causal)
    assert m.matrix_flop >= 0 and m.vector_flop >= 0 and m.transcendental_op >= 0
    assert m.matrix_flop <= 4 * 64 * 3 * heads * seq_q * seq_kv  # never above no mask
    assert all(t.elements >= 0 for t in m.tensors)


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


def test_a_kv_cache_type_sets_what_k_and_v_move_not_the_arithmetics_precision():
    shape = {"batch": 32, "heads": 32, "kv_heads": 8, "seq_q": 1, "seq_kv": 8192, "head_dim": 128}
    m = model("attention", shape, {**QKVO, "kv_cache": "fp8-e4m3"}, phase="decode")
    kv_cache = 32 * 8 * 8192 * 128 * 2 * 1  # K and V at one byte: 512 MiB
    assert m.bytes_min == kv_cache + 2 * 32 * 32 * 128 * 2 == 537_395_200  # + Q + O, bf16
    assert m.matrix_precision == "bf16"  # dequantised: the dot products stay bf16
    only_cache = model("attention", shape, {"q": "bf16", "kv_cache": "fp8"}, phase="decode")
    assert only_cache.bytes_min == m.bytes_min  # O takes q's type, not the cache's


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


def test_a_shape_no_operator_can_have_is_a_located_error_naming_it(tmp_path, capsys, monkeypatch):
    kernel = (
        "{id: k, operator: {kind: attention, shape: {batch: 1, heads: 32, kv_heads: 5, "
        "seq: 64, head_dim: 64}}}"
    )
    write(tmp_path, case_yaml(kernel, f"        measurement: {{time: {TIME}}}\n"))
    monkeypatch.chdir(tmp_path)
    assert main(["check", "."]) == 1
    assert (
        "case.yaml:8:48: kernels[0].operator.shape: the attention shape {batch: 1, heads: 32, "
        "kv_heads: 5, seq: 64, head_dim: 64}: heads (32) is not a multiple of kv_heads (5); "
        "kv_heads divides heads"
    ) in capsys.readouterr().err


def test_causal_alignment_is_read_from_the_spec_and_a_wrong_one_is_located(
    tmp_path, capsys, monkeypatch
):
    def kernel(causal: str) -> str:
        return (
            "{id: k, operator: {kind: attention, shape: {batch: 1, heads: 1, seq_q: 1024, "
            f"seq_kv: 4096, head_dim: 64}}, causal: {causal}}}, dtypes: {{q: bf16}}}}"
        )

    write(tmp_path, case_yaml(kernel("bottom-right"), f"        measurement: {{time: {TIME}}}\n"))
    r = check([tmp_path]).analysis.cases[0].variants[0].launches[0]  # type: ignore[union-attr]
    assert r.model is not None
    assert r.model.transcendental_op == (3073 + 4096) * 1024 // 2  # 3073 + ... + 4096 keys
    write(tmp_path, case_yaml(kernel("bottom-left"), f"        measurement: {{time: {TIME}}}\n"))
    monkeypatch.chdir(tmp_path)
    assert main(["check", "."]) == 1
    assert (
        "kernels[0].operator.causal: 'bottom-left' is not one of: true, false, top-left, "
        "bottom-right"
    ) in capsys.readouterr().err


def test_a_sweep_point_is_modelled_on_its_kernels_shape(tmp_path, capsys, monkeypatch):
    kernel = "{id: k, operator: {kind: reduction, shape: {n: 1024}}}"
    sweep = (
        "        sweep:\n"
        f"          - {{shape: {{out: 16}}, measurement: {{time: {TIME}}}}}\n"
        f"          - {{shape: {{out: 2048}}, measurement: {{time: {TIME}}}}}\n"
    )
    write(tmp_path, case_yaml(kernel, sweep))
    monkeypatch.chdir(tmp_path)
    assert main(["check", "."]) == 1
    err = capsys.readouterr().err
    assert (
        "case.yaml:15:21: variants[0].launches[0].sweep[1].shape: the reduction shape "
        "{n: 1024, out: 2048}: out (2048) is larger than n (1024); out is at most n"
    ) in err
    assert "sweep[0]" not in err


def test_a_model_that_would_count_below_zero_is_refused_with_its_shape(monkeypatch):
    reduction = models._BUILDERS["reduction"]

    def below_zero(d, t, phase, causal):  # a model with a sign error
        return replace(reduction(d, t, phase, causal), vector_flop=-1.0)

    monkeypatch.setitem(models._BUILDERS, "reduction", below_zero)
    outcome = operator_model("reduction", {"n": 8}, {"x": "fp32"})
    assert outcome.model is None
    assert outcome.reason == (
        "the reduction shape {n: 8}: gives negative counts (vector FLOPs -1); check its keys"
    )
    assert shape_error("reduction", {"n": 8}, {"x": "fp32"}) == outcome.reason


def test_a_kv_cache_type_on_a_kernel_without_one_is_a_located_error(tmp_path, capsys, monkeypatch):
    kernel = GEMM_1024[:-2] + ", kv_cache: fp8}}"
    write(tmp_path, case_yaml(kernel, f"        measurement: {{time: {TIME}}}\n"))
    monkeypatch.chdir(tmp_path)
    assert main(["check", "."]) == 1
    assert (
        "kernels[0].dtypes.kv_cache: kv_cache (the type K and V are stored in) applies to "
        "attention kernels only; give this kernel's tensors their own types"
    ) in capsys.readouterr().err


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
