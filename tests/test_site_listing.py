"""A case's listing (roofgen.site.listing): what the pages of every case show of it,
made from its analysis, and read back from the page cache exactly as it was written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roofgen.api import check
from roofgen.site.listing import from_data, listing, to_data

TESTS = Path(__file__).parent
VALID = sorted(p for p in (TESTS / "cases" / "valid").iterdir() if p.is_dir())


def _listings(folder: Path):
    checked = check([folder])
    assert checked.analysis is not None and checked.specs is not None, checked.problems
    return [listing(c, checked.specs.machines) for c in checked.analysis.cases]


def test_the_listing_of_a_case_holds_its_measured_figures():
    """vector-add (tests/cases/valid/a100-kernels): two variants of one fp32 add, the
    kernel timed at 2.478 ms and 2.334 ms, one step at 12.40 ms and 12.26 ms."""
    (case,) = [c for c in _listings(TESTS / "cases" / "valid" / "a100-kernels")
               if c.id == "vector-add"]  # fmt: skip
    assert case.row.best_speedup_value == pytest.approx(2.478 / 2.334, rel=1e-12)
    assert case.row.end_to_end_value == pytest.approx(12.40 / 12.26, rel=1e-12)
    assert case.row.path == "cases/vector-add/index.md"
    assert case.tags == ("elementwise", "bandwidth", "a100", "fp32")
    assert case.machines == ("a100-40gb-sxm",)
    (kernel,) = case.kernels
    assert kernel.operator == "elementwise"
    assert kernel.row.detail == (
        "vector add (c = a + b)",
        "n=268435456",
        "a: fp32, b: fp32, c: fp32",
    )
    # one launch per variant, each bound by HBM (3 GiB moved, 268 MFLOP)
    assert [(r.binding, r.row.detail[:2]) for r in case.launches] == [
        ("memory.hbm", ("baseline", "add")),
        ("memory.hbm", ("vectorised", "add")),
    ]
    assert case.speedups is not None
    assert case.speedups.value == pytest.approx(2.478 / 2.334, rel=1e-12)
    assert [r.measure for r in case.speedups.rows] == ["kernel", "end-to-end"]
    assert case.effect is not None
    assert case.effect.row.detail[0] == "baseline → vectorised"
    assert case.effect.patterns == ("vectorisation",)
    assert case.effect.operators == ("elementwise",)


def test_only_a_case_of_several_variants_has_a_speedup_and_an_effect():
    seen = set()
    for folder in VALID:
        checked = check([folder])
        assert checked.analysis is not None and checked.specs is not None
        for c in checked.analysis.cases:
            case = listing(c, checked.specs.machines)
            several = len(c.variants) > 1
            seen.add(several)
            assert (case.speedups is not None, case.effect is not None) == (several, several)
    assert seen == {True, False}


@pytest.mark.parametrize("folder", [*VALID, TESTS.parent / "specs"], ids=lambda p: p.name)
def test_every_listing_reads_back_as_it_was_written(folder):
    for case in _listings(folder):
        text = json.dumps(to_data(case), ensure_ascii=True)
        assert from_data(json.loads(text)) == case


@pytest.mark.parametrize(
    "data",
    [None, [], "listing", {"row": []}, [[]] * 7, [None] * 7],
)
def test_data_of_another_shape_is_no_listing(data):
    assert from_data(data) is None
