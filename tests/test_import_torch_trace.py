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


def test_hostile_keys_are_skipped_not_a_crash(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """Keys (pid, tid, correlation, External id) that are lists or mappings link
    nothing; the kernel is imported as launched outside any op."""
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": [1], "tid": {}, "ts": 1,
         "dur": 5, "args": {"External id": [3], "Input Dims": [[[[2]]], "x"]}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 2, "dur": 1, "args": {"correlation": {"a": 1}, "External id": None}},
        {"ph": "s", "cat": "ac2g", "id": [7], "pid": 1, "tid": 1, "ts": 2},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 3, "dur": 2,
         "args": {"correlation": [1], "External id": {"x": 1}}},
    ]  # fmt: skip
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps({"traceEvents": events}))
    status = _import(path)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert status == 0  # the one kernel, launched outside any op
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


# --------------------------------------------------------------------------- bounds and bad values
#
# Each of these once ended in an internal error (exit 4), ran for minutes, or built a
# case that failed its own check with "Please report this"; now each is refused with
# exit 1 and a message that names the file, the event and the field.


def _one_kernel(kernel_name: Any = "k", dur: Any = 2, dims: Any = None) -> dict[str, Any]:
    """A trace of one op (aten::mm) launching one kernel, both linked by their ids."""
    op_args: dict[str, Any] = {"External id": 1}
    if dims is not None:
        op_args |= {"Input Dims": dims, "Input type": ["float", "float"]}
    return {"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1,
         "dur": 10, "args": op_args},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 2, "dur": 1, "args": {"correlation": 5, "External id": 1}},
        {"ph": "X", "cat": "kernel", "name": kernel_name, "pid": 0, "tid": 7, "ts": 3,
         "dur": dur, "args": {"correlation": 5, "External id": 1}},
    ]}  # fmt: skip


def _refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | bytes) -> str:
    path = tmp_path / "trace.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    status = _import(path)
    err = capsys.readouterr().err
    assert status == 1, err
    assert "Traceback" not in err and "report" not in err
    assert not Path("case.yaml").exists()
    return err


@pytest.mark.parametrize(
    ("trace", "said"),
    [
        (_one_kernel(dur=-5), "traceEvents[2] 'k': dur -5 is negative: a duration is 0 or more"),
        (_one_kernel(dur=True), "traceEvents[2] 'k': dur True is not a number of microseconds"),
        (_one_kernel(dur="NaN"), "traceEvents[2] 'k': dur 'NaN' is not a number of microseconds"),
        (_one_kernel(dims=[[10**30, 4], [4, 5]]),
         "traceEvents[0] 'aten::mm': Input Dims holds a size of 10000000000000000000... "
         "(31 digits): a size is 0 to 2**53"),
        (_one_kernel(dims=[[True, 4], [4, 5]]),
         "traceEvents[0] 'aten::mm': Input Dims holds true where a size belongs"),
        (_one_kernel(dims=[[-3, 4], [4, 5]]),
         "traceEvents[0] 'aten::mm': Input Dims holds a size of -3: a size is 0 to 2**53"),
        (_one_kernel(kernel_name=["k"]), "traceEvents[2]: name ['k'] is not a string"),
    ],
    ids=["negative-dur", "boolean-dur", "text-dur", "dims-1e30", "dims-boolean",
         "dims-negative", "name-a-list"],
)  # fmt: skip
def test_a_bad_value_names_the_event_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], trace: dict[str, Any], said: str
):
    err = _refused(tmp_path, capsys, json.dumps(trace))
    assert err == f"{tmp_path / 'trace.json'}: {said}\n"


def test_a_matmul_whose_rows_multiply_past_any_tensor_is_refused(tmp_path: Path, capsys):
    """Each size fits; their product (matmul's m = 2**30 * 2**30) does not."""
    trace = _one_kernel(dims=[[2**30, 2**30, 4], [4, 5]])
    trace["traceEvents"][0]["name"] = "aten::matmul"
    err = _refused(tmp_path, capsys, json.dumps(trace))
    assert (
        "traceEvents[0] 'aten::matmul': Input Dims [[1073741824, 1073741824, 4], [4, 5]] "
        "give gemm m = 1.15e+18, more than any tensor holds (2**53)" in err
    )


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ('"dur": ' + "9" * 5000, "an integer of 5,000 digits (999999999999...): no trace field "
                                 "holds more than 40"),
        ('"dur": NaN', "NaN is not a number JSON has: write a number (or null)"),
        ('"dur": -Infinity', "-Infinity is not a number JSON has: write a number (or null)"),
        ('"dur": ' + "[" * 100_000 + "]" * 100_000, "nested too deeply to be a trace"),
    ],
    ids=["5000-digits", "nan", "infinity", "deep"],
)  # fmt: skip
def test_numbers_json_has_not_are_refused_where_read(tmp_path: Path, capsys, raw: str, said: str):
    text = json.dumps(_one_kernel()).replace('"dur": 2', raw)
    assert raw in text
    err = _refused(tmp_path, capsys, text)
    assert err == f"{tmp_path / 'trace.json'}: {said}\n"


def _bomb(path: Path, inflated: int) -> Path:
    """A gzip file of a trace padded with ``inflated`` bytes of spaces (it packs ~1000:1)."""
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(b'{"traceEvents": [')
        for _ in range(inflated >> 20):
            f.write(b" " * (1 << 20))
        f.write(b"]}")
    return path


def test_a_decompression_bomb_stops_at_the_limit(tmp_path: Path, capsys):
    """2 GiB of spaces in 2 MB took 82 s and 4.2 GB of memory, then ended in an internal
    error (MemoryError) under a memory limit. Here 64 MiB in 64 KB against a 16 MiB limit:
    the reading stops at 16 MiB and says how to raise it."""
    bomb = _bomb(tmp_path / "bomb.json.gz", 64 << 20)
    assert bomb.stat().st_size < 200_000
    assert _import(bomb, "--max-size", "16MiB") == 1
    err = capsys.readouterr().err
    assert err == (
        f"{bomb}: a gzip file that holds more than 16 MiB of JSON, the limit: a torch.profiler "
        "trace is at most some hundreds of MB; if this one is real, raise the limit with "
        "--max-size (e.g. --max-size 64MiB)\n"
    )
    assert _import(bomb, "--max-size", "100MiB") == 1  # within it: read, and no kernel in it
    assert "no GPU kernel in the trace" in capsys.readouterr().err


def test_a_plain_file_over_the_limit_is_refused(tmp_path: Path, capsys):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(_one_kernel()) + " " * 5000)
    assert _import(path, "--max-size", "4096") == 1
    assert capsys.readouterr().err.startswith(
        f"{path}: a file of more than 4 KiB of JSON, the limit"
    )
    assert _import(path, "--max-size", "1000", "--force") == 1
    assert "more than 1,000 bytes of JSON" in capsys.readouterr().err
    assert _import(path, "--max-size", "12 parsec") == 2  # a usage error
    assert "--max-size '12 parsec'" in capsys.readouterr().err


def test_the_default_limit_is_1_gib():
    from roofgen.importers.trace_json import DEFAULT_MAX_SIZE

    assert DEFAULT_MAX_SIZE == 1024**3


@pytest.mark.parametrize(
    ("name", "kept"),
    [
        ("k\x1b[31mred", "k\\x1b[31mred"),  # ESC written as its escape, visible
        ("k\ud800x", "k\ufffdx"),  # a lone surrogate: the replacement character
        ("k\x00\x7f\x9b", "k\\x00\\x7f\\x9b"),
    ],
    ids=["escape", "surrogate", "nul-del-csi"],
)
def test_control_characters_and_surrogates_in_a_name_are_made_safe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, kept: str
):
    trace = _one_kernel(kernel_name=name)
    del trace["traceEvents"][2]["args"]  # launched outside any op: the entry is the kernel
    path = tmp_path / "trace.json"
    path.write_bytes(json.dumps(trace).encode())  # \\ud800 as JSON writes it: an escape
    assert _import(path) == 0, capsys.readouterr().err
    case = _data(Path("case.yaml"))
    assert case["kernels"][0]["name"] == kept
    assert main(["check", "case.yaml"]) == 0


@pytest.mark.timeout(120)
def test_a_5_mb_kernel_name_is_cut_before_anything_else(tmp_path: Path, capsys):
    """A 5 MB name took 68 s before it was refused; now it is cut to 4,096 characters
    (the last one '…') as it is read, and its id comes from the cut name."""
    from roofgen.importers.kernel_names import MAX_NAME

    name = "void gemm_kernel<" + "x" * 5_000_000 + ">(float *, int)"
    trace = _one_kernel(kernel_name=name)
    del trace["traceEvents"][2]["args"]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    assert _import(path, "-q") == 0, capsys.readouterr().err
    kernel = _data(Path("case.yaml"))["kernels"][0]
    assert MAX_NAME == 4096
    assert kernel["name"] == name[:4095] + "\u2026"
    assert kernel["id"] == "gemm_kernel"


def test_a_long_name_gives_an_id_of_at_most_64_characters(tmp_path: Path, capsys):
    """A 100-character name gave a 100-character id, which a spec refuses ('Please report
    this'); a kernel named like a Windows device got an id Windows cannot hold."""
    events = []
    for i, name in enumerate(["k" * 100, "k" * 100 + "(int)", "con"]):
        kernel = _one_kernel(kernel_name=name)["traceEvents"][2]
        del kernel["args"]
        events.append(kernel | {"ts": 3 + 10 * i})
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    assert _import(path, "-q") == 0, capsys.readouterr().err
    ids = [k["id"] for k in _data(Path("case.yaml"))["kernels"]]
    assert sorted(ids) == sorted(["k" * 64, "k" * 62 + "-2", "con-kernel"])


def test_kernels_shorter_than_the_resolution_are_left_out_with_a_note(tmp_path: Path, capsys):
    """Old traces count whole microseconds: a kernel of dur 0 gave a time of '0 ns', which
    a case refuses ('Please report this'). An entry all of whose runs are 0 is left out;
    one with some is written without its minimum."""
    events = []
    for i, (name, dur) in enumerate([("zero", 0), ("zero", 0), ("some", 0), ("some", 4),
                                     ("long", 7)]):  # fmt: skip
        kernel = _one_kernel(kernel_name=name)["traceEvents"][2]
        del kernel["args"]
        events.append(kernel | {"ts": 3 + 10 * i, "dur": dur})
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    assert _import(path) == 0
    err = capsys.readouterr().err
    assert "1 entry whose every run lasted 0 (shorter than the trace's resolution): left out" in err
    case = _data(Path("case.yaml"))
    assert sorted(k["name"] for k in case["kernels"]) == ["long", "some"]
    times = {x["kernel"]: x["measurement"]["time"] for x in case["variants"][0]["launches"]}
    assert times["some"] == {"mean": "2 us", "max": "4 us", "repeats": 2}  # (0 + 4) / 2
    assert times["long"] == "7 us"


def test_a_launch_shape_cuda_cannot_have_is_refused_naming_the_kernel():
    """The shared trace builder checks grids and blocks (nsys reads them) against CUDA's
    limits: a grid of 2**63 - 1 or -5, a block of 0, made cases that did not check."""
    from roofgen.importers import ImportFailure
    from roofgen.importers.trace_case import KernelStat, Steps, Trace, new_case
    from roofgen.machines.lookup import find_machine

    machine, _ = find_machine("a100-40gb-sxm", [])
    for grid, block, said in [
        ((2**63 - 1, 1, 1), (128, 1, 1), "grid [9223372036854775807, 1, 1]: its x size is "
                                         "9223372036854775807, and CUDA's is 1 to 2,147,483,647"),
        ((-5, 1, 1), (128, 1, 1), "grid [-5, 1, 1]: its x size is -5"),
        ((8, 1, 1), (0, 1, 1), "block [0, 1, 1]: its x size is 0, and CUDA's is 1 to 1,024"),
        ((8, 1, 1), (64, 64, 1), "block [64, 64, 1]: 4,096 threads, and CUDA's at most 1,024"),
        ((8, 70000, 1), (32, 1, 1), "grid [8, 70000, 1]: its y size is 70000, and CUDA's is "
                                    "1 to 65,535"),
    ]:  # fmt: skip
        entry = KernelStat("k", "k", 1, 1000, 1000, 1000, grid=grid, block=block)
        trace = Trace("nsys", "Nsight Systems", "nsys", ["t.sqlite"], [entry],
                      Steps("whole", 1, 2000, 1000), "m")  # fmt: skip
        with pytest.raises(ImportFailure) as caught:
            new_case(trace, machine, None, "c", None, "baseline")
        assert caught.value.messages[0].startswith(f"t.sqlite: kernel 'k': {said}")
