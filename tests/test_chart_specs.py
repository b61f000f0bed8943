"""Chart specs as roofgen writes them: the golden bytes, valid Vega-Lite, no Altair.

The charts write their Vega-Lite dicts themselves. The golden files in
``tests/golden/specs/`` hold the specs Altair built for the same inputs before that,
key order included (the site embeds specs in that order), with floats rounded to 10
significant digits; after an intended change of a chart, regenerate them with::

    ROOFGEN_REGEN_GOLDEN=1 pytest tests/test_chart_specs.py

Builds skip schema validation, so every chart of the example site is validated here
against the Vega-Lite schema that Altair ships.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from altair.vegalite.v6.schema.core import load_schema
from test_charts import big_input, v100_input
from test_rooflines_charts import INPUTS

from roofgen.api import check
from roofgen.charts import ChartPoint, RoofLine, RooflineInput
from roofgen.charts.kinds import CHART_KINDS, ChartInput, build_chart
from roofgen.charts.roofline_inputs import (
    CommunicationInput,
    EnergyInput,
    LinkRoof,
    PrecisionInput,
    ResourcesInput,
    RuntimeInput,
    SparseInput,
)
from roofgen.charts.speedups import SpeedupsInput
from roofgen.charts.vl import SCHEMA_URL, VEGA_LITE_VERSION
from roofgen.site.context import build_context

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).parent / "golden" / "specs"
REGEN = os.environ.get("ROOFGEN_REGEN_GOLDEN") == "1"


def _sweep_input() -> RooflineInput:
    """One launch over a shape sweep at two levels, under measured, datasheet and
    sub-ceiling roofs."""
    roofs = (
        RoofLine("hbm", "HBM", "memory", 2e12, "measured", "device"),
        RoofLine("l2", "L2", "memory", 6e12, "datasheet", "llc"),
        RoofLine("fma", "FP32 FMA", "compute", 60e12, "measured", "compute"),
        RoofLine("nofma", "FP32", "compute", 30e12, "datasheet", "compute", True),
    )
    points = tuple(
        ChartPoint(
            "case", "attn", "split", level, role, ai * scale, 1e12 * scale, 0.4, "memory-bound",
            "HBM", launch=f"1 seq={n}", sweep_index=i, shape=f"seq={n}",
        )
        for i, (n, scale) in enumerate(((1024, 1.0), (4096, 2.5)))
        for level, role, ai in (("HBM", "device", 4.0), ("L2", "llc", 1.5))
    )  # fmt: skip
    return RooflineInput("Sweep", roofs, points, ("split",), subtitle="sub")


def _edge_inputs() -> dict[str, ChartInput]:
    """Inputs that take the branches the other inputs do not: nothing to draw, no
    bandwidth, no energy model, no link latency."""
    energy = INPUTS["energy"]
    communication = INPUTS["communication"]
    assert isinstance(energy, EnergyInput) and isinstance(communication, CommunicationInput)
    return {
        "hierarchical-empty": RooflineInput("Empty", (), ()),
        "precision-empty": PrecisionInput("P", "", (), "HBM", None, ()),
        "sparse-empty": SparseInput("S", "", (), "HBM", None, ()),
        "energy-empty": EnergyInput("E", "", None, None, None, "no coefficients", ()),
        "energy-no-model": dataclasses.replace(energy, model=None, note="n"),
        "runtime-empty": RuntimeInput("R", "", (), None, ()),
        "communication-empty": CommunicationInput("C", "", (), "", None, (), ()),
        "speedups-empty": SpeedupsInput("S", "", ()),
        "communication-no-latency": dataclasses.replace(
            communication,
            compute_peak=None,
            links=(LinkRoof("nvlink", "NVLink 3", 300e9, None),),
        ),
        "resources-empty": ResourcesInput("Res", "", (), ()),
    }


GOLDEN_INPUTS: dict[str, ChartInput] = {
    **INPUTS,
    "hierarchical": v100_input(),
    "hierarchical-sweep": _sweep_input(),
    "hierarchical-crowded": big_input(110),
    **_edge_inputs(),
}
#: Inputs whose golden file keeps the row counts of the datasets, not the rows.
ROW_COUNTS_ONLY = {"hierarchical-crowded"}


def _round(value: Any) -> Any:
    """Floats to 10 significant digits (libm may differ in the last bits); key order kept."""
    if isinstance(value, float):
        return float(f"{value:.10g}")
    if isinstance(value, dict):
        return {k: _round(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_round(v) for v in value]
    return value


def _golden_text(name: str, spec: dict[str, Any]) -> str:
    if name in ROW_COUNTS_ONLY:
        spec = {**spec, "datasets": {k: len(v) for k, v in spec["datasets"].items()}}
    return json.dumps(_round(spec), indent=1, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("name", sorted(GOLDEN_INPUTS))
def test_spec_is_the_golden_spec(name: str) -> None:
    """The same keys, in the same order, and the same values as the golden file."""
    text = _golden_text(name, build_chart(GOLDEN_INPUTS[name]))
    path = GOLDEN / f"{name}.json"
    if REGEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"missing {path}; run ROOFGEN_REGEN_GOLDEN=1 pytest {__file__}"
    assert text == path.read_text(encoding="utf-8"), (
        f"{name}: the spec differs from its golden file; if intended, regenerate with "
        f"ROOFGEN_REGEN_GOLDEN=1 pytest {__file__}"
    )


def test_specs_declare_the_vega_lite_version_altair_targets() -> None:
    """The specs say which Vega-Lite they are written for; Altair (what notebooks get)
    and its schema, which the tests validate against, must be that version."""
    import altair as alt

    assert VEGA_LITE_VERSION == alt.SCHEMA_VERSION
    assert SCHEMA_URL == alt.SCHEMA_URL
    assert all(
        build_chart(inp)["$schema"] == SCHEMA_URL for inp in (*INPUTS.values(), v100_input())
    )


def _containers(value: Any, seen: dict[int, str], path: str) -> None:
    if isinstance(value, dict | list):
        assert id(value) not in seen, f"{path} is the same object as {seen[id(value)]}"
        seen[id(value)] = path
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            _containers(item, seen, f"{path}.{key}")


def test_specs_share_no_dict_or_list() -> None:
    """No two places of a spec, nor of two specs, are the same object: a caller may
    change one spec without changing another, or a chart module's constants."""
    seen: dict[int, str] = {}
    specs = []  # kept alive, so that no id is reused
    for name, inp in GOLDEN_INPUTS.items():
        for build in ("first", "second"):
            specs.append(build_chart(inp))
            _containers(specs[-1], seen, f"{name} ({build} build)")


IMPORT_PROBE = r"""
import builtins, json, pickle, sys
real_import = builtins.__import__
def no_altair(name, *args, **kwargs):
    if name == "altair" or name.startswith("altair."):
        raise ImportError("building a chart imported Altair")
    return real_import(name, *args, **kwargs)
builtins.__import__ = no_altair
from roofgen.charts.kinds import build_chart
inputs = pickle.loads(sys.stdin.buffer.read())
print(json.dumps(sorted({build_chart(inp)["usermeta"]["chart"] for inp in inputs})))
"""


def test_building_specs_does_not_import_altair() -> None:
    """Altair stays out of a build (importing it alone takes most of a second)."""
    out = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE],
        input=pickle.dumps(list(GOLDEN_INPUTS.values())),
        capture_output=True,
        cwd=ROOT,
        check=False,
    )
    assert out.returncode == 0, out.stderr.decode()
    assert json.loads(out.stdout) == sorted(CHART_KINDS)


@pytest.fixture(scope="module")
def example_specs() -> dict[str, dict[str, Any]]:
    """Every chart of the example site, by its slot."""
    checked = check([ROOT / "specs"])
    assert checked.analysis is not None and checked.specs is not None
    ctx = build_context(checked.analysis, checked.specs.machines, name="Examples")
    return {slot.key: build_chart(slot.input) for slot in ctx.charts}


def test_every_chart_of_the_example_site_is_valid_vega_lite(
    example_specs: dict[str, dict[str, Any]],
) -> None:
    """What Altair checked on every build, checked once here: each chart of the example
    site against Vega-Lite's JSON schema (the one Altair ships)."""
    validator = jsonschema.Draft7Validator(load_schema())
    for key, spec in example_specs.items():
        errors = sorted(validator.iter_errors(spec), key=lambda e: list(e.absolute_path))
        assert not errors, f"{key}: {errors[0].message} at {list(errors[0].absolute_path)}"
    # The history chart needs a git repository's commits: its example is in INPUTS.
    drawn = set(CHART_KINDS) - {"roofgen.history"}
    assert {spec["usermeta"]["chart"] for spec in example_specs.values()} == drawn
