"""Fuzzing `roofgen import ncu`, `roofgen import ert` and `roofgen import ncu --into`
in a child process under CPU-time and memory limits (the runner and the oracle:
tests/fuzzcli.py).

Inputs are the real tool output of tests/data (two Nsight Compute CSV exports, an
ERT roofline.json) and a valid case file for ``--into``, with bytes flipped, cut,
repeated, re-encoded (BOMs, UTF-16, Latin-1, NUL), their line endings changed,
numbers made huge or not numbers, names made huge, deep nesting inserted; a CSV
cell or a JSON value anywhere replaced by a hostile one; and for ``--into``, the
target replaced by a folder, a link, an empty file or a device.

Whatever the input, the command exits 0 or 1, prints no traceback, stays inside
the limits, and a failure names the file it is about. With ``CI=true`` the examples
are few and always the same; locally they are three times as many and new on each
run. A long run: ``HYPOTHESIS_PROFILE=fuzz`` (fifty times the CI count) or
``ROOFGEN_FUZZ_EXAMPLES=500`` (500 examples a test), e.g.

    ROOFGEN_FUZZ_EXAMPLES=500 .venv/bin/python -m pytest tests/test_fuzz_cli_import.py
"""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from fuzzcli import (
    DATA,
    FUZZ_TIMEOUT_S,
    HOSTILE_NUMBERS,
    HOSTILE_WORDS,
    ODD_FILES,
    RAW,
    RAW_VALUES,
    VALID,
    Blob,
    assert_handled,
    fuzz_settings,
    hostile_value,
    make_odd_file,
    mutated_bytes,
    reencoded,
    replace_at,
    run_roofgen,
    tree_paths,
    workdir,
)
from hypothesis import assume, given
from hypothesis import strategies as st

# Each test runs a child process per example: seconds to minutes, so out of the quick loop.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(FUZZ_TIMEOUT_S)]

NCU = sorted((DATA / "ncu").glob("*.csv"))
ERT = DATA / "ert" / "01_roofline.json"
CASE = VALID / "a100-kernels" / "vector-add.yaml"

CSV_TOKENS = ['"', ",", '""', "\n", "\r", '"\n"', "==ERROR== boom\n", "==PROF== x\n",
              '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n', "\x00",
              "\ufeff", "\t", ";", "(", ")", "<", ">", "::", "Kbyte", "usecond", "cycle/nsecond",
              "%", "n/a"]  # fmt: skip
JSON_TOKENS = ["{", "}", "[", "]", ",", ":", '"', "null", "NaN", "Infinity", "-Infinity",
               "\\u0000", "\\ud800", '"\\', "\x00", "\ufeff", "1e999999999", "//",
               "true"]  # fmt: skip
YAML_TOKENS = [":", "[", "]", "{", "}", "&a ", "*a", "\t", "- ", "<<: *a\n", "\n  ", "'", '"',
               "#", "!custom ", "? ", ",", "|", ">", "\x00", "\ufeff", "---\n", "~",
               "variants:\n", "  - id: profiled\n", "kernels: []\n"]  # fmt: skip
CELL_VALUES = [*HOSTILE_NUMBERS, *HOSTILE_WORDS, "5,323,503,232.00", "(0, 0, 0)", "(-1, 1, 1)",
               "(4294967296, 1, 1)", "(1, 1)", "99.0", "8.0", "byte", "Tbyte", "msecond",
               "cycle/usecond", "inst", "dram__bytes.sum", "gpu__time_duration.sum",
               "smsp__cycles_elapsed.avg.per_second"]  # fmt: skip

# Failures about a profile or an ERT file as a whole, which name no line of it.
WHOLE_INPUT = (
    "the profile lacks metrics a roofline needs for ",
    "no kernel launches to import ",
    "the ERT file does not say whether it ran on a GPU",
    "ERT precision ",
    "the ERT result ",
)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-import")


# --------------------------------------------------------------------------- import ncu


@st.composite
def mutated_cells(draw: st.DrawFn, data: bytes) -> bytes:
    """An ncu CSV with one to three cells replaced by hostile values, a row repeated
    with one value changed (a metric reported twice), or a column dropped; written
    back quoted, as ncu writes, with the file's own line endings."""
    text = data.decode("utf-8")
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.replace("\r\n", "\n").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.reader(lines[start:]))
    rows = [r for r in rows if r]
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["cell", "row", "column"]))
        r = draw(st.integers(0, len(rows) - 1))
        c = draw(st.integers(0, len(rows[0]) - 1))
        if how == "cell" and c < len(rows[r]):
            rows[r][c] = draw(st.sampled_from(CELL_VALUES))
        elif how == "row" and r > 0:
            copy = list(rows[r])
            copy[-1] = draw(st.sampled_from(CELL_VALUES))
            rows.insert(r + 1, copy)
        elif how == "column":
            for row in rows:
                del row[c : c + 1]
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator=newline).writerows(rows)
    head = newline.join(lines[:start]) + (newline if start else "")
    return reencoded(draw, (head + out.getvalue()).encode("utf-8", "surrogatepass"))


@st.composite
def ncu_import(draw: st.DrawFn) -> tuple[bytes, list[str]]:
    """(a mutated ncu CSV, the options after ``--machine``)."""
    original = draw(st.sampled_from(NCU)).read_bytes()
    if draw(st.booleans()):
        data = draw(mutated_bytes(original, CSV_TOKENS))
    else:
        data = draw(mutated_cells(original))
    assume(data != original)
    machine = draw(st.sampled_from(["a100-40gb-sxm", "h100-sxm"]))
    options = [machine, "-o", draw(st.sampled_from(["out.yaml", "-"]))]
    if draw(st.booleans()):
        options.append("--partial")
    return data, options


@fuzz_settings(ci=30)
@given(case=ncu_import())
def test_import_ncu(case: tuple[bytes, list[str]], scratch: Path) -> None:
    data, options = case
    with workdir(scratch) as cwd:
        (cwd / "profile.csv").write_bytes(data)
        outcome = run_roofgen(["import", "ncu", "profile.csv", "--machine", *options], cwd)
        assert_handled(outcome, ["profile.csv", "out.yaml"], whole_input=WHOLE_INPUT)


# --------------------------------------------------------------------------- import ert


def dump_json(tree: Any, raw: str) -> Blob:
    text = json.dumps(tree, indent=3, ensure_ascii=False)  # ERT's own layout indents by 3
    return Blob(text.replace(json.dumps(RAW), raw).encode("utf-8", "surrogatepass"))


@st.composite
def ert_file(draw: st.DrawFn) -> bytes:
    original = ERT.read_bytes()
    if draw(st.booleans()):
        data = draw(mutated_bytes(original, JSON_TOKENS))
    else:
        tree = json.loads(original)
        path = draw(st.sampled_from(tree_paths(tree)))
        tree = replace_at(tree, path, draw(hostile_value()))
        raw = draw(st.sampled_from([*RAW_VALUES, "NaN", "-Infinity", "1e-320", "[" * 10_000]))
        data = dump_json(tree, raw)
    assume(data != original)
    return data


ERT_OPTIONS = st.fixed_dictionaries({
    "--name": st.sampled_from(["NVIDIA Tesla P100", "\U0001f680 GPU", "a\nb", "x" * 1000, "''"]),
    "--sm-clock": st.sampled_from(["1329 MHz", "1.3 GHz", "1329 MHz", "1e300 MHz", "1e-320 MHz",
                                  "0 MHz"]),
    "where": st.sampled_from([[], ["--gpu"], ["--cpu"]]),
    "precision": st.sampled_from([[], ["--precision", "FP32"], ["--precision", "fp16"]]),
})  # fmt: skip


@fuzz_settings(ci=30)
@given(data=ert_file(), options=ERT_OPTIONS)
def test_import_ert(data: bytes, options: dict[str, Any], scratch: Path) -> None:
    with workdir(scratch) as cwd:
        (cwd / "roofline.json").write_bytes(data)
        args = ["import", "ert", "roofline.json", "-o", "machine.yaml", "--id", "p100",
                "--name", options["--name"], "--sm-clock", options["--sm-clock"],
                *options["where"], *options["precision"]]  # fmt: skip
        outcome = run_roofgen(args, cwd)
        # --sm-clock '0 MHz' is a usage error (2), about the option.
        assert_handled(outcome, ["roofline.json", "machine.yaml"], statuses=(0, 1, 2),
                       whole_input=(*WHOLE_INPUT, "--sm-clock "))  # fmt: skip


# --------------------------------------------------------------------------- import --into

ODD_TARGETS = [*ODD_FILES, "empty", "link-to-case"]


@st.composite
def into_target(draw: st.DrawFn) -> tuple[str, bytes]:
    """(what the --into target is, the case file's bytes)."""
    import yaml

    original = CASE.read_bytes()
    kind = draw(st.sampled_from(["bytes", "tree", "bytes", "tree", *ODD_TARGETS]))
    if kind == "bytes":
        return "file", draw(mutated_bytes(original, YAML_TOKENS))
    if kind == "tree":
        tree = yaml.safe_load(original)
        path = draw(st.sampled_from(tree_paths(tree)))
        tree = replace_at(tree, path, draw(hostile_value()))
        text = yaml.safe_dump(tree, allow_unicode=True, default_flow_style=draw(st.booleans()))
        raw = draw(st.sampled_from(RAW_VALUES))
        return "file", Blob(text.replace(RAW, raw).encode("utf-8", "surrogatepass"))
    return kind, Blob(original)


def make_target(cwd: Path, kind: str, data: bytes) -> None:
    target = cwd / "case.yaml"
    if kind == "file":
        target.write_bytes(data)
    elif kind == "empty":
        target.write_bytes(b"")
    elif kind == "link-to-case":
        (cwd / "real.yaml").write_bytes(data)
        target.symlink_to("real.yaml")
    else:
        make_odd_file(target, kind)


@fuzz_settings(ci=25)
@given(
    target=into_target(),
    machine=st.sampled_from(["a100-40gb-sxm", "a100-80gb-sxm"]),
    variant=st.sampled_from(["profiled", "baseline"]),
)
def test_import_into(target: tuple[str, bytes], machine: str, variant: str, scratch: Path) -> None:
    kind, data = target
    with workdir(scratch) as cwd:
        shutil.copyfile(NCU[0], cwd / "profile.csv")
        make_target(cwd, kind, data)
        args = ["import", "ncu", "profile.csv", "--machine", machine, "--into", "case.yaml",
                "--variant", variant, "--kernel-map", "gemm_v1=add", "--only-mapped"]  # fmt: skip
        outcome = run_roofgen(args, cwd)
        assert_handled(outcome, ["case.yaml", "profile.csv"], whole_input=WHOLE_INPUT)


def test_the_unmutated_inputs_import(scratch: Path) -> None:
    """The inputs the mutations start from import cleanly (a check on the fuzzers)."""
    assert math.isfinite(json.loads(ERT.read_bytes())["empirical"]["gflops"]["data"][0][1])
    with workdir(scratch) as cwd:
        shutil.copyfile(NCU[0], cwd / "profile.csv")
        shutil.copyfile(CASE, cwd / "case.yaml")
        shutil.copyfile(ERT, cwd / "roofline.json")
        outcome = run_roofgen(["import", "ncu", "profile.csv", "--machine", "a100-40gb-sxm",
                               "--into", "case.yaml", "--variant", "profiled", "--kernel-map",
                               "gemm_v1=add", "--only-mapped"], cwd)  # fmt: skip
        assert outcome.status == 0, outcome.describe()
        outcome = run_roofgen(["import", "ert", "roofline.json", "-o", "m.yaml", "--id", "p100",
                               "--name", "P100", "--sm-clock", "1329 MHz"], cwd)  # fmt: skip
        assert outcome.status == 0, outcome.describe()
