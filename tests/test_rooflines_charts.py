"""The other roofline charts: one Vega-Lite schema validation per chart kind, Altair's
round trip, the roofs and points in the data, and byte-stable SVG."""

from __future__ import annotations

import json
import re
from typing import Any

import altair as alt
import jsonschema
import pytest
from altair.vegalite.v6.schema.core import load_schema

from roofgen.charts.history import HistoryInput, HistoryPoint
from roofgen.charts.kinds import CHART_KINDS, ChartInput, build_chart, chart_kind
from roofgen.charts.render import to_svg
from roofgen.charts.roofline_inputs import (
    Ceiling,
    CollectivePoint,
    CommPoint,
    CommunicationInput,
    EnergyInput,
    EnergyModel,
    EnergyPoint,
    InstructionInput,
    InstructionPointInput,
    LaunchKey,
    LinkRoof,
    PrecisionInput,
    PrecisionPoint,
    ResourceBar,
    ResourceGroup,
    ResourcesInput,
    RuntimeInput,
    RuntimePoint,
    SparseInput,
    SparsePointInput,
    TransactionWall,
)
from roofgen.charts.speedups import CaseSpeedup, SpeedupsInput

K = LaunchKey("case", "tuned", "gemm")
BF16 = Ceiling("tensor.bf16", "BF16/FP16", "tensor", "bf16", 312e12, "datasheet")
BF16_SPARSE = Ceiling(
    "tensor.bf16-sparse", "BF16 sparse", "tensor", "bf16-sparse", 624e12, "datasheet", sparse=True
)
SFU = Ceiling("sfu.t", "TRANSCENDENTAL (SFU)", "sfu", "transcendental", 2.436e12, "datasheet")

INPUTS: dict[str, ChartInput] = {
    "precision": PrecisionInput(
        "Precision",
        "sub",
        (BF16, BF16_SPARSE, SFU),
        "HBM2",
        1.555e12,
        (
            PrecisionPoint(K, "tensor", "Tensor cores", "bf16", 2700.0, 259.6e12, 312e12, 0.85),
            PrecisionPoint(K, "sfu", "SFU", "transcendental", 1.0, 0.5e12, 2.436e12, 0.2),
        ),
    ),
    "instruction": InstructionInput(
        "Instruction",
        "sub",
        32,
        489.6e9,
        (
            TransactionWall("l1", "L1", "l1", 437.5e9),
            TransactionWall("l2", "L2", "llc", 93.6e9),
            TransactionWall("hbm", "HBM", "device", 25.9e9),
        ),
        (("stride 0", 1.0), ("unit stride, 4-byte words", 0.25), ("stride >= 32 B", 1 / 32)),
        (("shared, no bank conflict", 1.0), ("shared, 32-way bank conflict", 1 / 32)),
        (
            InstructionPointInput(K, "l1", "L1", "l1", 0.33, 25.8e9),
            InstructionPointInput(K, "global", "Global load/store", "global", 0.056, 2.15e9),
        ),
    ),
    "communication": CommunicationInput(
        "Communication",
        "sub",
        (LinkRoof("nvlink", "NVLink 3", 300e9, 3e-6),),
        "Tensor BF16",
        312e12,
        (CommPoint(K, "nvlink", 585.0, 150e12),),
        (
            CollectivePoint(
                K,
                "all-reduce",
                8,
                "NVSwitch",
                "nvlink",
                117_440_512,
                394.5e-6,
                450e-6,
                "bandwidth-bound",
            ),
        ),
    ),
    "energy": EnergyInput(
        "Energy",
        "sub",
        400.0,
        100.0,
        EnergyModel("bf16", 0.5e-12, 10e-12, 100.0, 312e12, 1.555e12),
        "",
        (EnergyPoint(K, 2700.0, 0.65e12, 400.0, "measured", True),),
    ),
    "sparse": SparseInput(
        "Sparse",
        "sub",
        (BF16, BF16_SPARSE),
        "HBM2",
        1.555e12,
        (
            SparsePointInput(K, "Tensor cores", "bf16", "executed", 1699.0, 243.6e12, 0.05),
            SparsePointInput(K, "Tensor cores", "bf16", "dense-equivalent", 3398.0, 487.1e12, 0.05),
        ),
    ),
    "runtime": RuntimeInput(
        "Runtime",
        "sub",
        (("stream", 3e-6), ("graph", 1e-6), ("pdl", 0.6e-6)),
        8e-6,
        (
            RuntimePoint("case", "eager", 200, 641e-6, 608e-6, "stream", True),
            RuntimePoint("case", "persistent", 16, 121e-6, 24e-6, "graph", False),
        ),
    ),
    "resources": ResourcesInput(
        "Resources",
        "sub",
        (ResourceGroup("tuned / gemm", 4.236e-3, 3.6e-3),),
        (
            ResourceBar(0, "compute.tensor", "Tensor cores", 3.6e-3, "binding"),
            ResourceBar(0, "memory.l1", "L1", 2.48e-3, "runner-up"),
            ResourceBar(0, "memory.hbm", "HBM2", 0.84e-3, "other"),
            ResourceBar(0, "compute.fp64", "FP64 pipe", 0.0, "other"),
            ResourceBar(0, "issue", "Instruction issue", None, "unknown"),
        ),
    ),
    "history": HistoryInput(
        "gemm: history",
        (
            HistoryPoint(
                0,
                "1a2b3c4d5e6f",
                "2026-01-05T10:00:00Z",
                "Add the case",
                "gemm/base",
                4.236e-3,
                0.85,
                "compute.tensor",
            ),  # fmt: skip
            HistoryPoint(
                1,
                "2b3c4d5e6f7a",
                "2026-01-09T10:00:00Z",
                "Tile <K> & 'swizzle'",
                "gemm/base",
                3.9e-3,
                0.92,
                "compute.tensor",
            ),  # fmt: skip
            HistoryPoint(
                1,
                "2b3c4d5e6f7a",
                "2026-01-09T10:00:00Z",
                "Tile <K> & 'swizzle'",
                "gemm/tuned",
                3.7e-3,
                None,
                None,
            ),  # fmt: skip
        ),
    ),
    "speedups": SpeedupsInput(
        "Speedups",
        "sub",
        (
            CaseSpeedup("a", "A", "cases/a/index.html", "kernel", 1.79, 1.76, 1.81, "significant"),
            CaseSpeedup(
                "a", "A", "cases/a/index.html", "end-to-end", 1.11, None, None, "unknown noise"
            ),
            CaseSpeedup("b", "B", "cases/b/index.html", "kernel", 1.02, 0.97, 1.08, "within noise"),
        ),
    ),  # fmt: skip
}


@pytest.fixture(scope="module")
def specs() -> dict[str, dict[str, Any]]:
    return {name: build_chart(inp) for name, inp in INPUTS.items()}


def test_every_kind_has_a_builder(specs: dict[str, dict[str, Any]]):
    kinds = {chart_kind(inp) for inp in INPUTS.values()}
    assert kinds | {"roofgen.hierarchical-roofline"} == set(CHART_KINDS)
    for name, spec in specs.items():
        assert spec["usermeta"]["chart"] == chart_kind(INPUTS[name])


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_spec_validates_against_the_vega_lite_schema(name: str, specs: dict[str, dict[str, Any]]):
    """One schema validation per chart kind (builds skip it for speed)."""
    spec = specs[name]
    jsonschema.Draft7Validator(load_schema()).validate(spec)
    cls = alt.VConcatChart if "vconcat" in spec else alt.LayerChart
    cls.from_dict(spec)  # Altair's own round trip


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_svg_is_byte_stable(name: str, specs: dict[str, dict[str, Any]]):
    first = to_svg(specs[name])
    to_svg(specs["precision" if name != "precision" else "runtime"])
    assert to_svg(specs[name]) == first
    ids = re.findall(r'\bid="([^"]+)"', first)
    assert not [i for i in ids if re.fullmatch(r"clip\d+", i)]


def _texts(svg: str) -> set[str]:
    return set(re.findall(r">([^<>]+)</text>", svg))


def test_precision_chart_draws_every_ceiling(specs: dict[str, dict[str, Any]]):
    spec = specs["precision"]
    texts = {r["text"] for r in spec["datasets"]["ceilings"]}
    assert texts == {
        "BF16/FP16 312 TFLOP/s",
        "BF16 sparse 624 TFLOP/s",
        "TRANSCENDENTAL (SFU) 2.44 TOP/s",
    }
    dashes = {r["id"]: r["dash"] for r in spec["datasets"]["ceilings"]}
    assert dashes["tensor.bf16-sparse"] == "2:4 sparse, datasheet"
    assert dashes["tensor.bf16"] == "dense, datasheet"
    ceiling = {r["id"]: r for r in spec["datasets"]["ceilings"]}["tensor.bf16"]
    assert ceiling["x"] == pytest.approx(312e12 / 1.555e12)  # starts at its ridge
    assert len(spec["datasets"]["points"]) == 2
    assert texts <= _texts(to_svg(spec))


def test_instruction_chart_ceilings_walls_and_points(specs: dict[str, dict[str, Any]]):
    spec = specs["instruction"]
    assert spec["usermeta"]["issue_per_s"] == pytest.approx(489.6e9)
    assert spec["usermeta"]["transactions_per_s"] == {"l1": 437.5e9, "l2": 93.6e9, "hbm": 25.9e9}
    walls = {r["text"] for r in spec["datasets"]["levels-walls"]}
    assert walls == {"L1 437.5 GTXN/s", "L2 93.6 GTXN/s", "HBM 25.9 GTXN/s"}
    ridges = {r["text"]: r["x2"] for r in spec["datasets"]["levels-walls"]}
    assert ridges["HBM 25.9 GTXN/s"] == pytest.approx(489.6 / 25.9)
    patterns = [r["text"] for r in spec["datasets"]["pattern-walls"]]
    assert "stride 0; shared, no bank conflict (1)" in patterns
    assert "stride >= 32 B; shared, 32-way bank conflict (1/32)" in patterns
    assert len(spec["datasets"]["level-points"]) == 1
    assert len(spec["datasets"]["pattern-points"]) == 1
    assert "Issue 489.6 warp GIPS" in _texts(to_svg(spec))


def test_instruction_walls_far_below_one_keep_their_place() -> None:
    """Pattern walls at one position share a label. Grouped by twelve decimals, the walls
    of a 1e-60 B transaction (1e-62 instructions per transaction) fell on 0 and their
    label divided by zero; twelve significant digits keep them apart."""
    from dataclasses import replace

    base = INPUTS["instruction"]
    assert isinstance(base, InstructionInput)
    tiny = (("stride 0", 1.0), ("unit stride, 4-byte words", 1 / 1.28e62),
            ("unit stride, 8-byte words", 1 / 2.56e62), ("stride >= 1e-60 B", 1 / 32))  # fmt: skip
    spec = build_chart(replace(base, global_walls=tiny))
    rows = sorted((r["x"], r["text"]) for r in spec["datasets"]["pattern-walls"])
    assert [x for x, _ in rows] == pytest.approx([1 / 2.56e62, 1 / 1.28e62, 1 / 32, 1.0])
    assert [text for _, text in rows] == [
        "unit stride, 8-byte words (1/2.56e+62)",
        "unit stride, 4-byte words (1/1.28e+62)",
        "stride >= 1e-60 B; shared, 32-way bank conflict (1/32)",
        "stride 0; shared, no bank conflict (1)",
    ]


def test_instruction_legend_lists_only_the_levels_the_machine_has() -> None:
    """A machine without an L2 level (the H200 of the examples) has no L2 wall and no L2
    point: its legend listed 'llc' anyway, an entry drawn nowhere on the chart."""
    from dataclasses import replace

    base = INPUTS["instruction"]
    assert isinstance(base, InstructionInput)
    no_l2 = replace(base, walls=tuple(w for w in base.walls if w.role != "llc"))

    def domains(spec: dict[str, Any]) -> list[list[str]]:
        found = re.findall(r'"domain": \[([^\]]*)\]', json.dumps(spec))
        return [re.findall(r'"([A-Za-z0-9]+)"', d) for d in found]

    # the legend's domain holds the levels' names (the walls' names: L1, L2, HBM)
    assert ["L1", "L2", "HBM"] in domains(build_chart(base))
    levels = domains(build_chart(no_l2))
    assert ["L1", "HBM"] in levels
    assert not any("L2" in d for d in levels)


def test_runtime_chart_with_a_count_beyond_any_json_integer_renders() -> None:
    """2^53 calls of a kernel making 2^53 launches is 2^106 launches a step: as a JSON
    integer vl-convert refused it (beyond 2^64), and the build ended in an internal
    error. The chart writes such a count as a float."""
    from dataclasses import replace

    base = INPUTS["runtime"]
    assert isinstance(base, RuntimeInput)
    huge = RuntimePoint("case", "eager", 2**106, 641e-6, 608e-6, "stream", True)
    spec = build_chart(replace(base, points=(huge,)))
    [point] = spec["datasets"]["steps"]
    assert point["x"] == float(2**106) and isinstance(point["x"], float)
    assert point["n"] == str(2**106)
    assert to_svg(spec).startswith("<svg")


def test_communication_chart_link_roof_and_alpha_beta_curve(specs: dict[str, dict[str, Any]]):
    spec = specs["communication"]
    [roof] = spec["datasets"]["link-roofs"]
    assert roof["text"] == "NVLink 3 300 GB/s per direction, 3 us"
    assert roof["x2"] == pytest.approx(312e12 / 300e9)
    curve = spec["datasets"]["link-costs"]
    for row in curve:
        assert row["y"] == pytest.approx(3e-6 + row["x"] / 300e9)
    [turn] = spec["datasets"]["link-turns"]
    assert turn["x"] == pytest.approx(900e3)  # latency x bandwidth
    sources = sorted(p["source"] for p in spec["datasets"]["collectives"])
    assert sources == ["measured", "model (latency + bus bytes / bandwidth)"]


def test_energy_chart_with_and_without_coefficients(specs: dict[str, dict[str, Any]]):
    spec = specs["energy"]
    assert spec["usermeta"]["model"] is True
    assert len(spec["datasets"]["arch"]) == 48
    levels = {r["text"] for r in spec["datasets"]["power-levels"]}
    assert levels == {"Power limit 400 W", "Constant 100 W"}
    bare = INPUTS["energy"]
    assert isinstance(bare, EnergyInput)
    note = "No published energy coefficients for the test GPU"
    spec = build_chart(EnergyInput("Energy", "sub", 400.0, None, None, note, bare.points))
    assert spec["usermeta"]["model"] is False
    assert spec["datasets"]["arch"] == [] and spec["datasets"]["power-curve"] == []
    assert note in spec["title"]["subtitle"]
    jsonschema.Draft7Validator(load_schema()).validate(spec)


def test_sparse_chart_has_both_points_joined(specs: dict[str, dict[str, Any]]):
    spec = specs["sparse"]
    assert sorted(p["kind"] for p in spec["datasets"]["points"]) == ["dense-equivalent", "executed"]
    assert len(spec["datasets"]["joins"]) == 1
    assert {p["meta"] for p in spec["datasets"]["points"]} == {"5.0% of device bytes"}


def test_runtime_chart_floors(specs: dict[str, dict[str, Any]]):
    spec = specs["runtime"]
    floors = {r["mechanism"]: r for r in spec["datasets"]["floors"]}
    assert set(floors) == {"stream", "graph", "pdl"}
    for mech, cost in (("stream", 3e-6), ("graph", 1e-6), ("pdl", 0.6e-6)):
        assert floors[mech]["y"] == pytest.approx(floors[mech]["x"] * cost)
    assert floors["stream"]["text"] == "Stream launch 3 us each"
    steps = {p["step"]: p for p in spec["datasets"]["steps"]}
    assert steps["eager"]["bound"] == "yes" and steps["persistent"]["bound"] == "no"


def test_resources_chart_bars_rule_and_unknown(specs: dict[str, dict[str, Any]]):
    spec = specs["resources"]
    bars = {r["resource"]: r for r in spec["datasets"]["bars"]}
    assert bars["compute.tensor"]["role"] == "binding"
    assert bars["compute.tensor"]["x2"] == pytest.approx(3.6e-3)
    assert bars["memory.l1"]["role"] == "runner-up"
    assert bars["issue"]["label"] == "unknown"
    assert bars["compute.fp64"]["label"] == "no demand"
    assert {r["measured"] for r in bars.values()} == {4.236e-3}  # the tick in every row
    [header] = spec["datasets"]["headers"]
    assert header["text"] == "tuned / gemm: measured 4.24 ms, bound 3.6 ms"
    domain = spec["layer"][0]["encoding"]["y"]["scale"]["domain"]
    assert domain[0] == header["row"] and len(domain) == 6  # the header, then 5 resources
    svg = to_svg(spec)
    assert {"unknown", "no demand", "Tensor cores", "Instruction issue"} <= _texts(svg)
