"""The schemas are valid, the example specs check clean, and the JSON output obeys its schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from roofgen.cli import main
from roofgen.spec.schema import ALL_SCHEMAS, check_schemas, load_schema

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"


def test_every_schema_is_valid_draft_2020_12():
    check_schemas()
    for kind in ALL_SCHEMAS:
        assert load_schema(kind)["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize("kind", ["machine", "case"])
def test_every_field_is_documented(kind):
    """Editors show descriptions: every property of the spec schemas has one."""
    missing = []

    def walk(node, path):
        if isinstance(node, dict):
            for key, sub in node.get("properties", {}).items():
                if "description" not in sub and key not in ("gpu", "driver"):
                    missing.append(f"{path}.{key}")
            for key, sub in node.items():
                walk(sub, f"{path}.{key}")
        elif isinstance(node, list):
            for i, sub in enumerate(node):
                walk(sub, f"{path}[{i}]")

    walk(load_schema(kind), kind)
    assert missing == []


def spec_files():
    return sorted(SPECS.rglob("*.yaml"))


def test_the_example_specs_exist():
    kinds = {f.parent.name for f in spec_files()}
    assert {"machines", "cases"} <= kinds


@pytest.mark.parametrize("path", spec_files(), ids=lambda p: p.name)
def test_each_example_spec_names_its_schema(path):
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# yaml-language-server: $schema=")


def test_example_specs_check_clean_under_strict(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["check", "--strict", "specs"]) == 0, capsys.readouterr().err


def test_analyze_json_obeys_the_output_schema(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["analyze", "--format", "json", "-q", "specs"]) == 0
    doc = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator(load_schema("output")).validate(doc)
    assert doc["roofgen_output"] == 1
    launch = doc["cases"][0]["variants"][0]["launches"][0]
    for key in ("case", "kernel", "variant", "machine", "time_s", "achieved_flop_per_s",
                "intensity_flop_per_byte", "attainable_flop_per_s",
                "attainable_by_level_flop_per_s", "binding", "runner_up", "class", "bound_s",
                "serial_bound_s", "efficiency", "roof_basis", "coverage"):  # fmt: skip
        assert key in launch


def test_seed_demo_ridge_in_the_output(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["analyze", "--format", "json", "-q", "specs"]) == 0
    doc = json.loads(capsys.readouterr().out)
    machines = {m["id"]: m for m in doc["machines"]}
    assert machines["seed-demo"]["ridge_flop_per_byte"]["compute.tensor.fp16"]["hbm"] == (
        pytest.approx(208.0)
    )
    a100 = machines["a100-40gb-sxm"]["ridge_flop_per_byte"]
    assert a100["compute.tensor.bf16"]["hbm"] == pytest.approx(312 / 1.555, rel=1e-9)
    assert a100["compute.fp32.fp32"]["hbm"] == pytest.approx(19.5 / 1.555, rel=1e-9)


def test_analyze_is_deterministic(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    main(["analyze", "--format", "json", "-q", "specs"])
    first = capsys.readouterr().out
    main(["analyze", "--format", "json", "-q", "specs"])
    assert capsys.readouterr().out == first
