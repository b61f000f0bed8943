"""The instruction roofline (Ding and Williams, PMBS 2019). Pure.

Its flat roof is instruction issue (warp instructions per second: SMs x schedulers x
clock), its slanted walls each memory level's transactions per second (bandwidth /
transaction size), and its access-pattern walls the warp instructions per transaction
of global and shared-memory access patterns, derived from the warp width.
"""

from __future__ import annotations

from dataclasses import dataclass

from roofgen.analysis.bounds import level_bytes
from roofgen.analysis.inputs import LaunchInputs
from roofgen.model import Basis, Machine, Measurement

__all__ = [
    "SHARED_BANKS",
    "InstructionCeilings",
    "InstructionPoint",
    "InstructionResult",
    "access_walls",
    "instruction_ceilings",
    "instruction_points",
    "shared_walls",
]

#: Shared memory has 32 banks of 4 bytes on every GPU roofgen knows (NVIDIA, AMD CDNA).
SHARED_BANKS = 32


@dataclass(frozen=True)
class InstructionCeilings:
    """The instruction roofline of a machine (Ding and Williams).

    ``issue_per_s``: warp instructions per second, SMs x schedulers x clock.
    ``transactions_per_s``: level id -> transactions per second, bandwidth / transaction
    size (the slanted walls: warp GIPS = intensity x GTXN/s). ``global_walls`` and
    ``shared_walls``: (label, warp instructions per transaction) of the access patterns,
    derived from the warp width and the L1 transaction (sector) size.
    """

    warp_size: int
    issue_per_s: float
    transactions_per_s: dict[str, float]
    transaction_size_b: dict[str, float]
    global_walls: tuple[tuple[str, float], ...]
    shared_walls: tuple[tuple[str, float], ...]


def _sector_b(machine: Machine) -> float:
    for role in ("l1", "llc", "device"):
        for level in machine.memory:
            if level.role == role and level.transaction_size_b:
                return level.transaction_size_b
    return 32.0


def access_walls(warp_size: int, sector_b: float) -> tuple[tuple[str, float], ...]:
    """Global load/store walls: warp instructions per transaction of each access pattern.

    A warp instruction touches ``warp_size`` words. Every thread on one address
    (stride 0) is one transaction; unit stride over w-byte words needs
    ``warp_size x w / sector`` sectors; a stride of a sector or more needs one sector
    per thread. With 32 threads and 32-byte sectors: 1, 1/4 (4 B), 1/8 (8 B), 1/16
    (16 B) and 1/32.
    """
    walls = [("stride 0", 1.0)]
    for word in (4, 8, 16):
        sectors = max(warp_size * word / sector_b, 1.0)
        walls.append((f"unit stride, {word}-byte words", 1.0 / sectors))
    walls.append((f"stride >= {sector_b:g} B", 1.0 / warp_size))
    return tuple(walls)


def shared_walls(warp_size: int) -> tuple[tuple[str, float], ...]:
    """Shared-memory walls: warp instructions per wavefront.

    Without bank conflicts a warp's 4-byte accesses need ``warp_size / 32`` wavefronts
    (one on NVIDIA, two for a 64-wide AMD wavefront); when every thread hits one bank
    at different addresses, one wavefront per thread.
    """
    free = max(warp_size / SHARED_BANKS, 1.0)
    return (
        ("shared, no bank conflict", 1.0 / free),
        (f"shared, {warp_size}-way bank conflict", 1.0 / warp_size),
    )


def instruction_ceilings(machine: Machine, basis: Basis = "measured") -> InstructionCeilings | None:
    """The machine's instruction ceilings; ``None`` without an ``issue`` section."""
    if machine.issue is None:
        return None
    rates: dict[str, float] = {}
    sizes: dict[str, float] = {}
    for level in machine.memory:
        if level.transaction_size_b:
            rates[level.id] = level.bandwidth.value(basis) / level.transaction_size_b
            sizes[level.id] = level.transaction_size_b
    warp = machine.issue.warp_size
    return InstructionCeilings(
        warp_size=warp,
        issue_per_s=machine.issue.rate_per_s(machine.sm_clock_hz),
        transactions_per_s=rates,
        transaction_size_b=sizes,
        global_walls=access_walls(warp, _sector_b(machine)),
        shared_walls=shared_walls(warp),
    )


@dataclass(frozen=True)
class InstructionPoint:
    """A launch on the instruction roofline.

    ``level``: a memory level id, or ``"global"`` / ``"shared"`` for the access-pattern
    points (load/store instructions per global transaction, per shared wavefront).
    ``intensity``: warp instructions per transaction; ``warp_ips``: warp instructions
    per second (all instructions for levels, load/store instructions for patterns).
    """

    level: str
    transactions: float
    instructions: float
    intensity: float
    warp_ips: float


def _transactions(machine: Machine, m: Measurement, level_id: str) -> float | None:
    if m.transactions and level_id in m.transactions:
        return m.transactions[level_id]
    level = machine.level(level_id)
    if level is None or not level.transaction_size_b:
        return None
    moved = level_bytes(level, m)
    return None if moved is None else moved / level.transaction_size_b


def instruction_points(machine: Machine, m: Measurement) -> list[InstructionPoint]:
    """Points of one launch: one per memory level with known transactions (L1 adds the
    shared wavefronts), then the global and shared access-pattern points."""
    t = m.time.value_s
    out: list[InstructionPoint] = []
    if m.instructions:
        for level in machine.memory:
            txn = _transactions(machine, m, level.id)
            if txn is None:
                continue
            if level.role == "l1" and m.shared_wavefronts:
                txn += m.shared_wavefronts
            if txn > 0:
                out.append(
                    InstructionPoint(
                        level.id, txn, m.instructions, m.instructions / txn, m.instructions / t
                    )
                )
    for name, inst, txn in (
        ("global", m.global_ldst_instructions, m.global_transactions),
        ("shared", m.shared_ldst_instructions, m.shared_wavefronts),
    ):
        if inst and txn:
            out.append(InstructionPoint(name, txn, inst, inst / txn, inst / t))
    return out


@dataclass(frozen=True)
class InstructionResult:
    """The instruction roofline of one launch.

    ``points``: see :func:`instruction_points`; ``instructions``: warp instructions of one
    call; ``warp_ips``: warp instructions per second (measured time); ``issue_share``: the
    time instruction issue needs over the measured time (``None`` when unknown or zero).
    """

    points: tuple[InstructionPoint, ...]
    instructions: float | None
    warp_ips: float | None
    issue_share: float | None

    @classmethod
    def of(cls, inputs: LaunchInputs) -> InstructionResult:
        m = inputs.measurement
        t = m.time.value_s
        issue = inputs.bounds.seconds.get("issue")
        return cls(
            tuple(instruction_points(inputs.machine, m)),
            m.instructions,
            m.instructions / t if m.instructions else None,
            issue / t if issue else None,
        )
