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
    return sorted(p.name for p in (cache / "documents").glob("doc-*.pickle"))


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
        entry.write_bytes(b"not a pickle")
    for stale in cache.glob("check-*.pickle"):  # the whole-result cache too
        stale.unlink()
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
    first = check([specs], cache_dir=cache)
    assert not first.failed()
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
    for entry in cache.glob("check-*.pickle"):
        entry.unlink()  # the check runs again, with the damaged table
    quantity._TABLE.clear()
    result = check([specs], cache_dir=cache)
    assert not result.failed()
    assert analysis_document(result) == expected
