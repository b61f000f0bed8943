"""Honest time statistics: a median with its quantiles or a mean with its spread, held
to the order the statistics of one set of repeats keep, and warnings for unit slips."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from roofgen.cli import main

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"
TIME = "time: {median: 1.1 ms, q1: 1.09 ms, q3: 1.12 ms, warmup: 10, repeats: 100}"
# The minimal case on its machine: 1.5 GB over 1.5 TB/s of HBM = 1 ms; 1.5e9 FLOP over
# 312 TFLOP/s = 4.8 us. The bound of the launch is 1 ms, set by HBM.
BOUND_S = 1.5e9 / 1.5e12


def _specs(folder: Path, time: str) -> Path:
    shutil.copytree(MINIMAL, folder)
    case = folder / "case.yaml"
    text = case.read_text(encoding="utf-8")
    assert TIME in text
    case.write_text(text.replace(TIME, time), encoding="utf-8")
    return folder


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.fixture(autouse=True)
def _no_color(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(tmp_path)


def test_a_median_outside_its_quartiles_fails_check(tmp_path, capsys):
    # The example: a median pasted from another run (9.9 ms) beside the
    # quartiles and the maximum of this one.
    _specs(tmp_path / "s", "time: {median: 9.9 ms, q1: 2.331 ms, q3: 2.338 ms, max: 2.372 ms}")
    status, _, err = _run(["check", "s"], capsys)
    assert status == 1
    assert (
        f"{Path('s/case.yaml')}:13:26: variants[0].launches[0].measurement.time.median: "
        "median 9.9 ms is above q3 (2.338 ms) and above max (2.372 ms): the statistics of "
        "one set of repeats satisfy min <= q1 <= median <= q3 <= max (ties allowed); check "
        "this value and its unit"
    ) in err


def test_diff_no_longer_calls_a_4x_slowdown_within_noise(tmp_path, capsys):
    # Before, the head's 9.9 ms median beside quartiles of 2.331..2.338 ms made an
    # interval overlapping the base's, and `diff` called the 4x slowdown "within noise".
    # Now the head's statistics are an error: the diff refuses it, located.
    _specs(tmp_path / "base", "time: {median: 2.335 ms, q1: 2.331 ms, q3: 2.338 ms}")
    _specs(tmp_path / "head", "time: {median: 9.9 ms, q1: 2.331 ms, q3: 2.338 ms, max: 2.372 ms}")
    status, out, err = _run(["diff", "base", "head", "--fail-on-regression", "10"], capsys)
    assert status != 0
    assert "within noise" not in out + err
    assert re.search(r"case\.yaml:13:26: variants\[0\].*time\.median: median 9\.9 ms", err), err


def test_a_bare_number_median_beside_quartiles_with_units_fails_check(tmp_path, capsys):
    # `median: 880` is 880 s; the quartiles are 870 us and 890 us: 880 s > 890 us.
    _specs(tmp_path / "s", "time: {median: 880, q1: 870 us, q3: 890 us}")
    status, _, err = _run(["check", "s"], capsys)
    assert status == 1
    at, path = f"{Path('s/case.yaml')}:13:26:", "variants[0].launches[0].measurement.time.median:"
    assert f"{at} {path} median 880 s is above q3 (890 us)" in err
    assert (
        f"{at} warning: {path} median is a bare number (880, read as seconds) while q1, q3 "
        "have a unit: write its unit (e.g. '880 us') so a unit slip cannot hide"
    ) in err


def test_mixed_bare_numbers_and_units_alone_is_a_warning(tmp_path, capsys):
    # 0.00088 s = 880 us lies between the quartiles: a warning only, an error with --strict.
    _specs(tmp_path / "s", "time: {median: 0.00088, q1: 870 us, q3: 890 us}")
    status, _, err = _run(["check", "s"], capsys)
    assert status == 0, err
    assert "warning: variants[0].launches[0].measurement.time.median: median is a bare" in err
    assert _run(["check", "--strict", "s"], capsys)[0] == 1


def test_central_statistics_more_than_10x_apart_warn(tmp_path, capsys):
    # q1 100 us, median 1.5 ms, q3 2 ms: ordered, but q3 / q1 = 2e-3 / 1e-4 = 20 > 10.
    _specs(tmp_path / "s", "time: {median: 1.5 ms, q1: 100 us, q3: 2 ms}")
    status, _, err = _run(["check", "s"], capsys)
    assert status == 0, err
    assert (
        "warning: variants[0].launches[0].measurement.time.q3: q3 (2 ms) is 20x q1 (100 us)"
    ) in err


def test_ties_are_allowed(tmp_path, capsys):
    _specs(tmp_path / "s", "time: {median: 1 ms, q1: 1 ms, q3: 1 ms, min: 1 ms, max: 1 ms}")
    assert _run(["check", "--strict", "s"], capsys)[0] == 0


def test_a_mean_is_analysed_and_named(tmp_path, capsys):
    # Efficiency = bound / mean = 1 ms / 1.25 ms = 0.8.
    _specs(tmp_path / "s", "time: {mean: 1.25 ms, std: 0.01 ms, repeats: 100, warmup: 10}")
    status, out, err = _run(["analyze", "s", "--format", "json"], capsys)
    assert status == 0, err
    launch = json.loads(out)["cases"][0]["variants"][0]["launches"][0]
    assert launch["time_statistic"] == "mean"
    assert launch["time_s"] == pytest.approx(1.25e-3)
    assert launch["efficiency"] == pytest.approx(BOUND_S / 1.25e-3)
    assert launch["efficiency"] == pytest.approx(0.8)
    status, out, _ = _run(["analyze", "s"], capsys)
    assert "efficiency 80% (mean time)" in out


def test_a_mean_outside_min_and_max_fails_but_may_leave_the_quartiles(tmp_path, capsys):
    _specs(tmp_path / "bad", "time: {mean: 1.3 ms, min: 1.1 ms, max: 1.2 ms}")
    status, _, err = _run(["check", "bad"], capsys)
    assert status == 1
    assert "time.mean: mean 1.3 ms is above max (1.2 ms)" in err
    # A skewed distribution: the mean (1.2 ms) above q3 (1.15 ms) is possible.
    _specs(tmp_path / "ok", "time: {mean: 1.2 ms, q1: 1.05 ms, q3: 1.15 ms, max: 2 ms}")
    assert _run(["check", "ok"], capsys)[0] == 0


def test_a_mean_speedup_is_judged_by_its_standard_deviation(tmp_path, capsys):
    # base 1.1 +- 0.01 ms = 1.09..1.11 ms; head 1.3 +- 0.01 ms = 1.29..1.31 ms: apart,
    # a regression of 1.1 / 1.3 = 0.846x, interval 1.09 / 1.31 .. 1.11 / 1.29.
    _specs(tmp_path / "base", "time: {mean: 1.1 ms, std: 0.01 ms}")
    _specs(tmp_path / "head", "time: {mean: 1.3 ms, std: 0.01 ms}")
    status, out, err = _run(["diff", "base", "head", "--format", "json"], capsys)
    assert status == 0, err
    speedup = json.loads(out)["launches"][0]["speedup"]
    assert speedup["value"] == pytest.approx(1.1 / 1.3)
    assert speedup["low"] == pytest.approx(1.09 / 1.31)
    assert speedup["high"] == pytest.approx(1.11 / 1.29)
    assert speedup["noise"] == "significant"


def test_efficiency_under_one_percent_warns_of_a_unit_slip(tmp_path, capsys):
    # 200 ms written where 200 us was meant: efficiency 1 ms / 200 ms = 0.5% < 1%.
    _specs(tmp_path / "s", "time: {median: 200 ms, q1: 199 ms, q3: 201 ms, warmup: 10, "
                           "repeats: 100}")  # fmt: skip
    status, _, err = _run(["check", "s"], capsys)
    assert status == 0, err
    assert (
        "warning: variants[0].launches[0].measurement.time: the launch needs 1 ms at its "
        "roofs but took 200 ms (median), 0.5% of its bound, below 1.0%: more likely a unit "
        "slip"
    ) in err
