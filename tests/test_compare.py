"""Before and after: significance against the noise, Amdahl's projection and why it
differs, shape sweeps (schema, weighted means, per-shape analysis, the chart's
trajectory), and the benchmark-hygiene rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from specdata import GPU_MACHINE_YAML

from roofgen.analysis.compare import (
    Interval,
    amdahl,
    compare_case,
    interval,
    speedup,
)
from roofgen.api import check
from roofgen.cli import main
from roofgen.model import Measurement, SweepPoint, TimeStats
from roofgen.operators.sweep import mean_measurement, normalised_weights

ROOT = Path(__file__).resolve().parent.parent
ATTENTION = ROOT / "tests" / "cases" / "valid" / "h100-attention"  # its decode sweep

# --------------------------------------------------------------------------- noise


def test_disjoint_intervals_are_significant_overlapping_ones_within_noise():
    base, new = Interval(1.00, 1.02, "q1..q3"), Interval(0.80, 0.82, "q1..q3")
    s = speedup(1.01, 0.81, base, new)
    assert s.value == pytest.approx(1.01 / 0.81)
    assert (s.low, s.high) == (pytest.approx(1.00 / 0.82), pytest.approx(1.02 / 0.80))
    assert s.noise == "significant" and s.significant is True
    close = speedup(1.01, 0.99, base, Interval(0.98, 1.005, "q1..q3"))
    assert close.noise == "within noise" and close.significant is False
    slower = speedup(1.01, 1.2, base, Interval(1.19, 1.21, "q1..q3"))
    assert slower.noise == "significant" and slower.value < 1


def test_without_an_interval_the_noise_is_unknown():
    s = speedup(2.0, 1.0, None, Interval(0.9, 1.1, "q1..q3"))
    assert (s.noise, s.significant, s.low, s.high) == ("unknown noise", None, None, None)


def test_intervals_prefer_quartiles_then_the_confidence_interval_then_the_range():
    full = TimeStats(1.0, min_s=0.5, max_s=3.0, q1_s=0.99, q3_s=1.01, ci_low_s=0.98, ci_high_s=1.02)
    assert interval(full) == Interval(0.99, 1.01, "q1..q3")
    ci = TimeStats(1.0, min_s=0.5, max_s=3.0, ci_low_s=0.98, ci_high_s=1.02)
    assert interval(ci) == Interval(0.98, 1.02, "ci_low..ci_high")
    assert interval(TimeStats(1.0, min_s=0.5, max_s=3.0)) == Interval(0.5, 3.0, "min..max")
    assert interval(TimeStats(1.0, q1_s=0.9)) is None


# --------------------------------------------------------------------------- Amdahl


def test_amdahl_from_the_baselines_shares():
    # Shares 0.2 and 0.1 of the end-to-end time, sped up 2x and 4x:
    # 1 / (1 - 0.3 + 0.2 / 2 + 0.1 / 4) = 1 / 0.825 = 1.2121...
    assert amdahl([0.2, 0.1], [2, 4]) == pytest.approx(1 / 0.825) == pytest.approx(1.212121)
    assert amdahl([0.5], [float("inf")]) == pytest.approx(2.0)  # the limit 1 / (1 - s)
    assert amdahl([], []) == 1.0


def launch(kernel: str, median_ms: float, spread: float = 0.01, gb: float = 0.8) -> str:
    lo, hi = median_ms * (1 - spread), median_ms * (1 + spread)
    return (
        f"      - kernel: {kernel}\n"
        f"        measurement:\n"
        f"          time: {{median: {median_ms} ms, q1: {lo:.6g} ms, q3: {hi:.6g} ms, "
        f"repeats: 100, warmup: 10}}\n"
        f"          flops: {{vector: {{fp32: 1e9 FLOP}}}}\n"
        f"          bytes: {{hbm: {gb} GB}}\n"
    )


def two_kernel_case(e2e_after_ms: float, after: tuple[float, float] = (1.0, 1.0)) -> str:
    """A baseline of two launches (2 ms and 1 ms) in a 10 ms step, and a variant."""
    return (
        "roofgen: 1\nkind: case\nid: c\ntitle: C\nmachines: [gpu]\n"
        "method: {gpu: GPU, driver: '1', clock_control: locked}\n"
        "end_to_end:\n  base: {time: 10 ms}\n"
        f"  new: {{time: {e2e_after_ms} ms}}\n"
        "kernels:\n  - {id: a, operator: {kind: other}}\n  - {id: b, operator: {kind: other}}\n"
        "variants:\n  - id: base\n    launches:\n"
        + launch("a", 2.0, gb=1.6)
        + launch("b", 1.0)
        + "  - id: new\n    launches:\n"
        + launch("a", after[0], gb=0.8)
        + launch("b", after[1])
    )


def compared(tmp_path: Path, case: str) -> Any:
    (tmp_path / "machine.yaml").write_text(GPU_MACHINE_YAML, encoding="utf-8")
    (tmp_path / "case.yaml").write_text(case, encoding="utf-8")
    result = check([tmp_path])
    assert result.analysis is not None, [p.format() for p in result.problems]
    return result, compare_case(result.analysis.cases[0], result.specs.machines)


def test_the_projection_per_launch_and_its_agreement(tmp_path):
    # a: 2 ms -> 1 ms (2x, share 0.2), b unchanged; projected 1 / (1 - 0.2 + 0.1) = 1.111x.
    _, c = compared(tmp_path, two_kernel_case(9.0))
    (e,) = c.end_to_end
    assert [(t.kernel, t.share, t.speedup) for t in e.terms] == [
        ("a", pytest.approx(0.2), pytest.approx(2.0)),
        ("b", pytest.approx(0.1), pytest.approx(1.0)),
    ]
    assert e.projected == pytest.approx(1 / 0.9) and e.measured == pytest.approx(10 / 9)
    assert e.agree is True and e.kernel_share == pytest.approx(0.3)
    assert e.limit == pytest.approx(1 / 0.7)
    assert e.reason.startswith("measured 1.11x agrees with the projected 1.11x (within 2%)")
    assert "the kernels were 30% of the baseline's end-to-end time" in e.reason


def test_a_new_bottleneck_or_preparation_cost_is_named(tmp_path):
    _, c = compared(tmp_path, two_kernel_case(9.6))  # 0.6 ms more outside the kernels
    (e,) = c.end_to_end
    assert e.agree is False and e.measured < e.projected
    assert "the time outside these kernels grew from 7 ms to 7.6 ms" in e.reason
    assert "a new bottleneck or added preparation cost" in e.reason


def test_mixed_timings_give_no_projection_and_a_warning(tmp_path):
    result, c = compared(tmp_path, two_kernel_case(1.5))  # kernels 2 ms in a 1.5 ms step
    (e,) = c.end_to_end
    assert e.projected is None and "timings are mixed" in e.reason
    found = {p.code: p for p in result.problems}
    problem = found["kernel-time-exceeds-end-to-end"]
    assert (problem.line, problem.column, problem.severity.value) == (9, 15, "warning")
    assert problem.message == (
        "the sum of its 2 launches takes 2 ms, longer than the end-to-end time of variant new "
        "(1.5 ms): kernel and end-to-end timings are mixed (another step, unit or run)"
    )
    _, c = compared(tmp_path, two_kernel_case(0.5))  # one launch alone is longer
    assert (
        "launch a (1 ms)"
        in {p.code: p for p in check([tmp_path]).problems}["kernel-time-exceeds-end-to-end"].message
    )


def test_launch_speedups_movement_and_noise(tmp_path):
    _, c = compared(tmp_path, two_kernel_case(9.0, after=(1.0, 0.999)))
    (v,) = c.variants
    a, b = v.launches
    assert a is not None and a.speedup.value == pytest.approx(2.0) and a.speedup.significant
    assert b is not None and b.speedup.noise == "within noise"  # 1 ms vs 0.999 ms, +-1%
    assert a.movement.intensity_from == pytest.approx(1e9 / 1.6e9)
    assert a.movement.intensity_to == pytest.approx(1e9 / 0.8e9)
    assert v.speedup.value == pytest.approx(3.0 / 1.999)
    assert v.speedup.source == "q1..q3"


# --------------------------------------------------------------------------- sweeps


def _m(ms: float, flop: float) -> Measurement:
    t = TimeStats(ms * 1e-3, q1_s=ms * 0.99e-3, q3_s=ms * 1.01e-3, repeats=100, warmup=10)
    return Measurement(t, flops={"u": {"fp32": flop}}, bytes={"hbm": 10 * flop}, grid=(int(ms),))


def test_sweep_weights_and_weighted_means():
    points = (SweepPoint({"s": 1}, _m(1.0, 1e9), 1), SweepPoint({"s": 2}, _m(3.0, 3e9), 3))
    w = normalised_weights(points)
    assert w == [0.25, 0.75]
    assert normalised_weights((SweepPoint({"s": 1}, _m(1, 1)), SweepPoint({"s": 2}, _m(1, 1)))) == [
        0.5,
        0.5,
    ]
    mean = mean_measurement([p.measurement for p in points], w)
    assert mean.time.value_s == pytest.approx(2.5e-3)  # 0.25 x 1 + 0.75 x 3 ms
    assert mean.flops == {"u": {"fp32": pytest.approx(2.5e9)}}
    assert mean.bytes == {"hbm": pytest.approx(2.5e10)}
    assert mean.time.repeats == 100 and mean.grid == (3,)  # the heaviest point's grid


def test_the_example_decode_sweep(capsys, monkeypatch):
    result = check([ATTENTION])
    assert result.analysis is not None
    case = next(c for c in result.analysis.cases if c.case.id == "attention")
    naive, flash = (next(r for r in v.launches if r.kernel == "decode") for v in case.variants)
    assert [p.label for p in flash.sweep] == [f"seq_kv={n}" for n in (1024, 4096, 8192, 16384)]
    assert [p.weight for p in flash.sweep] == [0.2, 0.25, 0.25, 0.3]
    # Time grows linearly with the KV length and the weighted mean length is 8192, so the
    # launch's mean time per call is the 8192 point's.
    assert naive.time_s == pytest.approx(780.0e-6) and flash.time_s == pytest.approx(380.1e-6)
    assert [p.result.binding for p in naive.sweep] == ["memory.l2"] * 4
    assert [p.result.binding for p in flash.sweep] == ["memory.hbm"] * 4
    # HBM at 1024: KV 134,217,728 + Q 262,144 + partials 8,454,144 B in 60.9 us at 3.35 TB/s.
    assert flash.sweep[0].result.efficiency == pytest.approx(142_934_016 / 3.35e12 / 60.9e-6)
    c = compare_case(case, result.specs.machines)
    x = c.launch("flash", 1)
    assert x is not None
    assert [round(p.speedup.value, 3) for p in x.points] == [1.888, 2.023, 2.052, 2.067]
    # Time-weighted: (0.2 x 115 + 0.25 x 400 + 0.25 x 780 + 0.3 x 1540) /
    # (0.2 x 60.9 + 0.25 x 197.7 + 0.25 x 380.1 + 0.3 x 744.9) = 780 / 380.1.
    assert x.weighted_speedup == pytest.approx(780.0 / 380.1)
    weights = (0.2, 0.25, 0.25, 0.3)
    arithmetic = sum(w * p.speedup.value for w, p in zip(weights, x.points, strict=True))
    assert arithmetic < x.weighted_speedup  # the arithmetic mean undercounts long shapes here


def test_sweep_in_the_json_and_the_chart(capsys, monkeypatch):
    monkeypatch.chdir(ATTENTION.parent)
    assert main(["analyze", "--format", "json", "-q", ATTENTION.name]) == 0
    doc = json.loads(capsys.readouterr().out)
    case = next(c for c in doc["cases"] if c["id"] == "attention")
    decode = case["variants"][1]["launches"][1]
    assert [p["label"] for p in decode["sweep"]] == [
        "seq_kv=1024", "seq_kv=4096", "seq_kv=8192", "seq_kv=16384",
    ]  # fmt: skip
    assert decode["sweep"][0]["speedup"]["significant"] is True
    assert decode["sweep_weighted_speedup"] == pytest.approx(780.0 / 380.1)
    from roofgen.charts import hierarchical_chart
    from roofgen.site.charts import case_chart_inputs

    result = check([ATTENTION])
    assert result.analysis is not None
    attention = next(c for c in result.analysis.cases if c.case.id == "attention")
    ((_, inp),) = case_chart_inputs(attention, result.specs.machines)
    spec = hierarchical_chart(inp)
    lines = {}
    for row in spec["datasets"]["trajectories"]:
        lines.setdefault(row["line"], []).append((row["order"], row["x"]))
    assert len(lines) == 6  # two variants x three memory levels
    assert all(sorted(p)[0][0] == 0 and len(p) == 4 for p in lines.values())
    shapes = {p["shape"] for p in spec["datasets"]["points"] if "shape" in p}
    assert shapes == {"seq_kv=1024", "seq_kv=4096", "seq_kv=8192", "seq_kv=16384"}


SWEEP_CASE = """\
roofgen: 1
kind: case
id: s
title: S
machines: [gpu]
method: {{gpu: GPU, driver: '1', clock_control: locked}}
kernels:
  - {{id: k, operator: {{kind: reduction, shape: {{n: 1000000}}}}, dtypes: {{x: fp32}}}}
variants:
  - id: v
    launches:
      - kernel: k
{launch}"""


def test_sweep_checks_are_located(tmp_path, capsys, monkeypatch):
    launch = (
        "        measurement: {time: 1 ms}\n"
        "        sweep:\n"
        "          - {shape: {n: 1000}, weight: 1, measurement: {time: 1 us}}\n"
        "          - {shape: {rows: 2}, measurement: {time: 2 us}}\n"
    )
    (tmp_path / "machine.yaml").write_text(GPU_MACHINE_YAML, encoding="utf-8")
    (tmp_path / "case.yaml").write_text(SWEEP_CASE.format(launch=launch), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "."]) == 1
    assert capsys.readouterr().err.splitlines()[0] == (
        "case.yaml:14:9: variants[0].launches[0].sweep: give 'measurement' (one shape) or "
        "'sweep' (several shapes), not both"
    )
    (tmp_path / "case.yaml").write_text(
        SWEEP_CASE.format(launch=launch.split("\n", 1)[1]), encoding="utf-8"
    )
    assert main(["check", "."]) == 1
    assert capsys.readouterr().err.splitlines()[:2] == [
        "case.yaml:15:13: variants[0].launches[0].sweep[1]: give a weight to every point of "
        "the sweep or to none",
        "case.yaml:15:22: variants[0].launches[0].sweep[1].shape.rows: unknown shape key "
        "'rows' for operator kind 'reduction'; valid keys: n, out",
    ]


def test_a_sweep_point_is_checked_like_a_measurement(tmp_path, capsys, monkeypatch):
    launch = (
        "        sweep:\n"
        "          - {shape: {n: 1000}, measurement: {time: {median: 1 us, warmup: 0}}}\n"
        "          - {shape: {n: 2000}, measurement: {time: 2 us, bytes: {dram: 1 MB}}}\n"
    )
    (tmp_path / "machine.yaml").write_text(GPU_MACHINE_YAML, encoding="utf-8")
    (tmp_path / "case.yaml").write_text(SWEEP_CASE.format(launch=launch), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "."]) == 1
    err = capsys.readouterr().err
    assert "variants[0].launches[0].sweep[1].measurement.bytes.dram: unknown memory level" in err
    (tmp_path / "case.yaml").write_text(
        SWEEP_CASE.format(launch=launch.replace("dram", "hbm")), encoding="utf-8"
    )
    assert main(["check", "."]) == 0
    err = capsys.readouterr().err
    assert "sweep[0].measurement.time.warmup: timed with no warm-up runs" in err


# --------------------------------------------------------------------------- hygiene


def hygiene(tmp_path: Path, time: str, method: str = "{gpu: G, driver: '1', clock_control: x}"):
    case = (
        "roofgen: 1\nkind: case\nid: h\ntitle: H\nmachines: [gpu]\n"
        f"method: {method}\n"
        "kernels: [{id: k, operator: {kind: other}}]\n"
        "variants:\n  - id: v\n    launches:\n      - kernel: k\n        measurement:\n"
        f"          time: {time}\n"
        "          flops: {vector: {fp32: 1e9 FLOP}}\n          bytes: {hbm: 0.8 GB}\n"
    )
    (tmp_path / "machine.yaml").write_text(GPU_MACHINE_YAML, encoding="utf-8")
    (tmp_path / "case.yaml").write_text(case, encoding="utf-8")
    result = check([tmp_path])
    return {p.code: (p.severity.value, p.message) for p in result.problems}


def test_a_first_call_among_the_repeats_is_a_warning(tmp_path):
    ok = "{median: 1 ms, q1: 0.99 ms, q3: 1.01 ms, max: 1.9 ms, repeats: 100, warmup: 10}"
    assert hygiene(tmp_path, ok) == {}
    jit = ok.replace("max: 1.9 ms", "max: 40 ms")
    assert hygiene(tmp_path, jit)["first-call-timed"] == (
        "warning",
        "the slowest repeat (40 ms) is 40.00x the median (1 ms): a first call (JIT "
        "compilation, autotuning, allocation) was probably timed; warm up until the times "
        "settle",
    )


def test_clocks_and_environment_unrecorded_are_notes(tmp_path):
    time = "{median: 1 ms, q1: 0.99 ms, q3: 1.01 ms, repeats: 100, warmup: 10}"
    found = hygiene(tmp_path, time, method="{gpu: G}")
    assert found["clocks-unrecorded"][0] == "note"
    assert found["environment-unrecorded"] == (
        "note",
        "the environment is not recorded (method.driver); report it with every benchmark",
    )


def test_the_case_page_marks_the_figures_a_finding_weakens(tmp_path):
    from roofgen.site.context import build_context
    from roofgen.site.pages import RenderedChart, render_pages

    (tmp_path / "machine.yaml").write_text(GPU_MACHINE_YAML, encoding="utf-8")
    time = "{median: 1 ms, q1: 0.5 ms, q3: 1.5 ms, repeats: 100, warmup: 10}"
    hygiene(tmp_path, time)
    result = check([tmp_path])
    assert result.analysis is not None and result.specs is not None
    ctx = build_context(
        result.analysis, result.specs.machines, name="t", findings=result.findings,
        advice=result.advice,
    )  # fmt: skip
    charts = {s.key: RenderedChart("<div></div>", "c.svg") for s in ctx.charts}
    page = render_pages(ctx, charts)["cases/h/index.md"]
    assert '<td style="text-align: right">1 ms <a href="#quality-1">⚠1</a></td>' in page
    assert (
        '<li id="quality-1" value="1">warning (noisy-timing), v / k: timing spread is 100%'
    ) in page
    assert "## Measurement quality" in page
