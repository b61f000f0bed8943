"""A check always runs; a build knows from the keys of recent passing checks whether
anything changed (and so whether to start its chart renderers early)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from roofgen.analysis.bounds import Thresholds
from roofgen.api import check

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"


def test_the_check_runs_every_time(tmp_path, monkeypatch):
    """No result is read back from a cache: every check analyses, with the same result."""
    specs = tmp_path / "specs"
    shutil.copytree(MINIMAL, specs)
    cache = tmp_path / "cache"
    calls = []
    import roofgen.pipeline as api

    real = api._check

    def counting(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(api, "_check", counting)
    first = check([specs], cache_dir=cache)
    second = check([specs], cache_dir=cache)
    assert len(calls) == 2
    assert second.files == first.files and second.analysis == first.analysis
    assert second.analysis is not None and second.analysis.cases[0].case.id == "pts"
    assert not list(cache.rglob("*.pickle"))


def test_failed_checks_are_not_remembered(tmp_path):
    specs = tmp_path / "specs"
    shutil.copytree(MINIMAL, specs)
    (specs / "case.yaml").write_text("roofgen: 1\nkind: case\n")
    cache = tmp_path / "cache"
    misses: list[int] = []
    for _ in range(2):
        assert check([specs], cache_dir=cache, on_miss=lambda: misses.append(1)).failed()
    assert misses == [1, 1]
    assert not (cache / "passed-checks.json").exists()


def test_on_miss_is_called_only_when_an_input_changed(tmp_path):
    """A build starts its chart renderers from on_miss: not when nothing changed."""
    specs = tmp_path / "specs"
    shutil.copytree(MINIMAL, specs)
    cache = tmp_path / "cache"
    misses: list[int] = []
    check([specs], cache_dir=cache, on_miss=lambda: misses.append(1))
    assert misses == [1]
    check([specs], cache_dir=cache, on_miss=lambda: misses.append(2))
    assert misses == [1]  # the same inputs passed before
    case = specs / "case.yaml"
    case.write_text(case.read_text().replace("title: Points", "title: Points again"))
    check([specs], cache_dir=cache, on_miss=lambda: misses.append(3))
    check([specs], cache_dir=cache, thresholds=Thresholds(co_bound_margin=0.2),
          on_miss=lambda: misses.append(4))  # fmt: skip
    assert misses == [1, 3, 4]
    check([specs], on_miss=lambda: misses.append(5))
    assert misses == [1, 3, 4, 5]  # no cache: the check always starts them


def test_the_passed_keys_are_inert_and_checked(tmp_path):
    """The file holds the hex keys of at most four passing checks; any other content
    is ignored (the renderers start) and written again."""
    specs = tmp_path / "specs"
    shutil.copytree(MINIMAL, specs)
    cache = tmp_path / "cache"
    check([specs], cache_dir=cache)
    entry = cache / "passed-checks.json"
    (key,) = json.loads(entry.read_text())["passed"]
    assert len(key) == 64 and set(key) <= set("0123456789abcdef")
    for damaged in ("", "{", json.dumps({"passed": key}), json.dumps({"passed": [key.upper()]}),
                    json.dumps({"passed": [key], "result": "0 problems"}),
                    json.dumps({"passed": [key] * 5})):  # fmt: skip
        entry.write_text(damaged)
        misses: list[int] = []
        check([specs], cache_dir=cache, on_miss=lambda m=misses: m.append(1))
        assert misses == [1], damaged
        assert json.loads(entry.read_text()) == {"passed": [key]}
