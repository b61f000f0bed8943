"""Recommendation rules: the shipped data is valid, rules match the facts they should,
messages carry the numbers and bound the gain, a team's rules file overrides them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from specdata import GPU_CASE_YAML, GPU_MACHINE_YAML

from roofgen.advice.engine import applies
from roofgen.advice.facts import Facts, Gain
from roofgen.advice.load import SHIPPED_FILE, shipped_problems, shipped_ruleset
from roofgen.advice.rules import PLACEHOLDERS
from roofgen.api import check
from roofgen.cli import main
from roofgen.spec.schema import load_schema
from roofgen.spec.yamlload import load_text

ROOT = Path(__file__).resolve().parent.parent
VALID = ROOT / "tests" / "cases" / "valid"
# softmax-fusion, gemm-large and vector-add on the A100; attention on the H100
EXAMPLES = (VALID / "a100-kernels", VALID / "h100-attention")


def test_the_shipped_rules_obey_the_rules_schema_and_name_known_things():
    text = (ROOT / SHIPPED_FILE).read_text(encoding="utf-8")
    doc, problems = load_text(text, SHIPPED_FILE)
    assert doc is not None and not problems
    jsonschema.Draft202012Validator(load_schema("rules")).validate(doc.data)
    assert shipped_problems() == []
    ids = [r.id for r in shipped_ruleset().rules]
    assert len(ids) == len(set(ids))


# --------------------------------------------------------------------------- matching


def facts(scope: str = "launch", **given: Any) -> Facts:
    """Facts with sets and numbers as given (a binding's forms: id, kind and category)."""
    sets: dict[str, frozenset[str]] = {}
    numbers: dict[str, float | None] = {}
    for key, value in given.items():
        if isinstance(value, str | list | tuple | set):
            values = [value] if isinstance(value, str) else list(value)
            if key in ("binding", "runner_up"):
                values = [v for x in values for v in (x, x.split(".")[0])]
            sets[key] = frozenset(values)
        else:
            numbers[key] = value
    return Facts(scope, "c", "v", "k", 0, sets, numbers, dict.fromkeys(PLACEHOLDERS, "x"), None)


def fired(f: Facts) -> set[str]:
    return {r.id for r in shipped_ruleset().rules if applies(r, f)}


BOUND = {"class": "bound", "history": ["baseline", "latest"]}

TABLE = [
    # (facts, the rules that must fire and no other)
    (dict(BOUND, binding="memory.device", operator="softmax", efficiency=0.82),
     {"stream-memory-bound"}),
    (dict(BOUND, binding="memory.device", operator="gemm", efficiency=0.7),
     {"matrix-memory-bound"}),
    (dict(BOUND, binding="memory.device", operator="attention", phase="prefill"),
     {"attention-memory-bound"}),
    (dict(BOUND, binding="memory.device", operator="attention", phase="decode"),
     {"decode-kv-bound"}),
    (dict(BOUND, binding="memory.llc", operator="attention", phase="decode"),
     {"decode-kv-bound", "llc-bound"}),
    (dict(BOUND, binding="compute.tensor", operator="gemm", efficiency_datasheet=0.85),
     {"tensor-near-peak"}),
    (dict(BOUND, binding="compute.tensor", operator="gemm", efficiency=0.6,
          efficiency_datasheet=0.55), {"tensor-bound"}),
    # Against a measured roof at 95%, though 75% of the datasheet peak: at the roof.
    (dict(BOUND, binding="compute.tensor", operator="gemm", efficiency=0.95,
          efficiency_datasheet=0.75), {"compute-at-roof"}),
    # A compute-bound attention launch at 80% of its roof (85% of the datasheet peak).
    (dict(BOUND, binding="compute.tensor", operator="attention", efficiency=0.8,
          efficiency_datasheet=0.85), {"tensor-bound"}),
    (dict(BOUND, binding="compute.tensor", operator="gemm", efficiency=0.92,
          efficiency_datasheet=0.85), {"tensor-near-peak"}),
    # Tensor cores only where their peak at the precision is at least 1.5x the pipe's.
    (dict(BOUND, binding="compute.fp32", operator="attention", tensor_speedup=16.0),
     {"matrix-on-vector-pipe"}),
    (dict(BOUND, binding="compute.fp64", operator="gemm", efficiency=0.8, tensor_speedup=2.0),
     {"matrix-on-vector-pipe"}),
    # B200: FP64 tensor = FP64 pipe (1.0x); V100: no FP64 tensor peak (unknown).
    (dict(BOUND, binding="compute.fp64", operator="gemm", efficiency=0.8, tensor_speedup=1.0),
     {"matrix-on-vector-pipe-no-tensor"}),
    (dict(BOUND, binding="compute.fp64", operator="gemm", efficiency=0.8),
     {"matrix-on-vector-pipe-no-tensor"}),
    (dict(BOUND, binding="compute.fp64", operator="gemm", efficiency=0.8, faster_precision=2.0),
     {"matrix-on-vector-pipe-no-tensor", "faster-precision"}),
    # At the roof (above 90%) only less work or a faster precision helps.
    (dict(BOUND, binding="compute.fp64", operator="gemm", efficiency=0.95),
     {"compute-at-roof"}),
    (dict(BOUND, binding="compute.fp64", operator="gemm", efficiency=0.9),
     {"matrix-on-vector-pipe-no-tensor"}),
    (dict(BOUND, binding="compute.int", operator="other", efficiency=0.8), {"vector-bound"}),
    (dict(BOUND, binding="compute.fp64", operator="other"), {"vector-bound"}),
    (dict(BOUND, binding="compute.sfu", operator="softmax"), {"sfu-bound"}),
    (dict(BOUND, binding="launch"), {"launch-bound"}),
    (dict(BOUND, binding="link.nvlink"), {"link-bound"}),
    (dict(BOUND, binding="issue"), {"issue-bound"}),
    (dict(BOUND, **{"class": "co-bound"}, binding="memory.device", operator="other"),
     {"stream-memory-bound", "co-bound"}),
    ({"class": "below-roofs", "evidence": "occupancy", "occupancy": 0.19},
     {"below-roofs-occupancy"}),
    ({"class": "below-roofs", "evidence": "waves", "waves": 1.2}, {"below-roofs-tail"}),
    ({"class": "below-roofs", "evidence": "grid", "grid_per_sm": 0.5},
     {"below-roofs-small-grid"}),
    # Short: under 20 us.
    ({"class": "below-roofs", "evidence": "grid", "grid_per_sm": 1.9, "time_us": 8.0},
     {"below-roofs-short"}),
    ({"class": "below-roofs", "evidence": "grid", "grid_per_sm": 1.9, "time_us": 33.5e6},
     {"below-roofs-stalls"}),
    ({"class": "below-roofs"}, {"below-roofs-no-evidence"}),
    ({"class": "below-roofs", "syncs": 2.0}, {"below-roofs-no-evidence", "below-roofs-syncs"}),
    ({"class": "insufficient-data", "missing": ["flops", "bytes.device"]},
     {"measure-flops", "measure-device-bytes"}),
    (dict(BOUND, binding="issue", missing="bytes.llc"), {"issue-bound", "measure-cache-bytes"}),
    (dict(BOUND, binding="issue", modelled="bytes"), {"issue-bound", "modelled-demands"}),
    (dict(BOUND, binding="issue", datasheet_gap=0.08, clock_deviation=0.04),
     {"issue-bound", "datasheet-gap", "clocks-scaled"}),
    # A later variant moved the binding: only the history note, no tuning advice.
    (dict(BOUND, binding="memory.device", operator="softmax",
          history=["baseline", "superseded", "moved-later"]), {"superseded"}),
    # Superseded without a move: the advice still applies.
    (dict(BOUND, binding="memory.device", operator="softmax",
          history=["baseline", "superseded"]), {"stream-memory-bound"}),
]  # fmt: skip


@pytest.mark.parametrize(("given", "expected"), TABLE, ids=lambda x: str(x)[:60])
def test_rules_match_the_facts(given, expected):
    assert fired(facts(**given)) == expected


VARIANT_TABLE = [
    ({"memory_bound_launches": 3.0, "history": ["baseline", "latest"]}, {"fuse-launches"}),
    ({"memory_bound_launches": 3.0, "history": ["baseline", "superseded", "moved-later"]},
     set()),
    ({"e2e_share": 0.02, "history": "baseline"}, {"small-end-to-end-share"}),
    ({"history": ["later", "latest", "within-noise"]}, {"within-noise"}),
    ({"history": ["later", "latest", "moved", "significant", "slower"]},
     {"moved-binding", "slower"}),
    ({"history": ["baseline", "moved"]}, set()),  # "moved" needs "later" too
]  # fmt: skip


@pytest.mark.parametrize(("given", "expected"), VARIANT_TABLE, ids=lambda x: str(x)[:60])
def test_variant_rules_match_the_facts(given, expected):
    assert fired(facts("variant", **given)) == expected


def test_the_gain_is_bounded_by_the_binding_roof_then_the_next_roof():
    gain = Gain("memory.hbm", 1 / 0.85, "memory.l2", 3.0)
    assert gain.text({"memory.hbm": "HBM3", "memory.l2": "L2"}) == (
        "at most 1.18x by reaching the HBM3 roof; beyond that only fewer bytes at HBM3 help, "
        "up to 3.00x before the L2 roof binds"
    )


# --------------------------------------------------------------------------- engine


def examples() -> Any:
    result = check(list(EXAMPLES))
    assert result.advice is not None and result.analysis is not None
    return result


def test_recommendations_for_the_examples_carry_the_numbers():
    advice = examples().advice
    (softmax,) = [
        r for r in advice.for_launch("softmax-fusion", "fused", 0) if r.severity == "high"
    ]
    assert softmax.rule == "stream-memory-bound"
    # 512 MiB at 1.555 TB/s = 345.3 us of 421.0 us: 82%; SFU 272,629,760 OP at 2.44 TOP/s.
    assert softmax.gain is not None
    assert softmax.gain.to_roof == pytest.approx(421.0e-6 / (2**29 / 1.555e12), rel=1e-6)
    assert softmax.gain.next_roof == "compute.sfu"
    assert softmax.text.startswith(
        "softmax is bound by HBM2 at 82% of its roof, 1.77 FLOP/B at device memory: at most "
        "1.22x by reaching the HBM2 roof; beyond that only fewer bytes at HBM2 help, up to "
        "3.76x before the Special-function units roof binds."
    )
    assert [t.name for t in softmax.techniques][:3] == [
        "Fusion", "Intermediates on chip", "Online reductions",
    ]  # fmt: skip
    decode = [r.rule for r in advice.for_launch("attention", "flash", 1)]
    assert decode[0] == "decode-kv-bound"
    baseline = [r.rule for r in advice.for_variant("softmax-fusion", "baseline")]
    assert baseline == ["fuse-launches", "small-end-to-end-share"]
    naive = advice.for_launch("attention", "naive", 3)
    assert [r.rule for r in naive if r.severity != "low"] == []  # flash moved its binding
    assert naive[0].text.startswith(
        "A later variant changed this: flash runs decode from L2 cache-bound to HBM3-bound, "
        "2.05x as fast."
    )


def test_recommendations_in_the_json(capsys, monkeypatch):
    monkeypatch.chdir(VALID)
    assert main(["analyze", "--format", "json", "-q", "a100-kernels"]) == 0
    doc = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator(load_schema("output")).validate(doc)
    case = next(c for c in doc["cases"] if c["id"] == "gemm-large")
    tuned = case["variants"][1]
    (rec,) = [r for r in tuned["launches"][0]["recommendations"] if r["severity"] == "low"][:1]
    assert rec["rule"] == "tensor-near-peak"
    assert rec["gain"]["roof"] == "compute.tensor"
    assert tuned["speedup"]["significant"] is True
    assert tuned["speedup"]["value"] == pytest.approx(6.410 / 4.236)
    assert case["end_to_end"]["variants"][0]["projected_speedup"] == pytest.approx(
        400 / (400 - 16 * 6.410 + 16 * 4.236)
    )


# --------------------------------------------------------------------------- team rules


def team(tmp_path: Path, rules: str) -> Any:
    (tmp_path / "specs").mkdir(exist_ok=True)
    (tmp_path / "specs" / "machine.yaml").write_text(GPU_MACHINE_YAML, encoding="utf-8")
    (tmp_path / "specs" / "case.yaml").write_text(GPU_CASE_YAML, encoding="utf-8")
    (tmp_path / "team-rules.yaml").write_text(rules, encoding="utf-8")
    (tmp_path / "roofgen.toml").write_text('rules = "team-rules.yaml"\n', encoding="utf-8")


def analyze(tmp_path: Path, monkeypatch: Any, capsys: Any) -> tuple[int, dict[str, Any], str]:
    monkeypatch.chdir(tmp_path)
    status = main(["analyze", "--format", "json", "-q"])
    out, err = capsys.readouterr()
    return status, json.loads(out) if out else {}, err


def rules_of(doc: dict[str, Any]) -> dict[str, str]:
    launch = doc["cases"][0]["variants"][0]["launches"][0]
    return {r["rule"]: r["text"] for r in launch["recommendations"]}


def test_without_a_team_file_the_shipped_rules_apply(tmp_path, monkeypatch, capsys):
    team(tmp_path, "roofgen: 1\n")
    status, doc, _ = analyze(tmp_path, monkeypatch, capsys)
    assert status == 0
    assert set(rules_of(doc)) == {"stream-memory-bound"}


def test_a_team_rule_with_the_same_id_replaces_the_shipped_one(tmp_path, monkeypatch, capsys):
    team(
        tmp_path,
        "roofgen: 1\n"
        "recommendations:\n"
        "  - id: stream-memory-bound\n"
        "    when: {binding: [memory.device]}\n"
        "    message: Ours says {kernel} is at {efficiency} of {binding}; {gain}.\n"
        "    techniques: [fusion, team-trick]\n"
        "  - id: team-only\n"
        "    severity: low\n"
        "    when: {class: [bound]}\n"
        "    message: Ask the kernel team about {kernel}.\n"
        "techniques:\n"
        "  team-trick: {name: Our trick}\n",
    )
    status, doc, _ = analyze(tmp_path, monkeypatch, capsys)
    assert status == 0
    texts = rules_of(doc)
    assert texts["stream-memory-bound"] == (
        "Ours says k is at 80% of HBM; at most 1.25x by reaching the HBM roof; beyond that only "
        "fewer bytes at HBM help, up to 10.00x before the vector roof binds."
    )
    assert texts["team-only"] == "Ask the kernel team about k."
    launch = doc["cases"][0]["variants"][0]["launches"][0]
    techniques = next(r for r in launch["recommendations"] if r["rule"] == "stream-memory-bound")
    assert techniques["techniques"] == [
        {"id": "fusion", "name": "Fusion"}, {"id": "team-trick", "name": "Our trick"},
    ]  # fmt: skip


@pytest.mark.parametrize("switch", ["severity: off", "enabled: false", "enabled: off"])
def test_a_team_entry_switches_a_rule_off(tmp_path, monkeypatch, capsys, switch):
    team(tmp_path, f"roofgen: 1\nrecommendations:\n  - {{id: stream-memory-bound, {switch}}}\n")
    status, doc, _ = analyze(tmp_path, monkeypatch, capsys)
    assert status == 0 and rules_of(doc) == {}


def test_the_same_file_carries_plausibility_rules(tmp_path, monkeypatch, capsys):
    team(
        tmp_path,
        "roofgen: 1\n"
        "rules:\n"
        "  - {id: noisy-timing, check: spread, severity: warning, params: {max_spread: 0.001},"
        " message: too noisy}\n"
        "recommendations:\n  - {id: stream-memory-bound, severity: low}\n",
    )
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--strict"]) == 1
    assert "variants[0].launches[0].measurement.time: too noisy" in capsys.readouterr().err


def test_faults_in_team_rules_are_located(tmp_path, monkeypatch, capsys):
    team(
        tmp_path,
        "roofgen: 1\n"
        "recommendations:\n"
        "  - id: mine\n"
        "    message: '{kernal} is slow'\n"
        "    techniques: [magic]\n"
        "  - id: no-message\n",
    )
    monkeypatch.chdir(tmp_path)
    assert main(["check"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(
        "team-rules.yaml:4:14: recommendations[0].message: unknown placeholder {kernal}; known: "
    )
    assert err[1] == (
        "team-rules.yaml:5:18: recommendations[0].techniques[0]: unknown technique 'magic'; "
        "known: " + ", ".join(sorted(shipped_ruleset().techniques))
    )
    assert err[2] == (
        "team-rules.yaml:6:5: recommendations[1]: rule 'no-message' has no message and "
        "replaces no shipped rule: give it a message"
    )


def test_an_unknown_condition_is_a_schema_error(tmp_path, monkeypatch, capsys):
    team(
        tmp_path, "roofgen: 1\nrecommendations:\n  - {id: x, message: m, when: {bindng: [issue]}}\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["check"]) == 1
    assert "unknown key 'bindng'; did you mean 'binding'?" in capsys.readouterr().err


# --------------------------------------------------------------------------- page


def test_the_case_page_shows_the_recommendations():
    from roofgen.site.context import build_context
    from roofgen.site.pages import RenderedChart, render_pages

    result = examples()
    ctx = build_context(
        result.analysis, result.specs.machines, name="t", findings=result.findings,
        advice=result.advice,
    )  # fmt: skip
    charts = {s.key: RenderedChart("<div></div>", "c.svg") for s in ctx.charts}
    pages = render_pages(ctx, charts)
    page = pages["cases/softmax-fusion/index.md"]
    assert "### Variant baseline\n\n- **Fuse the launches** (high): 3 of the 3 launches" in page
    assert "- **Move fewer bytes** (high): softmax is bound by HBM2 at 82% of its roof" in page
    assert "Techniques: Fusion, Intermediates on chip, Online reductions" in page
    methods = pages["methods/patterns/index.md"]
    assert "## fusion { #pattern-fusion }" in methods
    assert (
        '<tr><td><a href="../../cases/softmax-fusion/index.html">One-pass online softmax over a '
        "32k vocabulary</a></td><td>baseline → fused</td><td>2.41x (2.40x to 2.42x)</td>"
        "<td>significant</td><td>1.01x</td><td>still HBM2-bound</td></tr>"
    ) in methods
    assert "Methods by bottleneck" in pages["index.md"]
