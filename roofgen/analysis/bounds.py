"""The resource model: time lower bounds per resource, binding roof, efficiency.

Pure functions of model objects. Every resource is a physical unit with a
capacity per second; a launch places a demand on each. The time a resource
needs is demand / capacity (seconds); units run concurrently, so the lower
bound on the launch's time is the max over resources (the binding roof), and
the no-overlap sum is reported as the serial bound. A resource without demand
data is unknown, never zero. A launch whose communication does not overlap the
rest of its work (``overlap: false``) adds its link time to the max of every other
resource.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from roofgen.analysis.comm import collective_seconds
from roofgen.model import Basis, Launch, Machine, Measurement, MemoryLevel, Roof

BASES: tuple[Basis, ...] = ("measured", "datasheet")


@dataclass(frozen=True)
class Thresholds:
    """Classification thresholds; printed with every verdict."""

    co_bound_margin: float = 0.15  # runner-up within this fraction of the bound: co-bound
    below_roofs_efficiency: float = 0.5  # efficiency under this: below all roofs


@dataclass(frozen=True)
class Bounds:
    """Per-resource time bounds (s) of one launch on one basis."""

    seconds: dict[str, float]  # resource -> demand / capacity, known resources only
    unknown: tuple[str, ...]  # resources without demand data
    basis: dict[str, Basis]  # resource -> which roof value was used
    added: tuple[str, ...] = ()  # links whose time adds to the max of the others
    links_overlap: bool = True  # several added links run at the same time (else they add)

    @property
    def bound_s(self) -> float | None:
        """Max over resources. Links in ``added`` (communication that does not overlap the
        rest of the work) add their time to the max of every other resource; several added
        links add to one another unless ``links_overlap`` (then the longest one adds)."""
        if not self.seconds:
            return None
        others = [s for r, s in self.seconds.items() if r not in self.added]
        return max(others, default=0.0) + self.added_s

    @property
    def added_s(self) -> float:
        """Time of the non-overlapped links (s): their sum, or their max if they overlap."""
        times = [self.seconds[r] for r in self.added]
        if not times:
            return 0.0
        return max(times) if self.links_overlap else sum(times)

    @property
    def serial_s(self) -> float | None:
        """The no-overlap bound (s): the compute units one after another, plus the slowest
        memory level (a byte from device memory also passes the caches, so the levels'
        times are not separate work), plus every link and the launch overhead. Issue and
        power count the same instructions and FLOPs again and never add; where one of them
        binds, the serial bound is the lower bound (it is never below it)."""
        bound = self.bound_s
        if bound is None:
            return None
        compute = sum(s for r, s in self.seconds.items() if r.startswith("compute."))
        memory = max((s for r, s in self.seconds.items() if r.startswith("memory.")), default=0.0)
        separate = sum(s for r, s in self.seconds.items() if r.startswith("link.") or r == "launch")
        return max(compute + memory + separate, bound)

    def ranked(self) -> list[tuple[str, float]]:
        """Resources by time, largest first (ties broken by name, for stable output)."""
        return sorted(self.seconds.items(), key=lambda kv: (-kv[1], kv[0]))


@dataclass(frozen=True)
class Scale:
    """Clock scaling of roofs to the measurement's clocks."""

    sm: float = 1.0
    memory: float = 1.0
    share: float = 1.0  # fraction of the SMs left to compute (see sm_share)


def clock_scale(machine: Machine, m: Measurement) -> Scale:
    sm = m.sm_clock_hz / machine.sm_clock_hz if m.sm_clock_hz else 1.0
    mem = (
        m.memory_clock_hz / machine.memory_clock_hz
        if m.memory_clock_hz and machine.memory_clock_hz
        else 1.0
    )
    return Scale(sm, mem)


def _pick(roof: Roof, basis: Basis) -> tuple[float, Basis]:
    used: Basis = "measured" if basis == "measured" and roof.measured is not None else "datasheet"
    return roof.value(basis), used


def resources(machine: Machine) -> list[str]:
    """Every resource name of ``machine``, in a fixed order."""
    names = [f"compute.{u.id}" for u in machine.compute]
    names += [f"memory.{m.id}" for m in machine.memory]
    names += [f"link.{k.id}" for k in machine.links]
    if machine.issue is not None:
        names.append("issue")
    if machine.power is not None:
        names.append("power")
    if machine.runtime is not None:
        names.append("launch")
    return names


@dataclass
class _Acc:
    seconds: dict[str, float] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)
    basis: dict[str, Basis] = field(default_factory=dict)


def launch_bounds(
    machine: Machine, launch: Launch, basis: Basis = "measured", units: tuple[str, ...] = ()
) -> Bounds:
    """Time each resource needs for one call of ``launch``'s kernel; ``units``: the compute
    units the kernel declares it runs on (the others do none of its work)."""
    m = launch.measurement
    scale = clock_scale(machine, m)
    share = sm_share(machine, launch)
    acc = _Acc()
    _compute(machine, m, basis, Scale(scale.sm, scale.memory, share), acc, units)
    _memory(machine, m, basis, scale, acc)
    _links(machine, m, basis, acc)
    _issue(machine, m, Scale(scale.sm * share, scale.memory), acc)
    _power(machine, m, basis, acc)
    _runtime(machine, m, acc)
    added: tuple[str, ...] = ()
    if launch.overlap is False:
        added = tuple(r for r in acc.seconds if r.startswith("link."))
    return Bounds(acc.seconds, tuple(acc.unknown), acc.basis, added, launch.links_overlap)


def sm_share(machine: Machine, launch: Launch) -> float:
    """Fraction of the SMs left to compute while overlapped collectives occupy some.

    Collective kernels (NCCL channels) run on SMs; when a launch overlaps its
    communication with its compute, the compute units and instruction issue have
    only the remaining SMs.
    """
    taken = sum(c.sms or 0 for c in launch.measurement.collectives)
    if not taken or launch.overlap is False or machine.issue is None:
        return 1.0
    return max(machine.issue.sms - taken, 0) / machine.issue.sms


def _compute(
    machine: Machine,
    m: Measurement,
    basis: Basis,
    scale: Scale,
    acc: _Acc,
    units: tuple[str, ...] = (),
) -> None:
    """A unit's demand is known where the FLOPs name it (an explicit 0 included), where
    they are an empty map (no floating-point work at all), or where the kernel's declared
    units leave it out (known zero); a unit missing beside other units' FLOPs is unknown."""
    for unit in machine.compute:
        name = f"compute.{unit.id}"
        declared_idle = bool(units) and unit.id not in units
        if not declared_idle and (m.flops is None or (m.flops and unit.id not in m.flops)):
            acc.unknown.append(name)
            continue
        total = 0.0
        used: Basis = "datasheet"
        for precision, work in (m.flops or {}).get(unit.id, {}).items():
            peak, b = _pick(unit.peaks[precision], basis)
            # each peak scales from the clock it is stated at (unlocked measurements: not at all)
            factor = unit.peaks[precision].clock_factor(m.sm_clock_hz, b) * scale.share
            total += work / (peak * factor)  # precisions on one unit share its time
            used = "measured" if b == "measured" else used
        acc.seconds[name] = total
        acc.basis[name] = used


def _memory(machine: Machine, m: Measurement, basis: Basis, scale: Scale, acc: _Acc) -> None:
    for level in machine.memory:
        name = f"memory.{level.id}"
        moved = level_bytes(level, m)
        if moved is None:
            acc.unknown.append(name)
            continue
        bw, used = _pick(level.bandwidth, basis)
        acc.seconds[name] = moved / (bw * _level_scale(level, scale, m, used))
        acc.basis[name] = used


def level_bytes(level: MemoryLevel, m: Measurement) -> float | None:
    """Bytes moved at ``level``: the measured bytes, else transactions x transaction size."""
    if m.bytes is not None and level.id in m.bytes:
        return m.bytes[level.id]
    if m.transactions and level.id in m.transactions and level.transaction_size_b:
        return m.transactions[level.id] * level.transaction_size_b
    return None


def _level_scale(level: MemoryLevel, scale: Scale, m: Measurement, used: Basis) -> float:
    """Caches follow the SM clock (from the clock their roof is stated at); device memory
    follows the memory clock."""
    if level.clock_scaled:
        return level.bandwidth.clock_factor(m.sm_clock_hz, used)
    return scale.memory if level.role == "device" else 1.0


def _links(machine: Machine, m: Measurement, basis: Basis, acc: _Acc) -> None:
    for link in machine.links:
        name = f"link.{link.id}"
        collectives = [c for c in m.collectives if c.link == link.id]
        if m.link_bytes is None and not collectives:
            acc.unknown.append(name)
            continue
        out_b, in_b = (m.link_bytes or {}).get(link.id, (0.0, 0.0))
        bw, used = _pick(link.bandwidth_per_direction, basis)
        # Each direction has its own bandwidth; the busier one binds. Collectives send
        # and receive their bus bytes each way, after the link's latency.
        seconds = max(out_b, in_b) / bw
        seconds += sum(collective_seconds(c, link, bw) for c in collectives)
        acc.seconds[name] = seconds
        acc.basis[name] = used


def _issue(machine: Machine, m: Measurement, scale: Scale, acc: _Acc) -> None:
    if machine.issue is None:
        return
    if m.instructions is None:
        acc.unknown.append("issue")
        return
    rate = machine.issue.rate_per_s(machine.sm_clock_hz * scale.sm)
    acc.seconds["issue"] = m.instructions / rate
    acc.basis["issue"] = "datasheet"


def _power(machine: Machine, m: Measurement, basis: Basis, acc: _Acc) -> None:
    power = machine.power
    if power is None:
        return
    # The power limit bounds time through the energy the work needs: at most
    # (limit - constant power) watts are available for it. Measured energy says nothing
    # here: an enforced limit caps average power, so measured energy / limit never exceeds
    # the measured time. A power-limited launch shows instead by its clock (below the
    # roofs' clock while average power sits at the limit): see analysis.energy.
    # Without a stated constant power the whole limit is taken as available: a weaker
    # bound, still a lower bound on time since constant power is never negative.
    limit, used = _pick(power.limit, basis)
    constant = power.constant_w or 0.0
    modelled = dynamic_energy_j(machine, m)
    if modelled is None or limit <= constant:
        acc.unknown.append("power")
        return
    acc.seconds["power"] = modelled / (limit - constant)
    acc.basis["power"] = used


def dynamic_energy_j(machine: Machine, m: Measurement) -> float | None:
    """Dynamic energy (J) of the work from per-FLOP and per-byte coefficients.

    Sum over units and precisions of e_flop x FLOPs (the unit's own coefficient, else the
    machine's for that precision; executed work: a 2:4 sparse FLOP count is
    dense-equivalent, so half of it) plus sum over levels of e_byte x bytes (incremental
    coefficients: a byte from device memory also passes the caches above it, so it pays
    each level's); ``None`` when a coefficient the work needs is missing.
    """
    power = machine.power
    if power is None or m.flops is None or m.bytes is None:
        return None
    units = {u.id: u for u in machine.compute}
    energy = 0.0
    for unit_id, by_precision in m.flops.items():
        unit = units.get(unit_id)
        for precision, work in by_precision.items():
            if precision == "transcendental":
                continue  # no coefficient for transcendental ops: the model leaves them out
            base = precision.removesuffix("-sparse")
            coefficient = (
                power.energy_per_flop(unit, base)
                if unit is not None
                else power.energy_per_flop_j.get(base)
            )
            if coefficient is None:
                return None
            executed = work / 2 if precision.endswith("-sparse") else work
            energy += executed * coefficient
    for level, moved in m.bytes.items():
        coefficient = power.energy_per_byte_j.get(level)
        if coefficient is None:
            return None
        energy += moved * coefficient
    return energy


def _runtime(machine: Machine, m: Measurement, acc: _Acc) -> None:
    rt = machine.runtime
    if rt is None:
        return
    per_launch = rt.launch_cost_s(m.mechanism)
    if m.launches is None and m.syncs is None:
        acc.unknown.append("launch")
        return
    if (m.launches and per_launch is None) or (m.syncs and rt.sync_overhead_s is None):
        acc.unknown.append("launch")
        return
    acc.seconds["launch"] = (m.launches or 0) * (per_launch or 0.0) + (m.syncs or 0) * (
        rt.sync_overhead_s or 0.0
    )
    acc.basis["launch"] = "datasheet"
