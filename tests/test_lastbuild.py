"""A build whose MkDocs input did not change runs no MkDocs, and keeps the site only
when the output holds exactly what the last build wrote (roofgen.site.lastbuild).

Each test builds the minimal project for real (MkDocs included) and tells a kept site
from a built one by the build's timings (a kept site has no ``mkdocs`` step) and its
note.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from specdata import make_settings

from roofgen.api import build_site
from roofgen.site import lastbuild

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"
SITE = {"name": "Kept", "url": "https://perf.example.com/"}
KEPT = "no page changed since the last build: the site was kept as it is (--clean builds it afresh)"


def _build(root: Path, **options):
    result = build_site([root / "specs"], make_settings(root, **SITE), root / "site",
                        cache_dir=root / "cache", **options)  # fmt: skip
    assert result.ok, [p.format() for p in result.problems]
    return result


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def _project(tmp_path: Path) -> Path:
    shutil.copytree(MINIMAL, tmp_path / "specs")
    return tmp_path


def test_nothing_changed_runs_no_mkdocs_and_keeps_the_site_byte_for_byte(tmp_path):
    root = _project(tmp_path)
    first = _build(root)
    assert "mkdocs" in first.timings and KEPT not in first.notes
    before = _tree(root / "site")
    again = _build(root)
    assert "mkdocs" not in again.timings
    assert KEPT in again.notes
    assert _tree(root / "site") == before
    assert (again.pages, again.charts) == (first.pages, first.charts)


def test_a_changed_spec_is_built(tmp_path):
    root = _project(tmp_path)
    _build(root)
    case = root / "specs" / "case.yaml"
    case.write_text(case.read_text(encoding="utf-8").replace("Points", "Renamed"), "utf-8")
    result = _build(root)
    assert "mkdocs" in result.timings and KEPT not in result.notes
    assert "Renamed" in (root / "site" / "index.html").read_text(encoding="utf-8")


def test_an_output_edited_or_added_to_since_is_built_again(tmp_path):
    root = _project(tmp_path)
    _build(root)
    built = _tree(root / "site")
    (root / "site" / "index.html").write_text("<p>published unbuilt</p>", encoding="utf-8")
    result = _build(root)
    assert "mkdocs" in result.timings
    assert _tree(root / "site") == built
    (root / "site" / "extra.html").write_text("<p>added</p>", encoding="utf-8")
    assert "mkdocs" in _build(root).timings
    assert _tree(root / "site") == built


def test_clean_runs_mkdocs_whatever_the_record(tmp_path):
    root = _project(tmp_path)
    _build(root)
    assert "mkdocs" in _build(root, clean=True).timings


def test_a_forged_or_damaged_record_is_a_miss(tmp_path):
    """A record naming the right inputs but files the output does not hold, or one of
    another shape, never keeps a site."""
    root = _project(tmp_path)
    _build(root)
    record = lastbuild.Record(root / "cache", (root / "site").absolute()).path
    entry = json.loads(record.read_text(encoding="utf-8"))
    entry["files"] = {"index.html": "0" * 64}
    record.write_text(json.dumps(entry), encoding="utf-8")
    assert "mkdocs" in _build(root).timings
    for damaged in ("", "[]", json.dumps({**entry, "extra": 1}), '{"roofgen_build": 1'):
        record.write_text(damaged, encoding="utf-8")
        assert "mkdocs" in _build(root).timings


def test_no_cache_always_runs_mkdocs(tmp_path):
    root = _project(tmp_path)
    for _ in range(2):
        result = build_site([root / "specs"], make_settings(root, **SITE), root / "site",
                            use_cache=False)  # fmt: skip
        assert result.ok and "mkdocs" in result.timings


def test_nothing_changed_is_answered_from_the_record_without_a_check(tmp_path):
    """A build whose inputs (specs, settings, team files, roofgen) are those of the last
    build neither checks nor writes a page, and reports what that build reported."""
    root = _project(tmp_path)
    first = _build(root)
    before = _tree(root / "site")
    again = _build(root)
    assert "check" in first.timings and "check" not in again.timings
    assert [p.format() for p in again.problems] == [p.format() for p in first.problems]
    assert again.problems  # the minimal case's notes, reported again
    assert _tree(root / "site") == before


def test_a_changed_setting_or_team_page_is_built(tmp_path):
    root = _project(tmp_path)
    page = root / "extra.md"
    page.write_text("# Our notes\n\nFirst words.\n", encoding="utf-8")

    def build(**site):
        result = build_site([root / "specs"], make_settings(root, **{**SITE, **site}),
                            root / "site", cache_dir=root / "cache")  # fmt: skip
        assert result.ok, [p.format() for p in result.problems]
        return result

    build(extra_pages=["extra.md"])
    assert "check" not in build(extra_pages=["extra.md"]).timings
    renamed = build(extra_pages=["extra.md"], name="Renamed")
    assert "check" in renamed.timings
    assert "Renamed" in (root / "site" / "index.html").read_text(encoding="utf-8")
    page.write_text("# Our notes\n\nSecond words.\n", encoding="utf-8")
    assert "check" in build(extra_pages=["extra.md"], name="Renamed").timings
    pages = (root / "site" / "pages").rglob("*.html")
    assert any("Second words" in p.read_text(encoding="utf-8") for p in pages)


def test_a_strict_build_is_not_answered_by_a_lenient_one(tmp_path):
    root = _project(tmp_path)
    _build(root)
    assert "check" in _build(root, strict=True).timings


def test_a_change_to_roofgen_s_own_mkdocs_side_builds_again(tmp_path, monkeypatch):
    """The theme override (the page policy's <meta> tag) and roofgen's plugins shape the
    HTML of unchanged docs: an upgrade that changes them must not keep the old site."""
    import roofgen.datafiles

    stage = tmp_path / "stage"
    (stage / "docs").mkdir(parents=True)
    (stage / "mkdocs.yml").write_text("site_name: x\n")
    (stage / "docs" / "index.md").write_text("# x\n")
    templates = tmp_path / "templates"
    shutil.copytree(roofgen.datafiles.data_dir("templates"), templates)
    monkeypatch.setattr(roofgen.datafiles, "data_dir", lambda name: tmp_path / name)
    lastbuild._own_files.cache_clear()
    before = lastbuild.inputs_digest(stage, strict=False, epoch=0)
    override = templates / "overrides" / "main.html"
    override.write_text(override.read_text() + "\n<!-- changed -->\n")
    lastbuild._own_files.cache_clear()
    after = lastbuild.inputs_digest(stage, strict=False, epoch=0)
    lastbuild._own_files.cache_clear()
    assert before != after
