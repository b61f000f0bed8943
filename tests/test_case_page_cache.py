"""A rebuild makes only the pages of the cases that changed (roofgen.site.casecache),
and its site is byte for byte the site a cold build of the same specs makes.

Each test builds real projects (the Markdown, and once the HTML with MkDocs) and
compares every file with a cold build (a fresh cache) of the same specs.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from specdata import make_settings

from roofgen.analysis.bounds import Thresholds
from roofgen.api import build_site

VALID = Path(__file__).parent / "cases" / "valid"


def _project(tmp_path: Path, name: str) -> Path:
    root = tmp_path / "project"
    shutil.copytree(VALID / name, root / "specs")
    return root


def _build(
    root: Path,
    cache: str,
    output: str = "site",
    markdown_only: bool = True,
    clean: bool = False,
    **settings,
):
    result = build_site(
        [root / "specs"],
        make_settings(root, **settings),
        root / output,
        markdown_only=markdown_only,
        cache_dir=root / cache,
        clean=clean,
    )
    assert result.ok, [p.format() for p in result.problems]
    return result


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _same_as_cold(root: Path, rebuilt, **settings) -> None:
    """The rebuilt site equals a cold build's (fresh cache) of the same specs, file by file."""
    markdown_only = settings.pop("markdown_only", True)
    cold = _build(root, "cold-cache", "cold-site", markdown_only=markdown_only, **settings)
    assert cold.reused_pages == 0
    assert (rebuilt.pages, rebuilt.charts) == (cold.pages, cold.charts)
    # the findings of the cases not analysed again are reported all the same
    assert [p.format() for p in rebuilt.problems] == [p.format() for p in cold.problems]
    assert _tree(root / "site") == _tree(root / "cold-site")
    shutil.rmtree(root / "cold-cache")
    shutil.rmtree(root / "cold-site")


def test_a_one_case_change_makes_one_page_and_the_site_a_cold_build_makes(tmp_path):
    root = _project(tmp_path, "a100-kernels")
    first = _build(root, "cache", markdown_only=False)
    assert first.reused_pages == 0
    _edit(root / "specs" / "vector-add.yaml", "title: ", "title: Faster ")
    again = _build(root, "cache", markdown_only=False)
    assert again.reused_pages == 2  # gemm-large and softmax-fusion: three cases, one changed
    assert "Faster" in (root / "site" / "cases" / "vector-add" / "index.html").read_text("utf-8")
    _same_as_cold(root, again, markdown_only=False)


@pytest.fixture
def analysed(monkeypatch) -> list[str]:
    """The ids of the cases a build builds and analyses, in the order it does."""
    import roofgen.analysis.analyse as analyse_module
    import roofgen.spec.build as build_module

    seen: list[str] = []
    build_case, case_result = build_module.case, analyse_module.case_result

    def counted_build(data, file):
        seen.append(f"built {data['id']}")
        return build_case(data, file)

    def counted_result(case, machines, t):
        seen.append(f"analysed {case.id}")
        return case_result(case, machines, t)

    monkeypatch.setattr(build_module, "case", counted_build)
    monkeypatch.setattr(analyse_module, "case_result", counted_result)
    return seen


def test_a_rebuild_builds_and_analyses_only_the_changed_case(tmp_path, analysed):
    root = _project(tmp_path, "a100-kernels")
    _build(root, "cache")
    assert sorted(analysed) == sorted(
        f"{what} {case}"
        for what in ("built", "analysed")
        for case in ("gemm-large", "softmax-fusion", "vector-add")
    )
    analysed.clear()
    _edit(root / "specs" / "vector-add.yaml", "title: ", "title: Faster ")
    again = _build(root, "cache")
    assert analysed == ["built vector-add", "analysed vector-add"]
    assert again.reused_pages == 2
    analysed.clear()
    _same_as_cold(root, again)
    assert len(analysed) == 6  # the cold build analysed all three
    analysed.clear()
    assert _build(root, "cache").reused_pages == 3
    assert analysed == []


def test_a_changed_machine_analyses_only_the_cases_that_name_it(tmp_path, analysed):
    root = _project(tmp_path, "several-machines")
    _build(root, "cache")
    analysed.clear()
    # a100 is named by "port" only
    _edit(root / "specs" / "a100.yaml", "name: A100 40GB SXM", "name: A100 renamed")
    _build(root, "cache")
    assert analysed == ["built port", "analysed port"]


def test_nothing_changed_reuses_every_case_page(tmp_path):
    root = _project(tmp_path, "a100-kernels")
    _build(root, "cache")
    before = _tree(root / "site")
    again = _build(root, "cache")
    assert again.reused_pages == 3
    assert _tree(root / "site") == before


def test_clean_makes_every_page_and_stores_them(tmp_path):
    root = _project(tmp_path, "a100-kernels")
    _build(root, "cache")
    before = _tree(root / "site")
    assert _build(root, "cache", clean=True).reused_pages == 0
    assert _tree(root / "site") == before
    assert _build(root, "cache").reused_pages == 3


def test_a_changed_machine_remakes_every_case_that_names_it_and_only_those(tmp_path):
    root = _project(tmp_path, "several-machines")
    _build(root, "cache")
    # a100 is named by "port" only; "port-fp8" runs on h100 alone.
    _edit(root / "specs" / "a100.yaml", "name: A100 40GB SXM", "name: A100 renamed")
    again = _build(root, "cache")
    assert again.reused_pages == 1
    page = (root / "site" / "cases" / "port" / "index.md").read_text("utf-8")
    assert "A100 renamed" in page
    _same_as_cold(root, again)
    # h100 is named by both; a comment changes no data, a name does.
    _edit(root / "specs" / "h100.yaml", "id: h100\n", "id: h100\n# edited\n")
    assert _build(root, "cache").reused_pages == 2
    _edit(root / "specs" / "h100.yaml", "kind: tensor", "kind: tensor\n    name: Tensor cores")
    again = _build(root, "cache")
    assert again.reused_pages == 0
    _same_as_cold(root, again)


def test_changed_settings_or_thresholds_remake_every_page(tmp_path):
    root = _project(tmp_path, "a100-kernels")
    _build(root, "cache")
    assert _build(root, "cache").reused_pages == 3
    again = _build(root, "cache", description="Another")  # shown on the home page only
    assert again.reused_pages == 0
    _same_as_cold(root, again, description="Another")
    strict = dataclasses.replace(make_settings(root), thresholds=Thresholds(co_bound_margin=0.2))
    result = build_site([root / "specs"], strict, root / "site", markdown_only=True,
                        cache_dir=root / "cache")  # fmt: skip
    assert result.ok and result.reused_pages == 0
    cold = build_site([root / "specs"], strict, root / "cold-site", markdown_only=True,
                      cache_dir=root / "cold-cache")  # fmt: skip
    assert _tree(root / "site") == _tree(root / "cold-site") and cold.reused_pages == 0


def test_a_changed_rules_file_remakes_every_page(tmp_path):
    root = _project(tmp_path, "a100-kernels")
    rules = root / "rules.yaml"
    rules.write_text("roofgen: 1\n", encoding="utf-8")
    settings = dataclasses.replace(make_settings(root), rules=rules)

    def build(output: str, cache: str):
        result = build_site([root / "specs"], settings, root / output, markdown_only=True,
                            cache_dir=root / cache)  # fmt: skip
        assert result.ok, [p.format() for p in result.problems]
        return result

    build("site", "cache")
    assert build("site", "cache").reused_pages == 3
    rules.write_text("roofgen: 1\n# edited\n", encoding="utf-8")
    assert build("site", "cache").reused_pages == 0


def _head(change):
    def edit(raw: bytes) -> bytes:
        head, _, body = raw.partition(b"\n")
        return json.dumps(change(json.loads(head), body)).encode() + b"\n" + body

    return edit


def _listing(change):
    """A case entry's listing changed (an entry of a page of every case has none: it is
    spoiled by its path instead)."""

    def edit(head: dict, body: bytes) -> dict:
        if "listing" not in head:
            return {**head, "path": 3}
        listing = json.loads(json.dumps(head["listing"]))
        change(listing)
        return {**head, "listing": listing}

    return _head(edit)


@pytest.mark.parametrize(
    "spoil",
    [
        lambda raw: b"not json\n" + raw,
        lambda raw: raw[: len(raw) // 2],  # a torn write
        lambda raw: raw + b"<script>planted</script>",
        lambda raw: raw.replace(b"\n", b"\n\xff", 1)[:-1],  # not UTF-8
        _head(lambda head, body: {**head, "roofgen_case_page": head["roofgen_case_page"] + 1}),
        _head(lambda head, body: {**head, "charts": -1}),
        _head(lambda head, body: {**head, "charts": True}),
        _head(lambda head, body: {**head, "path": 3}),
        _head(lambda head, body: {**head, "more": 1}),
        _head(lambda head, body: [head]),
        _head(lambda head, body: {**head, "history": None} if "history" in head else [head]),
        _listing(lambda listing: listing.pop()),  # a field short
        _listing(lambda listing: listing.append(None)),  # a field more
        _listing(lambda listing: listing[0].__setitem__(0, 3)),  # the row's id a number
        _listing(lambda listing: listing[0].__setitem__(13, "1.5")),  # a speedup a string
        _listing(lambda listing: listing[0].__setitem__(13, 1)),  # an integer, not a float
        _listing(lambda listing: listing.__setitem__(1, "tag")),  # tags not a list
        _listing(lambda listing: listing.__setitem__(5, [1.0, [], "yes"])),  # not a bool
    ],
)
def test_an_entry_of_another_shape_is_a_miss(tmp_path, spoil):
    root = _project(tmp_path, "a100-kernels")
    _build(root, "cache")
    entries = sorted((root / "cache" / "pages").glob("*.md"))
    assert len([e for e in entries if e.name.startswith("case-")]) == 3
    assert len([e for e in entries if e.name.startswith("list-")]) >= 6  # all, by machine, ...
    for path in entries:
        path.write_bytes(spoil(path.read_bytes()))
    again = _build(root, "cache")
    assert again.reused_pages == 0
    _same_as_cold(root, again)


def test_entries_no_build_uses_are_removed(tmp_path):
    root = _project(tmp_path, "a100-kernels")
    _build(root, "cache")
    first = sorted(p.name for p in (root / "cache" / "pages").iterdir())
    _edit(root / "specs" / "vector-add.yaml", "title: ", "title: Faster ")
    _build(root, "cache")
    now = sorted(p.name for p in (root / "cache" / "pages").iterdir())
    assert len(now) == len(first) and now != first
    assert len([n for n in now if n.startswith("case-")]) == 3


@pytest.mark.parametrize("module", ["roofgen.site.pagetypes", "roofgen.site.sections.base"])
def test_every_field_of_the_page_types_is_in_their_repr(module):
    """The key of a page of every case is the ``repr`` of its context, and a case page's
    entry holds the digest of the ``repr`` of its history section: a field left out of
    them would let two different pages share an entry."""
    mod = importlib.import_module(module)
    assert "def __repr__" not in inspect.getsource(mod)
    found = 0
    for value in vars(mod).values():
        if isinstance(value, type) and value.__module__ == module:
            assert dataclasses.is_dataclass(value), value
            assert value.__dataclass_params__.repr, value  # type: ignore[attr-defined]
            assert all(f.repr for f in dataclasses.fields(value)), value
            found += 1
    assert found >= 3


def _git(repo: Path, *args: str, when: int = 0) -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": f"{1767225600 + when} +0000",
           "GIT_COMMITTER_DATE": f"{1767225600 + when} +0000"}  # fmt: skip
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   cwd=repo, env=env, capture_output=True, check=True)  # fmt: skip


def test_a_commit_to_one_case_remakes_its_page_with_its_history(tmp_path):
    """In a repository, each case page has a history section: a commit that changes one
    case changes that case's history only."""
    root = _project(tmp_path, "a100-kernels")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "Add the cases", when=0)
    first = _build(root, "cache")
    assert "History" in (root / "site" / "cases" / "vector-add" / "index.md").read_text("utf-8")
    _edit(root / "specs" / "vector-add.yaml", "title: ", "title: Faster ")
    _git(root, "commit", "-qam", "Faster", when=60)
    again = _build(root, "cache")
    assert (first.reused_pages, again.reused_pages) == (0, 2)
    _same_as_cold(root, again)
    # A commit that changes no data of the case still adds a point to its history.
    _edit(root / "specs" / "gemm-large.yaml", "title: ", "# a comment\ntitle: ")
    _git(root, "commit", "-qam", "A comment", when=120)
    again = _build(root, "cache")
    assert again.reused_pages == 2
    _same_as_cold(root, again)
