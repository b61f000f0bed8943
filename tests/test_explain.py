"""`roofgen explain` shows the recommendations the check computed: the team's rules
included, and nothing invented where no rule applies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from specdata import GPU_CASE_YAML

from roofgen.advice import Advice, Recommendation
from roofgen.api import check
from roofgen.cli import main
from roofgen.report.explain import explain
from roofgen.report.explain_json import explanation_json
from roofgen.report.explain_text import explanation_text

MACHINE = """\
roofgen: 1
kind: machine
id: gpu
name: GPU
clocks: {sm: 1000 MHz}
compute: [{id: vector, kind: fp32, peaks: {fp32: 10 TFLOP/s}}]
memory: [{id: hbm, name: HBM, role: device, bandwidth: 1 TB/s}]
"""
# 1e9 FLOP at 10 TFLOP/s is 0.1 ms; 0.8 GB at 1 TB/s is 0.8 ms: the HBM binds, and
# the 1 ms measured is 80% of that bound.
TEAM_RULE = """\
roofgen: 1
recommendations:
  - id: team-only
    severity: low
    title: Ask the team
    when: {class: [bound]}
    message: Ask the kernel team about {kernel} at {efficiency} of {binding}.
"""
SWITCH_OFF = "roofgen: 1\nrecommendations:\n  - {id: stream-memory-bound, severity: off}\n"


@pytest.fixture(autouse=True)
def _no_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")


def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rules: str) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "machine.yaml").write_text(MACHINE, encoding="utf-8")
    (tmp_path / "specs" / "case.yaml").write_text(GPU_CASE_YAML, encoding="utf-8")
    (tmp_path / "team-rules.yaml").write_text(rules, encoding="utf-8")
    (tmp_path / "roofgen.toml").write_text('rules = "team-rules.yaml"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return out


def test_explain_shows_the_team_rules_recommendation(tmp_path, monkeypatch, capsys):
    project(tmp_path, monkeypatch, TEAM_RULE)
    text = run(["explain", "c/k", "-q"], capsys)
    assert "what to try (recommendation rules):" in text
    assert "Ask the team: Ask the kernel team about k at 80% of HBM." in text
    doc = json.loads(run(["explain", "c/k", "--format", "json", "-q"], capsys))
    launch = doc["variants"][0]["launches"][0]
    assert launch["binding"] == "memory.hbm"
    rules = [r["rule"] for r in launch["recommendations"]]
    assert "team-only" in rules and "stream-memory-bound" in rules
    # The same recommendations as the check's analysis carries for that launch.
    analysed = json.loads(run(["analyze", "--format", "json", "-q"], capsys))
    checked = analysed["cases"][0]["variants"][0]["launches"][0]["recommendations"]
    assert rules == [r["rule"] for r in checked]
    assert [r["text"] for r in launch["recommendations"]] == [r["text"] for r in checked]


def test_explain_without_applicable_rules_says_so(tmp_path, monkeypatch, capsys):
    project(tmp_path, monkeypatch, SWITCH_OFF)
    text = run(["explain", "c/k", "-q"], capsys)
    assert text.endswith("  what to try (recommendation rules):\n"
                         "    nothing: no rule applies to this launch\n")  # fmt: skip
    doc = json.loads(run(["explain", "c/k", "--format", "json", "-q"], capsys))
    assert doc["variants"][0]["launches"][0]["recommendations"] == []


def test_explain_shows_exactly_the_advice_it_is_given(tmp_path, monkeypatch):
    project(tmp_path, monkeypatch, "roofgen: 1\n")
    result = check([tmp_path / "specs"])
    assert result.analysis is not None and result.specs is not None
    empty = explain(result.analysis, result.specs, Advice(), "c", "k")
    assert empty.variants[0].launches[0].recommendations == ()
    assert "nothing: no rule applies to this launch" in explanation_text(empty)
    mine = Recommendation(
        rule="r", scope="launch", severity="low", title="T", text="Do this.", gain=None,
        gain_text="", techniques=(), metrics=(), case="c", variant="v", kernel="k", index=0,
    )  # fmt: skip
    given = explain(result.analysis, result.specs, Advice({("c", "v", 0): (mine,)}), "c", "k")
    assert "    1. T: Do this.\n" in explanation_text(given)
    (rec,) = explanation_json(given)["variants"][0]["launches"][0]["recommendations"]
    assert rec == {"title": "T", "text": "Do this.", "gain": "", "severity": "low", "rule": "r",
                   "techniques": []}  # fmt: skip
