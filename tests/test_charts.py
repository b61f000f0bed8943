"""Tests of the chart package: Vega-Lite specs, SVG/PNG/HTML rendering (no browser)."""

from __future__ import annotations

import json
import math
import random
import re
import struct
import time
import zlib
from typing import Any

import altair as alt
import jsonschema
import pytest
from altair.vegalite.v6.schema.core import load_schema
from hypothesis import given, settings
from hypothesis import strategies as st
from pngread import drawn_share, read_png

from roofgen.charts import (
    DASHES,
    Arrow,
    ChartPoint,
    RoofLine,
    RooflineInput,
    derive_arrows,
    hierarchical_chart,
    stabilise_svg_ids,
    to_html,
    to_png,
    to_svg,
    vega_lite_version,
    vl_convert_version,
)

G = 1e9

# V100 hierarchical roofs and the BerkeleyGW GPP kernel at nw=1 and nw=6.
V100_ROOFS = (
    RoofLine("hbm", "HBM", "memory", 828.758 * G, "measured", "device"),
    RoofLine("l2", "L2", "memory", 2996.77 * G, "measured", "llc"),
    RoofLine("l1", "L1", "memory", 14336 * G, "measured", "l1"),
    RoofLine("fma", "FP64 FMA", "compute", 7068.86 * G, "measured", "compute"),
    RoofLine("nofma", "FP64 no-FMA", "compute", 3535.79 * G, "measured", "compute", True),
)
V100_DATASHEET = (
    RoofLine("hbm-ds", "HBM", "memory", 900 * G, "datasheet", "device"),
    RoofLine("fp64-ds", "FP64", "compute", 7800 * G, "datasheet", "compute"),
)
GPP = {
    "nw=1": ({"L1": 0.865326481, "L2": 2.250285265, "HBM": 2.584785579}, 2085.756683 * G),
    "nw=6": ({"L1": 4.034947498, "L2": 5.182021625, "HBM": 13.21154434}, 4692.209405 * G),
}
ROLE = {"L1": "l1", "L2": "llc", "HBM": "device"}
ROOF_LABELS = (
    "HBM 829 GB/s",
    "L2 3.00 TB/s",
    "L1 14.3 TB/s",
    "FP64 FMA 7.07 TFLOP/s",
    "FP64 no-FMA 3.54 TFLOP/s",
)
DATASHEET_LABELS = ("HBM 900 GB/s (datasheet)", "FP64 7.80 TFLOP/s (datasheet)")


def gpp_points() -> tuple[ChartPoint, ...]:
    points = []
    for variant, (ais, flops) in GPP.items():
        for level, ai in ais.items():
            points.append(
                ChartPoint(
                    case="BerkeleyGW",
                    kernel="gpp",
                    variant=variant,
                    level=level,
                    level_role=ROLE[level],
                    intensity_flop_per_byte=ai,
                    flop_per_s=flops,
                    efficiency=flops / (7068.86 * G),
                    klass="bandwidth-bound" if variant == "nw=1" else "compute-bound",
                    binding="HBM" if variant == "nw=1" else "FP64 FMA",
                )
            )
    return tuple(points)


def v100_input(datasheet: bool = True) -> RooflineInput:
    roofs = V100_ROOFS + (V100_DATASHEET if datasheet else ())
    return RooflineInput(
        title="BerkeleyGW GPP on V100",
        roofs=roofs,
        points=gpp_points(),
        variant_order=("nw=1", "nw=6"),
    )


def big_input(kernels: int, seed: int = 7) -> RooflineInput:
    rng = random.Random(seed)
    points = []
    for k in range(kernels):
        base = 10 ** rng.uniform(-1.5, 2.0)
        for v, variant in enumerate(("before", "after")):
            flops = 10 ** rng.uniform(9, 12.8)
            for i, (level, role) in enumerate((("L1", "l1"), ("L2", "llc"), ("HBM", "device"))):
                points.append(
                    ChartPoint(
                        "case",
                        f"k{k}",
                        variant,
                        level,
                        role,
                        base * (1 + v) * 2**i,
                        flops,
                        None,
                        "x",
                        None,
                    )
                )
    return RooflineInput("big", V100_ROOFS, tuple(points), ("before", "after"))


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    return hierarchical_chart(v100_input())


def layers_with(spec: dict[str, Any], dataset: str) -> list[dict[str, Any]]:
    return [layer for layer in spec["layer"] if layer["data"] == {"name": dataset}]


# ------------------------------------------------------------------------------ inputs


def test_inputs_reject_bad_values() -> None:
    with pytest.raises(ValueError, match="role"):
        RoofLine("x", "X", "memory", 1e9, "measured", "compute")
    with pytest.raises(ValueError, match="role"):
        RoofLine("x", "X", "compute", 1e9, "measured", "device")
    with pytest.raises(ValueError, match="positive"):
        RoofLine("x", "X", "compute", 0.0, "measured", "compute")
    with pytest.raises(ValueError, match="sub-ceiling"):
        RoofLine("x", "X", "memory", 1e9, "measured", "device", sub_ceiling=True)
    with pytest.raises(ValueError, match="positive"):
        ChartPoint("c", "k", "v", "HBM", "device", math.nan, 1e9, None, "x", None)
    with pytest.raises(ValueError, match="unique"):
        RooflineInput("t", (V100_ROOFS[0], V100_ROOFS[0]), ())


# ------------------------------------------------------------------------ the spec dict


def test_every_roof_is_labelled(spec: dict[str, Any]) -> None:
    texts = {row["text"] for row in spec["datasets"]["roofs"]}
    assert texts == set(ROOF_LABELS) | set(DATASHEET_LABELS)
    text_layers = [layer for layer in layers_with(spec, "roofs") if _mark(layer) == "text"]
    assert text_layers and all(
        layer["encoding"]["text"]["field"] == "text" for layer in text_layers
    )


def test_every_point_is_in_the_data(spec: dict[str, Any]) -> None:
    rows = spec["datasets"]["points"]
    got = {(r["variant"], r["level"], r["x"], r["y"]) for r in rows}
    want = {
        (variant, level, ai, flops)
        for variant, (ais, flops) in GPP.items()
        for level, ai in ais.items()
    }
    assert got == want
    (points_layer,) = layers_with(spec, "points")
    assert _mark(points_layer) == "point"
    tips = {t["title"] for t in points_layer["encoding"]["tooltip"]}
    assert tips >= {"Case", "Kernel", "Variant", "Level", "Intensity", "Performance"}
    assert tips >= {"Efficiency", "Class", "Binding"}
    row = next(r for r in rows if r["variant"] == "nw=6" and r["level"] == "HBM")
    assert row["perf"] == "4.69 TFLOP/s"
    assert row["ai"] == "13.2 FLOP/B"
    assert row["eff"] == "66.4 %"
    assert row["bind"] == "FP64 FMA"


def test_axes_are_log_with_unit_label_expressions(spec: dict[str, Any]) -> None:
    x, y = spec["encoding"]["x"], spec["encoding"]["y"]
    assert x["scale"]["type"] == y["scale"]["type"] == "log"
    # x labels are plain numbers (the title names the unit); y labels carry it
    assert "FLOP" not in x["axis"]["labelExpr"]
    assert "TFLOP/s" in y["axis"]["labelExpr"] and "GFLOP/s" in y["axis"]["labelExpr"]
    assert "FLOP/byte" in x["title"] and "FLOP/s" in y["title"]
    # labelled twice a decade, at 1 and 3 (x 10^k), inside the domain
    for axis in (x, y):
        lo, hi = axis["scale"]["domain"]
        values = axis["axis"]["values"]
        assert all(lo <= v <= hi for v in values)
        assert {f"{v:.0e}"[0] for v in values} == {"1", "3"}
        assert len(values) >= 2 * math.floor(math.log10(hi / lo))


def test_a_decade_is_as_long_on_both_axes(spec: dict[str, Any]) -> None:
    """Bandwidth roofs run at 45 degrees: pixels per decade agree on x and y."""
    (x_lo, x_hi) = spec["encoding"]["x"]["scale"]["domain"]
    (y_lo, y_hi) = spec["encoding"]["y"]["scale"]["domain"]
    per_x = spec["width"] / math.log10(x_hi / x_lo)
    per_y = spec["height"] / math.log10(y_hi / y_lo)
    assert per_x == pytest.approx(per_y, rel=0.01)


def test_domains_hold_points_roofs_and_ridges(spec: dict[str, Any]) -> None:
    (x_lo, x_hi) = spec["encoding"]["x"]["scale"]["domain"]
    (y_lo, y_hi) = spec["encoding"]["y"]["scale"]["domain"]
    data = spec["datasets"]
    for row in data["points"] + data["ridges"]:
        assert x_lo < row["x"] < x_hi and y_lo < row["y"] < y_hi
    for row in data["roofs"]:
        if row["kind"] == "compute":
            assert y_lo < row["y"] < y_hi
    # Padded: the extreme point is not at the edge.
    assert max(r["x"] for r in data["points"]) * 1.5 < x_hi


def test_diagonals_stop_at_their_ridge(spec: dict[str, Any]) -> None:
    roofs = {row["id"]: row for row in spec["datasets"]["roofs"]}
    hbm = roofs["hbm"]
    assert hbm["y2"] == pytest.approx(7068.86 * G)
    assert hbm["x2"] == pytest.approx(7068.86 / 828.758)
    assert hbm["y"] == pytest.approx(828.758 * G * hbm["x"])
    # The datasheet diagonal meets the datasheet compute roof.
    assert roofs["hbm-ds"]["y2"] == pytest.approx(7800 * G)
    ridges = {(r["role"], r["basis"]): r for r in spec["datasets"]["ridges"]}
    assert set(ridges) == {
        ("device", "measured"),
        ("llc", "measured"),
        ("l1", "measured"),
        ("device", "datasheet"),
    }
    assert ridges[("l1", "measured")]["x"] == pytest.approx(7068.86 / 14336)
    # Compute roofs start on the highest diagonal.
    assert roofs["fma"]["x"] == pytest.approx(7068.86 / 14336)
    assert roofs["fma"]["y"] == roofs["fma"]["y2"] == pytest.approx(7068.86 * G)


def test_datasheet_roofs_dashed_measured_solid_sub_ceilings_thin(spec: dict[str, Any]) -> None:
    (rule,) = [layer for layer in layers_with(spec, "roofs") if _mark(layer) == "rule"]
    dash = rule["encoding"]["strokeDash"]
    patterns = dict(zip(dash["scale"]["domain"], dash["scale"]["range"], strict=True))
    rows = {row["id"]: row for row in spec["datasets"]["roofs"]}
    for roof_id, row in rows.items():
        pattern = patterns[row["dash"]]
        if row["basis"] == "datasheet":
            assert pattern != [1, 0] and len(pattern) >= 2, roof_id
        else:
            assert pattern == [1, 0], roof_id
    # One dash pattern per level for datasheet roofs, so levels differ without colour.
    datasheet = [tuple(p) for k, p in DASHES.items() if k.startswith("datasheet:")]
    assert len(set(datasheet)) == len(datasheet)
    assert rule["encoding"]["strokeWidth"]["field"] == "sw"
    assert rows["nofma"]["sw"] < rows["fma"]["sw"]


def test_colour_and_shape_by_role(spec: dict[str, Any]) -> None:
    (points_layer,) = layers_with(spec, "points")
    colour = points_layer["encoding"]["color"]["scale"]
    mapping = dict(zip(colour["domain"], colour["range"], strict=True))
    # the levels' names (data, not expression text), coloured by their role: L1 (l1),
    # L2 (the last-level cache), HBM (device memory)
    assert mapping == {
        "L1": "#009E73",
        "L2": "#0072B2",
        "HBM": "#D55E00",
        "Compute": "#000000",
    }
    shape = points_layer["encoding"]["shape"]["scale"]
    shapes = dict(zip(shape["domain"], shape["range"], strict=True))
    assert len({shapes["L1"], shapes["L2"], shapes["HBM"]}) == 3


def test_launch_joins_and_arrows(spec: dict[str, Any]) -> None:
    joins = spec["datasets"]["joins"]
    assert sorted((j["x"], j["x2"], j["y"]) for j in joins) == sorted(
        (min(ais.values()), max(ais.values()), flops) for ais, flops in GPP.values()
    )
    arrows = spec["datasets"]["arrows"]
    assert len(arrows) == 3  # one per level, nw=1 -> nw=6
    hbm = next(a for a in arrows if a["role"] == "device")
    assert (hbm["x"], hbm["x2"]) == (GPP["nw=1"][0]["HBM"], GPP["nw=6"][0]["HBM"])
    assert hbm["xm"] == pytest.approx(math.sqrt(hbm["x"] * hbm["x2"]))
    heads = [layer for layer in layers_with(spec, "arrows") if _mark(layer) == "point"]
    assert heads and "angle" in heads[0]["mark"]
    assert derive_arrows(v100_input()) == [
        Arrow("BerkeleyGW", "gpp", level, "nw=1", "nw=6") for level in ("L1", "L2", "HBM")
    ]


def test_arrows_follow_variant_order_and_roles() -> None:
    inp = v100_input()
    reversed_order = RooflineInput(inp.title, inp.roofs, inp.points, ("nw=6", "nw=1"))
    assert {a.from_variant for a in derive_arrows(reversed_order)} == {"nw=6"}
    only_device = hierarchical_chart(inp, arrow_roles=("device",))
    assert [a["role"] for a in only_device["datasets"]["arrows"]] == ["device"]
    explicit = RooflineInput(
        inp.title, inp.roofs, inp.points, (), (Arrow("BerkeleyGW", "gpp", "L2", "nw=1", "nw=6"),)
    )
    assert [a["role"] for a in hierarchical_chart(explicit)["datasets"]["arrows"]] == ["llc"]


def test_interaction_config_and_metadata(spec: dict[str, Any]) -> None:
    (points_layer,) = layers_with(spec, "points")
    params = {p["name"]: p for p in spec["params"]}
    assert all(p["views"] == [points_layer["name"]] for p in params.values())
    assert params["kernel_hover"]["select"]["fields"] == ["case", "kernel"]
    assert params["zoom"]["bind"] == "scales"
    assert "condition" in points_layer["encoding"]["opacity"]
    assert spec["config"]["font"] == "sans-serif"
    assert "Hierarchical roofline" in spec["description"]
    assert spec["usermeta"]["chart"] == "roofgen.hierarchical-roofline"
    # No per-point legend: only the level legend on colour/shape.
    for layer in spec["layer"]:
        for channel, enc in layer["encoding"].items():
            if isinstance(enc, dict) and enc.get("legend") not in (None,):
                assert channel in ("color", "shape")
    json.dumps(spec)  # plain JSON


def test_spec_validates_against_the_vega_lite_schema(spec: dict[str, Any]) -> None:
    """One schema validation for the hierarchical chart kind (builds skip it for speed)."""
    schema = load_schema()
    assert schema["$schema"].startswith("http://json-schema.org/draft-07")
    jsonschema.Draft7Validator(schema).validate(spec)
    assert spec["$schema"].endswith(f"{vega_lite_version()}.json")
    alt.LayerChart.from_dict(spec)  # Altair's own round trip


@settings(max_examples=40, deadline=None)
@given(
    ais=st.lists(st.floats(1e-4, 1e4), min_size=1, max_size=6),
    flops=st.floats(1e6, 1e16),
    bw=st.floats(1e9, 1e14),
    peak=st.floats(1e9, 1e17),
)
def test_domains_always_hold_the_data(
    ais: list[float], flops: float, bw: float, peak: float
) -> None:
    points = tuple(
        ChartPoint("c", "k", "v", f"L{i}", "device", ai, flops, None, "x", None)
        for i, ai in enumerate(ais)
    )
    roofs = (
        RoofLine("m", "HBM", "memory", bw, "measured", "device"),
        RoofLine("c", "FP", "compute", peak, "measured", "compute"),
    )
    spec = hierarchical_chart(RooflineInput("t", roofs, points))
    (x_lo, x_hi) = spec["encoding"]["x"]["scale"]["domain"]
    (y_lo, y_hi) = spec["encoding"]["y"]["scale"]["domain"]
    assert all(x_lo < ai < x_hi for ai in ais)
    assert y_lo < flops < y_hi and y_lo < peak < y_hi
    assert x_lo < peak / bw < x_hi
    assert math.log10(x_hi / x_lo) >= 2.5 - 1e-9


def test_thousand_kernels_build_quickly() -> None:
    inp = big_input(1000)
    start = time.process_time()  # CPU seconds: load stretches wall time
    spec = hierarchical_chart(inp)
    elapsed = time.process_time() - start
    assert elapsed < 5.0, f"1,000-kernel spec took {elapsed:.2f} s of CPU"
    assert len(spec["datasets"]["points"]) == 6000
    # Crowded charts keep arrows at device memory only and thin out the marks.
    assert {a["role"] for a in spec["datasets"]["arrows"]} == {"device"}
    (points_layer,) = layers_with(spec, "points")
    assert points_layer["mark"]["size"] < 36
    assert points_layer["mark"]["aria"] is False


# ---------------------------------------------------------------------------- rendering


def test_vl_convert_matches_altair_vega_lite() -> None:
    altair_major_minor = vega_lite_version().lstrip("v").split(".")[:2]
    assert vl_convert_version().lstrip("v").split(".")[:2] == altair_major_minor


def test_svg_is_byte_stable_and_has_stable_ids(spec: dict[str, Any]) -> None:
    other = hierarchical_chart(v100_input(datasheet=False))
    first = to_svg(spec)
    to_svg(other)
    again = to_svg(spec)
    assert first == again
    ids = re.findall(r'\bid="([^"]+)"', first)
    assert ids, "the chart clips its marks, so the SVG has clip paths"
    assert not [i for i in ids if re.fullmatch(r"clip\d+", i)]
    assert len(set(ids)) == len(ids)
    refs = set(re.findall(r"url\(#([^)]+)\)", first))
    assert refs and refs <= set(ids)
    assert set(re.findall(r'\bid="([^"]+)"', to_svg(other))).isdisjoint(ids)


def test_svg_shows_roof_labels_and_unit_ticks(spec: dict[str, Any]) -> None:
    svg = to_svg(spec)
    for label in ROOF_LABELS + DATASHEET_LABELS:
        assert f">{label}</text>" in svg, label
    ticks = set(re.findall(r">([^<>]*FLOP/s)</text>", svg))
    assert {"1 TFLOP/s", "3 TFLOP/s", "10 TFLOP/s", "300 GFLOP/s"} <= ticks
    texts = set(re.findall(r">([^<>]*)</text>", svg))
    assert {"0.1", "0.3", "1", "3", "10"} <= texts  # x: the title names the unit
    assert 'font-family="sans-serif"' in svg


def test_stabilise_svg_ids_rewrites_references() -> None:
    svg = (
        '<svg><defs><clipPath id="clip7"><rect/></clipPath>'
        '<linearGradient id="gradient_3"/></defs>'
        '<g clip-path="url(#clip7)"><rect fill="url(#gradient_3)"/>'
        '<use xlink:href="#clip7"/><use href="#gradient_3"/></g></svg>'
    )
    out = stabilise_svg_ids(svg, "p")
    assert out == (
        '<svg><defs><clipPath id="p-1"><rect/></clipPath>'
        '<linearGradient id="p-2"/></defs>'
        '<g clip-path="url(#p-1)"><rect fill="url(#p-2)"/>'
        '<use xlink:href="#p-1"/><use href="#p-2"/></g></svg>'
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def test_the_png_reader_undoes_every_filter() -> None:
    """A 3 x 5 grey image, one row per filter type; the filtered bytes worked by hand."""
    rows = [
        (1, [10, 10, 10]),  # Sub: 10, 10+10, 20+10
        (4, [30, 10, 10]),  # Paeth: 40-up 10; 50-left 40; 60-left 50
        (2, [1, 2, 3]),  # Up: 41-40, 52-50, 63-60
        (3, [241, 72, 174]),  # Average: 5-(0+41)//2 mod 256, 100-(5+52)//2, 255-(100+63)//2
        (0, [7, 8, 9]),
    ]
    raw = b"".join(bytes([kind, *line]) for kind, line in rows)
    ihdr = struct.pack(">IIBBBBB", 3, 5, 8, 0, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(raw))
    png += _chunk(b"IEND", b"")
    assert read_png(png) == (
        3,
        5,
        1,
        bytes([10, 20, 30, 40, 50, 60, 41, 52, 63, 5, 100, 255, 7, 8, 9]),
    )
    with pytest.raises(AssertionError):
        read_png(png[:-1] + bytes([png[-1] ^ 1]))  # one bit of the last CRC flipped


def test_png_and_self_contained_html(spec: dict[str, Any]) -> None:
    svg = re.search(r'<svg[^>]* width="(\d+)" height="(\d+)"', to_svg(spec))
    assert svg, "the SVG states its size"
    svg_width, svg_height = int(svg.group(1)), int(svg.group(2))
    png = to_png(spec, scale=1)
    width, height, channels, pixels = read_png(png)
    assert (width, height) == (svg_width, svg_height)  # the chart's size, axes and legend included
    assert len(pixels) == width * height * channels
    assert drawn_share(png) > 0.01, "a blank image"  # roofs, points, text: 12% here
    png = to_png(spec, scale=2)
    assert struct.unpack(">II", png[16:24]) == (2 * svg_width, 2 * svg_height)
    html = to_html(spec)
    assert "<html" in html.lower()
    assert not re.search(r"<script[^>]+src=", html), "HTML must not load scripts"
    assert "FP64 FMA" in html


def _mark(layer: dict[str, Any]) -> str:
    mark = layer["mark"]
    return str(mark["type"] if isinstance(mark, dict) else mark)
