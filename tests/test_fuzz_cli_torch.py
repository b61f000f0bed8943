"""Fuzzing `roofgen import torch-trace` in a child process under CPU-time and memory
limits (the runner and the oracle: tests/fuzzcli.py), and the real traces it reads.

Inputs are real torch.profiler traces: the two of tests/data/torch and, where the folder
is there, the smaller ones of ../shared/fixtures/real/torch (third-party files kept
beside the project, not in it: see their README). Each example mutates one: its JSON
text with bytes flipped, cut, repeated or re-encoded and JSON's odd tokens inserted
(``NaN``, ``Infinity``, ``1e999999999``, ``\\ud800``); or one field of one event
replaced by a hostile value (null, a boolean, a 5,000-digit integer, a 200,000-character
string, a nest 100,000 deep, a huge or negative number); or the gzip file made a small
decompression bomb, cut short or bit-flipped. Whatever the input, the command exits 0
or 1, prints no traceback, stays inside the limits (2 GiB of address space, 60 s of
CPU), and a failure names the trace.

The real traces are also imported unmutated, each on its device: every one makes a
case that checks (the two V100 traces of old Kineto, with kernels of 0 us, made cases
that did not). Where ../shared/fixtures/real is absent those tests are skipped, and
fail under ``CI=true``.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from browser import in_ci
from fuzzcli import (
    DATA,
    FUZZ_TIMEOUT_S,
    RAW,
    RAW_VALUES,
    REPO,
    Blob,
    assert_handled,
    fuzz_settings,
    hostile_value,
    mutated_bytes,
    replace_at,
    run_roofgen,
    tree_paths,
    workdir,
)
from hypothesis import assume, given
from hypothesis import strategies as st

from roofgen.cli import main

# A child process per example, and real traces of 20 s each: out of the quick loop.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(FUZZ_TIMEOUT_S)]

REAL = REPO.parent / "shared" / "fixtures" / "real" / "torch"
OURS = sorted((DATA / "torch").glob("*.json.gz"))
# Real traces small enough to read in a second or two (the ResNet-50 ones take 20 s).
SMALL_REAL = ["03_tracelens_b200_eager_trace.json.gz",
              "05_tracelens_mi300_normalization_layer_test.json.gz"]  # fmt: skip
# Each real trace and the device its kernels ran on.
DEVICES = {
    "01_kineto_resnet50_w0.pt.trace.json.gz": "0",
    "02_kineto_resnet50_autograd_w0.pt.trace.json.gz": "0",
    "03_tracelens_b200_eager_trace.json.gz": "0",
    "04_tracelens_mi300_resnet_act_checkpoint.json.gz": "2",
    "05_tracelens_mi300_normalization_layer_test.json.gz": "2",
}
JSON_TOKENS = ["{", "}", "[", "]", ",", ":", '"', "null", "NaN", "Infinity", "-Infinity",
               "\\u0000", "\\ud800", "\\u001b", '"\\', "\x00", "\ufeff", "1e999999999",
               "9" * 5000, "-1", "true", "[" * 5000]  # fmt: skip
EVENT_FIELDS = ["ts", "dur", "name", "cat", "ph", "pid", "tid", "args", "id"]
ARG_FIELDS = ["Input Dims", "Input type", "correlation", "External id", "grid", "block"]
STRANGE = [-1, -5, 0, 2**63 - 1, 2**64, 10**30, True, False, [True, 4], [[10**30, 4], [4, 5]],
           [[-3, 4], [4, 5]], [[2**30, 2**30, 4], [4, 5]], "k\x1b[31m", "k\ud800",
           "x" * 200_000]  # fmt: skip


def _needs_real() -> None:
    if not REAL.is_dir():
        message = f"{REAL} is absent: the real third-party traces live beside the project"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)


def _inputs() -> list[Path]:
    return OURS + [REAL / name for name in SMALL_REAL if (REAL / name).is_file()]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-torch")


_TREES: dict[Path, Any] = {}


def _tree(path: Path) -> Any:
    if path not in _TREES:
        _TREES[path] = json.loads(gzip.decompress(path.read_bytes()))
    return json.loads(json.dumps(_TREES[path]))  # a fresh copy to change


@st.composite
def event_changed(draw: st.DrawFn, path: Path) -> bytes:
    """The trace with one field of one event (or of its args) replaced."""
    tree = _tree(path)
    events = tree["traceEvents"]
    event = events[draw(st.integers(0, len(events) - 1))]
    if draw(st.booleans()) and isinstance(event.get("args"), dict):
        event = event["args"]
        key = draw(st.sampled_from([*ARG_FIELDS, *event]))
    else:
        key = draw(st.sampled_from([*EVENT_FIELDS, *event]))
    inner = draw(st.sampled_from(tree_paths(event.get(key))[:50] or [()]))
    value = draw(hostile_value() | st.sampled_from(STRANGE))
    if inner:
        try:
            replace_at(event[key], inner, value)
        except (KeyError, IndexError, TypeError):
            event[key] = value
    else:
        event[key] = value
    text = json.dumps(tree, ensure_ascii=draw(st.booleans()))
    raw = draw(st.sampled_from([*RAW_VALUES, "NaN", "-Infinity", "1e-320"]))
    return text.replace(json.dumps(RAW), raw).encode("utf-8", "surrogatepass")


@st.composite
def torch_trace(draw: st.DrawFn) -> tuple[str, bytes, list[str]]:
    """(the file's name, its bytes, extra options)."""
    source = draw(st.sampled_from(_inputs()))
    how = draw(st.sampled_from(["bytes", "event", "event", "bomb", "gzip"]))
    options: list[str] = []
    if how == "bomb":  # 16 to 64 MiB of spaces in some 16 to 64 KB, a limit below or above
        inflated = draw(st.sampled_from([16, 64])) << 20
        options = ["--max-size", draw(st.sampled_from(["8MiB", "200MiB"]))]
        body = b'{"traceEvents": [' + b" " * inflated + b"]}"
        return "trace.json.gz", Blob(gzip.compress(body, 9, mtime=0)), options
    original = gzip.decompress(source.read_bytes())
    if how == "gzip":  # the compressed bytes cut or flipped
        data = bytearray(source.read_bytes())
        at = draw(st.integers(0, len(data) - 1))
        if draw(st.booleans()):
            del data[at:]
        else:
            data[at] ^= 1 << draw(st.integers(0, 7))
        return "trace.json.gz", Blob(bytes(data)), options
    if how == "bytes":
        data = bytes(draw(mutated_bytes(original, JSON_TOKENS)))
    else:
        data = draw(event_changed(source))
    assume(data != original)
    if draw(st.booleans()):
        return "trace.json.gz", Blob(gzip.compress(data, 1, mtime=0)), options
    return "trace.json", Blob(data), options


@fuzz_settings(ci=25)
@given(case=torch_trace(), device=st.sampled_from([[], ["--device", "0"], ["--device", "2"]]))
def test_import_torch_trace(
    case: tuple[str, bytes, list[str]], device: list[str], scratch: Path
) -> None:
    name, data, options = case
    with workdir(scratch) as cwd:
        (cwd / name).write_bytes(data)
        args = ["import", "torch-trace", name, "--machine", "a100-40gb-sxm", "-o", "out.yaml",
                *device, *options]  # fmt: skip
        outcome = run_roofgen(args, cwd)
        assert_handled(outcome, [name, "out.yaml"])


@pytest.mark.parametrize("name", sorted(DEVICES))
def test_every_real_trace_makes_a_case_that_checks(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    _needs_real()
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(REAL / name, tmp_path / name)
    args = ["import", "torch-trace", name, "--machine", "a100-40gb-sxm", "-o", "case.yaml", "-q"]
    assert main([*args, "--device", DEVICES[name]]) == 0, capsys.readouterr().err
    assert main(["check", "-q", "case.yaml"]) == 0, capsys.readouterr().err
