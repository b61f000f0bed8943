"""Label layout and axes of the charts, computed when a spec is built: oriented boxes,
first-free placement, ticks twice a decade, equally long decades, the precision chart's
roofs. Expected values worked out by hand."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from roofgen.api import check
from roofgen.charts.common import log_ticks, square_decades
from roofgen.charts.labels import Box, Plot, place, side_by_side, text_width
from roofgen.charts.roofline_inputs import PrecisionInput
from roofgen.site.context import build_context

REPO = Path(__file__).resolve().parents[1]


def test_crossing_boxes_overlap_and_parallel_ones_apart_do_not() -> None:
    bar = Box(0, 0, 40, 4)
    assert bar.overlaps(Box(0, 0, 40, 4, 90))  # a plus sign
    assert not bar.overlaps(Box(0, 5, 40, 4))  # 5 px apart, 4 px high: a 1 px gap
    assert bar.overlaps(Box(0, 3, 40, 4))


def test_a_turned_box_is_judged_by_its_real_extent() -> None:
    # A 40 x 4 box turned 45 degrees reaches (14.1 + 1.4) = 15.6 px along each axis from
    # its centre, but only along its diagonal: the corner region of its upright bounding
    # box is empty. A small box at (12, -12) lies in that corner, 17 px from the line.
    turned = Box(0, 0, 40, 4, 45)
    corner = Box(12, -12, 4, 4)
    assert not turned.overlaps(corner)
    assert turned.overlaps(Box(10, 10, 4, 4))  # on the diagonal itself


def test_place_gives_a_taken_spot_to_the_first_label_only() -> None:
    spot, beside = Box(50, 50, 20, 10), Box(50, 70, 20, 10)
    boxes = place([[spot], [spot, beside]], [], 100, 100)
    assert boxes == [spot, beside]


def test_place_keeps_labels_off_the_obstacles_and_inside_the_plot() -> None:
    point = Box(50, 50, 10, 10)
    outside = Box(98, 50, 20, 10)  # runs past the right edge
    free = Box(20, 20, 20, 10)
    assert place([[Box(50, 50, 20, 10), outside, free]], [point], 100, 100) == [free]


def test_place_still_draws_a_label_with_no_free_spot() -> None:
    taken = Box(50, 50, 20, 10)
    assert place([[taken]], [], 100, 100, fixed=[taken]) == [taken]


def test_text_width_grows_with_the_text_and_the_font() -> None:
    assert text_width("HBM3 3.35 TB/s", 11) > text_width("HBM3", 11)
    assert text_width("HBM3", 22) > 2 * text_width("HBM3", 11) - 3
    # DejaVu Sans digits are 0.636 em: ten of them at 10 px take more than 63 px
    assert text_width("0123456789", 10) >= 63.6


def test_ticks_are_one_and_three_of_each_decade() -> None:
    assert log_ticks((0.05, 200.0)) == [0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0]
    # under two decades: 1, 2 and 5
    assert log_ticks((1.5, 60.0)) == [2.0, 5.0, 10.0, 20.0, 50.0]


def test_decades_are_as_long_on_both_axes() -> None:
    # 4 decades of x over 640 px: 160 px a decade; 2 decades of y then need 320 px.
    xdom, ydom, height = square_decades((0.1, 1000.0), (1e12, 1e14), 640, 440)
    assert (xdom, ydom, height) == ((0.1, 1000.0), (1e12, 1e14), 320)
    # 3 decades of y in at most 440 px: 146.7 px a decade, so x widens to 640 / 146.7 =
    # 4.36 decades about its middle (from 2).
    xdom, ydom, height = square_decades((1.0, 100.0), (1e12, 1e15), 640, 440)
    assert height == 440 and ydom == (1e12, 1e15)
    assert math.log10(xdom[1] / xdom[0]) == pytest.approx(640 * 3 / 440)
    assert math.sqrt(xdom[0] * xdom[1]) == pytest.approx(10.0)
    # too few y decades: half as high as wide, y widened to 320 / 160 = 2 decades
    xdom, ydom, height = square_decades((0.1, 1000.0), (1e13, 1e14), 640, 440)
    assert height == 320 and math.log10(ydom[1] / ydom[0]) == pytest.approx(2.0)


def test_plot_maps_data_to_pixels_and_back() -> None:
    plot = Plot((0.1, 1000.0), (1e12, 1e14), 640, 320)
    assert plot.px(10.0, 1e13) == pytest.approx((320.0, 160.0))
    assert plot.data(320.0, 160.0) == pytest.approx((10.0, 1e13))
    assert plot.diagonal_angle() == pytest.approx(315.0)  # 160 px a decade both ways


def test_coincident_points_of_different_levels_sit_side_by_side() -> None:
    plot = Plot((0.1, 1000.0), (1e12, 1e14), 640, 320)
    rows = [
        {"x": 10.0, "y": 1e13, "role": "device"},
        {"x": 10.0, "y": 1e13, "role": "l1"},
        {"x": 10.0, "y": 1e13, "role": "llc"},
        {"x": 100.0, "y": 1e13, "role": "l1"},
    ]
    side_by_side(rows, plot, ("l1", "llc", "device"), gap=9.0)
    xs = [plot.px(r["x"], r["y"])[0] for r in rows]
    assert xs == pytest.approx([329.0, 311.0, 320.0, 480.0])


@pytest.fixture(scope="module")
def precision_inputs() -> dict[str, list[PrecisionInput]]:
    checked = check([REPO / "specs"])
    assert checked.analysis is not None and checked.specs is not None
    ctx = build_context(checked.analysis, checked.specs.machines, name="x")
    out: dict[str, list[PrecisionInput]] = {}
    for case in ctx.cases:
        for slot in case.section_charts:
            if isinstance(slot.input, PrecisionInput):
                out.setdefault(case.id, []).append(slot.input)
    return out


def test_softmax_precision_chart_shows_its_own_roofs_and_special_functions_apart(
    precision_inputs: dict[str, list[PrecisionInput]],
) -> None:
    main, sfu = precision_inputs["softmax-fusion"]
    # FP32 work on the FP32 pipe only: no tensor, integer or sparse ceiling
    assert {c.precision for c in main.ceilings} == {"fp32"}
    assert not any(c.sparse for c in main.ceilings)
    assert {p.precision for p in main.points} == {"fp32"}
    assert {c.precision for c in sfu.ceilings} == {"transcendental"}
    assert {p.precision for p in sfu.points} == {"transcendental"}
    # the rest of the A100 is there, behind the toggle
    assert any("int4-sparse" in c.id for c in main.other_ceilings)


def test_gemm_precision_chart_projects_its_lower_precision_option(
    precision_inputs: dict[str, list[PrecisionInput]],
) -> None:
    (main,) = precision_inputs["gemm-large"]
    assert main.projections
    for j in main.projections:
        assert j.intensity_to > j.intensity_from and j.rate_to > j.rate_from
        assert j.rate_to == pytest.approx(j.rate_from * j.speedup)


def _label_texts(spec: dict) -> set[str]:
    """The direct point labels of a hierarchical roofline spec (its "labels" data)."""
    return {row["text"] for row in spec.get("datasets", {}).get("labels", [])}


def test_a_variant_the_case_marks_is_labelled_beside_baseline_and_best() -> None:
    """Three variants at three speeds: the baseline and the best are labelled; the middle
    one only when the case marks it (`label: true`)."""
    from roofgen.charts.hierarchical import hierarchical_chart as roofline_chart
    from roofgen.charts.inputs import ChartPoint, RoofLine, RooflineInput

    roofs = (
        RoofLine("hbm", "HBM", "memory", 1.5e12, "datasheet", "device"),
        RoofLine("fp32", "FP32", "compute", 19.5e12, "datasheet", "compute"),
    )
    points = tuple(
        ChartPoint("c", "k", v, "hbm", "device", 2.0, y, None, "memory-bound", "memory.hbm")
        for v, y in (("slow", 0.5e12), ("middle", 1.2e12), ("fast", 2.9e12))
    )
    order = ("slow", "middle", "fast")
    plain = _label_texts(roofline_chart(RooflineInput("t", roofs, points, order)))
    assert plain == {"slow (baseline)", "fast (best)"}
    marked = _label_texts(
        roofline_chart(RooflineInput("t", roofs, points, order, labelled=("middle",)))
    )
    assert marked == {"slow (baseline)", "middle", "fast (best)"}


def test_the_precision_charts_memory_roof_is_drawn_as_its_basis() -> None:
    """Datasheet roofs dashed, measured ones solid: the memory roof too."""
    from roofgen.charts.precision import PEAK_DASHES, precision_chart
    from roofgen.charts.roofline_inputs import Ceiling

    def memory_rule(basis: str) -> dict:
        inp = PrecisionInput(
            "t", "s", (Ceiling("fp32", "FP32 pipe", "fp32", "fp32", 19.5e12, "datasheet", False),),
            "HBM", 1.5e12, (), bandwidth_basis=basis,
        )  # fmt: skip
        spec = precision_chart(inp)
        layers = [layer for layer in _layers(spec) if layer.get("data", {}).get("name") == "memory"]
        return next(layer for layer in layers if layer["mark"]["type"] == "rule")["mark"]

    assert memory_rule("datasheet")["strokeDash"] == PEAK_DASHES["dense, datasheet"]
    assert "strokeDash" not in memory_rule("measured")


def _layers(spec: dict) -> list[dict]:
    out = []
    for layer in spec.get("layer", []):
        out += _layers(layer) if "layer" in layer else [layer]
    return out
