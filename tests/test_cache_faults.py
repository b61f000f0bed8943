"""A cache can only make roofgen faster: a cache folder that cannot be written, or
entries that are damaged in any way, cost time and never fail a check or a build."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from roofgen.cli import main
from roofgen.site.cachedir import project_folder, user_cache_root

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"


def test_an_unwritable_cache_folder_only_costs_time(tmp_path, monkeypatch, capsys) -> None:
    shutil.copytree(MINIMAL, tmp_path / "specs")
    (tmp_path / "blocker").write_text("a file where the cache's parent folder should be\n")
    monkeypatch.chdir(tmp_path)
    for jobs in ("0", "2"):
        status = main(["build", "specs", "-j", jobs, "-o", f"site{jobs}",
                       "--cache-dir", "blocker/cache"])  # fmt: skip
        err = capsys.readouterr().err
        assert status == 0, err
        assert "note: cannot use the cache folder " in err
        assert (tmp_path / f"site{jobs}" / "index.html").is_file()


def _whole(path: Path) -> bool:
    """Whether a cache entry is one roofgen wrote (after the damage, written again)."""
    data = path.read_bytes()
    if path.suffix == ".svg":
        return data.startswith(b"<svg ") and data.rstrip().endswith(b"</svg>")
    if path.suffix == ".js":
        return data.startswith(b"/*") and b"window.vegaEmbed" in data
    return isinstance(json.loads(data), dict)


@pytest.mark.parametrize(
    "garbage",
    [b"", b'{"roofgen_document": 1, "kind": "ca', b'{"passed": 7, "digest": [1]}', b"x" * 64],
    ids=["empty", "truncated", "another-shape", "not-json"],
)
def test_damaged_cache_entries_are_misses(tmp_path, monkeypatch, capsys, garbage) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    shutil.copytree(MINIMAL, tmp_path / "specs")
    monkeypatch.chdir(tmp_path)
    assert main(["build", "specs", "--static-charts", "-j", "0"]) == 0
    entries = [p for p in user_cache_root().rglob("*") if p.is_file()]
    names = {p.name.split("-")[0] for p in entries}
    assert names == {"doc", "spec", "svg", "units", "passed", "vega", "site", "theme"}, names
    # the chart script and the theme's page policy are the user's, shared by projects
    shared = [p for p in entries if p.suffix == ".js" or p.parent.name == "csp"]
    assert len(shared) == 2
    assert all(p.is_relative_to(project_folder(tmp_path)) for p in entries if p not in shared)
    for entry in entries:
        entry.write_bytes(garbage)
    capsys.readouterr()
    for _ in range(2):  # the damaged entries are rewritten, then read back
        assert main(["build", "specs", "--static-charts", "-j", "0"]) == 0, capsys.readouterr().err
    assert all(_whole(p) for p in entries)
    assert (tmp_path / "site" / "index.html").is_file()
    svgs = list((tmp_path / "site" / "assets" / "charts").glob("*.svg"))
    assert svgs and all(p.read_bytes().startswith(b"<svg ") for p in svgs)
    assert all(p.read_bytes().rstrip().endswith(b"</svg>") for p in svgs)
