"""Facts with one home: which memory level is the device (``Machine.device_level``) and
whether a precision's work is counted in OP or FLOP (``roofgen.units.counts_ops``), and
the places that read them. Expected values are written out by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from specdata import a100_machine

from roofgen.advice.hardware import FasterPrecision
from roofgen.analysis.analyse import analyse
from roofgen.analysis.plausibility import check as plausibility_check
from roofgen.api import shipped_rules
from roofgen.model import Specs
from roofgen.scaffold.operators import model_work
from roofgen.site.machinepage import machine_page
from roofgen.spec import build
from roofgen.spec.quantity import parse_quantity
from roofgen.units import counts_ops, rate_unit, work_unit

CASES = Path(__file__).parent / "cases" / "valid"

# ------------------------------------------------------------------ OP or FLOP

#: precision -> the unit its work is counted in, as the machine schema states the peaks:
#: floating-point precisions in FLOP, integer precisions and the special-function unit's
#: transcendental operations in OP; 2:4 sparse peaks keep their precision's unit.
UNITS = {
    "fp64": "FLOP",
    "fp32": "FLOP",
    "tf32": "FLOP",
    "bf16": "FLOP",
    "fp16": "FLOP",
    "fp8": "FLOP",
    "fp6": "FLOP",
    "fp4": "FLOP",
    "fp16-sparse": "FLOP",
    "fp8-sparse": "FLOP",
    "int8": "OP",
    "int4": "OP",
    "int8-sparse": "OP",
    "int4-sparse": "OP",
    "transcendental": "OP",
}


@pytest.mark.parametrize(("precision", "unit"), sorted(UNITS.items()))
def test_each_precision_is_counted_in_one_unit(precision: str, unit: str) -> None:
    assert counts_ops(precision) is (unit == "OP")
    assert work_unit(precision) == unit
    assert rate_unit(precision) == f"{unit}/s"


def test_new_case_writes_integer_matrix_work_in_op() -> None:
    """An INT8 GEMM's template holds its 2 x 128^3 = 4,194,304 operations as OP, which the
    case schema reads in the OP dimension (a FLOP count under int8 is refused)."""
    units = [("tensor", "tensor", ["int8", "fp16"]), ("fp32", "fp32", ["fp32"])]
    dtypes = {"a": "int8", "b": "int8", "c": "int32"}
    work = model_work("gemm", {"m": 128, "n": 128, "k": 128}, dtypes, units)
    assert work == {"tensor": {"int8": "4.19e6 OP"}}
    assert parse_quantity(work["tensor"]["int8"], "op") == 4.19e6


def test_new_case_writes_transcendental_work_in_op_and_vector_work_in_flop() -> None:
    """Softmax over 4 x 1024 FP16 values: one exp per element (4,096 OP) and five FLOP per
    element computed in FP32 (max, subtract, add, two rescalings: 20,480 FLOP)."""
    units = [("sfu", "sfu", ["transcendental"]), ("fp32", "fp32", ["fp32"])]
    work = model_work("softmax", {"rows": 4, "cols": 1024}, {"x": "fp16", "y": "fp16"}, units)
    assert work == {"sfu": {"transcendental": "4.1e3 OP"}, "fp32": {"fp32": "2.05e4 FLOP"}}


def test_a_faster_precision_names_its_rate_in_its_own_unit() -> None:
    int8 = FasterPrecision("int8", "Tensor cores", 624e12, 2.0)
    fp8 = FasterPrecision("fp8", "Tensor cores", 989e12, 2.0)
    special = FasterPrecision("transcendental", "SFU", 3.9e12, 2.0)
    assert int8.text() == "INT8 on the Tensor cores (624 TOP/s, 2.00x)"
    assert fp8.text() == "FP8 on the Tensor cores (989 TFLOP/s, 2.00x)"
    assert special.text() == "TRANSCENDENTAL on the SFU (3.9 TOP/s, 2.00x)"


def test_the_machine_page_states_integer_ceilings_in_op_per_s_and_ridges_in_op_per_b() -> None:
    """The corpus machine's ``int8-dp4a`` ceiling is written ``80 TOP/s`` (and checked in
    the OP/s dimension); the page shows it so, beside the 624 TOP/s INT8 peak and the FP16
    ones in FLOP/s, and the INT8 ridge point in OP per byte."""
    data = yaml.safe_load((CASES / "int-sub-ceiling" / "machine.yaml").read_text())
    machine = build.machine(data)
    page = machine_page(machine, analyse(Specs({machine.id: machine}, ())), ())
    shown = {(row.resource, row.detail): row.datasheet for row in page.roofs}
    assert shown[("compute.tensor", "FP16")] == "312 TFLOP/s"
    assert shown[("compute.tensor", "INT8")] == "624 TOP/s"
    assert shown[("compute.tensor", "sub-ceiling, FP16")] == "290 TFLOP/s"
    assert shown[("compute.tensor", "sub-ceiling, INT8")] == "80 TOP/s"
    # ridge points at the 1.5 TB/s HBM: 312e12 / 1.5e12 = 208 FLOP/B, 624e12 / 1.5e12 = 416 OP/B
    assert dict(page.ridges) == {"tensor FP16": ("208 FLOP/B",), "tensor INT8": ("416 OP/B",)}


# ------------------------------------------------------------------ the device level


def _with_levels(*levels: dict[str, Any]) -> dict[str, Any]:
    machine = a100_machine()
    machine["memory"] = list(levels)
    return machine


HBM = {"id": "hbm", "name": "HBM", "role": "device", "bandwidth": "1.555 TB/s"}
# A second device-role level after the first (e.g. CPU memory reached over a coherent link).
LPDDR = {"id": "lpddr", "name": "LPDDR", "role": "device", "bandwidth": "500 GB/s"}
L2 = {"id": "l2", "role": "llc", "bandwidth": "7050 GB/s"}


def test_the_device_level_is_the_first_device_level_far_to_near() -> None:
    machine = build.machine(_with_levels(HBM, LPDDR, L2))
    assert machine.device_level is not None
    assert machine.device_level.id == "hbm"
    assert machine.device_level is machine.level("hbm")
    later = build.machine(_with_levels(L2, LPDDR, HBM))
    assert later.device_level is not None and later.device_level.id == "lpddr"


def test_a_machine_without_device_memory_has_no_device_level() -> None:
    assert build.machine(_with_levels(L2)).device_level is None


GOOD = {"median": "1 ms", "q1": "0.99 ms", "q3": "1.01 ms", "repeats": 100, "warmup": 10}
MINIMUM = 3 * 4096**2 * 2  # a 4096^3 BF16 GEMM reads A and B and writes C once: 100,663,296 B


def _findings(machine: dict[str, Any], moved: dict[str, float]) -> dict[str, str]:
    measurement = {"time": GOOD, "flops": {"tensor": {"bf16": 2 * 4096**3}}, "bytes": moved}
    case = {
        "id": "c",
        "title": "c",
        "machines": ["a100"],
        "kernels": [
            {
                "id": "k",
                "operator": {"kind": "gemm", "shape": {"m": 4096, "n": 4096, "k": 4096}},
                "dtypes": {"a": "bf16", "b": "bf16", "c": "bf16"},
            }
        ],
        "variants": [{"id": "v", "launches": [{"kernel": "k", "measurement": measurement}]}],
    }
    specs = Specs({"a100": build.machine(machine)}, (build.case(case),))
    return {f.rule: f.message for f in plausibility_check(specs, analyse(specs), shipped_rules())}


def test_only_the_device_level_is_held_to_the_operator_models_minimum() -> None:
    """The compulsory bytes are the device level's (the analysis fills them in there when
    unmeasured): a second device-role level moving a tenth of them is no finding, and the
    device level moving a tenth is one."""
    machine = _with_levels(HBM, LPDDR, L2)
    assert _findings(machine, {"hbm": MINIMUM, "lpddr": 0.1 * MINIMUM}) == {}
    below = _findings(machine, {"hbm": 0.1 * MINIMUM, "lpddr": MINIMUM})
    assert set(below) == {"bytes-below-model"}
    assert below["bytes-below-model"].startswith("HBM moved 10.1 MB, 0.10x")
