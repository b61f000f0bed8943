"""`roofgen check` takes the findings of unchanged case files from the cache
(roofgen.spec.result_cache): a case whose file, machines, thresholds and rules are
those of an earlier check is neither built nor analysed, and the check reports exactly
what a fresh one reports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import roofgen.pipeline as pipeline
from roofgen.analysis.bounds import Thresholds
from roofgen.api import check
from roofgen.cli import main

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"
# The minimal case without warmup runs: a warning of its own beside the two notes.
NO_WARMUP = ("warmup: 10", "warmup: 0")


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    folder = tmp_path / "specs"
    shutil.copytree(MINIMAL, folder)
    _edit(folder / "case.yaml", *NO_WARMUP)
    return folder


@pytest.fixture
def analysed(monkeypatch) -> list[list[str]]:
    """The ids of the cases each analysis was given."""
    calls: list[list[str]] = []
    real = pipeline.analyse

    def counting(specs, thresholds=None):
        calls.append([c.id for c in specs.cases])
        return real(specs, thresholds)

    monkeypatch.setattr(pipeline, "analyse", counting)
    return calls


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def _problems(result) -> list[str]:
    return [p.format() for p in result.problems]


def _fresh(specs: Path, **options) -> list[str]:
    return _problems(check([specs], **options))


def test_an_unchanged_case_is_not_analysed_and_reports_the_same(specs, tmp_path, analysed):
    cache = tmp_path / "cache"
    fresh = _fresh(specs)
    assert any("warmup" in p for p in fresh)  # the case has findings to remember
    first = check([specs], cache_dir=cache, problems_only=True)
    second = check([specs], cache_dir=cache, problems_only=True)
    assert _problems(first) == _problems(second) == fresh
    assert analysed == [["pts"], ["pts"], []]  # fresh, first cached, second from the cache
    assert second.analysis is None and second.specs is None  # problems only


def test_a_changed_case_is_analysed_again(specs, tmp_path, analysed):
    cache = tmp_path / "cache"
    check([specs], cache_dir=cache, problems_only=True)
    _edit(specs / "case.yaml", *reversed(NO_WARMUP))
    again = check([specs], cache_dir=cache, problems_only=True)
    assert analysed[-1] == ["pts"]
    assert _problems(again) == _fresh(specs)
    assert not any("warmup" in p for p in _problems(again))


def test_a_changed_machine_threshold_or_rule_analyses_the_case_again(specs, tmp_path, analysed):
    cache = tmp_path / "cache"
    check([specs], cache_dir=cache, problems_only=True)
    _edit(specs / "machine.yaml", "1.5 TB/s", "1.6 TB/s")
    check([specs], cache_dir=cache, problems_only=True)
    assert analysed[-1] == ["pts"]
    other = Thresholds(co_bound_margin=0.3)
    assert _problems(check([specs], cache_dir=cache, problems_only=True, thresholds=other)) == (
        _fresh(specs, thresholds=other)
    )
    assert analysed[-2] == ["pts"]
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "roofgen: 1\nrules:\n  - id: no-warmup\n    check: no-warmup\n    severity: note\n"
        "    message: no warm-up runs\n",
        encoding="utf-8",
    )
    assert _problems(check([specs], cache_dir=cache, problems_only=True, rules_file=rules)) == (
        _fresh(specs, rules_file=rules)
    )
    assert analysed[-2] == ["pts"]


@pytest.mark.parametrize(
    "entry",
    [
        "",
        "[]",
        '{"roofgen_findings": 1}',
        '{"roofgen_findings": 1, "problems": [], "extra": 1}',
        '{"roofgen_findings": true, "problems": []}',
        '{"roofgen_findings": 1, "problems": [["case.yaml", 1, 1, "", "x", "fatal", ""]]}',
        '{"roofgen_findings": 1, "problems": [["case.yaml", -1, 1, "", "x", "note", ""]]}',
        '{"roofgen_findings": 1, "problems": [["case.yaml", 1, 1, "", "x", "note"]]}',
    ],
)
def test_a_damaged_entry_is_a_miss(specs, tmp_path, analysed, entry):
    cache = tmp_path / "cache"
    check([specs], cache_dir=cache, problems_only=True)
    (stored,) = (cache / "results").glob("case-*.json")
    stored.write_text(entry, encoding="utf-8")
    again = check([specs], cache_dir=cache, problems_only=True)
    assert analysed[-1] == ["pts"]
    assert _problems(again) == _fresh(specs)
    assert json.loads(stored.read_text(encoding="utf-8"))["roofgen_findings"] == 1  # rewritten


def test_the_entries_of_other_versions_of_a_file_are_removed(specs, tmp_path):
    cache = tmp_path / "cache"
    check([specs], cache_dir=cache, problems_only=True)
    _edit(specs / "case.yaml", *reversed(NO_WARMUP))
    check([specs], cache_dir=cache, problems_only=True)
    assert len(list((cache / "results").glob("case-*.json"))) == 1


def test_a_failed_check_stores_no_findings(specs, tmp_path):
    cache = tmp_path / "cache"
    _edit(specs / "machine.yaml", "1.5 TB/s", "1.5 parsecs")
    assert check([specs], cache_dir=cache, problems_only=True).failed()
    assert not list(cache.rglob("case-*.json"))


def test_the_cli_check_reports_the_same_with_and_without_its_cache(
    specs, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    outputs = []
    for no_cache in ("1", "", ""):  # fresh, then writing the cache, then reading it
        monkeypatch.setenv("ROOFGEN_NO_CACHE", no_cache)
        assert main(["check", "-v", "--format", "json", "specs"]) == 0
        outputs.append(capsys.readouterr())
    assert outputs[0] == outputs[1] == outputs[2]
    assert "warmup" in outputs[0].out
