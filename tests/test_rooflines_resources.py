"""Every resource of the model in one table (the seeds' "3-D roofline"): the JSON output
names each kind, unknown resources are marked, the example specs exercise every roofline
and bind on several kinds of resource, and the pages get one section per kind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from roofgen.analysis.bounds import Thresholds
from roofgen.api import check
from roofgen.cli import main
from roofgen.site.context import build_context
from roofgen.site.sections import SECTIONS
from roofgen.spec.schema import load_schema

REPO = Path(__file__).resolve().parents[1]
SPECS = REPO / "specs"

MACHINE = """\
roofgen: 1
kind: machine
id: every
name: Every resource
clocks: {sm: 1000 MHz}
compute:
  - {id: tensor, kind: tensor, peaks: {bf16: 100 TFLOP/s}}
memory:
  - {id: hbm, role: device, bandwidth: 1 TB/s, transaction_size: 32 B}
links:
  - {id: nvlink, kind: nvlink, bandwidth_per_direction: 100 GB/s, latency: 2 us}
power:
  limit: 300 W
  constant: 100 W
  energy_per_flop: {bf16: 1 pJ/FLOP}
  energy_per_byte: {hbm: 10 pJ/B}
issue: {sms: 10, schedulers_per_sm: 4}
runtime: {launch_overhead: 4 us}
"""

CASE = """\
roofgen: 1
kind: case
id: every-case
title: Every resource
machines: [every]
kernels:
  - {id: k, operator: {kind: gemm}}
variants:
  - id: v
    launches:
      - kernel: k
        measurement:
          time: 2 ms
          flops: {tensor: {bf16: 100e9 FLOP}}   # 1 ms
          bytes: {hbm: 0.5 GB}                 # 0.5 ms
          instructions: 2e7 inst               # 2e7 / (10 x 4 x 1 GHz) = 0.5 ms
          collectives:
            - {kind: all-gather, bytes: 80 MB, ranks: 8, link: nvlink}  # 7 x 2 us + 0.7 ms
          launches: 1                          # 4 us
"""


def test_json_carries_every_resource_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "m.yaml").write_text(MACHINE, encoding="utf-8")
    (tmp_path / "c.yaml").write_text(CASE, encoding="utf-8")
    assert main(["analyze", "--format", "json", "-q", str(tmp_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator(load_schema("output")).validate(doc)
    launch = doc["cases"][0]["variants"][0]["launches"][0]
    bound = launch["bound_s"]
    assert set(bound) == {"compute.tensor", "memory.hbm", "link.nvlink", "issue", "power", "launch"}
    assert bound["compute.tensor"] == pytest.approx(1e-3)
    assert bound["memory.hbm"] == pytest.approx(0.5e-3)
    # a ring all-gather over 8 ranks pays n - 1 = 7 latencies
    assert bound["link.nvlink"] == pytest.approx(7 * 2e-6 + 7 / 8 * 80e6 / 100e9)  # 714 us
    assert bound["issue"] == pytest.approx(0.5e-3)
    # (100e9 x 1 pJ + 0.5e9 x 10 pJ) / (300 W - 100 W) = 0.105 J / 200 W = 525 us
    assert bound["power"] == pytest.approx(0.105 / 200)
    assert bound["launch"] == pytest.approx(4e-6)
    assert launch["binding"] == "compute.tensor"
    assert launch["runner_up"] == "link.nvlink"
    assert launch["coverage"]["unknown"] == []
    assert launch["facts"] == []


def test_unknown_resources_are_marked(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "m.yaml").write_text(MACHINE, encoding="utf-8")
    case = CASE.replace(
        "          instructions: 2e7 inst               # 2e7 / (10 x 4 x 1 GHz) = 0.5 ms\n", ""
    )
    (tmp_path / "c.yaml").write_text(case, encoding="utf-8")
    assert main(["analyze", "--format", "json", "-q", str(tmp_path)]) == 0
    launch = json.loads(capsys.readouterr().out)["cases"][0]["variants"][0]["launches"][0]
    assert "issue" not in launch["bound_s"]
    assert launch["coverage"]["unknown"] == ["issue"]


@pytest.fixture(scope="module")
def examples() -> Any:
    checked = check([SPECS], thresholds=Thresholds())
    assert checked.analysis is not None and checked.specs is not None
    return checked


def test_example_launches_bind_on_at_least_four_kinds(examples: Any):
    kinds: dict[str, list[str]] = {}
    for case in examples.analysis.cases:
        for v in case.variants:
            for r in v.launches:
                if r.binding is not None and r.klass in ("bound", "co-bound"):
                    kind = r.binding.split(".", 1)[0]
                    kinds.setdefault(kind, []).append(f"{case.case.id}/{v.variant}/{r.kernel}")
    assert {"compute", "memory", "link", "launch", "issue"} <= set(kinds), kinds


def test_examples_have_every_fact(examples: Any):
    facts = {
        f for c in examples.analysis.cases for v in c.variants for r in v.launches for f in r.facts
    }
    assert {"launch-bound", "power-limited", "sparse"} <= facts


def test_example_pages_have_a_section_of_every_kind(examples: Any):
    ctx = build_context(examples.analysis, examples.specs.machines, name="Examples")
    sections = {s.id for page in ctx.cases for s in page.sections}
    # The examples show a section of every kind there is (a new kind needs an example).
    assert len(sections) == len(SECTIONS)
    assert {"resources", "precision", "instructions", "communication", "energy", "sparse",
            "runtime"} <= sections  # fmt: skip
    assert all(any(s.id == "resources" for s in page.sections) for page in ctx.cases)
    machine_sections = {s.id for page in ctx.machines for s in page.sections}
    assert {"precision", "instructions", "links", "energy"} <= machine_sections
    keys = [slot.key for slot in ctx.charts]
    assert len(keys) == len(set(keys))
    for page in ctx.cases:
        ids = [slot.spec_id for slot in (*page.charts, *page.section_charts)]
        assert len(ids) == len(set(ids)), page.id


def test_resource_table_marks_binding_runner_up_and_unknown(examples: Any):
    ctx = build_context(examples.analysis, examples.specs.machines, name="Examples")
    page = next(p for p in ctx.cases if p.id == "tp-layer-h100")
    resources = next(s for s in page.sections if s.id == "resources")
    serial = resources.tables[0]
    assert serial.title == "Variant serial"
    rows = {row[0]: row[1:] for row in serial.rows}
    # The prefill all-reduce: 14 steps x 0.8 us + 117,440,512 B / 450 GB/s
    # = 11.2 + 261.0 = 272 us, binding.
    assert rows["NVLink 4 (link.nvlink)"][1] == "272 us (binding)"
    assert rows["NVLink 4 (link.nvlink)"][0] == "unknown"  # the GEMM recorded no link bytes
    assert rows["Measured"][1] == "322 us"


def test_efficiency_with_unknown_cache_levels_is_shown_as_at_least(examples: Any):
    """The prefill all-reduce records no L2 or L1 bytes. Its known bound is the link's
    14 x 0.8 us + 117,440,512 B / 450 GB/s = 272.18 us of 322 us: 84.5%, headroom
    322 / 272.18 = 1.18x; unknown levels could only raise the bound."""
    ctx = build_context(examples.analysis, examples.specs.machines, name="Examples")
    page = next(p for p in ctx.cases if p.id == "tp-layer-h100")
    serial = next(v for v in page.variants if v.id == "serial")
    row = serial.launches[1]
    efficiency = (11.2e-6 + 117_440_512 / 450e9) / 322e-6
    assert efficiency == pytest.approx(0.8453, abs=1e-4)
    assert row.efficiency == "at least 85%"
    assert row.headroom == "at most 1.18x"
    assert "efficiency at least 85%, headroom at most 1.18x" in row.verdict
