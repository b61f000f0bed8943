"""The example where the power limit binds: specs/cases/h200-fp32-power.yaml (fitted) and
specs/cases/h200-fp32-power-holdout.yaml (held out), on specs/machines/h200-sxm.yaml.

Their measurements are the published FP32 intensity sweep of te42kyfo/gpu-benches by
Dominik Ernst (NHR@FAU): gpu-roofline/h200.txt, kernel gpu-roofline/main.cu, both at commit
e4e93a37819713515af27e0ffd8ae379df9a115b. Each row there reads "device blocks N its
intensity Fl/B GB/s GF/s MHz W degC"; the rows below are transcribed from that file. The
kernel (main.cu): 1056 blocks of 256 threads, each thread streaming M = 4000 elements of A
and of B, (2 + 2N) FLOPs per element; the run was in float (intensity 0.250 at N = 0:
(2 + 2N) / (2 x sizeof) = 0.25 means sizeof = 4).

Every expected value is computed here by hand from those rows, or by scipy's NNLS on the
case's launches; none is read from roofgen's output.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from roofgen.api import check
from roofgen.model import Machine, Measurement
from roofgen.pipeline import CheckResult

# numpy and scipy are imported where the fit runs: importing them costs about 0.7 s of
# CPU, which every collection of the suite would pay.
if TYPE_CHECKING:
    import numpy as np

SPECS = Path(__file__).resolve().parents[1] / "specs"
FITTED = "h200-fp32-power"
HELD_OUT = "h200-fp32-power-holdout"

# (N, GB/s, GF/s, SM MHz, W) as printed in gpu-roofline/h200.txt at e4e93a3 (blocks 1056 on
# every row). The published W is the maximum of 21 NVML samples taken 100 ms apart.
PUBLISHED = {
    0: (3759, 940, 1980, 572),
    24: (3629, 22683, 1980, 675),
    160: (989, 39827, 1980, 467),
    408: (415, 42442, 1980, 396),
}
BLOCKS, THREADS, M = 1056, 256, 4000
POWER_LIMIT_W = 700.0  # H200 SXM datasheet
HBM_B_PER_S = 4.8e12  # H200 datasheet
FP32_FLOP_PER_S = 67e12  # H200 datasheet, FP32 at the 1980 MHz boost clock


@pytest.fixture(scope="module")
def checked() -> CheckResult:
    result = check([SPECS])
    assert result.specs is not None and result.analysis is not None
    assert not result.failed(strict=True), [p.format() for p in result.problems]
    return result


def _measurement(checked: CheckResult, case_id: str, n: int) -> Measurement:
    assert checked.specs is not None
    case = next(c for c in checked.specs.cases if c.id == case_id)
    variant = next(v for v in case.variants if v.id == f"n{n}")
    (launch,) = variant.launches
    assert launch.kernel == f"fma-n{n}"
    return launch.measurement


def _machine(checked: CheckResult) -> Machine:
    assert checked.specs is not None
    return checked.specs.machines["h200-sxm"]


def _launches(checked: CheckResult, case_id: str) -> list[Measurement]:
    assert checked.specs is not None
    case = next(c for c in checked.specs.cases if c.id == case_id)
    return [v.launches[0].measurement for v in case.variants]


@pytest.mark.parametrize("n", sorted(PUBLISHED))
def test_flops_bytes_and_time_derived_from_the_published_rows(checked: CheckResult, n: int):
    gb_per_s, gf_per_s, mhz, watts = PUBLISHED[n]
    data_len = BLOCKS * THREADS * M  # floats in A (and in B)
    assert data_len == 1_081_344_000
    nbytes = 2 * data_len * 4  # A and B read once, 4-byte floats
    flops = (2 + 2 * n) * data_len
    seconds = nbytes / (gb_per_s * 1e9)
    # The derivation agrees with the published FLOP rate (GB/s and GF/s are rounded to 1).
    assert flops / seconds == pytest.approx(gf_per_s * 1e9, rel=1e-3)
    case = FITTED if n in (0, 24, 160, 408) else HELD_OUT
    m = _measurement(checked, case, n)
    assert m.bytes == {"hbm": nbytes}
    assert m.flops == {"fp32": {"fp32": flops}}
    assert m.time.value_s == pytest.approx(seconds, rel=1e-5)
    assert m.time.statistic == "mean" and m.time.repeats == 1000
    assert m.sm_clock_hz == mhz * 1e6
    assert m.average_power_w == watts


def test_intensity_of_the_published_rows_means_float():
    """main.cu prints (2 + 2N) / (2 x sizeof(dtype)); the file prints 0.250 at N = 0 and
    6.250 at N = 24, so sizeof(dtype) is 4 (float), not 8 as the committed typedef says."""
    for n, printed in ((0, 0.250), (24, 6.250), (408, 102.250)):
        assert (2 + 2 * n) / (2 * 4) == printed
        assert (2 + 2 * n) / (2 * 8) != printed


def _nnls_fit(launches: list[Measurement]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Power = e_flop x FLOP/s + e_byte x B/s + constant, by NNLS over columns scaled by
    their largest value. Returns (e_flop, e_byte, constant), the design matrix and power."""
    import numpy as np
    from scipy.optimize import nnls

    a = np.array(
        [
            [m.flops["fp32"]["fp32"] / m.time.value_s, m.bytes["hbm"] / m.time.value_s, 1.0]  # type: ignore[index]
            for m in launches
        ]
    )
    y = np.array([m.average_power_w for m in launches], dtype=float)
    scale = np.abs(a).max(axis=0)
    x, _ = nnls(a / scale, y)
    return x / scale, a, y


def test_machine_coefficients_reproduced_by_nnls(checked: CheckResult):
    import numpy as np

    fitted = _launches(checked, FITTED)
    assert len(fitted) == 12
    coef, a, y = _nnls_fit(fitted)
    machine = _machine(checked)
    power = machine.power
    assert power is not None
    (fp32,) = [u for u in machine.compute if u.id == "fp32"]
    # The machine file holds 4 significant digits.
    assert fp32.energy_per_flop_j["fp32"] == pytest.approx(coef[0], rel=5e-4)
    assert power.energy_per_byte_j["hbm"] == pytest.approx(coef[1], rel=5e-4)
    assert power.constant_w == pytest.approx(coef[2], rel=5e-4)
    assert coef[0] * 1e12 == pytest.approx(5.556, abs=5e-4)  # pJ/FLOP
    assert coef[1] * 1e12 == pytest.approx(118.9, abs=0.05)  # pJ/B
    assert coef[2] == pytest.approx(120.4, abs=0.05)  # W
    # The provenance: launches, held-out launches and the RMS relative residual.
    rms = float(np.sqrt(np.mean(((y - a @ coef) / y) ** 2)))
    assert power.fit is not None
    assert power.fit["launches"] == 12
    assert power.fit["validated"] == 6
    assert power.fit["residual"] == f"{rms * 100:.1f}%" == "0.9%"
    assert set(power.fit["cases"]) == {FITTED, HELD_OUT}  # type: ignore[call-overload]


def test_held_out_rows_are_predicted_within_one_percent(checked: CheckResult):
    coef, _, _ = _nnls_fit(_launches(checked, FITTED))
    held = _launches(checked, HELD_OUT)
    assert len(held) == 6
    for m in held:
        modelled = (
            coef[0] * m.flops["fp32"]["fp32"] / m.time.value_s  # type: ignore[index]
            + coef[1] * m.bytes["hbm"] / m.time.value_s  # type: ignore[index]
            + coef[2]
        )
        assert modelled == pytest.approx(m.average_power_w, rel=0.01)


def _power_time_by_hand(machine: Machine, n: int) -> tuple[float, float, float]:
    """(t_power, t_hbm, t_fp32) of row N, from the transcribed row and the machine file's
    coefficients: t_power = (e_flop x FLOPs + e_byte x bytes) / (700 W - constant)."""
    power = machine.power
    assert power is not None
    (fp32,) = [u for u in machine.compute if u.id == "fp32"]
    data_len = BLOCKS * THREADS * M
    flops, nbytes = (2 + 2 * n) * data_len, 8 * data_len
    dynamic = fp32.energy_per_flop_j["fp32"] * flops + power.energy_per_byte_j["hbm"] * nbytes
    assert power.constant_w is not None
    return (
        dynamic / (POWER_LIMIT_W - power.constant_w),
        nbytes / HBM_B_PER_S,
        flops / FP32_FLOP_PER_S,
    )


def _launch_result(checked: CheckResult, case_id: str, n: int):  # type: ignore[no-untyped-def]
    assert checked.analysis is not None
    case = next(c for c in checked.analysis.cases if c.case.id == case_id)
    variant = next(v for v in case.variants if v.variant == f"n{n}")
    (launch,) = variant.launches
    return launch


def test_power_binds_the_n24_launch(checked: CheckResult):
    t_power, t_hbm, t_fp32 = _power_time_by_hand(_machine(checked), 24)
    # 54.07 GFLOP x 5.556 pJ + 8.651 GB x 118.9 pJ = 1.329 J over 579.6 W.
    assert t_power == pytest.approx(2.293e-3, rel=1e-3)
    assert t_hbm == pytest.approx(1.802e-3, rel=1e-3)
    assert t_power > t_hbm > t_fp32
    r = _launch_result(checked, FITTED, 24)
    assert r.binding == "power"
    assert r.runner_up == "memory.hbm"
    assert r.bound_s["power"] == pytest.approx(t_power, rel=1e-9)
    assert r.bound_s["memory.hbm"] == pytest.approx(t_hbm, rel=1e-9)
    assert r.lower_bound_s == pytest.approx(t_power, rel=1e-9)
    # Measured 8,650,752,000 B / 3629 GB/s = 2.384 ms: 96% of the power bound.
    assert r.efficiency == pytest.approx(t_power / (8_650_752_000 / 3629e9), rel=1e-5)


@pytest.mark.parametrize(
    ("case", "n", "binding"),
    [
        (FITTED, 0, "memory.hbm"),
        (FITTED, 4, "power"),
        (FITTED, 96, "power"),
        (FITTED, 160, "compute.fp32"),
        (HELD_OUT, 120, "power"),
        (HELD_OUT, 200, "compute.fp32"),
    ],
)
def test_power_binds_between_the_memory_and_compute_ends(
    checked: CheckResult, case: str, n: int, binding: str
):
    t_power, t_hbm, t_fp32 = _power_time_by_hand(_machine(checked), n)
    by_hand = max(
        (("power", t_power), ("memory.hbm", t_hbm), ("compute.fp32", t_fp32)),
        key=lambda kv: kv[1],
    )[0]
    assert by_hand == binding
    assert _launch_result(checked, case, n).binding == binding


def test_no_row_is_power_limited_by_its_clock(checked: CheckResult):
    """Every row ran at 1980 MHz, the clock the roofs assume, so none was throttled: the
    power roof binds the model's bound, and the clock shows no power-limited launch."""
    from roofgen.analysis.energy import EnergyResult

    for case in (FITTED, HELD_OUT):
        for m in _launches(checked, case):
            assert m.sm_clock_hz == 1980e6
    r = _launch_result(checked, FITTED, 24)
    assert r.get(EnergyResult).power_limited is False


def test_energy_section_uses_the_units_fitted_coefficient(checked: CheckResult):
    """`fit energy` writes energy per FLOP on the compute unit; the energy roofline of the
    case page reads it there (and no longer says the coefficients are unknown)."""
    from roofgen.site.sections.energy import energy_model

    machine = _machine(checked)
    assert machine.power is not None and not machine.power.energy_per_flop_j
    model = energy_model(machine, "fp32")
    assert model is not None
    (fp32,) = [u for u in machine.compute if u.id == "fp32"]
    assert model.j_per_flop == fp32.energy_per_flop_j["fp32"]
    assert model.j_per_byte == machine.power.energy_per_byte_j["hbm"]
    assert model.constant_w == machine.power.constant_w
    assert model.peak == FP32_FLOP_PER_S
    assert model.bandwidth == HBM_B_PER_S


def test_explain_names_the_mean_and_the_power_roof(checked: CheckResult):
    from roofgen.report.explain import explain
    from roofgen.report.explain_text import explanation_text

    assert checked.analysis is not None and checked.specs is not None
    advice = checked.advice
    assert advice is not None
    text = explanation_text(
        explain(checked.analysis, checked.specs, advice, FITTED, "fma-n24", "n24")
    )
    assert "mean of 1000 repeats" in text
    assert "median of" not in text
    assert "binds      Power limit (power): it needs 2.29 ms of the 2.38 ms measured" in text
