"""`roofgen check` takes what the checks across files need of an unchanged case file
from its index (roofgen.spec.check_index): the file is neither read from the document
cache nor checked against its machines again, and every check across files still
holds: the problems of a warm check are those of a cold one, at the same file, line
and column."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import roofgen.spec.check_index as check_index
import roofgen.spec.file_cache as file_cache
from roofgen.api import check
from roofgen.problems import Problem

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    """Three cases (pts, pts-b, pts-c) on machine 'seed'."""
    folder = tmp_path / "specs"
    shutil.copytree(MINIMAL, folder)
    text = (folder / "case.yaml").read_text(encoding="utf-8")
    for suffix in ("b", "c"):
        (folder / f"case-{suffix}.yaml").write_text(
            text.replace("id: pts", f"id: pts-{suffix}"), encoding="utf-8"
        )
    return folder


@pytest.fixture
def cross_checked(monkeypatch) -> list[str]:
    """The files each check across files (crossrefs.check_case) was run on."""
    calls: list[str] = []
    real = check_index.crossrefs.check_case

    def counting(doc, machines, broken=None):
        calls.append(doc.file)
        return real(doc, machines, broken)

    monkeypatch.setattr(check_index.crossrefs, "check_case", counting)
    return calls


@pytest.fixture
def documents_read(monkeypatch) -> list[str]:
    """The files whose whole document was read from the document cache."""
    calls: list[str] = []
    real = file_cache.DocumentCache.document

    def counting(self, key, display):
        calls.append(display)
        return real(self, key, display)

    monkeypatch.setattr(file_cache.DocumentCache, "document", counting)
    return calls


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def _located(problems: list[Problem]) -> list[tuple[str, int, int, str, str, str]]:
    return [(p.file, p.line, p.column, p.path, p.message, p.severity.value) for p in problems]


def _warm(specs: Path, cache: Path) -> list[tuple[str, int, int, str, str, str]]:
    return _located(check([specs], cache_dir=cache, problems_only=True).problems)


def _cold(specs: Path) -> list[tuple[str, int, int, str, str, str]]:
    return _located(check([specs]).problems)


def test_an_unchanged_case_is_neither_read_nor_cross_checked(
    specs, tmp_path, cross_checked, documents_read
):
    cache = tmp_path / "cache"
    _warm(specs, cache)
    _edit(specs / "case-b.yaml", "1.1 ms", "1.2 ms")
    cold = _cold(specs)
    cross_checked.clear()
    documents_read.clear()
    assert _warm(specs, cache) == cold
    assert [Path(f).name for f in cross_checked] == ["case-b.yaml"]
    assert sorted(Path(f).name for f in documents_read) == ["case-b.yaml", "machine.yaml"]


def test_a_warm_check_reports_the_cross_file_problems_of_a_cold_one(specs, tmp_path):
    cache = tmp_path / "cache"
    # A compute unit the machine lacks, and an unpinned library machine beside it.
    _edit(specs / "case-c.yaml", "tensor: {fp16", "vector: {fp16")
    _edit(specs / "case-b.yaml", "machines: [seed]", "machines: [seed, h100-sxm]")
    _edit(specs / "case-b.yaml", "  - id: base\n", "  - id: base\n    machine: seed\n")
    cold = _cold(specs)
    assert any(
        "unknown compute unit 'vector'" in p[4] and p[0].endswith("case-c.yaml") for p in cold
    )
    assert any("not pinned" in p[4] and p[0].endswith("case-b.yaml") for p in cold)
    assert _warm(specs, cache) == cold  # writes the index
    assert _warm(specs, cache) == cold  # reads it
    assert json.loads((cache / "check-index.json").read_text(encoding="utf-8"))["entries"]


def test_two_files_declaring_the_same_case_id_are_found_warm(specs, tmp_path):
    cache = tmp_path / "cache"
    _warm(specs, cache)
    shutil.copy(specs / "case.yaml", specs / "case-a.yaml")  # a new file, pts again
    cold = _cold(specs)
    # case-a.yaml sorts first ('-' before '.'): the unchanged case.yaml is the duplicate.
    assert [p[:4] for p in cold if "already used" in p[4]] == [
        (str(specs / "case.yaml"), 3, 5, "id")
    ]
    assert _warm(specs, cache) == cold
    (specs / "case-a.yaml").unlink()
    _warm(specs, cache)
    _edit(specs / "case-c.yaml", "id: pts-c", "id: pts-b")  # an edit makes it a duplicate
    cold = _cold(specs)
    assert any(p[0].endswith("case-c.yaml") and "already used" in p[4] for p in cold)
    assert _warm(specs, cache) == cold


def test_a_changed_machine_checks_the_unchanged_cases_again(specs, tmp_path, cross_checked):
    cache = tmp_path / "cache"
    _warm(specs, cache)
    _edit(specs / "machine.yaml", "id: tensor", "id: matrix")
    cold = _cold(specs)
    assert sum("unknown compute unit 'tensor'" in p[4] for p in cold) == 3
    cross_checked.clear()
    assert _warm(specs, cache) == cold
    assert sorted(Path(f).name for f in cross_checked) == [
        "case-b.yaml",
        "case-c.yaml",
        "case.yaml",
    ]


def test_a_removed_machine_is_an_unknown_machine_warm(specs, tmp_path):
    cache = tmp_path / "cache"
    _warm(specs, cache)
    (specs / "machine.yaml").unlink()
    cold = _cold(specs)
    assert sum("unknown machine 'seed'" in p[4] for p in cold) == 3
    assert _warm(specs, cache) == cold


def test_a_broken_machine_is_reported_once_warm(specs, tmp_path):
    cache = tmp_path / "cache"
    _warm(specs, cache)
    _edit(specs / "machine.yaml", "1.5 TB/s", "1.5 parsecs")
    cold = _cold(specs)
    assert [p[0] for p in cold] == [str(specs / "machine.yaml")]  # not at the cases
    assert _warm(specs, cache) == cold


def test_a_renamed_machine_a_case_names_is_found_warm(specs, tmp_path):
    cache = tmp_path / "cache"
    _warm(specs, cache)
    _edit(specs / "machine.yaml", "id: seed", "id: sprout")
    cold = _cold(specs)
    assert sum("unknown machine 'seed'; known: sprout" in p[4] for p in cold) == 3
    assert _warm(specs, cache) == cold


def test_conflicting_library_pins_across_unchanged_cases_are_found_warm(specs, tmp_path):
    cache = tmp_path / "cache"
    for name in ("case.yaml", "case-b.yaml"):
        _edit(specs / name, "machines: [seed]", "machines: [{id: a100-40gb-sxm, version: 2}]")
    _warm(specs, cache)
    _edit(specs / "case-b.yaml", "version: 2}", "version: 1}")  # the other stays unchanged
    cold = _cold(specs)
    # case-b.yaml sorts first: the unchanged case.yaml's pin is the one in conflict.
    assert [p[0] for p in cold if "to version 2 here and to version 1" in p[4]] == [
        str(specs / "case.yaml")
    ]
    assert _warm(specs, cache) == cold


@pytest.mark.parametrize(
    "damage",
    [
        lambda e: "",
        lambda e: "[]",
        lambda e: json.dumps({**e, "roofgen_check_index": 2}),
        lambda e: json.dumps({**e, "extra": 1}),
        lambda e: json.dumps(
            {**e, "entries": {k: {**v, "id": 7} for k, v in e["entries"].items()}}
        ),
        lambda e: json.dumps(
            {
                **e,
                "entries": {
                    k: {**v, "positions": {"paths": [["id"]], "lines": [0], "columns": [1]}}
                    for k, v in e["entries"].items()
                },
            }
        ),
        lambda e: json.dumps(
            {**e, "entries": {k: {**v, "context": "x"} for k, v in e["entries"].items()}}
        ),
        lambda e: json.dumps(
            {
                **e,
                "entries": {
                    k: {**v, "problems": [["other.yaml", 1, 1, "", "x", "error", ""]]}
                    for k, v in e["entries"].items()
                },
            }
        ),
    ],
)
def test_a_damaged_index_is_a_miss(specs, tmp_path, damage):
    cache = tmp_path / "cache"
    _edit(specs / "case-c.yaml", "tensor: {fp16", "vector: {fp16")
    _warm(specs, cache)
    index = cache / "check-index.json"
    index.write_text(damage(json.loads(index.read_text(encoding="utf-8"))), encoding="utf-8")
    assert _warm(specs, cache) == _cold(specs)
    assert _warm(specs, cache) == _cold(specs)


def test_a_lost_document_cache_reads_the_file_again(specs, tmp_path):
    cache = tmp_path / "cache"
    _warm(specs, cache)
    shutil.rmtree(cache / "documents")
    shutil.rmtree(cache / "results")  # the cases are analysed: their whole documents
    assert _warm(specs, cache) == _cold(specs)


def test_the_index_keeps_the_entries_of_the_latest_check(specs, tmp_path):
    cache = tmp_path / "cache"
    _warm(specs, cache)
    for turn in range(3):
        _edit(specs / "case-b.yaml", f"1.1{'0' * turn} ms", f"1.1{'0' * (turn + 1)} ms")
        _warm(specs, cache)
    entries = json.loads((cache / "check-index.json").read_text(encoding="utf-8"))["entries"]
    assert len(entries) == 3
