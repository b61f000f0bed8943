"""The per-file document cache: after a change to one file only that file is parsed
and validated again, and the result is the same as without any cache."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import roofgen.spec.load as spec_load
import roofgen.spec.quantity as quantity
from roofgen.api import analysis_document, check

SEVERAL = Path(__file__).parent / "cases" / "valid" / "several-machines"


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    shutil.copytree(SEVERAL, tmp_path / "specs")
    return tmp_path / "specs"


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the files the loader parses."""
    names: list[str] = []
    real = spec_load.load_file

    def counting(path: Path, display: str | None = None):
        names.append(Path(path).name)
        return real(path, display)

    monkeypatch.setattr(spec_load, "load_file", counting)
    return names


def _entries(cache: Path) -> list[str]:
    return sorted(p.name for p in (cache / "documents").glob("doc-*.json"))


def test_only_the_changed_file_is_parsed_again(specs, tmp_path, parsed) -> None:
    cache = tmp_path / "cache"
    first = check([specs], cache_dir=cache)
    assert not first.failed()
    assert sorted(parsed) == sorted(p.name for p in specs.iterdir())
    entries = _entries(cache)
    assert len(entries) == len(parsed)

    case = specs / "case.yaml"
    case.write_text(case.read_text(encoding="utf-8").replace("0.52 ms", "0.521 ms"), "utf-8")
    parsed.clear()
    second = check([specs], cache_dir=cache)
    assert parsed == ["case.yaml"]
    assert second.problems == check([specs]).problems  # the same as with no cache
    assert second.specs == check([specs]).specs
    assert second.analysis is not None and second.analysis == check([specs]).analysis
    after = _entries(cache)
    assert len(after) == len(entries) and after != entries  # the old entry was pruned


def test_a_file_made_invalid_is_reported_not_served_from_the_cache(specs, tmp_path) -> None:
    cache = tmp_path / "cache"
    assert not check([specs], cache_dir=cache).failed()
    (specs / "h100.yaml").write_text("roofgen: 1\nkind: machine\nid: h100\n", "utf-8")
    result = check([specs], cache_dir=cache)
    assert result.failed()
    assert [p.format() for p in result.problems] == [p.format() for p in check([specs]).problems]


def test_damaged_entries_are_ignored(specs, tmp_path, parsed) -> None:
    cache = tmp_path / "cache"
    check([specs], cache_dir=cache)
    for entry in (cache / "documents").iterdir():
        entry.write_bytes(b"not JSON")
    parsed.clear()
    result = check([specs], cache_dir=cache)
    assert not result.failed()
    assert sorted(parsed) == sorted(p.name for p in specs.iterdir())


def test_file_names_in_messages_follow_the_display_root(specs, tmp_path) -> None:
    cache = tmp_path / "cache"
    check([specs], cache_dir=cache, display_root=tmp_path)
    (specs / "a100.yaml").write_text("roofgen: 1\nkind: machine\nid: a100\n", "utf-8")
    shown = check([specs], cache_dir=cache, display_root=tmp_path)
    assert {p.file for p in shown.problems} == {"specs/a100.yaml"}
    other = check([specs], cache_dir=cache, display_root=specs)
    assert {p.file for p in other.problems} == {"a100.yaml"}


def test_a_check_with_the_unit_table_never_imports_pint(specs, tmp_path) -> None:
    """Units parsed once are kept in the cache's unit table: a later process checking
    files that use only those units does not import pint, with the same results."""
    cache = tmp_path / "cache"
    # The first check runs in a process of its own too: this process's unit table is
    # bounded (4,096 texts) and, late in a test run, full of other tests' units.
    first = subprocess.run(
        [sys.executable, "-c", "import sys; from pathlib import Path; from roofgen.api import "
         f"check; sys.exit(check([Path({str(specs)!r})], cache_dir=Path({str(cache)!r}))"
         ".failed())"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    (table,) = cache.glob("units-*.json")
    assert "/s" in table.read_text(encoding="utf-8")  # bandwidths and rates
    touched = sorted(specs.rglob("*.yaml"))[-1]
    touched.write_text(touched.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    script = (
        "import sys, json; from pathlib import Path; from roofgen.api import check, "
        "analysis_document\n"
        f"r = check([Path({str(specs)!r})], cache_dir=Path({str(cache)!r}))\n"
        "print(json.dumps({'pint': 'pint' in sys.modules, 'failed': r.failed(), "
        "'analysis': analysis_document(r)}, sort_keys=True))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    reply = json.loads(done.stdout)
    assert reply["pint"] is False
    assert reply["failed"] is False
    without_cache = json.loads(json.dumps(analysis_document(check([specs])), sort_keys=True))
    assert reply["analysis"] == without_cache


def test_a_damaged_unit_table_is_ignored(specs, tmp_path) -> None:
    cache = tmp_path / "cache"
    expected = analysis_document(check([specs]))
    check([specs], cache_dir=cache)
    (table,) = cache.glob("units-*.json")
    table.write_text('{"GB/s": ["not a number", [["x", "y"]]], "TB/s": 7}', encoding="utf-8")
    quantity._TABLE.clear()
    result = check([specs], cache_dir=cache)
    assert not result.failed()
    assert analysis_document(result) == expected


ROOT = Path(__file__).resolve().parent.parent
KINDS = ("machine", "case")


def _exact(value: object) -> object:
    """``value`` with every scalar's type beside it: 1, 1.0 and True differ."""
    if isinstance(value, dict):
        return [(k, _exact(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_exact(v) for v in value]
    return (type(value).__name__, repr(value))


def _round_trip(tmp_path: Path, source: Path, doc, kind: str):
    from roofgen.spec.file_cache import DocumentCache

    cache = DocumentCache(tmp_path)
    assert cache.get(source, doc.file) is None  # a miss, which keys the path
    cache.put(source, doc, kind)
    return DocumentCache(tmp_path).get(source, doc.file)


def _spec_files() -> list[Path]:
    folders = [ROOT / "specs", ROOT / "tests" / "cases" / "valid"]
    return sorted(p for folder in folders for p in folder.rglob("*.yaml"))


@pytest.mark.parametrize("source", _spec_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_example_spec_round_trips_exactly(tmp_path, source) -> None:
    from roofgen.spec.yamlload import load_file

    doc, _ = load_file(source, source.name)
    if doc is None or not isinstance(doc.data, dict) or doc.data.get("kind") not in KINDS:
        pytest.skip("not a spec document")
    back = _round_trip(tmp_path, source, doc, doc.data["kind"])
    assert back is not None
    got, kind = back
    assert kind == doc.data["kind"]
    assert _exact(got.data) == _exact(doc.data)
    assert list(got.positions.items()) == list(doc.positions.items())
    assert list(got.key_positions.items()) == list(doc.key_positions.items())
    assert (got.file, got.numbers_in_range) == (doc.file, doc.numbers_in_range)


def test_values_json_could_blur_round_trip_exactly(tmp_path) -> None:
    """Integers stay integers, floats floats (negative zero, the largest, NaN and the
    infinities included), booleans booleans; path keys keep ints and strs apart."""
    import math

    from roofgen.spec.yamlload import Document

    data = {"kind": "case", "ints": [0, -3, 10**300], "floats": [1.0, -0.0, 1.7976931348623157e308,
            5e-324, math.inf, -math.inf], "flags": [True, False, None], "text": "Grüße \u00a0 \\n",
            "1": {"0": [["nested"]]}}  # fmt: skip
    doc = Document("case.yaml", data, {(): (1, 1), ("ints", 2): (3, 4), ("1", "0", 0, 0): (5, 6)},
                   {("1",): (7, 8)}, numbers_in_range=False)  # fmt: skip
    source = tmp_path / "case.yaml"
    source.write_text("anything\n")
    back = _round_trip(tmp_path, source, doc, "case")
    assert back is not None
    got = back[0]
    assert _exact(got.data) == _exact(data)
    assert math.copysign(1.0, got.data["floats"][1]) == -1.0
    assert list(got.positions) == [(), ("ints", 2), ("1", "0", 0, 0)]
    assert got.key_positions == {("1",): (7, 8)} and got.numbers_in_range is False


def _columns(paths: list, lines: list, columns: list) -> dict:
    return {"paths": paths, "lines": lines, "columns": columns}


# A well-formed entry (of a document that is not the file's), and ways to spoil it.
_WELL_FORMED = {
    "roofgen_document": 1, "kind": "case", "numbers_in_range": True, "data": {"kind": "case"},
    "positions": _columns([[]], [1], [1]), "key_positions": _columns([], [], []),
}  # fmt: skip
_SPOILT = {
    "format-true": {"roofgen_document": True},
    "format-2": {"roofgen_document": 2},
    "kind-mismatch": {"data": {"kind": "machine"}},
    "unknown-kind": {"kind": "rules", "data": {"kind": "rules"}},
    "data-a-list": {"data": ["kind", "case"]},
    "in-range-not-bool": {"numbers_in_range": 1},
    "rows-not-columns": {"positions": [[[], 1, 1]]},
    "bool-in-path": {"positions": _columns([[], [True]], [1, 1], [1, 1])},
    "float-in-path": {"positions": _columns([[], [0.0]], [1, 1], [1, 1])},
    "path-not-a-list": {"positions": _columns([[], "kind"], [1, 1], [1, 1])},
    "line-zero": {"positions": _columns([[]], [0], [1])},
    "line-bool": {"positions": _columns([[]], [True], [1])},
    "column-float": {"positions": _columns([[]], [1], [1.0])},
    "columns-of-other-lengths": {"positions": _columns([[], ["kind"]], [1, 2], [1])},
    "no-root-position": {"positions": _columns([["kind"]], [1], [1])},
    "extra-column": {"key_positions": {**_columns([], [], []), "files": []}},
    "extra-field": {"problems": []},
}
_DAMAGED = {
    "empty": b"",
    "truncated": json.dumps(_WELL_FORMED).encode()[:40],
    "a-pickle": b"\x80\x05\x95garbage",
    "a-list": b"[]",
    "null": b"null",
    "no-fields": b'{"roofgen_document": 1}',
    **{name: json.dumps({**_WELL_FORMED, **change}).encode() for name, change in _SPOILT.items()},
}


def test_the_well_formed_entry_is_taken() -> None:
    from roofgen.spec.file_cache import _document

    taken = _document(_WELL_FORMED, "case.yaml")
    assert taken is not None and taken[0].positions == {(): (1, 1)}


@pytest.mark.parametrize("entry", list(_DAMAGED.values()), ids=list(_DAMAGED))
def test_entries_of_any_other_shape_are_ignored_and_rewritten(specs, tmp_path, parsed, entry):
    cache = tmp_path / "cache"
    expected = analysis_document(check([specs]))
    check([specs], cache_dir=cache)
    names = _entries(cache)
    for path in (cache / "documents").iterdir():
        path.write_bytes(entry)
    parsed.clear()
    result = check([specs], cache_dir=cache)
    assert sorted(parsed) == sorted(p.name for p in specs.iterdir())  # every file a miss
    assert analysis_document(result) == expected
    assert _entries(cache) == names
    for path in (cache / "documents").iterdir():
        assert json.loads(path.read_bytes())["roofgen_document"] == 1  # written again


def test_a_cached_document_holds_one_string_per_distinct_key(tmp_path) -> None:
    """JSON makes a new string for every occurrence of a key in the positions' paths;
    the cache keeps one per distinct key, or the positions of 1,000 cases cost some
    180 MB more than a parse's."""
    from roofgen.spec.yamlload import load_file

    source = ROOT / "specs" / "cases" / "gemm-large.yaml"
    doc, _ = load_file(source, source.name)
    assert doc is not None
    back = _round_trip(tmp_path, source, doc, doc.data["kind"])
    assert back is not None
    for table in (back[0].positions, back[0].key_positions):
        keys = [k for path in table for k in path if isinstance(k, str)]
        by_text = {}
        for k in keys:
            by_text.setdefault(k, set()).add(id(k))
        assert len(keys) > len(by_text)  # keys do repeat across paths
        assert all(len(ids) == 1 for ids in by_text.values())
