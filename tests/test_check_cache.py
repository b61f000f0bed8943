"""The check cache returns a stored result only for byte-identical inputs."""

from __future__ import annotations

import shutil
from pathlib import Path

from roofgen.analysis.bounds import Thresholds
from roofgen.api import check

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"


def test_cache_hit_and_invalidation(tmp_path, monkeypatch):
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
    assert len(calls) == 1
    assert second.files == first.files
    assert second.analysis is not None and second.analysis.cases[0].case.id == "pts"
    # A change to a spec file, or to the thresholds, misses the cache.
    case = specs / "case.yaml"
    case.write_text(case.read_text().replace("title: Points", "title: Points again"))
    third = check([specs], cache_dir=cache)
    assert len(calls) == 2
    assert third.analysis is not None and third.analysis.cases[0].case.title == "Points again"
    check([specs], cache_dir=cache, thresholds=Thresholds(co_bound_margin=0.2))
    assert len(calls) == 3


def test_failed_checks_are_not_cached(tmp_path):
    specs = tmp_path / "specs"
    shutil.copytree(MINIMAL, specs)
    (specs / "case.yaml").write_text("roofgen: 1\nkind: case\n")
    cache = tmp_path / "cache"
    assert check([specs], cache_dir=cache).failed()
    assert not list(cache.glob("check-*.pickle"))


def test_on_miss_is_called_only_when_the_check_runs(tmp_path):
    """A build starts its chart renderers from on_miss: not when nothing changed."""
    specs = tmp_path / "specs"
    shutil.copytree(MINIMAL, specs)
    cache = tmp_path / "cache"
    misses: list[int] = []
    check([specs], cache_dir=cache, on_miss=lambda: misses.append(1))
    assert misses == [1]
    check([specs], cache_dir=cache, on_miss=lambda: misses.append(2))
    assert misses == [1]  # served from the cache
    check([specs], on_miss=lambda: misses.append(3))
    assert misses == [1, 3]  # no cache: the check always runs
