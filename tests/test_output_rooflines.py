"""Every roofline kind in the analysis JSON: `analyze --format json` on the example specs
carries each launch's and each step's kinds (``rooflines``), obeys the output schema, and
the schema describes every field it writes. Expected values are computed by hand from the
example specs' own numbers (their comments show the same sums)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from roofgen.analysis import kinds
from roofgen.analysis.runtime import RuntimeFloor
from roofgen.analysis.sparse import SparsePoint
from roofgen.cli import main
from roofgen.report.analysis import roofline_json
from roofgen.spec.schema import load_schema

SPECS = Path(__file__).resolve().parents[1] / "specs"
# Every kind of the analysis's registry is written, each under its own key.
LAUNCH_KINDS = {key for key, _ in kinds.LAUNCH_KINDS}
VARIANT_KINDS = {key for key, _ in kinds.VARIANT_KINDS}


@pytest.fixture(scope="module")
def doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What `roofgen analyze --format json specs` writes."""
    out = tmp_path_factory.mktemp("analyze") / "analysis.json"
    assert main(["analyze", "--format", "json", "-q", "-o", str(out), str(SPECS)]) == 0
    loaded: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return loaded


def _variant(doc: dict[str, Any], case: str, variant: str) -> dict[str, Any]:
    c = next(c for c in doc["cases"] if c["id"] == case)
    return next(v for v in c["variants"] if v["variant"] == variant)


def _launch(doc: dict[str, Any], case: str, variant: str, index: int) -> dict[str, Any]:
    launch: dict[str, Any] = _variant(doc, case, variant)["launches"][index]
    return launch


def test_analyze_json_with_every_kind_obeys_the_output_schema(doc: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(load_schema("output")).validate(doc)
    assert doc["roofgen_output"] == 1
    for case in doc["cases"]:
        for v in case["variants"]:
            assert set(v["rooflines"]) == VARIANT_KINDS
            for launch in v["launches"]:
                assert set(launch["rooflines"]) == LAUNCH_KINDS


def test_collectives_of_the_tensor_parallel_layer(doc: dict[str, Any]) -> None:
    # serial, launch 1: a ring all-reduce of 64 MiB over 8 ranks on NVLink 4
    # (450 GB/s per direction, 0.8 us a step): bus factor 2 x 7 / 8 = 1.75,
    # bus bytes 1.75 x 67,108,864 = 117,440,512 B, cost 2(n-1) = 14 steps x 0.8 us
    # + 117,440,512 / 450e9 = 11.2 + 260.98 us.
    comm = _launch(doc, "tp-layer-h100", "serial", 1)["rooflines"]["communication"]
    [c] = comm["collectives"]
    assert c["kind"] == "all-reduce" and c["ranks"] == 8 and c["link"] == "nvlink"
    assert c["factor"] == pytest.approx(1.75)
    assert c["bus_b"] == pytest.approx(117_440_512)
    assert c["steps"] == 14 and c["latency_s"] == pytest.approx(11.2e-6)
    assert c["bound_s"] == pytest.approx(11.2e-6 + 117_440_512 / 450e9)  # 272.18 us
    assert c["regime"] == "bandwidth-bound"  # 117 MB > 11.2 us x 450 GB/s = 5.04 MB
    assert c["measured_s"] == pytest.approx(322e-6)  # the launch is the collective alone
    [link] = comm["links"]  # 29,360,128 FLOP over the bus bytes
    assert link["intensity_flop_per_byte"] == pytest.approx(29_360_128 / 117_440_512)
    # decode, launch 5: 512 KiB -> 917,504 bus bytes, below 5.04 MB: latency-bound
    [small] = _launch(doc, "tp-layer-h100", "serial", 5)["rooflines"]["communication"][
        "collectives"
    ]
    assert small["bound_s"] == pytest.approx(11.2e-6 + 917_504 / 450e9)
    assert small["regime"] == "latency-bound"


def test_energy_of_the_tensor_parallel_layer(doc: dict[str, Any]) -> None:
    o_proj = _launch(doc, "tp-layer-h100", "serial", 0)["rooflines"]["energy"]
    assert o_proj["measured_j"] == pytest.approx(640 * 104e-6)  # 640 W x 104 us
    assert o_proj["flop_per_j"] == pytest.approx(68_719_476_736 / (640 * 104e-6))
    assert o_proj["power_limited"] is False
    # 697 W of the 700 W limit at 1755 MHz, below the roofs' 1830 MHz
    assert _launch(doc, "tp-layer-h100", "serial", 2)["rooflines"]["energy"]["power_limited"]
    step = _variant(doc, "tp-layer-h100", "serial")["rooflines"]["energy"]
    # 104 x 640 + 2 x 322 x 430 + 362 x 697 + 8.1 x 355 + 2 x 14.2 x 310 + 21.4 x 390 (uJ)
    by_hand = 104 * 640 + 2 * 322 * 430 + 362 * 697 + 8.1 * 355 + 2 * 14.2 * 310 + 21.4 * 390
    assert step["measured_j"] == pytest.approx(by_hand * 1e-6)  # 0.616 J
    assert step["power_limited"] == ["mlp-down"]


def test_instruction_points_of_the_tiled_transpose(doc: dict[str, Any]) -> None:
    inst = _launch(doc, "instruction-v100", "tiled", 0)["rooflines"]["instruction"]
    points = {p["level"]: p for p in inst["points"]}
    # L1: 16,777,216 transactions + 69,206,016 shared wavefronts; 29,360,128 warp instructions
    assert points["l1"]["transactions"] == pytest.approx(16_777_216 + 69_206_016)
    assert points["l1"]["intensity"] == pytest.approx(29_360_128 / 85_983_232)
    assert points["l1"]["warp_ips"] == pytest.approx(29_360_128 / 1.02e-3)
    assert points["global"]["intensity"] == pytest.approx(0.25)  # 4 B words, 32 B sectors
    assert points["shared"]["intensity"] == pytest.approx(1 / 16.5)  # 69,206,016 / 4,194,304
    # issue: 80 SMs x 4 schedulers x 1530 MHz = 489.6 warp GIPS
    assert inst["issue_share"] == pytest.approx(29_360_128 / 489.6e9 / 1.02e-3)
    v100 = next(m for m in doc["machines"] if m["id"] == "v100-sxm2")
    assert v100["instruction_ceilings"]["issue_per_s"] == pytest.approx(489.6e9)


def test_precision_options_of_the_large_gemm(doc: dict[str, Any]) -> None:
    options = _launch(doc, "gemm-large", "baseline", 0)["rooflines"]["precision"]["options"]
    by_target = {o["to_precision"]: o for o in options}
    assert by_target["fp8"]["available"] is False  # the A100 has no FP8
    int8 = by_target["int8"]
    # 1,099,511,627,776 BF16 FLOP at 624 TOP/s; the tensor cores still bind (L1 halves
    # to 1.33 ms), so the bound halves: 2x.
    assert int8["compute_s"] == pytest.approx(1_099_511_627_776 / 624e12)
    assert int8["bound_s"] == pytest.approx(1_099_511_627_776 / 624e12)
    assert int8["binding"] == "compute.tensor"
    assert int8["speedup"] == pytest.approx(2.0)
    # a, b, c (8192^2 elements each) shrink from 16 to 8 bits; the FP32 bias (8192) stays
    assert int8["byte_scale"] == pytest.approx((3 * 8192 * 8 + 32) / (3 * 8192 * 16 + 32))
    precision = _launch(doc, "gemm-large", "baseline", 0)["rooflines"]["precision"]
    [fp32, tensor] = precision["work"]  # by unit id, then precision
    assert (fp32["unit"], fp32["precision"]) == ("fp32", "fp32")
    assert (tensor["unit"], tensor["precision"]) == ("tensor", "bf16")
    assert tensor["peak_per_s"] == pytest.approx(312e12)
    assert tensor["rate_per_s"] == pytest.approx(1_099_511_627_776 / 6.410e-3)  # 171.5 TFLOP/s
    # 2.5 GiB + 128 MiB at HBM
    assert tensor["intensity_per_byte"] == pytest.approx(1_099_511_627_776 / (2.625 * 2**30))


def test_sparse_points_of_the_sparse_ffn(doc: dict[str, Any]) -> None:
    assert _launch(doc, "sparse-ffn-a100", "dense", 0)["rooflines"]["sparse"]["points"] == []
    [p] = _launch(doc, "sparse-ffn-a100", "sparse-2-4", 0)["rooflines"]["sparse"]["points"]
    assert p["precision"] == "bf16"
    assert p["dense_equivalent_flop"] == pytest.approx(1_924_145_348_608)
    assert p["executed_flop"] == pytest.approx(962_072_674_304)  # two of every four
    assert (p["dense_peak"], p["sparse_peak"]) == (pytest.approx(312e12), pytest.approx(624e12))
    assert p["executed_flop_per_s"] == pytest.approx(962_072_674_304 / 3.95e-3)
    assert p["metadata_share"] == pytest.approx(29_360_128 / 566_231_040)  # 28 MiB of metadata


def test_runtime_floor_of_the_decode_step(doc: dict[str, Any]) -> None:
    eager = _variant(doc, "decode-launches-h100", "eager")["rooflines"]["runtime"]
    floor = eager["floor"]
    assert eager["counted"] is True
    assert (floor["launches"], floor["syncs"], floor["mechanisms"]) == (200, 1, ["stream"])
    assert floor["floor_s"] == pytest.approx(200 * 3e-6 + 8e-6)  # 608 us
    assert floor["by_mechanism"] == {
        "stream": pytest.approx(608e-6),
        "graph": pytest.approx(200 * 1e-6 + 8e-6),
        "pdl": pytest.approx(200 * 0.6e-6 + 8e-6),
    }
    assert floor["launch_bound"] is True  # 608 us >= (1 - 0.15) x 641 us
    persistent = _variant(doc, "decode-launches-h100", "persistent")["rooflines"]["runtime"]
    assert persistent["floor"]["floor_s"] == pytest.approx(16 * 1e-6 + 8e-6)  # 24 us
    assert persistent["floor"]["launch_bound"] is False


def test_resource_view_of_the_large_gemm(doc: dict[str, Any]) -> None:
    launch = _launch(doc, "gemm-large", "baseline", 0)
    view = {r["resource"]: r for r in launch["rooflines"]["resources"]["resources"]}
    a100 = next(m for m in doc["machines"] if m["id"] == "a100-40gb-sxm")
    assert list(view) == a100["resources"]  # every resource, in the machine's order
    tensor = view["compute.tensor"]
    assert tensor["demand"] == pytest.approx(1_099_511_627_776)
    assert tensor["seconds"] == pytest.approx(1_099_511_627_776 / 312e12)  # 3.524 ms
    assert tensor["capacity"] == pytest.approx(312e12)  # at 1410 MHz, the roofs' clock
    assert tensor["role"] == "binding"
    assert view["memory.l1"]["role"] == "runner-up"  # 51.67e9 B / 19.49 TB/s = 2.651 ms
    assert view["memory.hbm"]["demand"] == pytest.approx(2.5 * 2**30 + 128 * 2**20)
    assert view["issue"]["known"] is False
    assert view["issue"]["why_unknown"] == "no instruction count (measurement.instructions)"
    assert view["issue"]["seconds"] is None


def test_one_rule_writes_every_kind() -> None:
    """Fields, then properties, in the order the class defines them; tuples as arrays;
    a non-finite number as null."""
    point = SparsePoint("tensor", "bf16", 1e12, 2e12, 312e12, 624e12, 4e8, 2e7, 0.01)
    assert roofline_json(point) == {
        "unit": "tensor",
        "precision": "bf16",
        "executed_flop": 1e12,
        "dense_equivalent_flop": 2e12,
        "dense_peak": 312e12,
        "sparse_peak": 624e12,
        "device_bytes": 4e8,
        "metadata_b": 2e7,
        "time_s": 0.01,
        "executed_flop_per_s": 1e14,
        "dense_equivalent_flop_per_s": 2e14,
        "metadata_share": 0.05,
    }
    floor = RuntimeFloor(3, 0, ("stream", "graph"), 1e-3, float("inf"), {"pdl": 1e-6}, False)
    assert roofline_json(floor)["mechanisms"] == ["stream", "graph"]
    assert roofline_json(floor)["floor_s"] is None
    assert roofline_json(floor)["by_mechanism"] == {"pdl": 1e-6}


def test_csv_rows_leave_the_kinds_to_the_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", "--format", "csv", "-q", str(SPECS)]) == 0
    header = capsys.readouterr().out.splitlines()[0].split(",")
    assert not [c for c in header if c.startswith("rooflines")]


def _described(node: Any, where: str) -> Iterator[str]:
    """Paths of schema properties without a description."""
    if isinstance(node, dict):
        for key, sub in node.get("properties", {}).items():
            if "description" not in sub:
                yield f"{where}.{key}"
            yield from _described(sub, f"{where}.{key}")
        for key in ("items", "additionalProperties"):
            yield from _described(node.get(key), f"{where}[]")
        for key in ("anyOf", "prefixItems"):
            for sub in node.get(key, []):
                yield from _described(sub, where)
        for key, sub in node.get("$defs", {}).items():
            yield from _described(sub, f"#{key}")


def test_output_schema_describes_every_field_and_is_open() -> None:
    schema = load_schema("output")
    assert list(_described(schema, "")) == []
    assert "readers ignore fields they do not know" in schema["description"]
    assert '"additionalProperties": false' not in json.dumps(schema)


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> list[dict[str, Any]]:
    """The object schemas ``node`` can be: through $ref and anyOf."""
    if "$ref" in node:
        return _resolve(schema, schema["$defs"][node["$ref"].rsplit("/", 1)[1]])
    if "anyOf" in node:
        return [x for sub in node["anyOf"] for x in _resolve(schema, sub)]
    return [node]


def _unknown_keys(schema: dict[str, Any], node: dict[str, Any], value: Any, where: str):
    for option in _resolve(schema, node):
        if isinstance(value, dict) and "properties" in option:
            for key, sub in value.items():
                if key not in option["properties"]:
                    yield f"{where}.{key}"
                else:
                    yield from _unknown_keys(
                        schema, option["properties"][key], sub, f"{where}.{key}"
                    )
        if isinstance(value, list) and isinstance(option.get("items"), dict):
            for i, sub in enumerate(value):
                yield from _unknown_keys(schema, option["items"], sub, f"{where}[{i}]")


def test_the_schema_names_every_field_the_output_writes(doc: dict[str, Any]) -> None:
    """Records are open for additions, so the schema alone would let an undescribed field
    through: every key the example output writes is one the schema describes."""
    schema = load_schema("output")
    assert sorted(set(_unknown_keys(schema, schema, doc, ""))) == []
