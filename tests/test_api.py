"""The public Python API (`import roofgen`): its contract, its behaviour, and that the
CLI goes through it."""

from __future__ import annotations

import ast
import csv
import difflib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import roofgen
from roofgen.report.tables import analysis_rows, column_name, flatten, split_column, unflatten

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "tests" / "cases" / "valid" / "a100-kernels"  # three cases, one machine
VECTOR_ADD = SPECS / "vector-add.yaml"

# The contract: semantic versioning applies to exactly these names.
PUBLIC = [
    "OUTPUT_FORMAT_VERSION",
    "SPEC_FORMAT_VERSION",
    "Case",
    "Machine",
    "Problem",
    "Results",
    "SpecError",
    "Workspace",
    "__version__",
    "analyse",
    "chart",
    "dump_case",
    "from_dicts",
    "load",
    "machine",
    "measurement_from_times",
]


def test_all_is_the_pinned_contract() -> None:
    assert roofgen.__all__ == PUBLIC
    for name in PUBLIC:
        assert getattr(roofgen, name) is not None
    assert roofgen.SpecError is __import__("roofgen.problems").problems.SpecError


def test_every_public_callable_is_documented_and_typed() -> None:
    for name in PUBLIC:
        value = getattr(roofgen, name)
        if callable(value):
            assert value.__doc__, name
            if not isinstance(value, type):
                assert value.__annotations__.get("return"), name


IMPORT_PROBE = r"""
import json, logging, os, sys, warnings
try:  # numpy adds warning filters of its own when first imported (Pint may import it)
    import numpy
except ImportError:
    pass
env = dict(os.environ)
filters = list(warnings.filters)
handlers = list(logging.getLogger().handlers)
level = logging.getLogger().level
import roofgen
heavy = [m for m in ("pandas", "altair", "mkdocs", "vl_convert", "jinja2", "roofgen.api")
         if m in sys.modules]
print(json.dumps({
    "heavy": heavy,
    "env": dict(os.environ) == env,
    "warnings": list(warnings.filters) == filters,
    "logging": list(logging.getLogger().handlers) == handlers
               and logging.getLogger().level == level,
}))
"""


def test_import_is_light_and_changes_nothing() -> None:
    out = subprocess.run([sys.executable, "-c", IMPORT_PROBE], capture_output=True,
                         text=True, check=True, cwd=ROOT)  # fmt: skip
    assert json.loads(out.stdout) == {"heavy": [], "env": True, "warnings": True,
                                      "logging": True}  # fmt: skip


USE_PROBE = r"""
import json, logging, os, sys, warnings
try:  # numpy adds warning filters of its own when first imported (Pint may import it)
    import numpy
except ImportError:
    pass
env = dict(os.environ)
filters = list(warnings.filters)
handlers = list(logging.getLogger().handlers)
import roofgen
ws = roofgen.load("tests/cases/valid/a100-kernels/vector-add.yaml")
c = ws.chart("vector-add/add")
import altair as alt
print(json.dumps({
    "env": dict(os.environ) == env,
    "warnings": list(warnings.filters) == filters,
    "logging": list(logging.getLogger().handlers) == handlers,
    "renderer": alt.renderers.active,
    "pandas": "pandas" in sys.modules,
}))
"""


def test_loading_and_charting_enable_no_renderer() -> None:
    out = subprocess.run([sys.executable, "-c", USE_PROBE], capture_output=True, text=True,
                         check=True, cwd=ROOT)  # fmt: skip
    got = json.loads(out.stdout)
    assert got == {"env": True, "warnings": True, "logging": True, "renderer": "default",
                   "pandas": False}  # fmt: skip


@pytest.fixture(scope="module")
def ws() -> roofgen.Workspace:
    return roofgen.load(SPECS)


def test_load_matches_check(ws: roofgen.Workspace) -> None:
    from roofgen.api import check

    result = check([SPECS])
    assert ws.files == result.files
    assert ws.problems == result.problems
    assert set(ws.cases) == {c.id for c in result.specs.cases}
    assert "vector-add" in repr(ws)


def test_spec_error_carries_every_problem_short_str_and_html(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("roofgen: 1\nkind: case\nid: x\n", encoding="utf-8")
    with pytest.raises(roofgen.SpecError) as info:
        roofgen.load(bad)
    err = info.value
    assert len(err.problems) >= 3
    assert all(p.file.endswith("bad.yaml") for p in err.problems)
    text = str(err)
    assert text.startswith(f"{len(err.problems)} problem(s)")
    assert "Traceback" not in text and len(text.splitlines()) <= roofgen.SpecError.SHOWN + 2
    page = err._repr_html_()
    assert page.count("<tr>") == len(err.problems) + 1 and "missing required key" in page


def test_spec_error_str_is_capped() -> None:
    many = [roofgen.Problem("f.yaml", i, 1, "", f"problem {i}") for i in range(1, 30)]
    text = str(roofgen.SpecError(many))
    assert "and 19 more" in text and len(text.splitlines()) == 12


def test_machine_from_library_and_workspace(ws: roofgen.Workspace) -> None:
    a100 = roofgen.machine("a100-40gb-sxm")
    assert isinstance(a100, roofgen.Machine) and a100.id == "a100-40gb-sxm"
    assert roofgen.machine("a100-40gb-sxm", 1).version == 1
    mine = ws.machine("a100-40gb-sxm")  # the workspace's file, not the library's
    assert mine is ws.machines["a100-40gb-sxm"] and mine.file.endswith("a100-40gb-sxm.yaml")
    assert mine.runtime is not None and a100.runtime is None  # only the team's file has one
    with pytest.raises(KeyError, match="no machine"):
        roofgen.machine("no-such-gpu")


def _vector_add_data() -> dict:
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(VECTOR_ADD.read_text(encoding="utf-8"))
    return json.loads(json.dumps(data, default=str))  # plain data, dates as text


def test_measurement_from_times_statistics() -> None:
    m = roofgen.measurement_from_times([1.0, 1.1, 1.2, 1.3, 5.0], warmup=3)
    assert m == {
        "time": {"median": "1.2 ms", "q1": "1.1 ms", "q3": "1.3 ms", "min": "1 ms",
                 "max": "5 ms", "repeats": 5, "warmup": 3},
        "timing": "cuda-events",
    }  # fmt: skip
    # statistics.quantiles(method="inclusive") interpolates like numpy's "linear".
    q = roofgen.measurement_from_times([1, 2, 3, 4], unit="us")["time"]
    assert (q["q1"], q["median"], q["q3"]) == ("1.75 us", "2.5 us", "3.25 us")
    # triton.testing.do_bench: one number (ms) or, with return_mode="all", a list.
    assert roofgen.measurement_from_times(0.25)["time"] == "0.25 ms"
    for bad in ([], [1.0, float("nan")], [-1.0]):
        with pytest.raises(ValueError):
            roofgen.measurement_from_times(bad)
    with pytest.raises(ValueError, match="unit"):
        roofgen.measurement_from_times([1.0], unit="min")


def test_case_built_in_code_goes_through_the_schema() -> None:
    data = _vector_add_data()
    launch = data["variants"][0]["launches"][0]
    launch["measurement"] = roofgen.measurement_from_times(
        [2.47, 2.48, 2.49], warmup=10, flops={"fp32": {"fp32": "268435456 FLOP"}},
        bytes={"hbm": {"read": "2 GiB", "write": "1 GiB"}}, clocks={"sm": "1410 MHz"},
    )  # fmt: skip
    ws = roofgen.from_dicts(cases=[data])
    measured = ws.case("vector-add").variants[0].launches[0].measurement.time
    assert measured.value_s == pytest.approx(2.48e-3) and measured.repeats == 3
    assert ws.analysis.to_dataframe().shape[0] == 4
    data["variants"][0]["launches"][0]["measurement"]["time"]["median"] = "2.4 GiB"
    with pytest.raises(roofgen.SpecError) as info:
        roofgen.from_dicts(cases=[data])
    assert any("median" in p.path for p in info.value.problems)


def test_dataframe_one_row_per_variant_and_launch(ws: roofgen.Workspace) -> None:
    df = roofgen.analyse(ws).to_dataframe()
    doc = ws.analysis.to_json()
    variants = sum(len(c["variants"]) for c in doc["cases"])
    launches = sum(len(v["launches"]) for c in doc["cases"] for v in c["variants"])
    assert len(df) == variants + launches
    assert list(df.columns[:6]) == ["row", "case", "variant", "kernel", "index", "machine"]
    for col in ("time_s", "achieved_flop_per_s", "bound_s/memory.hbm", "bound_s/compute.fp32"):
        assert col in df.columns, col
    row = df[(df.case == "vector-add") & (df.row == "launch") & (df.variant == "baseline")]
    assert row["time_s"].iloc[0] == pytest.approx(2.478e-3)
    assert hasattr(df, "_repr_html_")
    assert "<table" in ws.analysis._repr_html_()


def test_flattening_rule_has_no_collisions_and_unflattens(ws: roofgen.Workspace) -> None:
    rows = analysis_rows(ws.analysis.to_json())
    names = {name for row in rows for name in row}
    # Dotted resource names survive whole; no two key paths share a column.
    assert "bound_s/memory.hbm" in names
    paths = {split_column(n) for n in names}
    assert len(paths) == len(names)
    assert {column_name(p) for p in paths} == names
    for path in paths:  # no column is also a prefix (parent object) of another
        assert not any(q[: len(path)] == path and q != path for q in paths), path
    doc = {"a.b": {"c/d": 1, "e%": {"f": [1, 2]}}, "g": 0}
    assert flatten(doc) == {"a.b/c%2Fd": 1, "a.b/e%25/f": [1, 2], "g": 0}
    assert unflatten(flatten(doc)) == doc
    assert flatten({"speedup": None, "x": {}}) == {}
    launch = ws.analysis.to_json()["cases"][0]["variants"][0]["launches"][0]
    row = next(r for r in rows if r["row"] == "launch")
    assert unflatten({k: v for k, v in row.items() if k != "row"}) == {
        k: v for k, v in launch.items() if v != {} and v is not None and k != "rooflines"
    }  # the roofline kinds are lists of records: the JSON has them, the rows do not


def test_analyze_csv_uses_the_same_columns(ws: roofgen.Workspace) -> None:
    text = ws.analysis.to_csv()
    table = list(csv.reader(io.StringIO(text)))
    df = ws.analysis.to_dataframe()
    assert table[0] == list(df.columns)
    assert len(table) == len(df) + 1
    assert text == _cli_csv()


def _cli_csv() -> str:
    from click.testing import CliRunner

    from roofgen.cli import cli

    result = CliRunner().invoke(cli, ["analyze", str(SPECS), "--format", "csv", "-q"])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_chart_is_altair_and_displays_offline(
    ws: roofgen.Workspace, tmp_path: Path, monkeypatch
) -> None:
    """What a notebook shows: the Vega-Lite spec under its MIME type (the frontend draws
    it), a PNG at twice the chart's size shown at its size, a line of text, and no HTML
    (nothing that carries a script)."""
    import altair as alt
    from pngread import read_png

    before = alt.renderers.active
    chart = roofgen.chart(ws, "vector-add/add")
    assert isinstance(chart, alt.LayerChart)
    assert ws.chart("vector-add", "add", "baseline").to_dict()["layer"]
    spec = chart.to_dict()
    bundle, metadata = chart._repr_mimebundle_()
    assert set(bundle) == {"application/vnd.vegalite.v5+json", "image/png", "text/plain"}
    assert bundle["text/plain"] == f"<roofgen chart: {spec['title']['text']}>"
    assert bundle["application/vnd.vegalite.v5+json"] == spec
    assert {p["variant"] for p in spec["datasets"]["points"]} == {"baseline", "vectorised"}
    width, height, _, _ = read_png(bundle["image/png"])
    # 2 device pixels per CSS pixel, shown at the chart's own size (as the static SVGs).
    assert metadata == {"image/png": {"width": width // 2, "height": height // 2}}
    assert width >= 2 * spec["width"] and height >= 2 * spec["height"]
    assert chart._repr_html_ is None
    assert alt.renderers.active == before
    with pytest.raises(ValueError, match="no case"):
        ws.chart("nope/add")
    with pytest.raises(ValueError, match="CASE/KERNEL"):
        ws.chart("a/b/c/d")


def test_chart_wraps_roofgens_spec_unvalidated_and_composes(
    ws: roofgen.Workspace, monkeypatch
) -> None:
    """A notebook chart is roofgen's spec wrapped as it is: no schema lookup to build and
    show it (Altair's from_dict made some 900, half a second a chart), the same to_dict(),
    and it still layers and changes like any Altair chart."""
    import altair as alt
    from altair.utils import schemapi

    from roofgen.api import kernel_chart, workspace
    from roofgen.charts.kinds import build_chart
    from roofgen.charts.roofline_inputs import RuntimeInput, RuntimePoint

    point = RuntimePoint("case", "eager", 200, 641e-6, 608e-6, "stream", True)
    panels = build_chart(RuntimeInput("Runtime", "", (("stream", 3e-6),), None, (point,)))
    lookups: list[object] = []
    monkeypatch.setattr(schemapi, "validate_jsonschema", lambda *a, **k: lookups.append(a))
    monkeypatch.setattr(workspace, "chart_mimebundle", lambda spec: ({"spec": spec}, {}))
    chart = ws.chart("vector-add/add")
    shown = chart._repr_mimebundle_()[0]["spec"]
    other = workspace.altair_chart(panels)
    # Only the selections, which Altair checks as it lifts them out of any chart's layers.
    assert {str(a[1]) for a in lookups} == {"{'$ref': '#/definitions/TopLevelSelectionParameter'}"}
    monkeypatch.undo()
    assert shown == chart.to_dict() == kernel_chart(ws.check_result, "vector-add", "add")
    assert isinstance(chart, alt.LayerChart) and isinstance(chart.layer[0], alt.UnitSpec)
    assert other.to_dict() == panels
    dot = alt.Chart(alt.Data(values=[{"x": 1, "y": 1e12}])).mark_point().encode(x="x:Q", y="y:Q")
    assert len((chart + dot).to_dict()["layer"]) == len(chart.layer) + 1  # validated
    assert chart.properties(width=300).to_dict()["width"] == 300


def test_write_case_changes_exactly_one_line(tmp_path: Path) -> None:
    copy = tmp_path / "vector-add.yaml"
    shutil.copyfile(VECTOR_ADD, copy)
    ws = roofgen.load(copy)
    data = ws.case_data("vector-add")
    data["variants"][0]["launches"][0]["measurement"]["time"]["median"] = "2.480 ms"
    ws.write_case("vector-add", data=data)
    diff = [line for line in difflib.unified_diff(
        VECTOR_ADD.read_text("utf-8").splitlines(), copy.read_text("utf-8").splitlines(),
        lineterm="", n=0) if line[:1] in "+-" and line[:3] not in ("+++", "---")]  # fmt: skip
    assert len(diff) == 2 and "2.478 ms" in diff[0] and "2.480 ms" in diff[1]
    again = roofgen.load(copy).case("vector-add")
    assert again.variants[0].launches[0].measurement.time.value_s == pytest.approx(2.48e-3)


def test_dump_case_plain_data_onto_existing_file_keeps_the_rest(tmp_path: Path) -> None:
    copy = tmp_path / "vector-add.yaml"
    shutil.copyfile(VECTOR_ADD, copy)
    data = _vector_add_data()
    data["variants"][1]["launches"][0]["measurement"]["time"]["median"] = "2.335 ms"
    roofgen.dump_case(data, copy)
    diff = [line for line in difflib.unified_diff(
        VECTOR_ADD.read_text("utf-8").splitlines(), copy.read_text("utf-8").splitlines(),
        lineterm="", n=0) if line[:1] in "+-" and line[:3] not in ("+++", "---")]  # fmt: skip
    assert len(diff) == 2 and "2.335 ms" in diff[1]


def test_round_trip_to_a_new_file_gives_the_same_model(tmp_path: Path) -> None:
    from dataclasses import replace

    original = roofgen.load(VECTOR_ADD).case("vector-add")
    target = tmp_path / "out" / "vector-add.yaml"
    roofgen.dump_case(_vector_add_data(), target)
    again = roofgen.load(target).case("vector-add")
    assert replace(again, file=original.file) == original
    with pytest.raises(roofgen.SpecError):
        roofgen.dump_case({"roofgen": 1, "kind": "case", "id": "x"}, tmp_path / "bad.yaml")
    assert not (tmp_path / "bad.yaml").exists()


FORBIDDEN = ("roofgen.spec", "roofgen.analysis")
# Verbs that must reach the library through roofgen.api alone.
API_ONLY = ("roofgen.spec", "roofgen.analysis", "roofgen.report.analysis", "roofgen.site",
            "roofgen.charts", "roofgen.report.explain")  # fmt: skip


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def test_cli_reaches_the_library_through_the_api() -> None:
    for path in [ROOT / "roofgen" / "cli.py", *(ROOT / "roofgen" / "commands").glob("*.py")]:
        bad = [m for m in _imports(path) if m.startswith(FORBIDDEN)]
        assert not bad, f"{path.name} imports {bad}: go through roofgen.api"
    for path in (ROOT / "roofgen" / "cli.py", ROOT / "roofgen" / "commands" / "explain.py"):
        bad = [m for m in _imports(path) if m.startswith(API_ONLY)]
        assert not bad, f"{path.name} imports {bad}: go through roofgen.api"


def test_format_versions_match_the_library() -> None:
    from roofgen.report.analysis import OUTPUT_VERSION
    from roofgen.spec.load import FORMAT_VERSION

    assert roofgen.OUTPUT_FORMAT_VERSION == OUTPUT_VERSION
    assert roofgen.SPEC_FORMAT_VERSION == FORMAT_VERSION


def test_machines_get_returns_a_model_machine():
    import roofgen.machines

    m = roofgen.machines.get("a100-40gb-sxm")
    assert isinstance(m, roofgen.Machine)
    assert m.id == "a100-40gb-sxm"
    assert m.memory[0].bandwidth.value() == pytest.approx(1.555e12)
    with pytest.raises(KeyError):
        roofgen.machines.get("no-such-gpu")
