"""`roofgen fit energy`: energy per FLOP, per byte and constant power fitted from
measured launches as Choi et al. (IPDPS 2013) fitted theirs. The coefficients are set
here, launches are made from them (energy = e_flop x FLOPs + e_byte x bytes + pi0 x T),
and the fit must give them back; collinear data must be refused with what to measure.
"""

from __future__ import annotations

import random
import textwrap
from pathlib import Path
from typing import Any

import pytest

from roofgen.analysis.bounds import Thresholds, launch_bounds
from roofgen.analysis.energyfit import FitLaunch, FitRefused, fit_energy
from roofgen.cli import main
from roofgen.model import Launch
from roofgen.spec import build
from roofgen.spec.migrate import migrate_text

# The truth the launches are made from (a made-up GPU, not a real one).
E_FP32 = 20e-12  # J/FLOP
E_HBM = 60e-12  # J/B (incremental over L2)
E_L2 = 10e-12  # J/B
PI0 = 90.0  # W
PEAK = 19.5e12  # FLOP/s
BW = 1.5e12  # B/s


def _energy(w: float, hbm: float, l2: float, t: float) -> float:
    return E_FP32 * w + E_HBM * hbm + E_L2 * l2 + PI0 * t


def _sweep(noise: float = 0.0, seed: int = 1) -> list[FitLaunch]:
    """An intensity sweep (L2 traffic 1-3x the HBM traffic) and three spin kernels."""
    rng = random.Random(seed)
    out = []
    for i, intensity in enumerate([0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128]):
        hbm = 4e11
        l2 = hbm * (1 + i % 3)
        w = intensity * hbm
        t = max(w / PEAK, hbm / BW)
        e = _energy(w, hbm, l2, t) * (1 + rng.gauss(0, noise))
        out.append(
            FitLaunch(
                f"sweep {intensity}",
                t,
                e,
                {("fp32", "fp32"): w},
                {"hbm": hbm, "l2": l2},
                1.41e9,
                10 * t,
                designed=True,
            )  # fmt: skip
        )
    for seconds in (1.0, 2.0, 3.0):
        w = PEAK / 2 * seconds
        e = _energy(w, 0, 0, seconds) * (1 + rng.gauss(0, noise))
        out.append(
            FitLaunch(
                f"spin {seconds}",
                seconds,
                e,
                {("fp32", "fp32"): w},
                {"hbm": 0, "l2": 0},
                1.41e9,
                5 * seconds,
                designed=True,
            )  # fmt: skip
        )
    return out


def test_exact_launches_give_the_coefficients_back():
    fit = fit_energy(_sweep(), bootstrap=50)
    assert fit.get("flop:fp32/fp32").value == pytest.approx(E_FP32, rel=1e-9)
    assert fit.get("byte:hbm").value == pytest.approx(E_HBM, rel=1e-9)
    assert fit.get("byte:l2").value == pytest.approx(E_L2, rel=1e-9)
    assert fit.get("constant").value == pytest.approx(PI0, rel=1e-9)
    assert fit.rms == pytest.approx(0.0, abs=1e-9)
    assert fit.clock_hz == pytest.approx(1.41e9)


def test_noisy_launches_give_the_coefficients_back_within_the_noise():
    fit = fit_energy(_sweep(noise=0.01))
    truth = {"flop:fp32/fp32": E_FP32, "byte:hbm": E_HBM, "byte:l2": E_L2, "constant": PI0}
    for key, value in truth.items():
        c = fit.get(key)
        assert c is not None
        assert c.low <= value <= c.high, (key, c)
        assert c.value == pytest.approx(value, rel=0.15), key
    # 1% noise on energy is about 1% on power: the residual says so
    assert 0.003 < fit.rms < 0.03


def test_time_collinear_with_bytes_is_refused_naming_what_to_measure():
    # Memory-bound launches only: time = bytes / bandwidth, so energy per byte and
    # constant power cannot be told apart.
    launches = [
        FitLaunch(
            f"copy {q:g}",
            q / BW,
            E_HBM * q + PI0 * q / BW,
            {},
            {"hbm": q},
            1.41e9,
            10.0,
            designed=True,
        )  # fmt: skip
        for q in (1e12, 2e12, 3e12, 4e12, 5e12)
    ]
    with pytest.raises(FitRefused) as refused:
        fit_energy(launches)
    assert "hbm bytes and time" in refused.value.reason
    assert "spin kernels" in refused.value.remedy


def test_too_few_launches_are_refused():
    with pytest.raises(FitRefused) as refused:
        fit_energy(_sweep()[:4])
    # 4 coefficients need at least 6 launches
    assert "4 usable launch(es) for 4 coefficients" in refused.value.reason
    assert "at least 6 launches" in refused.value.remedy


def test_short_runs_are_left_out_with_a_note():
    launches = _sweep()
    short = FitLaunch("short", 1e-3, 1.0, {("fp32", "fp32"): 1e9}, {"hbm": 1e6, "l2": 1e6},
                      1.41e9, 0.5, designed=True)  # fmt: skip
    fit = fit_energy([*launches, short], bootstrap=20)
    assert "short" not in [r.label for r in fit.fitted]
    assert any(n.startswith("short: left out") and "0.5 s" in n for n in fit.notes)


def test_launches_outside_the_designed_sweep_validate_the_fit():
    work = {("fp32", "fp32"): PEAK * 2}
    moved = {"hbm": 1e11, "l2": 2e11}
    other = FitLaunch("gemm", 2.0, _energy(PEAK * 2, 1e11, 2e11, 2.0) * 1.05, work, moved, 1.41e9)
    fit = fit_energy([*_sweep(), other], bootstrap=20)
    assert [r.label for r in fit.validated] == ["gemm"]
    # modelled from the exact coefficients: the measurement is 5% above the model
    assert fit.validated[0].relative == pytest.approx(0.05 / 1.05, rel=1e-6)


# ------------------------------------------------------------------ the verb


MACHINE = """\
roofgen: 1
kind: machine
id: testgpu
name: Test GPU
clocks: {sm: 1410 MHz}
compute:
  - id: fp32
    kind: fp32
    peaks: {fp32: 19.5 TFLOP/s}
memory:
  - {id: hbm, role: device, bandwidth: 1.5 TB/s}
  - {id: l2, role: llc, bandwidth: 6 TB/s}
power:
  limit: 400 W  # the board's limit
"""


def _case(launches: list[FitLaunch]) -> str:
    variants = []
    for i, x in enumerate(launches):
        w = x.flops.get(("fp32", "fp32"), 0.0)
        variants.append(
            f"""\
  - id: v{i}
    machine: testgpu
    launches:
      - kernel: k
        measurement:
          time: {{median: {x.time_s!r} s, repeats: 10}}
          clocks: {{sm: 1410 MHz}}
          flops: {{fp32: {{fp32: {w!r} FLOP}}}}
          bytes: {{hbm: {x.bytes["hbm"]!r} B, l2: {x.bytes["l2"]!r} B}}
          energy: {x.energy_j!r} J
"""
        )
    return textwrap.dedent(
        """\
            roofgen: 1
            kind: case
            id: sweep
            title: Intensity sweep
            machines: [testgpu]
            kernels:
              - id: k
                operator: {kind: other}
            variants:
            """
    ) + "".join(variants)


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "machine.yaml").write_text(MACHINE, encoding="utf-8")
    (tmp_path / "specs" / "sweep.yaml").write_text(_case(_sweep()), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_fit_energy_writes_the_coefficients_and_their_provenance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    _project(tmp_path, monkeypatch)
    status = main(["fit", "energy", "specs", "--machine", "testgpu", "--fit-on", "sweep",
                   "--operands", "uniform random in [0, 1)", "--write"])  # fmt: skip
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "fp32 FLOP on fp32" in out and "20 pJ/FLOP" in out
    assert "constant power" in out and "90 W" in out
    text = (tmp_path / "specs" / "machine.yaml").read_text(encoding="utf-8")
    assert "limit: 400 W  # the board's limit" in text  # the file's comment kept
    assert "constant: 90 W" in text
    assert "energy_per_flop: {fp32: 20 pJ/FLOP}" in text or "fp32: 20 pJ/FLOP" in text
    assert "hbm: 60 pJ/B" in text and "l2: 10 pJ/B" in text
    assert "operands: uniform random in [0, 1)" in text
    assert "launches: 14" in text and "clock: 1.41 GHz" in text
    # the file checks, and the analysis uses the coefficients: the power roof of a
    # launch is its dynamic energy over (limit - constant power)
    assert main(["check", "-q", "specs"]) == 0
    data = build.machine(_load(tmp_path / "specs" / "machine.yaml"))
    m = build.measurement(
        {"time": "1 s", "flops": {"fp32": {"fp32": "1e12 FLOP"}}, "bytes": {"hbm": "1e10 B"}}
    )
    bounds = launch_bounds(data, Launch("k", 1, m), Thresholds())
    dynamic = 1e12 * 20e-12 + 1e10 * 60e-12  # 20.6 J
    assert bounds.seconds["power"] == pytest.approx(dynamic / (400 - 90), rel=1e-3)


def _load(path: Path) -> dict[str, Any]:
    import yaml

    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_fit_energy_refuses_collinear_launches_with_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    _project(tmp_path, monkeypatch)
    copies = [
        FitLaunch(
            f"c{i}",
            q / BW,
            E_HBM * q + PI0 * q / BW,
            {("fp32", "fp32"): 0.0},
            {"hbm": q, "l2": q},
            1.41e9,
            10 * q / BW,
        )  # fmt: skip
        for i, q in enumerate((2e12, 4e12, 6e12, 8e12, 1e13, 1.2e13))
    ]
    (tmp_path / "specs" / "sweep.yaml").write_text(_case(copies), encoding="utf-8")
    before = (tmp_path / "specs" / "machine.yaml").read_bytes()
    status = main(["fit", "energy", "specs", "--machine", "testgpu", "--write"])
    err = capsys.readouterr().err
    assert status == 1
    assert "not fitted: the launches cannot separate" in err
    assert "spin kernels" in err
    assert (tmp_path / "specs" / "machine.yaml").read_bytes() == before


def test_fit_energy_will_not_write_into_the_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    _project(tmp_path, monkeypatch)
    (tmp_path / "specs" / "machine.yaml").unlink()
    library = _case(_sweep()).replace("testgpu", "a100-40gb-sxm")
    (tmp_path / "specs" / "sweep.yaml").write_text(library, encoding="utf-8")
    status = main(["fit", "energy", "specs", "--machine", "a100-40gb-sxm", "--write"])
    out, err = capsys.readouterr()
    assert status == 1
    assert "constant power" in out  # fitted and printed, but not written
    assert "a100-40gb-sxm is a machine of roofgen's library" in err
    assert "roofgen machines vendor a100-40gb-sxm" in err


def test_idle_power_is_renamed_constant_by_migrate_and_warned_by_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    _project(tmp_path, monkeypatch)
    path = tmp_path / "specs" / "machine.yaml"
    old = MACHINE + "  idle: 60 W  # measured at rest\n"
    path.write_text(old, encoding="utf-8")
    assert main(["check", "specs"]) == 0
    err = capsys.readouterr().err
    assert "power.idle: 'idle' is renamed 'constant'" in err
    assert build.machine(_load(path)).power.constant_w == pytest.approx(60.0)
    result = migrate_text(old)
    assert result.before == result.after == 1 and result.changed
    # only that line changed; its comment stays on it (ruamel keeps the comment's column)
    assert result.text.startswith(MACHINE)
    assert result.text[len(MACHINE) :].split() == ["constant:", "60", "W", "#", "measured", "at",
                                                   "rest"]  # fmt: skip
    assert main(["migrate", "specs"]) == 0
    assert path.read_text(encoding="utf-8") == result.text
    capsys.readouterr()
    assert main(["check", "specs"]) == 0
    assert "renamed" not in capsys.readouterr().err


def test_fit_energy_leaves_out_a_coefficient_fitted_as_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    """L2 traffic that costs nothing (here: less than nothing, so the non-negative bound
    holds it at exactly 0) must not be written as `0 pJ/B`, which the schema refuses:
    the file would stop checking. It is reported, and an older L2 value is removed."""
    _project(tmp_path, monkeypatch)
    machine = tmp_path / "specs" / "machine.yaml"
    machine.write_text(
        MACHINE.replace("limit: 400 W", "limit: 400 W\n  energy_per_byte: {l2: 7 pJ/B}"),
        encoding="utf-8",
    )
    launches = [
        FitLaunch(
            x.label,
            x.time_s,
            x.energy_j - (E_L2 + 5e-12) * x.bytes["l2"],
            x.flops,
            x.bytes,
            x.clock_hz,
            x.run_s,
            designed=True,
        )  # fmt: skip
        for x in _sweep()
    ]
    (tmp_path / "specs" / "sweep.yaml").write_text(_case(launches), encoding="utf-8")
    status = main(["fit", "energy", "specs", "--machine", "testgpu", "--fit-on", "sweep",
                   "--write"])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 0, err
    assert "not written: L2" in err or "not written: l2" in err
    text = machine.read_text(encoding="utf-8")
    assert "0 pJ/B" not in text and "l2:" not in text.split("energy_per_byte", 1)[1].split("\n")[0]
    assert "7 pJ/B" not in text  # the older value no longer holds
    assert "hbm:" in text  # the other coefficients are written
    assert main(["check", "-q", "specs"]) == 0


def test_a_coefficient_that_reads_back_as_zero_is_left_out():
    """5e-324 J/B is positive, but written in pJ/B it reads back as 0 (underflow)."""
    from roofgen.analysis.energyfit import Coefficient, EnergyFit
    from roofgen.api.energyfit import left_out

    fit = EnergyFit(
        (Coefficient("byte:l2", 5e-324, 0.0, 1e-323), Coefficient("byte:hbm", 6e-11, 5e-11, 7e-11)),
        (), (), 1.0, None,
    )  # fmt: skip
    out = left_out(fit)
    assert len(out) == 1 and "fitted as 4.94e-324" in out[0]


def test_fit_energy_writes_nothing_that_would_not_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    """The self-check runs on the edited machine file: a fit written under a power limit
    the schema refuses is not written (the file's own older problems are not the fit's)."""
    from roofgen.api import energyfit

    _project(tmp_path, monkeypatch)
    machine = tmp_path / "specs" / "machine.yaml"
    before = machine.read_bytes()
    real = energyfit.fitted_yaml

    def broken(report: Any) -> dict[str, Any]:
        out = real(report)
        out["power"]["constant"] = "-3 W"
        return out

    monkeypatch.setattr(energyfit, "fitted_yaml", broken)
    status = main(["fit", "energy", "specs", "--machine", "testgpu", "--fit-on", "sweep",
                   "--write"])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 1
    assert "would not check, so nothing was written" in err and "power.constant" in err
    assert machine.read_bytes() == before
