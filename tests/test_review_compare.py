"""`roofgen diff` as one library call (`api.diff`): the verb prints what the comparison
returns, and diff's charts put a launch on the roofline by the site's one rule."""

from __future__ import annotations

import ast
import dataclasses
import shutil
from pathlib import Path

import pytest

from roofgen import api
from roofgen.cli import main
from roofgen.config import load_settings
from roofgen.report.chartinputs import launch_points

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"
TIME = "time: {median: 1.1 ms, q1: 1.09 ms, q3: 1.12 ms, warmup: 10, repeats: 100}"
SLOWER = "time: {median: 2.2 ms, q1: 2.19 ms, q3: 2.21 ms, warmup: 10, repeats: 100}"


def _minimal_launch():
    result = api.check([MINIMAL])
    assert result.specs is not None and result.analysis is not None
    return result.analysis.cases[0].variants[0].launches[0], result.specs.machines["seed"]


def test_a_launch_has_one_point_per_level_at_its_achieved_rate():
    r, machine = _minimal_launch()
    (point,) = launch_points(
        r, machine, case="pts", kernel="low (base)", variant="head", binding="memory.hbm"
    )
    # 1.5e9 FLOP in 1.1 ms; 1.5e9 FLOP over 1.5 GB of HBM traffic
    assert point.flop_per_s == pytest.approx(1.5e9 / 1.1e-3)
    assert point.intensity_flop_per_byte == pytest.approx(1.0)
    assert (point.level, point.level_role, point.variant) == ("hbm", "device", "head")


def test_a_level_the_machine_lacks_keeps_its_id_and_no_rate_no_point():
    r, machine = _minimal_launch()
    moved = dataclasses.replace(r, intensity_flop_per_byte={"l2": 4.0, "hbm": 1.0, "l1": 0.0})
    points = launch_points(moved, machine, case="pts", kernel="low", variant="base", binding=None)
    assert [(p.level, p.level_role, p.intensity_flop_per_byte) for p in points] == [
        ("l2", "device", 4.0),  # drawn on a machine without l2: its id, the device role
        ("hbm", "device", 1.0),
    ]  # l1: no positive intensity, no point
    unmeasured = dataclasses.replace(r, achieved_flop_per_s=None)
    assert (
        launch_points(unmeasured, machine, case="pts", kernel="low", variant="base", binding=None)
        == []
    )


def test_the_verb_prints_what_the_library_returns(tmp_path, monkeypatch, capsys):
    """`roofgen diff` writes `api.diff`'s report, charts and gate lines as they are."""
    shutil.copytree(MINIMAL, tmp_path / "base")
    shutil.copytree(MINIMAL, tmp_path / "head")
    case = tmp_path / "head" / "case.yaml"
    case.write_text(case.read_text().replace(TIME, SLOWER))
    monkeypatch.chdir(tmp_path)
    found = api.diff("base", "head", load_settings(None), fail_pct=5.0, charts=Path("charts"))
    assert list(found.charts) == [Path("charts") / "pts.svg"]  # the one changed case
    assert found.failures() == [
        "the gate fails at head: pts/base/low: 100% slower, a "
        "significant regression beyond the limit of 5%"
    ]
    status = main(
        [
            "diff",
            "base",
            "head",
            "--format",
            "text",
            "--fail-on-regression",
            "5",
            "--charts",
            "charts",
        ]
    )
    out, err = capsys.readouterr()
    assert status == 3
    assert out == found.report("text")
    assert "the gate fails at head: pts/base/low: 100% slower" in err
    assert (tmp_path / "charts" / "pts.svg").read_text() == found.charts[Path("charts/pts.svg")]


def test_a_side_that_cannot_be_read_is_a_side_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(api.SideError, match="nowhere: no such folder"):
        api.diff("nowhere", "nowhere", load_settings(None))


def test_the_diff_verb_reaches_the_library_through_the_api():
    """The chart, git and gate work lives under review/: the verb imports none of it."""
    source = (Path(__file__).parents[1] / "roofgen" / "commands" / "diff_cmd.py").read_text()
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    ours = {m for m in imported if m == "roofgen" or m.startswith("roofgen.")}
    assert ours <= {
        "roofgen",
        "roofgen.files",
        "roofgen.commands.common",
        "roofgen.commands.ci_output",
    }, ours
