"""Fuzzing `roofgen check` with Hypothesis: random text and bytes, random YAML
structures, and random mutations of the example specs.

Whatever the input, ``main(["check", ...])`` returns 0 (valid) or 1 (invalid), never
4 (internal error), never raises, and prints each problem located as
``FILE:LINE:COL: ...`` or ``FILE: ...``. With ``CI=true`` the "ci" profile
(tests/conftest.py) bounds and derandomises the examples, so a CI run is repeatable.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from roofgen.cli import main

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "specs"
EXAMPLE_FILES = sorted(p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("*.yaml"))

LOCATED = re.compile(r"^[^:\s][^:]*(:\d+:\d+)?: \S.*$")
SUMMARY = re.compile(r"^\d+ file\(s\) checked: \d+ error\(s\), \d+ warning\(s\), \d+ note\(s\)$")
CRASH = re.compile(r"details in (\S+)$", re.M)

# The number of examples comes from the Hypothesis profile (tests/conftest.py).
FUZZ = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@contextmanager
def _folder(tmp: Path) -> Iterator[Path]:
    """An empty specs folder under ``tmp`` for one example, removed afterwards."""
    folder = tmp / "specs"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def assert_checked_cleanly(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> int:
    monkeypatch.chdir(folder.parent)
    monkeypatch.setenv("NO_COLOR", "1")
    capsys.readouterr()
    status = main(["check", folder.name])
    out, err = capsys.readouterr()
    crash = CRASH.search(err)
    if crash:
        details = Path(crash.group(1)).read_text(encoding="utf-8")
        raise AssertionError(f"internal error (status {status}):\n{details}")
    assert status in (0, 1), err
    assert out == ""
    lines = err.splitlines()
    assert lines and SUMMARY.match(lines[-1]), err
    for line in lines[:-1]:
        assert LOCATED.match(line), line
    if status == 1:
        assert len(lines) > 1, "failed without saying why"
    return status


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


# --------------------------------------------------------------------------- random input


@FUZZ
@given(text=st.text(max_size=400))
def test_random_text(text: str, scratch: Path, monkeypatch, capsys) -> None:
    with _folder(scratch) as folder:
        (folder / "spec.yaml").write_text(text, encoding="utf-8", newline="")
        assert_checked_cleanly(folder, monkeypatch, capsys)


@FUZZ
@given(data=st.binary(max_size=400))
def test_random_bytes(data: bytes, scratch: Path, monkeypatch, capsys) -> None:
    with _folder(scratch) as folder:
        (folder / "spec.yaml").write_bytes(data)
        assert_checked_cleanly(folder, monkeypatch, capsys)


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["1.5 TB/s", "312 TFLOP/s", "1 ms", "fp16", "hbm", "tensor", "seed"])
)
_KEYS = st.sampled_from(
    ["id", "name", "kind", "compute", "memory", "peaks", "bandwidth", "time", "median",
     "kernels", "variants", "launches", "measurement", "flops", "bytes", "machines", "<<"]
) | st.text(max_size=8)  # fmt: skip
_TREES = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_KEYS, children, max_size=4),
    max_leaves=25,
)


@FUZZ
@given(
    kind=st.sampled_from(["machine", "case", None]),
    tree=st.dictionaries(_KEYS, _TREES, max_size=6),
    flow=st.booleans(),
)
def test_random_yaml_structures(kind, tree, flow, scratch: Path, monkeypatch, capsys) -> None:
    document = {"roofgen": 1, "kind": kind, **tree} if kind else tree
    text = yaml.safe_dump(document, default_flow_style=flow, allow_unicode=True)
    with _folder(scratch) as folder:
        (folder / "spec.yaml").write_text(text, encoding="utf-8")
        assert_checked_cleanly(folder, monkeypatch, capsys)


# --------------------------------------------------------------------------- mutations

_INSERTS = [":", "[", "]", "{", "}", "&a ", "*a", "\t", "- ", "<<: *a\n", "\n  ", "'", '"', "#",
            "!!", "? ", ",", "|", ">", "\x00", "\ufeff", "1e309", "-"]  # fmt: skip


@st.composite
def mutated_example(draw: st.DrawFn) -> tuple[str, bytes]:
    """An example spec file with a few byte flips, insertions, deletions or a cut."""
    name = draw(st.sampled_from(EXAMPLE_FILES))
    data = bytearray((EXAMPLES / name).read_bytes())
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        how = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "duplicate"]))
        if how == "flip" and at < len(data):
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif how == "insert":
            data[at:at] = draw(st.sampled_from(_INSERTS)).encode()
        elif how == "delete":
            del data[at : at + draw(st.integers(1, 40))]
        elif how == "truncate":
            del data[at:]
        else:  # a line repeated: duplicate keys, list items
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            line = data[start : end + 1 if end >= 0 else len(data)]
            data[start:start] = line
    return name, bytes(data)


@FUZZ
@given(mutation=mutated_example())
def test_mutated_example_specs(mutation, scratch: Path, monkeypatch, capsys) -> None:
    name, data = mutation
    assume(data != (EXAMPLES / name).read_bytes())
    with _folder(scratch) as folder:
        shutil.copytree(EXAMPLES / "machines", folder / "machines")
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        assert_checked_cleanly(folder, monkeypatch, capsys)


def test_the_unmutated_examples_are_valid(scratch: Path, monkeypatch, capsys) -> None:
    with _folder(scratch) as folder:
        shutil.copytree(EXAMPLES, folder, dirs_exist_ok=True)
        assert assert_checked_cleanly(folder, monkeypatch, capsys) == 0


# --------------------------------------------------------------------------- fast path


def _paths(value: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            out += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            out += _paths(child, (*prefix, i))
    return out


@pytest.fixture(scope="module")
def example_documents() -> list[tuple[str, object]]:
    from roofgen.spec.yamlload import load_file

    docs = []
    for name in EXAMPLE_FILES:
        doc, problems = load_file(EXAMPLES / name)
        assert doc is not None, problems
        docs.append((doc.data["kind"], doc.data))
    return docs


@FUZZ
@given(data=st.data())
def test_the_fast_path_never_accepts_what_jsonschema_rejects(data, example_documents) -> None:
    """One value anywhere in an example spec replaced by a random value: the compiled
    fast path may reject a valid document (it is only a shortcut) but never accepts
    an invalid one, and never raises."""
    import copy
    import math

    from roofgen.spec import fastpath
    from roofgen.spec.schema import validator

    kind, original = data.draw(st.sampled_from(example_documents))
    document = copy.deepcopy(original)
    path = data.draw(st.sampled_from(_paths(document)[1:]))
    replacement = data.draw(_TREES | st.sampled_from(["-1 ms", "0 TB/s", "1e999 B", "", "x"]))
    assume(not any(isinstance(v, float) and not math.isfinite(v) for v in _leaves(replacement)))
    parent = document
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = replacement
    fast = fastpath.is_valid(document, kind)
    full = not any(True for _ in validator(kind).iter_errors(document))
    assert full or not fast, f"fast path accepts an invalid document at {path}"


def _leaves(value: object) -> list[object]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value]
