"""The kinds of resource a machine has, described once: compute units, memory levels,
links, instruction issue, the power limit and launch overhead.

A resource is named ``compute.<unit id>``, ``memory.<level id>``, ``link.<link id>``,
``issue``, ``power`` or ``launch``. For each kind the registry says how its resources
are named, the units of a launch's demand on it and of its capacity, what helps once
a launch runs at its roof, why its demand may be unknown (the spec field to fill),
and the profiler metrics that measure that demand. Pure data and lookups.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from roofgen.model import Machine

__all__ = [
    "KINDS",
    "SINGLETON_NAMES",
    "ResourceKind",
    "beyond_roof",
    "class_label",
    "kind_of",
    "missing_tag",
    "profiler_metrics",
    "resource_class",
    "resource_kind",
    "resource_names",
    "why_unknown",
]


@dataclass(frozen=True)
class ResourceKind:
    """One kind of resource.

    ``label`` names the kind ("Memory level"); a singleton kind (one resource a
    machine, named like its kind: ``issue``) shows it as its resource's name, and
    ``short_label`` where a table names the resource beside its time. Other kinds'
    resources carry the name the machine gives them ("HBM3").

    ``demand_unit`` is what a launch asks of the resource (FLOP, B, inst, J,
    launches) and ``capacity_unit`` what the resource delivers per second ("" where
    no single rate exists: a launch and a synchronisation cost different times).

    ``helps`` says what helps once a launch runs at the roof, ``helps_at`` the same
    naming the resource (``{name}``), ``helps_how`` the usual ways to get there.
    ``unknown`` says why the demand is unknown, naming the spec field to fill
    (``{id}``: the unit, level or link id); ``missing`` is the tag recommendation
    rules match for that (``missing: [flops]``).

    ``classes`` labels the classes of resource of this kind (a memory level by its
    role, a unit by its kind); None: every class is shown by ``label``. ``metrics``
    lists, by class, the Nsight Compute metrics that count the demand; a kind without
    any has no per-kernel counter (its demand comes from the spec).
    """

    kind: str
    label: str
    demand_unit: str
    capacity_unit: str
    helps: str
    helps_how: str
    unknown: str
    missing: str
    singleton: bool = False
    short_label: str = ""
    helps_at: str = ""
    classes: Mapping[str, str] | None = field(default_factory=dict)
    metrics: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def display_label(self, short: bool = False) -> str:
        """The name of this kind's one resource (``short``: the table's shorter one)."""
        return (self.short_label or self.label) if short else self.label

    def helps_beyond(self, name: str | None = None) -> str:
        """What helps at the roof: with ``name``, naming the resource where it matters."""
        if name is not None and self.helps_at:
            return self.helps_at.format(name=name)
        return self.helps


def _sass(*ops: str) -> tuple[str, ...]:
    return tuple(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in ops)


COMPUTE = ResourceKind(
    kind="compute",
    label="Compute unit",
    demand_unit="FLOP",  # OP where every precision is an integer or transcendental one
    capacity_unit="FLOP/s",
    helps="less arithmetic or a faster unit helps",
    helps_how="tensor cores, a lower precision, a cheaper algorithm",
    unknown="no FLOP counts (measurement.flops)",
    missing="flops",
    classes={
        "tensor": "Tensor cores",
        "fp32": "FP32 pipe",
        "fp64": "FP64 pipe",
        "fp16": "FP16 pipe",
        "sfu": "Special-function units",
        "int": "Integer pipe",
    },
    metrics={
        "tensor": (
            "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
            "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
            "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
        ),
        "fp32": _sass("fadd", "fmul", "ffma"),
        "fp64": _sass("dadd", "dmul", "dfma"),
        "fp16": _sass("hadd", "hmul", "hfma"),
    },
)
MEMORY = ResourceKind(
    kind="memory",
    label="Memory level",
    demand_unit="B",
    capacity_unit="B/s",
    helps="fewer bytes help",
    helps_at="fewer bytes at {name} help",
    helps_how="fusion, reuse through a nearer cache level, a smaller data type",
    unknown="no bytes for this level (measurement.bytes.{id})",
    missing="bytes",
    classes={"device": "Device memory", "llc": "Last-level cache", "l1": "L1 and shared memory"},
    metrics={
        "device": ("dram__bytes_read.sum", "dram__bytes_write.sum"),
        "llc": ("lts__t_bytes.sum",),
        "l1": ("l1tex__t_bytes.sum",),
    },
)
LINK = ResourceKind(
    kind="link",
    label="Link",
    demand_unit="B",  # one way, the busier direction
    capacity_unit="B/s",
    helps="less traffic over the link helps",
    helps_how="overlap or compression",
    unknown="no link bytes or collectives (measurement.link_bytes.{id}, collectives)",
    missing="link",
    classes=None,
)
ISSUE = ResourceKind(
    kind="issue",
    label="Instruction issue",
    demand_unit="inst",  # warp instructions
    capacity_unit="inst/s",
    helps="fewer instructions help",
    helps_how="vector loads, less address arithmetic",
    unknown="no instruction count (measurement.instructions)",
    missing="instructions",
    singleton=True,
    metrics={"issue": ("smsp__inst_executed.sum",)},
)
POWER = ResourceKind(
    kind="power",
    label="Power limit",
    demand_unit="J",  # dynamic energy, from the FLOPs and bytes
    capacity_unit="W",  # the power above constant power
    helps="less energy per result helps",
    helps_how="fewer bytes from far memory",
    unknown="needs FLOPs, bytes and the machine's energy coefficients",
    missing="energy",
    singleton=True,
)
LAUNCH = ResourceKind(
    kind="launch",
    label="Launch overhead",
    short_label="Launch",
    demand_unit="launch",  # launches and synchronisations
    capacity_unit="",
    helps="fewer launches or synchronisations help",
    helps_how="fusion, CUDA graphs",
    unknown="no launch or sync counts (measurement.launches, syncs)",
    missing="launches",
    singleton=True,
)
KINDS: dict[str, ResourceKind] = {k.kind: k for k in (COMPUTE, MEMORY, LINK, ISSUE, POWER, LAUNCH)}
SINGLETON_NAMES: dict[str, str] = {k.kind: k.label for k in KINDS.values() if k.singleton}
_NO_ENERGY = "the machine has no energy coefficients (power.energy_per_flop, energy_per_byte)"


def resource_kind(resource: str) -> str:
    """``compute``, ``memory``, ``link``, ``issue``, ``power`` or ``launch``."""
    return resource.split(".", 1)[0]


def kind_of(resource: str) -> ResourceKind:
    """The kind of ``resource`` (``memory.hbm`` -> the memory kind); KeyError if none."""
    return KINDS[resource_kind(resource)]


def resource_names(machine: Machine, *, short: bool = False) -> dict[str, str]:
    """Display names of a machine's resources: ``memory.hbm`` -> ``HBM2``, ``issue`` ->
    ``Instruction issue`` (``short``: the shorter names of a table's rows)."""
    names = {f"compute.{u.id}": u.name for u in machine.compute}
    names |= {f"memory.{m.id}": m.name for m in machine.memory}
    names |= {f"link.{k.id}": k.name for k in machine.links}
    return names | {k.kind: k.display_label(short) for k in KINDS.values() if k.singleton}


def resource_class(resource: str, machine: Machine) -> str:
    """The class a resource belongs to: ``memory.<role>``, ``compute.<unit kind>``,
    ``link.<link kind>``, or the kind itself (a singleton, or an id the machine lacks)."""
    kind, _, ident = resource.partition(".")
    if kind == "compute" and (unit := machine.unit(ident)) is not None:
        return f"compute.{unit.kind}"
    if kind == "memory" and (level := machine.level(ident)) is not None:
        return f"memory.{level.role}"
    if kind == "link" and (link := machine.link(ident)) is not None:
        return f"link.{link.kind}"
    return kind


def class_label(cls: str) -> str:
    """``memory.device`` -> ``Device memory``; ``link.nvlink`` -> ``Link``; a class
    without a label is shown as it is."""
    kind = KINDS.get(resource_kind(cls))
    _, dot, sub = cls.partition(".")
    if kind is None:
        return cls
    if not dot:
        return kind.label if kind.singleton else cls
    if kind.classes is None:
        return kind.label
    return kind.classes.get(sub, cls)


def beyond_roof(resource: str) -> str:
    """What helps once a launch runs at the roof of ``resource``, with the usual ways."""
    kind = kind_of(resource)
    return f"beyond that only {kind.helps} ({kind.helps_how})"


def why_unknown(resource: str, machine: Machine) -> str:
    """Why the demand on ``resource`` is unknown: the spec field to fill."""
    kind = kind_of(resource)
    if kind is POWER and machine.power is not None and not machine.power.energy_per_flop_j:
        return _NO_ENERGY
    return kind.unknown.format(id=resource.partition(".")[2])


def missing_tag(resource: str, machine: Machine) -> str:
    """The ``missing`` tag recommendation rules match when ``resource``'s demand is
    unknown: ``flops``, ``bytes.<role>``, ``link``, ``instructions``, ``energy``,
    ``launches``."""
    kind = kind_of(resource)
    if kind is MEMORY and (level := machine.level(resource.partition(".")[2])) is not None:
        return f"{kind.missing}.{level.role}"
    return kind.missing


def profiler_metrics(resource: str, machine: Machine) -> tuple[str, ...]:
    """The Nsight Compute metrics that count a launch's demand on ``resource`` (empty
    where no per-kernel counter does: links, power, launches)."""
    cls = resource_class(resource, machine)
    return kind_of(resource).metrics.get(cls.rpartition(".")[2], ())
