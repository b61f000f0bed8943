"""A site build's cost grows in proportion to a case's size: the search index finds each
section's heading in one step, not by walking the page's whole table of contents."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from specdata import make_settings

from roofgen.api import build_site
from roofgen.site.searchtoc import index_headings

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"


def _page(headings: int) -> Any:
    """A page as MkDocs hands it to the search plugin: ``headings`` h2 headings, each with
    an h3 under it, and their table of contents."""
    from types import SimpleNamespace

    from mkdocs.structure.toc import get_toc

    html, tokens = ["<p>intro</p>"], []
    for i in range(headings):
        html.append(f'<h2 id="v{i}">Variant v{i}</h2><p>text {i}</p>')
        html.append(f'<h3 id="k-in-v{i}">k in v{i}</h3><p>more {i}</p>')
        inner = {"level": 3, "id": f"k-in-v{i}", "name": f"k in v{i}", "children": []}
        tokens.append({"level": 2, "id": f"v{i}", "name": f"Variant v{i}", "children": [inner]})
    return SimpleNamespace(content="".join(html), toc=get_toc(tokens), url="cases/big/",
                           meta={}, title="Big")  # fmt: skip


def _entries(page: Any, fast: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], int]:
    """The search entries of ``page`` and how many steps the table-of-contents walk took."""
    from material.plugins.search.plugin import SearchIndex

    steps = [0]
    walk = SearchIndex._find_toc_by_id

    def counted(self: Any, toc: Any, ident: Any) -> Any:
        steps[0] += 1
        return walk(self, toc, ident)

    monkeypatch.setattr(SearchIndex, "_find_toc_by_id", counted)
    plugin = type("Plugin", (), {})()
    plugin.search_index = SearchIndex(lang=["en"], separator=" ", pipeline=[], fields={})
    if fast:
        index_headings(plugin)
    plugin.search_index.add_entry_from_context(page)
    monkeypatch.undo()
    return plugin.search_index.entries, steps[0]


def test_the_search_index_finds_headings_as_the_walk_does_in_one_step(monkeypatch) -> None:
    page = _page(200)
    walked, walk_steps = _entries(page, False, monkeypatch)
    found, steps = _entries(page, True, monkeypatch)
    assert found == walked
    assert [e["location"] for e in found[:3]] == [
        "cases/big/",
        "cases/big/#v0",
        "cases/big/#k-in-v0",
    ]
    assert steps == 0
    # the walk visits every entry before a heading's: 400 headings, about 400²/2 steps
    assert walk_steps > 400 * 400 // 4


def test_a_build_indexes_search_without_walking_the_table_of_contents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from material.plugins.search.plugin import SearchIndex

    steps = [0]
    walk = SearchIndex._find_toc_by_id

    def counted(self: Any, toc: Any, ident: Any) -> Any:
        steps[0] += 1
        return walk(self, toc, ident)

    monkeypatch.setattr(SearchIndex, "_find_toc_by_id", counted)
    shutil.copytree(MINIMAL, tmp_path / "specs")
    result = build_site([tmp_path / "specs"], make_settings(tmp_path), tmp_path / "site",
                        cache_dir=tmp_path / "cache", workers=0)  # fmt: skip
    assert result.ok, [p.format() for p in result.problems]
    index = (tmp_path / "site" / "search" / "search_index.json").read_text()
    assert "cases/pts/index.html#roofline" in index
    assert steps[0] == 0


def _case_of(variants: int, folder: Path) -> tuple[Any, Any]:
    """The analysed case of ``variants`` variants (one launch each, one kernel) on the
    machine of tests/cases/valid/minimal, and the machines."""
    from roofgen.api import check

    case = (MINIMAL / "case.yaml").read_text()
    head = case[: case.index("variants:")]
    lines = [head.rstrip("\n"), "variants:"]
    for v in range(variants):
        lines += [
            f"  - id: v{v:04d}",
            "    launches:",
            "      - kernel: low",
            "        measurement:",
            f"          time: {{median: {1000 - v} us}}",
            "          flops: {tensor: {fp16: 1.5e9 FLOP}}",
            "          bytes: {hbm: 1.5 GB}",
        ]
    specs = folder / "specs"
    specs.mkdir(parents=True)
    shutil.copyfile(MINIMAL / "machine.yaml", specs / "machine.yaml")
    (specs / "case.yaml").write_text("\n".join(lines) + "\n")
    checked = check([specs])
    assert checked.analysis is not None and checked.specs is not None, checked.problems
    return checked.analysis.cases[0], checked.specs.machines


@pytest.mark.parametrize("variants", [100, 400])
def test_the_fastest_variant_is_found_without_comparing_variants(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variants: int
) -> None:
    """The listing and the verdict card pick the fastest variant (the first of equals)
    in one pass: whole results are never compared with each other (searching the tuple
    for each variant's position compared n²/2 pairs)."""
    from roofgen.analysis.analyse import VariantResult
    from roofgen.analysis.compare import VariantComparison
    from roofgen.site import listing, verdict

    case, machines = _case_of(variants, tmp_path)
    compared = [0]
    for cls in (VariantResult, VariantComparison):
        equal = cls.__eq__

        def counted(self: Any, other: Any, equal: Any = equal) -> Any:
            compared[0] += 1
            return equal(self, other)

        monkeypatch.setattr(cls, "__eq__", counted)
    fastest = verdict.fastest_variant(case)
    best = verdict.best_comparison(case)
    row = listing.listing(case, machines).row
    monkeypatch.undo()
    # times 1000 - v us: the last variant is the fastest
    assert fastest.variant == f"v{variants - 1:04d}"
    assert best is not None and best.variant == fastest.variant
    assert row.id == case.case.id
    assert compared[0] <= 4 * variants


class _Counted(tuple):  # type: ignore[type-arg]
    """A tuple that counts the items its iterators hand out."""

    handed = 0

    def __iter__(self) -> Any:
        for item in super().__iter__():
            _Counted.handed += 1
            yield item


@pytest.mark.parametrize("variants", [100, 400])
def test_comparing_and_tabling_variants_reads_each_variant_a_few_times(
    tmp_path: Path, variants: int
) -> None:
    """The comparison with the baseline and the before/after table find each variant by
    id once, not by searching every variant for each one (n²/2 steps at n variants)."""
    from dataclasses import replace

    from roofgen.analysis.compare import compare_case
    from roofgen.site.comparison import before_after

    case, machines = _case_of(variants, tmp_path)
    counted = replace(
        case,
        case=replace(case.case, variants=_Counted(case.case.variants)),
        variants=_Counted(case.variants),
    )
    _Counted.handed = 0
    comparison = compare_case(counted, machines)
    counted.__dict__["comparison"] = comparison  # the cached property, as the site reads it
    table = before_after(counted, {})
    handed = _Counted.handed
    assert comparison.variant(f"v{variants - 1:04d}") is comparison.variants[-1]
    assert table is not None and len(table.rows) >= variants - 1
    # two variants' reads per variant at most (n² before: 5,050 at 100, 80,200 at 400)
    assert handed <= 10 * variants, handed
