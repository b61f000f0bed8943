"""Turn validated spec documents into model objects (quantities to SI floats)."""

from __future__ import annotations

from typing import Any

from roofgen.model import (
    Case,
    Collective,
    ComputeUnit,
    Issue,
    Kernel,
    Launch,
    Link,
    Machine,
    MachineRef,
    Measurement,
    MemoryLevel,
    Operator,
    Power,
    Roof,
    Runtime,
    Sparsity,
    Statistic,
    SubCeiling,
    SweepPoint,
    TimeStats,
    Variant,
)
from roofgen.spec.quantity import parse_quantity as q
from roofgen.units import counts_ops


def _opt(value: Any, dimension: str) -> float | None:
    return None if value is None else q(value, dimension)


def precision_dimension(precision: str, count: bool) -> str:
    ops = counts_ops(precision)
    if count:
        return "op" if ops else "flop"
    return "op_rate" if ops else "flop_rate"


def roof(value: Any, dimension: str, clock_hz: float | None = None) -> Roof:
    """A roof. ``clock_hz`` is the SM clock it is stated at by default (its unit's or the
    machine's); None for a roof that does not follow the SM clock. A mapping's ``clock``
    states its own. A measured value taken at a locked ``measured_clock`` is restated at
    the roof's clock; one taken unlocked (``measured_unlocked``) is kept as measured, and
    the clock it ran near defaults to the roof's own (the boost clock its unit reaches)."""
    if not isinstance(value, dict):
        return Roof(datasheet=q(value, dimension), clock_hz=clock_hz)
    if clock_hz is not None and value.get("clock") is not None:
        clock_hz = q(value["clock"], "frequency")
    measured = _opt(value.get("measured"), dimension)
    locked = _opt(value.get("measured_clock"), "frequency")
    if measured is not None and locked and clock_hz:
        measured *= clock_hz / locked
    unlocked = value.get("measured_unlocked")
    return Roof(
        datasheet=_opt(value.get("datasheet"), dimension),
        measured=measured,
        source=value.get("source", ""),
        measured_source=value.get("measured_source", ""),
        measured_clock_hz=locked,
        clock_hz=clock_hz,
        measured_unlocked=unlocked is not None,
        measured_near_clock_hz=_opt((unlocked or {}).get("clock"), "frequency"),
        measured_power_w=_opt((unlocked or {}).get("power"), "power"),
    )


def machine(data: dict[str, Any], file: str = "") -> Machine:
    clocks = data["clocks"]
    sm_clock = q(clocks["sm"], "frequency")
    power = data.get("power")
    issue = data.get("issue")
    runtime = data.get("runtime")
    return Machine(
        id=data["id"],
        name=data["name"],
        version=data.get("version"),
        vendor=data.get("vendor", ""),
        description=data.get("description", ""),
        sm_clock_hz=sm_clock,
        memory_clock_hz=_opt(clocks.get("memory"), "frequency"),
        base_sm_clock_hz=_opt(clocks.get("base_sm"), "frequency"),
        compute=tuple(_unit(u, sm_clock) for u in data["compute"]),
        memory=tuple(_level(m, sm_clock) for m in data["memory"]),
        links=tuple(
            Link(
                id=k["id"],
                name=k.get("name", k["id"]),
                kind=k["kind"],
                bandwidth_per_direction=roof(k["bandwidth_per_direction"], "bandwidth"),
                latency_s=_opt(k.get("latency"), "time"),
            )
            for k in data.get("links", [])
        ),
        power=None
        if power is None
        else Power(
            limit=roof(power["limit"], "power"),
            # `idle` is the deprecated name of `constant` (check warns; migrate renames)
            constant_w=_opt(power.get("constant", power.get("idle")), "power"),
            energy_per_flop_j=_energy_per_flop(power.get("energy_per_flop", {})),
            energy_per_byte_j={
                lvl: q(v, "energy_per_byte") for lvl, v in power.get("energy_per_byte", {}).items()
            },
            fit=power.get("fit"),
        ),
        issue=None
        if issue is None
        else Issue(issue["sms"], issue["schedulers_per_sm"], issue.get("warp_size", 32)),
        runtime=None
        if runtime is None
        else Runtime(
            launch_overhead_s=_opt(runtime.get("launch_overhead"), "time"),
            graph_launch_overhead_s=_opt(runtime.get("graph_launch_overhead"), "time"),
            sync_overhead_s=_opt(runtime.get("sync_overhead"), "time"),
            pdl_launch_overhead_s=_opt(runtime.get("pdl_launch_overhead"), "time"),
        ),
        file=file,
    )


def _unit(u: dict[str, Any], sm_clock: float) -> ComputeUnit:
    unit_clock = _opt(u.get("clock"), "frequency") or sm_clock
    clock = unit_clock if u.get("clock_scaled", True) else None
    return ComputeUnit(
        id=u["id"],
        name=u.get("name", u["id"]),
        kind=u["kind"],
        peaks={
            p: roof(v, precision_dimension(p, count=False), clock) for p, v in u["peaks"].items()
        },
        ceilings=tuple(
            SubCeiling(
                c["id"],
                c.get("name", c["id"]),
                c["precision"],
                roof(c["value"], precision_dimension(c["precision"], count=False), clock),
            )
            for c in u.get("ceilings", [])
        ),
        clock_scaled=u.get("clock_scaled", True),
        clock_hz=clock,
        energy_per_flop_j=_energy_per_flop(u.get("energy_per_flop", {})),
    )


def _energy_per_flop(by_precision: dict[str, Any]) -> dict[str, float]:
    return {
        p: q(v, "energy_per_op" if counts_ops(p) else "energy_per_flop")
        for p, v in by_precision.items()
    }


def _level(m: dict[str, Any], sm_clock: float) -> MemoryLevel:
    scaled = m.get("clock_scaled", m["role"] != "device")
    return MemoryLevel(
        id=m["id"],
        name=m.get("name", m["id"]),
        role=m["role"],
        bandwidth=roof(m["bandwidth"], "bandwidth", sm_clock if scaled else None),
        transaction_size_b=_opt(m.get("transaction_size"), "information"),
        capacity_b=_opt(m.get("capacity"), "information"),
        clock_scaled=scaled,
    )


def case(data: dict[str, Any], file: str = "") -> Case:
    refs = tuple(
        MachineRef(r) if isinstance(r, str) else MachineRef(r["id"], r.get("version"))
        for r in data["machines"]
    )
    default_machine = refs[0].id
    e2e = data.get("end_to_end", {})
    return Case(
        id=data["id"],
        title=data["title"],
        machines=refs,
        summary=data.get("summary", ""),
        date=data.get("date", ""),
        owners=tuple(data.get("owners", [])),
        status=data.get("status", ""),
        tags=tuple(data.get("tags", [])),
        patterns=tuple(data.get("patterns", [])),
        links=dict(data.get("links", {})),
        narrative=dict(data.get("narrative", {})),
        method=dict(data.get("method", {})),
        end_to_end_s={v: q(e["time"], "time") for v, e in e2e.items()},
        end_to_end_notes={v: e.get("description", "") for v, e in e2e.items()},
        kernels=tuple(_kernel(k) for k in data["kernels"]),
        variants=tuple(
            Variant(
                id=v["id"],
                name=v.get("name", v["id"]),
                machine=v.get("machine", default_machine),
                description=v.get("description", ""),
                overlap=v.get("overlap"),
                label=v.get("label", False),
                launches=tuple(
                    Launch(
                        x["kernel"],
                        x.get("calls", 1),
                        _launch_measurement(x),
                        overlap=x.get("overlap", v.get("overlap")),
                        links_overlap=x.get("links_overlap", v.get("links_overlap", True)),
                        sweep=_sweep(x.get("sweep", [])),
                    )
                    for x in v["launches"]
                ),
            )
            for v in data["variants"]
        ),
        file=file,
    )


def _kernel(k: dict[str, Any]) -> Kernel:
    op = k["operator"]
    return Kernel(
        id=k["id"],
        name=k.get("name", k["id"]),
        operator=Operator(op["kind"], dict(op.get("shape", {})), op.get("phase"), op.get("causal")),
        dtypes=dict(k.get("dtypes", {})),
        units=tuple(k.get("units", [])),
        description=k.get("description", ""),
    )


def _work(value: dict[str, dict[str, Any]] | None) -> dict[str, dict[str, float]] | None:
    if value is None:
        return None
    return {
        unit: {p: q(v, precision_dimension(p, count=True)) for p, v in by_precision.items()}
        for unit, by_precision in value.items()
    }


def _bytes(value: Any) -> float:
    if isinstance(value, dict):
        return q(value.get("read", 0), "information") + q(value.get("write", 0), "information")
    return q(value, "information")


def time_stats(t: Any) -> TimeStats:
    if not isinstance(t, dict):
        return TimeStats(value_s=q(t, "time"))
    statistic: Statistic = "mean" if "mean" in t else "median"
    return TimeStats(
        value_s=q(t[statistic], "time"),
        statistic=statistic,
        std_s=_opt(t.get("std"), "time"),
        min_s=_opt(t.get("min"), "time"),
        max_s=_opt(t.get("max"), "time"),
        q1_s=_opt(t.get("q1"), "time"),
        q3_s=_opt(t.get("q3"), "time"),
        ci_low_s=_opt(t.get("ci_low"), "time"),
        ci_high_s=_opt(t.get("ci_high"), "time"),
        repeats=t.get("repeats"),
        warmup=t.get("warmup"),
    )


def _sweep(points: list[dict[str, Any]]) -> tuple[SweepPoint, ...]:
    return tuple(
        SweepPoint(
            shape=dict(p["shape"]),
            measurement=measurement(p["measurement"]),
            weight=p.get("weight"),
            label=p.get("label", ""),
        )
        for p in points
    )


def _launch_measurement(x: dict[str, Any]) -> Measurement:
    """The launch's measurement; for a sweep, the weighted mean of its points per call."""
    if "measurement" in x:
        return measurement(x["measurement"])
    from roofgen.operators.sweep import mean_measurement, normalised_weights

    points = _sweep(x["sweep"])
    return mean_measurement([p.measurement for p in points], normalised_weights(points))


def measurement(m: dict[str, Any]) -> Measurement:
    clocks = m.get("clocks", {})
    b = m.get("bytes")
    tx = m.get("transactions")
    links = m.get("link_bytes")
    return Measurement(
        time=time_stats(m["time"]),
        timing=m.get("timing"),
        sm_clock_hz=_opt(clocks.get("sm"), "frequency"),
        memory_clock_hz=_opt(clocks.get("memory"), "frequency"),
        flops=_work(m.get("flops")),
        model_flops=_work(m.get("model_flops")),
        bytes=None if b is None else {lvl: _bytes(v) for lvl, v in b.items()},
        instructions=_opt(m.get("instructions"), "instruction"),
        transactions=None if tx is None else {lvl: q(v, "transaction") for lvl, v in tx.items()},
        link_bytes=None
        if links is None
        else {
            k: (q(v.get("out", 0), "information"), q(v.get("in", 0), "information"))
            for k, v in links.items()
        },
        energy_j=_opt(m.get("energy"), "energy"),
        average_power_w=_opt(m.get("average_power"), "power"),
        launches=m.get("launches"),
        syncs=m.get("syncs"),
        graph=m.get("graph", False),
        launch_mechanism=m.get("launch_mechanism"),
        global_ldst_instructions=_opt(m.get("global_ldst_instructions"), "instruction"),
        global_transactions=_opt(m.get("global_transactions"), "transaction"),
        shared_ldst_instructions=_opt(m.get("shared_ldst_instructions"), "instruction"),
        shared_wavefronts=_opt(m.get("shared_wavefronts"), "transaction"),
        collectives=tuple(_collective(c) for c in m.get("collectives", [])),
        sparsity=_sparsity(m.get("sparsity")),
        grid=tuple(m["grid"]) if "grid" in m else None,
        block=tuple(m["block"]) if "block" in m else None,
        occupancy=m.get("occupancy"),
        waves=m.get("waves"),
        notes=m.get("notes", ""),
        accepted=dict(m.get("accepted", {})),
    )


def _collective(c: dict[str, Any]) -> Collective:
    return Collective(
        kind=c["kind"],
        bytes_b=q(c["bytes"], "information"),
        ranks=c["ranks"],
        link=c["link"],
        topology=c.get("topology", ""),
        bus_factor=c.get("bus_factor"),
        algorithm=c.get("algorithm", "ring"),
        sms=c.get("sms"),
    )


def _sparsity(s: dict[str, Any] | None) -> Sparsity | None:
    if s is None:
        return None
    return Sparsity(s["pattern"], _opt(s.get("metadata_bytes"), "information"))
