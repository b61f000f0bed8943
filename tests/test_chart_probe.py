"""The layout probe of tests/test_chart_layout.py finds what it is meant to find: texts
that overlap (judged by their turned boxes), not a halo under its own label, text on a
data point, a legend colour nothing has, too few ticks a decade, unequal decades."""

from __future__ import annotations

from typing import Any

import pytest
from chartprobe import judge, probe_page, quads_overlap, tick_value

SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300" font-family="sans-serif">
 <g class="mark-text role-mark roofs_marks">
  <text x="20" y="40" font-size="11" stroke="white" stroke-width="3">Halo 1 TB/s</text>
  <text x="20" y="40" font-size="11">Halo 1 TB/s</text>
  <text x="30" y="44" font-size="11">Crossing 2 TFLOP/s</text>
  <text transform="translate(200,200) rotate(-45)" font-size="11">Diagonal 3 TB/s</text>
  <text x="202" y="140" font-size="11">Corner</text>
  <text x="300" y="260" font-size="11">On a point</text>
 </g>
 <g class="mark-symbol role-mark launches_marks">
  <path aria-label="p1" transform="translate(320,256)" d="M-4,-4h8v8h-8Z" fill="#D55E00"/>
 </g>
 <g class="role-legend"><g class="role-scope">
  <g class="role-legend-symbol"><path d="M0,0h5v5h-5Z" fill="#D55E00"/></g>
  <g class="role-legend-symbol"><path d="M0,0h5v5h-5Z" fill="#009E73"/></g>
  <g class="role-legend-label"><text x="0" y="290" font-size="11">HBM</text>
  <text x="60" y="290" font-size="11">L1</text></g>
 </g></g>
</svg>"""


def test_probe_finds_overlaps_by_turned_boxes_and_points_and_undrawn_legend(
    watched_page: Any,
) -> None:
    page = watched_page.page
    page.set_content(SVG)
    (report,) = probe_page(page, "probe", selector="svg")
    overlaps = [f.what for f in report.of("overlap")]
    # The crossing label lies on the label (not on its halo, which is no text of its own).
    assert overlaps == ["'Halo 1 TB/s' on 'Crossing 2 TFLOP/s'"]
    # "Corner" sits inside the diagonal label's upright bounding box, clear of the label.
    quads = {t["text"]: t["quad"] for t in report.texts}
    xs = [x for x, _ in quads["Diagonal 3 TB/s"]]
    ys = [y for _, y in quads["Diagonal 3 TB/s"]]
    upright = [[min(xs), min(ys)], [max(xs), min(ys)], [max(xs), max(ys)], [min(xs), max(ys)]]
    assert quads_overlap(upright, quads["Corner"])
    assert [f.what for f in report.of("text-on-point")] == ["'On a point' on point 'p1'"]
    assert [f.what for f in report.of("legend-undrawn")] == ["legend entry 'L1' (#009e73)"]


def test_tick_values_read_si_prefixes() -> None:
    assert tick_value("30 TFLOP/s") == pytest.approx(3e13)
    assert tick_value("300 µs") == pytest.approx(3e-4)
    assert tick_value("0.03") == pytest.approx(0.03)
    assert tick_value("3e-5") == pytest.approx(3e-5)
    assert tick_value("HBM") is None


def test_quads_overlap_uses_separating_axes() -> None:
    square = [[0, 0], [10, 0], [10, 10], [0, 10]]
    diamond = [[15, 5], [20, 0], [25, 5], [20, 10]]  # right of the square: apart
    assert not quads_overlap(square, diamond)
    assert quads_overlap(square, [[5, 5], [15, 5], [15, 15], [5, 15]])


def _axis(texts: list[tuple[str, float]], horizontal: bool) -> dict[str, Any]:
    ticks = [
        {"text": t, "x": p if horizontal else 0.0, "y": 0.0 if horizontal else p} for t, p in texts
    ]
    return {"label": "X-axis" if horizontal else "Y-axis", "ticks": ticks}


def test_judge_wants_two_ticks_a_decade_and_equal_decades() -> None:
    # x: 1, 10, 100 at 100 px a decade (one tick a decade); y: 1..100 twice a decade at
    # 80 px a decade (screen y grows downwards)
    x = _axis([("1", 0.0), ("10", 100.0), ("100", 200.0)], True)
    y = _axis(
        [("1 s", 160.0), ("3 s", 121.8), ("10 s", 80.0), ("30 s", 41.8), ("100 s", 0.0)], False
    )
    data = {"texts": [], "points": [], "drawn": [], "legend": [], "axes": [x, y], "action": None}
    report = judge("probe", "axes", data)
    assert [f.kind for f in report.findings] == ["sparse-ticks", "unequal-decades"]
    assert "x 100 px a decade, y 80 px a decade" in report.findings[1].what
