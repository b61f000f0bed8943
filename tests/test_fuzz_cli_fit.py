"""Fuzzing `roofgen fit energy --write` in a child process under CPU-time and memory
limits (the runner and the oracle: tests/fuzzcli.py).

The input is a small project: a machine with a power limit and a designed intensity
sweep with measured energy, from which the fit recovers the coefficients it was made
from. One value anywhere in the sweep or the machine is replaced by a hostile one
(null, a wrong type, zero, a negative, a huge or a subnormal number, a quantity of
the wrong dimension), or a measured figure is scaled to an extreme (so that a
coefficient fits as zero, or is too small to write).

Whatever the input, the command exits 0 or 1, prints no traceback, stays inside the
limits, and a failure names the file it is about or says why the fit was refused. And
what the writer writes, `check` accepts: after an exit 0 with ``--write`` the project
still checks.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from fuzzcli import (
    FUZZ_TIMEOUT_S,
    assert_handled,
    fuzz_settings,
    hostile_value,
    replace_at,
    run_roofgen,
    tree_paths,
    workdir,
)
from hypothesis import given
from hypothesis import strategies as st

pytestmark = [pytest.mark.slow, pytest.mark.timeout(FUZZ_TIMEOUT_S)]

MACHINE = textwrap.dedent(
    """\
    roofgen: 1
    kind: machine
    id: testgpu
    name: Test GPU
    clocks: {sm: 1410 MHz}
    compute:
      - {id: fp32, kind: fp32, peaks: {fp32: 19.5 TFLOP/s}}
    memory:
      - {id: hbm, role: device, bandwidth: 1.5 TB/s}
      - {id: l2, role: llc, bandwidth: 6 TB/s}
    power:
      limit: 400 W
      energy_per_byte: {l2: 7 pJ/B}
    """
)

# Coefficients the sweep is made from: J/FLOP, J/B (HBM, L2) and constant power in W.
TRUTH = {"flop": 20e-12, "hbm": 60e-12, "l2": 10e-12, "constant": 90.0}


def sweep(scale: dict[str, float]) -> dict[str, Any]:
    """Eleven launches across intensity 1/8 to 128 and three spin kernels, their energy
    made from ``TRUTH`` with each term scaled by ``scale`` (0 or a negative scale makes
    a coefficient fit as zero)."""
    e = {k: v * scale.get(k, 1.0) for k, v in TRUTH.items()}
    rows = []
    for i, intensity in enumerate([0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128]):
        hbm, l2 = 4e11, 4e11 * (1 + i % 3)
        w = intensity * hbm
        rows.append((w, hbm, l2, max(w / 19.5e12, hbm / 1.5e12)))
    rows += [(19.5e12 / 2 * s, 0.0, 0.0, s) for s in (1.0, 2.0, 3.0)]
    variants = []
    for i, (w, hbm, l2, t) in enumerate(rows):
        energy = e["flop"] * w + e["hbm"] * hbm + e["l2"] * l2 + e["constant"] * t
        measurement = {
            "time": {"median": f"{t!r} s", "repeats": 10},
            "clocks": {"sm": "1410 MHz"},
            "flops": {"fp32": {"fp32": f"{w!r} FLOP"}},
            "bytes": {"hbm": f"{hbm!r} B", "l2": f"{l2!r} B"},
            "energy": f"{max(energy, 1e-3)!r} J",
        }
        variants.append(
            {"id": f"v{i}", "machine": "testgpu",
             "launches": [{"kernel": "k", "measurement": measurement}]}
        )  # fmt: skip
    return {
        "roofgen": 1, "kind": "case", "id": "sweep", "title": "Intensity sweep",
        "machines": ["testgpu"], "kernels": [{"id": "k", "operator": {"kind": "other"}}],
        "variants": variants,
    }  # fmt: skip


SCALES = st.dictionaries(
    st.sampled_from(sorted(TRUTH)),
    st.sampled_from([0.0, -1.0, 1e-30, 1e-300, 1e30, 1.0]),
    max_size=2,
)


@st.composite
def project(draw: st.DrawFn) -> tuple[str, str]:
    """(machine text, sweep text): an extreme scale, or one value replaced anywhere."""
    case = sweep(draw(SCALES))
    machine = yaml.safe_load(MACHINE)
    if draw(st.booleans()):
        target = draw(st.sampled_from(["case", "machine"]))
        tree = case if target == "case" else machine
        path = draw(st.sampled_from(tree_paths(tree)[1:]))
        replace_at(tree, path, draw(hostile_value(raw_numbers=False)))
    dump = lambda d: yaml.safe_dump(d, allow_unicode=True, width=100)  # noqa: E731
    return dump(machine), dump(case)


# Refusals about the launches as a whole (not one file): the fit's own words.
WHOLE = ("not fitted:", "note:", "unknown machine", "--fit-on")


@fuzz_settings(ci=12)
@given(texts=project())
def test_fit_energy_write(texts: tuple[str, str], tmp_path_factory: pytest.TempPathFactory):
    machine, case = texts
    with workdir(tmp_path_factory.mktemp("fuzz-fit")) as cwd:
        (cwd / "specs").mkdir()
        (cwd / "specs" / "machine.yaml").write_text(machine, encoding="utf-8")
        (cwd / "specs" / "sweep.yaml").write_text(case, encoding="utf-8")
        args = ["fit", "energy", "specs", "--machine", "testgpu", "--fit-on", "sweep", "--write"]
        outcome = run_roofgen(args, cwd)
        assert_handled(outcome, ["specs"], whole_input=WHOLE)
        if outcome.status == 0:
            after = run_roofgen(["check", "specs"], cwd)
            assert after.status == 0, "the machine file fit wrote does not check:\n" + (
                after.describe()
            )


def test_a_zero_coefficient_project_checks_after_the_fit(tmp_path: Path) -> None:
    """The fuzzer's known case, run every time: L2 traffic that costs less than nothing
    fits as 0 and must leave a file that checks (it used to be written as 0 pJ/B)."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "machine.yaml").write_text(MACHINE, encoding="utf-8")
    case = yaml.safe_dump(sweep({"l2": -1.0}), width=100)
    (tmp_path / "specs" / "sweep.yaml").write_text(case, encoding="utf-8")
    args = ["fit", "energy", "specs", "--machine", "testgpu", "--fit-on", "sweep", "--write"]
    outcome = run_roofgen(args, tmp_path)
    assert outcome.status == 0, outcome.describe()
    assert "not written: " in outcome.err
    assert run_roofgen(["check", "specs"], tmp_path).status == 0
