"""`roofgen import torch-trace`: torch.profiler traces as a case's ops, steps and
end-to-end time.

tests/data/torch/mi250_minitoy_train_ROCm6_2_kineto.json.gz is a real torch.profiler
trace (ROCm 6.2, an MI250) of one training step of a toy model: Linear(128, 128),
ReLU, MSE loss, backward, SGD step, with record_shapes. Its ops nest
(``aten::linear`` > ``aten::addmm``, ``aten::to`` > ``aten::_to_copy`` > ``aten::copy_``);
kernels carry ``args.correlation`` and ``External id``, and flow events (``ac2g``)
link them to their ``hipLaunchKernel`` calls. ProfilerStep#1 holds every kernel;
ProfilerStep#2 launches none.

tests/data/torch/triton_example.json.gz is a real trace of one torch.compile'd
function: one Triton kernel, launched with cuLaunchKernel.

The figures are computed here by simpler means than the importer's (a kernel's op
through its own ``External id``, sums of ``dur``), or are literals read from the file.
"""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from roofgen.cli import main
from roofgen.spec.quantity import parse_quantity
from roofgen.spec.yamlload import load_file

DATA = Path(__file__).resolve().parent / "data" / "torch"
MINITOY = DATA / "mi250_minitoy_train_ROCm6_2_kineto.json.gz"
TRITON = DATA / "triton_example.json.gz"


@pytest.fixture(autouse=True)
def _in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(tmp_path)


def _events(path: Path) -> list[dict[str, Any]]:
    data = json.loads(gzip.decompress(path.read_bytes()), parse_float=Decimal)
    return data["traceEvents"]


def _data(path: Path) -> Any:
    doc, problems = load_file(path)
    assert doc is not None, problems
    return doc.data


def _us(text: str) -> Decimal:
    return Decimal(repr(parse_quantity(text, "time"))) * 10**6


def _import(source: Path, *extra: str) -> int:
    args = ["import", "torch-trace", str(source), "--machine", "a100-40gb-sxm", "-o", "case.yaml"]
    return main([*args, *extra])


def _by_kernel_external_id(events: list[dict[str, Any]]) -> dict[str, Decimal]:
    """GPU time per op name, each kernel given to the op whose External id it carries."""
    ops = {e["args"]["External id"]: e["name"] for e in events if e.get("cat") == "cpu_op"}
    out: dict[str, Decimal] = {}
    for e in events:
        if e.get("cat") == "kernel":
            name = ops[e["args"]["External id"]]
            out[name] = out.get(name, Decimal(0)) + e["dur"]
    return out


def test_kernels_go_to_the_innermost_op_once():
    events = _events(MINITOY)
    assert _import(MINITOY) == 0
    case = _data(Path("case.yaml"))
    names = [k["name"] for k in case["kernels"]]
    assert "aten::linear" not in names  # its kernels are addmm's
    assert names.count("aten::addmm") == 1
    expected = _by_kernel_external_id(events)
    # addmm launched two kernels: 6.88 us (bias copy) and 17.6 us (Cijk GEMM)
    assert expected["aten::addmm"] == Decimal("24.48")
    launches = {x["kernel"]: x for x in case["variants"][0]["launches"]}
    ids = {k["name"]: k["id"] for k in case["kernels"]}
    addmm = launches[ids["aten::addmm"]]["measurement"]
    assert _us(addmm["time"]) == expected["aten::addmm"]
    assert addmm["launches"] == 2
    for name in ("aten::mm", "aten::sum", "aten::mean", "aten::clamp_min"):
        assert _us(launches[ids[name]]["measurement"]["time"]) == expected[name]
    # every kernel's time is in exactly one entry (each op ran once in the one step)
    assert all(x.get("calls", 1) == 1 for x in launches.values())
    total = sum(_us(x["measurement"]["time"]) for x in launches.values())
    assert total == sum(e["dur"] for e in events if e.get("cat") == "kernel")


def test_gemm_shapes_give_model_flops(capsys: pytest.CaptureFixture[str]):
    assert _import(MINITOY) == 0
    case = _data(Path("case.yaml"))
    kernels = {k["name"]: k for k in case["kernels"]}
    # aten::addmm Input Dims [[128], [5, 128], [128, 128], [], []]: C[5x128] = A[5x128] B[128x128]
    assert kernels["aten::addmm"]["operator"] == {
        "kind": "gemm",
        "shape": {"m": 5, "n": 128, "k": 128},
    }
    # aten::mm Input Dims [[128, 5], [5, 128]] (the weight's gradient)
    assert kernels["aten::mm"]["operator"]["shape"] == {"m": 128, "n": 128, "k": 5}
    assert kernels["aten::mm"]["dtypes"] == {"a": "fp32"}  # Input type 'float'
    out = capsys.readouterr().err
    assert f"model {2 * 5 * 128 * 128} FLOP per call" in out  # 163840, for each GEMM
    assert kernels["aten::sum"]["operator"] == {"kind": "other"}


def test_the_step_and_its_idle_time():
    events = _events(MINITOY)
    steps = {e["name"]: e for e in events if e.get("cat") == "user_annotation"}
    kernels = [e for e in events if e.get("cat") == "kernel"]
    last_end = max(e["ts"] + e["dur"] for e in kernels)
    step = steps["ProfilerStep#1"]
    assert last_end < step["ts"] + step["dur"]  # the step outlasts its kernels
    assert _import(MINITOY) == 0
    case = _data(Path("case.yaml"))
    e2e = case["end_to_end"]["baseline"]
    assert _us(e2e["time"]) == step["dur"] == Decimal("9288.291")
    # the kernels run one after another on one stream: busy = the sum of their times
    ordered = sorted((e["ts"], e["ts"] + e["dur"]) for e in kernels)
    assert all(a[1] <= b[0] for a, b in zip(ordered, ordered[1:], strict=False))
    busy = sum(e["dur"] for e in kernels)
    assert busy == Decimal("110.881")
    assert "GPU busy 110.881 us" in e2e["description"]
    assert step["dur"] - busy == Decimal("9177.410")
    assert "idle 9.17741 ms" in e2e["description"]


def test_flow_events_link_kernels_that_lack_a_correlation(tmp_path: Path):
    data = json.loads(gzip.decompress(MINITOY.read_bytes()))
    for e in data["traceEvents"]:
        if e.get("cat") == "kernel":
            del e["args"]["correlation"]
            del e["args"]["External id"]
    stripped = tmp_path / "stripped.json"
    stripped.write_text(json.dumps(data))
    assert _import(stripped) == 0
    names = [k["name"] for k in _data(Path("case.yaml"))["kernels"]]
    assert names.count("aten::addmm") == 1 and "aten::mm" in names


def test_compiled_kernels_are_said_to_have_no_shapes(capsys: pytest.CaptureFixture[str]):
    assert _import(TRITON) == 0
    case = _data(Path("case.yaml"))
    assert [k["name"] for k in case["kernels"]] == ["triton_poi_fused_add_cos_sin_0"]
    launch = case["variants"][0]["launches"][0]["measurement"]
    assert launch["time"] == "1.76 us"  # the kernel event's dur 1.76
    err = capsys.readouterr().err
    assert "compiled code (Triton kernels from torch.compile)" in err
    assert "FLOPs are unknown" in err


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"not json", "not JSON"),
        (b'{"schemaVersion": 1}', "no 'traceEvents' list"),
        (b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": 2}]}',
         "no GPU kernel"),
        (b"\x1f\x8b\x08\x00garbage", "damaged gzip"),
    ],
)  # fmt: skip
def test_files_that_are_not_traces_get_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, said: str
):
    path = tmp_path / "trace.json"
    path.write_bytes(content)
    assert _import(path) == 1
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err
    assert not Path("case.yaml").exists()


def test_hostile_fields_are_skipped_not_a_crash(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": [1], "tid": {}, "ts": 1,
         "dur": 5, "args": {"External id": [3], "Input Dims": [[[[2]]], "x"]}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 2, "dur": 1, "args": {"correlation": {"a": 1}, "External id": None}},
        {"ph": "s", "cat": "ac2g", "id": [7], "pid": 1, "tid": 1, "ts": 2},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1e999999,
         "dur": 1},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 3, "dur": "NaN",
         "args": {"correlation": [1]}},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 3, "dur": 2,
         "args": {"correlation": [1], "External id": {"x": 1}}},
    ]  # fmt: skip
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps({"traceEvents": events}))
    status = _import(path)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert status == 0  # the one readable kernel, launched outside any op
    launch = _data(Path("case.yaml"))["variants"][0]["launches"][0]["measurement"]
    assert launch["time"] == "2 us"  # dur 2: microseconds


def test_attention_norm_and_linear_shapes_give_their_models():
    """Shapes as torch records them (the layouts of each op's arguments), not from a
    file: the FLOPs are computed here from the shapes."""
    from roofgen.importers.torch_ops import operator_of

    bf16 = ["c10::BFloat16"] * 3
    sdpa = operator_of(
        "aten::_scaled_dot_product_flash_attention",
        {"Input Dims": [[2, 8, 128, 64], [2, 2, 256, 64], [2, 2, 256, 64]], "Input type": bf16},
    )
    assert sdpa is not None and sdpa.kind == "attention"
    shape = {"batch": 2, "heads": 8, "seq_q": 128, "seq_kv": 256, "head_dim": 64, "kv_heads": 2}
    assert sdpa.shape == shape and sdpa.dtypes == {"q": "bf16"}
    scores = 2 * 8 * 128 * 256
    assert sdpa.flop == 4 * scores * 64 + 5 * scores  # Q.K^T and P.V, softmax 5 per score
    flash = operator_of(  # the flash kernel's op: [batch, seq, heads, head_dim]
        "aten::_flash_attention_forward",
        {"Input Dims": [[2, 128, 8, 64], [2, 256, 2, 64], [2, 256, 2, 64]], "Input type": bf16},
    )
    assert flash is not None and flash.shape == shape
    norm = operator_of(
        "aten::native_layer_norm",
        {"Input Dims": [[4, 16, 768], [], [768], [768], []], "Input type": ["float"]},
    )
    assert norm is not None and (norm.kind, norm.shape) == ("layernorm", {"rows": 64, "cols": 768})
    assert norm.flop == 7 * 64 * 768
    linear = operator_of(
        "aten::linear", {"Input Dims": [[4, 16, 768], [3072, 768], [3072]], "Input type": ["float"]}
    )
    assert linear is not None and linear.shape == {"m": 64, "n": 3072, "k": 768}
    assert linear.flop == 2 * 64 * 3072 * 768
    assert operator_of("aten::mm", {"Input Dims": [[3, 4], [5, 6]]}) is None  # k disagrees
    assert operator_of("aten::relu", {"Input Dims": [[3, 4]]}) is None
