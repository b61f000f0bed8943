"""Memory traffic from Nsight Compute metrics: bytes and transactions per memory
level, and the instruction roofline's global and shared-memory access counts.

Bytes go to the machine's memory levels by role: ``dram__`` to the device level,
``lts__`` (the L2) to the last-level cache, ``l1tex__`` to the L1. The L2 total from
per-operation sectors counts reads, writes, atomics and reductions:
32 B x (read + write + atom + red), as ``lts__t_sectors`` does. Global accesses are
the load/store requests (one per warp instruction) against the sectors they touch;
shared accesses the load/store warp instructions against their wavefronts (an n-way
bank conflict needs n wavefronts, so conflicts = wavefronts - instructions).
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from roofgen.importers.ncu_csv import Metric
from roofgen.importers.ncu_derived import Figure

if TYPE_CHECKING:
    from roofgen.importers.ncu_derived import Derived, MachineView

SECTOR_BYTES = 32  # an L1/L2/DRAM sector on NVIDIA GPUs
DEVICE_METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum")

_L2_OPS = (
    "lts__t_sectors_op_read.sum",
    "lts__t_sectors_op_write.sum",
    "lts__t_sectors_op_atom.sum",
    "lts__t_sectors_op_red.sum",
)

# Byte sources per memory role, best first: a pair is (read, write); any other tuple is
# summed into a total.
_BYTES: dict[str, tuple[tuple[str, ...], ...]] = {
    "device": (
        ("dram__bytes_read.sum", "dram__bytes_write.sum"),
        ("dram__bytes_op_read.sum", "dram__bytes_op_write.sum"),
        ("dram__bytes.sum",),
        ("dram__sectors_read.sum", "dram__sectors_write.sum"),
        ("dram__sectors.sum",),
    ),
    "llc": (
        ("lts__t_bytes.sum",),
        ("lts__t_sectors.sum",),
        _L2_OPS,
        _L2_OPS[:2],
    ),
    "l1": (
        ("l1tex__t_bytes.sum",),
        ("l1tex__t_sectors.sum",),
        (
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        ),
    ),
}
_PARTIAL = {
    "lts__t_sectors_op_read.sum": (
        "reads and writes only (lts__t_sectors_op_atom.sum and lts__t_sectors_op_red.sum "
        "not collected)"
    ),
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": (
        "global loads and stores only (shared and local memory not counted)"
    ),
}
_ROLE_WORDS = {
    "device": "device-memory (dram)",
    "llc": "last-level cache (lts)",
    "l1": "L1 (l1tex)",
}
_SECTORS: dict[str, tuple[tuple[str, ...], ...]] = {
    "device": (("dram__sectors.sum",), ("dram__sectors_read.sum", "dram__sectors_write.sum")),
    "llc": (("lts__t_sectors.sum",), _L2_OPS, _L2_OPS[:2]),
    "l1": (
        ("l1tex__t_sectors.sum",),
        (
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        ),
    ),
}
# The instruction roofline's access counts: (field, options best first, each summed).
_ACCESS: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = (
    (
        "global_ldst_instructions",
        (
            (
                "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
            ),
            ("smsp__inst_executed_op_global_ld.sum", "smsp__inst_executed_op_global_st.sum"),
        ),
    ),
    (
        "global_transactions",
        (
            (
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
            ),
        ),
    ),
    (
        "shared_ldst_instructions",
        (("smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum"),),
    ),
    (
        "shared_wavefronts",
        (
            (
                "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
            ),
        ),
    ),
)
_ACCESS_UNITS = {
    "global_ldst_instructions": "inst",
    "global_transactions": "txn",
    "shared_ldst_instructions": "inst",
    "shared_wavefronts": "txn",
}


def traffic_metric_names() -> set[str]:
    """Every metric this module reads (the test checks each is a row of ncu_table)."""
    out = {n for options in _BYTES.values() for o in options for n in o}
    out |= {n for options in _SECTORS.values() for o in options for n in o}
    out |= {n for _, options in _ACCESS for o in options for n in o}
    return out


def _shown(name: str, metric: Metric) -> str:
    return f"{name} = {metric.text}"


def _is_sectors(name: str, metric: Metric) -> bool:
    return metric.unit.kind == "sector" or "__sectors" in name or "_sectors_" in name


def _summed(metrics: dict[str, Metric], names: tuple[str, ...], unit: str) -> Figure:
    sectors = unit == "B" and _is_sectors(names[0], metrics[names[0]])
    total = sum((metrics[n].value for n in names), Decimal(0))
    terms = " + ".join(_shown(n, metrics[n]) for n in names)
    if sectors:
        origin = (
            f"{SECTOR_BYTES} B x ({terms})" if len(names) > 1 else f"{SECTOR_BYTES} B x {terms}"
        )
        return Figure(total * SECTOR_BYTES, unit, origin)
    return Figure(total, unit, terms)


def derive_traffic(metrics: dict[str, Metric], machine: MachineView, out: Derived) -> None:
    _bytes(metrics, machine, out)
    _transactions(metrics, machine, out)
    _accesses(metrics, out)


def _bytes(metrics: dict[str, Metric], machine: MachineView, out: Derived) -> None:
    for role, options in _BYTES.items():
        chosen = next((o for o in options if all(n in metrics for n in o)), None)
        if chosen is None:
            if role == "device":
                out.missing["device-memory bytes"] = list(DEVICE_METRICS)
            continue
        level = machine.level(role)
        if level is None:
            out.warnings.append(
                f"machine {machine.id!r} has no {role} memory level: the "
                f"{_ROLE_WORDS[role]} bytes ({', '.join(chosen)}) are left out"
            )
            continue
        if len(chosen) == 2:
            read, write = (_summed(metrics, (n,), "B") for n in chosen)
            note = _PARTIAL.get(chosen[0])
            if note:
                read = Figure(read.value, read.unit, f"{read.origin}; {note}")
            out.bytes[level["id"]] = {"read": read, "write": write}
        else:
            out.bytes[level["id"]] = _summed(metrics, chosen, "B")


def _transactions(metrics: dict[str, Metric], machine: MachineView, out: Derived) -> None:
    for role, options in _SECTORS.items():
        chosen = next((o for o in options if all(n in metrics for n in o)), None)
        level = machine.level(role)
        if chosen is None or level is None:
            continue
        total = sum((metrics[n].value for n in chosen), Decimal(0))
        origin = " + ".join(_shown(n, metrics[n]) for n in chosen)
        out.transactions[level["id"]] = Figure(total, "txn", origin)


def _accesses(metrics: dict[str, Metric], out: Derived) -> None:
    for field, options in _ACCESS:
        chosen = next((o for o in options if all(n in metrics for n in o)), None)
        if chosen is not None:
            out.accesses[field] = _summed(metrics, chosen, _ACCESS_UNITS[field])
    wavefronts = out.accesses.get("shared_wavefronts")
    ideal = out.accesses.get("shared_ldst_instructions")
    if wavefronts is not None and ideal is not None and wavefronts.value > ideal.value:
        extra = wavefronts.value - ideal.value
        out.notes.append(
            f"Shared memory: {extra:f} wavefronts beyond one per load/store instruction "
            f"({wavefronts.value:f} wavefronts - {ideal.value:f} instructions): bank "
            "conflicts, or accesses wider than 32 bits."
        )
