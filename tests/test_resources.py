"""The registry of resource kinds: it knows every resource the example machines have,
names them, and says what helps at each roof and why a demand may be unknown."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from roofgen.analysis.bounds import resources
from roofgen.model import Machine
from roofgen.resources import (
    KINDS,
    SINGLETON_NAMES,
    beyond_roof,
    class_label,
    kind_of,
    missing_tag,
    profiler_metrics,
    resource_class,
    resource_names,
    why_unknown,
)
from roofgen.spec.load import load

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def machines() -> dict[str, Machine]:
    loaded = load([ROOT / "specs" / "machines"])
    assert loaded.specs is not None, loaded.problems
    return loaded.specs.machines


def test_the_registry_covers_every_resource_of_the_example_machines(machines):
    seen: set[str] = set()
    for machine in machines.values():
        names = resource_names(machine)
        for resource in resources(machine):
            kind = kind_of(resource)
            seen.add(kind.kind)
            assert names[resource], resource
            assert kind.demand_unit and kind.helps and kind.helps_how, resource
            assert why_unknown(resource, machine), resource
            assert missing_tag(resource, machine), resource
            label = class_label(resource_class(resource, machine))
            assert label != resource_class(resource, machine), f"{resource}: no class label"
    # The example machines between them have every kind, so the loop saw them all.
    assert seen == set(KINDS) == {"compute", "memory", "link", "issue", "power", "launch"}


def test_a_machine_names_its_units_levels_and_links_and_the_registry_the_rest(machines):
    a100 = machines["a100-40gb-sxm"]
    names = resource_names(a100)
    assert names["memory.hbm"] == "HBM2"
    assert names["compute.tensor"] == "Tensor cores"
    assert names["link.nvlink"] == "NVLink 3"
    assert names["issue"] == "Instruction issue"
    assert names["power"] == "Power limit"
    assert names["launch"] == "Launch overhead"
    assert resource_names(a100, short=True)["launch"] == "Launch"
    assert SINGLETON_NAMES == {
        "issue": "Instruction issue",
        "power": "Power limit",
        "launch": "Launch overhead",
    }


def test_classes_group_resources_by_role_and_kind(machines):
    a100 = machines["a100-40gb-sxm"]
    assert resource_class("memory.hbm", a100) == "memory.device"
    assert resource_class("memory.l2", a100) == "memory.llc"
    assert resource_class("compute.fp16", a100) == "compute.fp16"
    assert resource_class("link.pcie", a100) == "link.pcie"
    assert resource_class("issue", a100) == "issue"
    assert resource_class("memory.nope", a100) == "memory"
    assert class_label("memory.device") == "Device memory"
    assert class_label("compute.sfu") == "Special-function units"
    assert class_label("link.nvlink") == class_label("link.pcie") == "Link"
    assert class_label("launch") == "Launch overhead"
    assert class_label("compute.other") == "compute.other"  # no label: shown as it is
    assert class_label("insufficient-data") == "insufficient-data"


def test_what_helps_beyond_a_roof():
    assert beyond_roof("memory.hbm") == (
        "beyond that only fewer bytes help (fusion, reuse through a nearer cache level, "
        "a smaller data type)"
    )
    assert beyond_roof("launch") == (
        "beyond that only fewer launches or synchronisations help (fusion, CUDA graphs)"
    )
    assert kind_of("memory.l2").helps_beyond("L2 cache") == "fewer bytes at L2 cache help"
    assert kind_of("compute.tensor").helps_beyond("Tensor cores") == (
        "less arithmetic or a faster unit helps"
    )


def test_why_a_demand_is_unknown_names_the_field_to_fill(machines):
    a100 = machines["a100-40gb-sxm"]
    assert why_unknown("memory.l2", a100) == "no bytes for this level (measurement.bytes.l2)"
    assert why_unknown("compute.fp32", a100) == "no FLOP counts (measurement.flops)"
    assert why_unknown("link.nvlink", a100) == (
        "no link bytes or collectives (measurement.link_bytes.nvlink, collectives)"
    )
    assert why_unknown("launch", a100) == "no launch or sync counts (measurement.launches, syncs)"
    # The A100 spec gives a power limit but no energy per FLOP or byte.
    assert a100.power is not None and not a100.power.energy_per_flop_j
    assert why_unknown("power", a100) == (
        "the machine has no energy coefficients (power.energy_per_flop, energy_per_byte)"
    )
    powered = replace(a100, power=replace(a100.power, energy_per_flop_j={"fp32": 1e-12}))
    assert why_unknown("power", powered) == (
        "needs FLOPs, bytes and the machine's energy coefficients"
    )


def test_missing_tags_are_what_rules_match(machines):
    a100 = machines["a100-40gb-sxm"]
    tags = {r: missing_tag(r, a100) for r in ("memory.hbm", "memory.l1", "compute.fp64")}
    assert tags == {"memory.hbm": "bytes.device", "memory.l1": "bytes.l1", "compute.fp64": "flops"}
    assert [missing_tag(r, a100) for r in ("link.nvlink", "issue", "power", "launch")] == [
        "link",
        "instructions",
        "energy",
        "launches",
    ]


def test_profiler_metrics_by_class(machines):
    # Metric names as the Nsight Compute profiling guide spells them.
    a100 = machines["a100-40gb-sxm"]
    assert profiler_metrics("memory.hbm", a100) == ("dram__bytes_read.sum", "dram__bytes_write.sum")
    assert profiler_metrics("memory.l2", a100) == ("lts__t_bytes.sum",)
    assert profiler_metrics("issue", a100) == ("smsp__inst_executed.sum",)
    assert "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum" in profiler_metrics(
        "compute.fp32", a100
    )
    assert profiler_metrics("link.nvlink", a100) == ()  # no per-kernel counter


def test_an_unknown_kind_is_an_error_not_a_guess():
    with pytest.raises(KeyError):
        kind_of("bogus.thing")
