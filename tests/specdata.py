"""Spec data and settings shared by the tests.

Tests take them as fixtures (``a100``, ``gpu_machine_yaml``, ``make_settings`` in
``tests/conftest.py``); module-level helpers of a test file import them from here.
"""

from __future__ import annotations

import copy
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from roofgen.config import Settings

# NVIDIA A100 40GB SXM4, datasheet figures (NVIDIA A100 Tensor Core GPU datasheet and
# the Ampere architecture whitepaper): dense tensor-core peaks at the 1410 MHz boost
# clock, 2:4 sparsity doubling BF16, 19.5 TFLOP/s of FP32, 1,555 GB/s of HBM2, 108 SMs
# of 4 schedulers; the 600 GB/s of NVLink is the two-way total, 300 GB/s each way.
# The L2 figure is a microbenchmark's (about 7 TB/s), the NVLink latency a typical one.
_A100: dict[str, Any] = {
    "id": "a100",
    "name": "A100",
    "clocks": {"sm": "1410 MHz"},
    "compute": [
        {
            "id": "tensor",
            "kind": "tensor",
            "peaks": {
                "bf16": "312 TFLOP/s",
                "fp16": "312 TFLOP/s",
                "tf32": "156 TFLOP/s",
                "int8": "624 TOP/s",
                "bf16-sparse": "624 TFLOP/s",
            },
        },
        {"id": "fp32", "kind": "fp32", "peaks": {"fp32": "19.5 TFLOP/s"}},
    ],
    "memory": [
        {"id": "hbm", "name": "HBM", "role": "device", "bandwidth": "1.555 TB/s"},
        {"id": "l2", "role": "llc", "bandwidth": "7050 GB/s"},
    ],
    "links": [
        {
            "id": "nvlink",
            "kind": "nvlink",
            "bandwidth_per_direction": "300 GB/s",
            "latency": "3 us",
        },
        {"id": "pcie", "kind": "pcie", "bandwidth_per_direction": "32 GB/s"},
    ],
    "issue": {"sms": 108, "schedulers_per_sm": 4},
}


def a100_machine() -> dict[str, Any]:
    """The A100 as a machine dict for ``build.machine`` (a fresh copy: change it freely)."""
    return copy.deepcopy(_A100)


# Round figures, so that every time in a test is easy to compute by hand: 1 TB/s moves
# 1 GB in 1 ms, 10 TFLOP/s does 1e10 FLOP in 1 ms. No cache level: a case that records
# HBM bytes covers every memory level, and no rule asks for cache bytes.
GPU_MACHINE_YAML = """\
roofgen: 1
kind: machine
id: gpu
name: GPU
clocks: {sm: 1000 MHz}
compute:
  - {id: vector, kind: fp32, peaks: {fp32: 10 TFLOP/s}}
  - {id: tensor, kind: tensor, peaks: {bf16: 100 TFLOP/s, fp16: 100 TFLOP/s}}
  - {id: sfu, kind: sfu, peaks: {transcendental: 1 TOP/s}}
memory:
  - {id: hbm, name: HBM, role: device, bandwidth: 1 TB/s}
"""


# One elementwise launch on GPU_MACHINE_YAML, HBM-bound at 80% (0.8 GB at 1 TB/s in 1 ms).
GPU_CASE_YAML = """\
roofgen: 1
kind: case
id: c
title: C
machines: [gpu]
method: {gpu: GPU, driver: "1", clock_control: locked}
kernels: [{id: k, operator: {kind: elementwise}}]
variants:
  - id: v
    launches:
      - kernel: k
        measurement:
          time: {median: 1 ms, q1: 0.99 ms, q3: 1.01 ms, repeats: 100, warmup: 10}
          flops: {vector: {fp32: 1e9 FLOP}}
          bytes: {hbm: 0.8 GB}
"""


def make_settings(
    root: Path, *, name: str = "Test site", specs: Sequence[Path] | None = None, **site: Any
) -> Settings:
    """The settings of a build under ``root``: specs in ``root/specs`` unless given,
    output ``root/site``, default thresholds, no rules file; ``site`` adds site keys."""
    from roofgen.analysis.bounds import Thresholds
    from roofgen.config import Settings

    return Settings(
        root=root,
        file=None,
        specs=tuple(specs) if specs is not None else (root / "specs",),
        output=root / "site",
        rules=None,
        thresholds=Thresholds(),
        site={"name": name, **site},
    )


def plausibility_findings(machine: dict[str, Any], measurement: dict[str, Any]) -> list[Any]:
    """The plausibility findings of one launch of an ``other`` kernel measured as
    ``measurement`` on ``machine`` (a machine dict with id ``a100``), by the shipped rules."""
    from roofgen.analysis.analyse import analyse
    from roofgen.analysis.plausibility import check
    from roofgen.model import Specs
    from roofgen.pipeline import shipped_rules
    from roofgen.spec import build

    case = {
        "id": "c",
        "title": "c",
        "machines": [machine["id"]],
        "kernels": [{"id": "k", "operator": {"kind": "other"}}],
        "variants": [{"id": "v", "launches": [{"kernel": "k", "measurement": measurement}]}],
    }
    specs = Specs({machine["id"]: build.machine(machine)}, (build.case(case),))
    return check(specs, analyse(specs), shipped_rules())


def generated_specs(folder: Path, cases: int) -> Path:
    """Specs as the benchmarks write them (``bench/bench_site.py``): one machine, cases
    of 10 kernels x 2 variants (end-to-end times, operator models, sweeps)."""
    where = Path(__file__).resolve().parents[1] / "bench" / "bench_site.py"
    spec = importlib.util.spec_from_file_location("bench_site", where)
    assert spec is not None and spec.loader is not None
    bench_site = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_site)
    path: Path = bench_site.write_specs(folder, cases)
    return path
