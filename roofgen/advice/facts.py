"""Facts of the analysis that recommendation rules match, and the values their messages
show. Pure: analysis results in, facts out.

Sets (``class``, ``binding``, ``history``...) hold names; numbers (``efficiency``,
``occupancy``...) are None when not known, and a rule's range never matches an unknown
number; texts are the formatted values for the messages' placeholders.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import prod

from roofgen.advice.hardware import architecture, faster_precisions, tensor_speedup
from roofgen.advice.rules import PLACEHOLDERS
from roofgen.analysis.analyse import CaseResult, LaunchResult, VariantResult
from roofgen.analysis.compare import CaseComparison, Movement
from roofgen.model import Kernel, Machine, Measurement
from roofgen.operators.models import DTYPE_BYTES
from roofgen.resources import (
    kind_of,
    missing_tag,
    resource_class,
    resource_kind,
    resource_names,
)
from roofgen.units import fmt_percent, fmt_ratio, fmt_si, fmt_time

__all__ = ["Facts", "Gain", "launch_facts", "variant_facts"]

_PRECISION = {"fp8-e4m3": "fp8", "fp8-e5m2": "fp8"}


@dataclass(frozen=True)
class Gain:
    """How much faster a launch or variant can get: ``to_roof`` by reaching the binding
    roof; beyond it, at most ``beyond`` before the next roof binds."""

    roof: str
    to_roof: float
    next_roof: str | None = None
    beyond: float | None = None

    def text(self, names: Mapping[str, str]) -> str:
        roof = names.get(self.roof, self.roof)
        fewer = kind_of(self.roof).helps_beyond(roof)
        text = (
            f"at most {fmt_ratio(self.to_roof)} by reaching the {roof} roof; "
            f"beyond that only {fewer}"
        )
        if self.next_roof is not None and self.beyond is not None:
            nxt = names.get(self.next_roof, self.next_roof)
            text += f", up to {fmt_ratio(self.beyond)} before the {nxt} roof binds"
        return text


@dataclass(frozen=True)
class Facts:
    scope: str
    case: str
    variant: str
    kernel: str | None
    index: int | None
    sets: dict[str, frozenset[str]]
    numbers: dict[str, float | None]
    text: dict[str, str]
    gain: Gain | None


# --------------------------------------------------------------------------- pieces


def _forms(resource: str | None, machine: Machine) -> frozenset[str]:
    """The names a resource answers to: its id, its kind, and its class."""
    if resource is None:
        return frozenset()
    return frozenset({resource, resource_kind(resource), resource_class(resource, machine)})


def _missing(unknown: Sequence[str], covered: Sequence[str], machine: Machine) -> frozenset[str]:
    """The ``missing`` tags of the unknown resources; ``flops`` only when no compute unit's
    demand is known (a unit left out beside counted ones is ``flops.unit``)."""
    counted = any(r.startswith("compute.") for r in covered)
    return frozenset(
        "flops.unit" if counted and r.startswith("compute.") else missing_tag(r, machine)
        for r in unknown
    )


def _precision(kernel: Kernel | None, r: LaunchResult) -> str | None:
    if r.model is not None and r.model.matrix_precision:
        return r.model.matrix_precision
    if kernel is None:
        return None
    types = [t for k, t in kernel.dtypes.items() if k not in ("accumulator", "accumulate")]
    first = types[0] if types and types[0] in DTYPE_BYTES else None
    return _PRECISION.get(first, first) if first else None


def _device(machine: Machine) -> str | None:
    level = machine.device_level
    return None if level is None else level.id


def _gain(time_s: float, seconds: Mapping[str, float], binding: str | None) -> Gain | None:
    if binding is None or not seconds.get(binding):
        return None
    ranked = sorted(seconds.items(), key=lambda kv: (-kv[1], kv[0]))
    rest = [(r, s) for r, s in ranked if r != binding and s > 0]
    nxt = rest[0] if rest else None
    return Gain(
        binding,
        time_s / seconds[binding],
        nxt[0] if nxt else None,
        time_s / nxt[1] if nxt else None,
    )


def _cache_levels(unknown: Sequence[str], machine: Machine, names: Mapping[str, str]) -> str:
    """The cache levels (last-level cache, L1 and shared memory) among ``unknown``."""
    caches = [
        names.get(x, x)
        for x in unknown
        if x.startswith("memory.")
        and (level := machine.level(x.partition(".")[2])) is not None
        and level.role in ("llc", "l1")
    ]
    return ", ".join(caches) or "none"


def _hardware(
    machine: Machine, precision: str | None, binding: str | None
) -> tuple[dict[str, float | None], dict[str, str]]:
    """What the machine offers beyond the binding unit: numbers and texts."""
    unit = binding.partition(".")[2] if binding and binding.startswith("compute.") else None
    speedup = tensor_speedup(machine, precision, unit) if unit else None
    faster = faster_precisions(machine, precision, unit) if unit else ()
    arch = architecture(machine)
    numbers = {
        "tensor_speedup": speedup,
        "faster_precision": max((f.speedup for f in faster), default=None),
    }
    text = {
        "tensor_speedup": fmt_ratio(speedup),
        "tensor_instructions": arch.instructions,
        "libraries": arch.libraries,
        "architecture": arch.name or "n/a",
        "faster_precisions": "; ".join(f.text() for f in faster) or "none",
    }
    return numbers, text


def _base_text() -> dict[str, str]:
    return dict.fromkeys(PLACEHOLDERS, "n/a")


def _speedup_text(sets: set[str], speedup: float | None, noise: str | None) -> None:
    if speedup is None:
        return
    if noise is not None:
        sets.add(noise.replace(" ", "-"))
        if noise == "significant" and speedup < 1.0:
            sets.add("slower")


def _position(index: int, count: int) -> set[str]:
    tags = {"baseline" if index == 0 else "later"}
    tags.add("latest" if index == count - 1 else "superseded")
    return tags


# --------------------------------------------------------------------------- launches


# Launches are paired across variants by (kernel, occurrence of that kernel). The
# index of a variant is built once and kept while the variant is in use: asked per
# launch, a linear scan made a variant of n launches cost O(n^3).
_INDEX: dict[int, tuple[VariantResult, dict[tuple[str, int], LaunchResult]]] = {}


def _index(v: VariantResult) -> dict[tuple[str, int], LaunchResult]:
    hit = _INDEX.get(id(v))
    if hit is None or hit[0] is not v:  # holding v keeps its id from being reused
        if len(_INDEX) >= 64:
            _INDEX.clear()
        hit = (v, {(r.kernel, r.occurrence): r for r in v.launches})
        _INDEX[id(v)] = hit
    return hit[1]


def forget_variants() -> None:
    """Let go of the variants indexed so far (:func:`roofgen.advice.advise` calls it
    when done), so that the index holds no results once they are no longer in use:
    analysed one case at a time, each case's results are let go after its advice."""
    _INDEX.clear()


def _find(v: VariantResult, key: tuple[str, int]) -> LaunchResult | None:
    return _index(v).get(key)


def _later(
    case: CaseResult, vi: int, r: LaunchResult, names: Mapping[str, str]
) -> tuple[set[str], str]:
    """History tags against the last variant, and the sentence saying what it did."""
    if vi == len(case.variants) - 1:
        return set(), "n/a"
    latest = case.variants[-1]
    match = _find(latest, (r.kernel, r.occurrence))
    if match is None:
        return {"moved-later", "replaced-later"}, (
            f"{latest.variant} has no launch of {r.kernel} (its work moved to other kernels)"
        )
    move = Movement(
        r.binding, match.binding, r.klass, match.klass, r.efficiency, match.efficiency, None, None
    )
    tags = {"moved-later"} if move.binding_changed else set()
    return tags, (
        f"{latest.variant} runs {r.kernel} {move.text(names)}, "
        f"{fmt_ratio(r.time_s / match.time_s)} as fast"
    )


def launch_facts(
    case: CaseResult,
    vi: int,
    r: LaunchResult,
    machine: Machine,
    comparison: CaseComparison,
    measurement: Measurement,
) -> Facts:
    """The facts of launch ``r`` of variant ``vi`` of ``case``."""
    v = case.variants[vi]
    names = resource_names(machine)
    kernel = case.case.kernel(r.kernel)
    op = kernel.operator if kernel is not None else None
    history = _position(vi, len(case.variants))
    moved = comparison.launch(v.variant, r.index) if vi > 0 else None
    if moved is not None:
        if moved.movement.binding_changed:
            history.add("moved")
        _speedup_text(history, moved.speedup.value, moved.speedup.noise)
    later_tags, later = _later(case, vi, r, names)
    history |= later_tags
    evidence = {
        name
        for name in ("grid", "block", "occupancy", "waves")
        if getattr(measurement, name) is not None
    }
    blocks = prod(measurement.grid) if measurement.grid else None
    sms = machine.issue.sms if machine.issue is not None else None
    datasheet = r.efficiency_by_basis.get("datasheet")
    device = _device(machine)
    ranked = sorted(r.bound_s.items(), key=lambda kv: (-kv[1], kv[0]))
    ratio = ranked[1][1] / ranked[0][1] if len(ranked) > 1 and ranked[0][1] > 0 else None
    numbers: dict[str, float | None] = {
        "efficiency": r.efficiency,
        "efficiency_datasheet": datasheet,
        "headroom": r.headroom,
        "runner_up_ratio": ratio,
        "occupancy": measurement.occupancy,
        "waves": measurement.waves,
        "grid_per_sm": blocks / sms if blocks and sms else None,
        "block_threads": float(prod(measurement.block)) if measurement.block else None,
        "syncs": float(measurement.syncs) if measurement.syncs is not None else None,
        "share": r.share_of_variant,
        "launches": float(len(v.launches)),
        "speedup": moved.speedup.value if moved is not None else None,
        "clock_deviation": abs(r.clock_scale - 1.0),
        "datasheet_gap": abs(datasheet - r.efficiency)
        if datasheet is not None and r.efficiency is not None
        else None,
        "time_us": r.time_s * 1e6,
    }
    hardware_numbers, hardware_text = _hardware(machine, _precision(kernel, r), r.binding)
    numbers.update(hardware_numbers)
    gain = _gain(r.time_s, r.bound_s, r.binding)
    text = _base_text()
    text.update(hardware_text)
    text.update(
        case=case.case.id,
        variant=v.variant,
        kernel=r.kernel,
        kernel_id=r.kernel,
        binding=names.get(r.binding, r.binding) if r.binding else "n/a",
        runner_up=names.get(r.runner_up, r.runner_up) if r.runner_up else "n/a",
        runner_up_ratio=fmt_percent(ratio),
        **{"class": r.klass},
        efficiency=fmt_percent(r.efficiency),
        efficiency_datasheet=fmt_percent(datasheet),
        headroom=fmt_ratio(r.headroom),
        gain=gain.text(names) if gain else "n/a",
        to_roof=fmt_ratio(gain.to_roof) if gain else "n/a",
        beyond=fmt_ratio(gain.beyond) if gain else "n/a",
        time=fmt_time(r.time_s),
        bound=fmt_time(r.lower_bound_s),
        occupancy=fmt_percent(measurement.occupancy),
        waves=f"{measurement.waves:g}" if measurement.waves is not None else "n/a",
        grid=f"{blocks:,}" if blocks else "n/a",
        block=f"{int(numbers['block_threads'] or 0):,} threads" if measurement.block else "n/a",
        grid_per_sm=f"{numbers['grid_per_sm']:.2g}" if numbers["grid_per_sm"] else "n/a",
        syncs=str(measurement.syncs) if measurement.syncs is not None else "n/a",
        missing=", ".join(names.get(x, x) for x in r.coverage.unknown) or "none",
        missing_caches=_cache_levels(r.coverage.unknown, machine, names),
        share=fmt_percent(r.share_of_variant),
        speedup=fmt_ratio(moved.speedup.value) if moved else "n/a",
        noise=moved.speedup.noise if moved else "n/a",
        movement=moved.movement.text(names) if moved else "n/a",
        baseline=case.variants[0].variant,
        latest=case.variants[-1].variant,
        later=later,
        operator=op.kind if op else "n/a",
        precision=_precision(kernel, r) or "n/a",
        phase=(op.phase or "n/a") if op else "n/a",
        modelled=", ".join(r.modelled) or "none",
        launches=str(len(v.launches)),
        clock_scale=fmt_percent(r.clock_scale),
        intensity=fmt_si(r.intensity_flop_per_byte.get(device), "FLOP/B") if device else "n/a",
    )
    sets = {
        "class": frozenset({r.klass}),
        "binding": _forms(r.binding, machine),
        "runner_up": _forms(r.runner_up, machine),
        "operator": frozenset({op.kind} if op else ()),
        "precision": frozenset({p} if (p := _precision(kernel, r)) else ()),
        "phase": frozenset({op.phase} if op and op.phase else ()),
        "history": frozenset(history),
        "missing": _missing(r.coverage.unknown, r.coverage.covered, machine),
        "evidence": frozenset(evidence),
        "modelled": frozenset(x.split(".", 1)[0] for x in r.modelled),
    }
    return Facts("launch", case.case.id, v.variant, r.kernel, r.index, sets, numbers, text, gain)


# --------------------------------------------------------------------------- variants


def _variant_gain(v: VariantResult) -> Gain | None:
    if v.binding is None or not v.efficiency:
        return None
    without = 0.0
    for r in v.launches:
        others = [s for res, s in r.bound_s.items() if res != v.binding]
        without += r.calls * max(others, default=0.0)
    runner = v.runner_up
    return Gain(
        v.binding,
        1.0 / v.efficiency,
        runner,
        v.time_s / without if runner is not None and without > 0 else None,
    )


def variant_facts(case: CaseResult, vi: int, machine: Machine, comparison: CaseComparison) -> Facts:
    """The facts of variant ``vi`` of ``case``."""
    v = case.variants[vi]
    names = resource_names(machine)
    kernels = [case.case.kernel(r.kernel) for r in v.launches]
    ops = [k.operator for k in kernels if k is not None]
    history = _position(vi, len(case.variants))
    moved = comparison.variant(v.variant) if vi > 0 else None
    if moved is not None:
        if moved.movement.binding_changed:
            history.add("moved")
        _speedup_text(history, moved.speedup.value, moved.speedup.noise)
    if vi < len(case.variants) - 1 and case.variants[-1].binding != v.binding:
        history.add("moved-later")
    memory_bound = sum(
        1
        for r in v.launches
        if r.binding is not None
        and resource_class(r.binding, machine) == "memory.device"
        and r.klass in ("bound", "co-bound")
    )
    e2e_share = v.time_s / v.end_to_end_s if v.end_to_end_s else None
    datasheet = v.efficiency_by_basis.get("datasheet")
    numbers: dict[str, float | None] = {
        "efficiency": v.efficiency,
        "efficiency_datasheet": datasheet,
        "headroom": v.headroom,
        "launches": float(len(v.launches)),
        "memory_bound_launches": float(memory_bound),
        "e2e_share": e2e_share,
        "speedup": moved.speedup.value if moved is not None else None,
        "datasheet_gap": abs(datasheet - v.efficiency)
        if datasheet is not None and v.efficiency is not None
        else None,
    }
    gain = _variant_gain(v)
    text = _base_text()
    text.update(
        case=case.case.id,
        variant=v.variant,
        binding=names.get(v.binding, v.binding) if v.binding else "n/a",
        runner_up=names.get(v.runner_up, v.runner_up) if v.runner_up else "n/a",
        **{"class": v.klass},
        efficiency=fmt_percent(v.efficiency),
        efficiency_datasheet=fmt_percent(datasheet),
        headroom=fmt_ratio(v.headroom),
        gain=gain.text(names) if gain else "n/a",
        to_roof=fmt_ratio(gain.to_roof) if gain else "n/a",
        beyond=fmt_ratio(gain.beyond) if gain and gain.beyond else "n/a",
        time=fmt_time(v.time_s),
        bound=fmt_time(v.lower_bound_s),
        missing=", ".join(names.get(x, x) for x in v.coverage.unknown) or "none",
        e2e_share=fmt_percent(e2e_share),
        limit=fmt_ratio(1.0 / (1.0 - e2e_share)) if e2e_share and e2e_share < 1 else "n/a",
        speedup=fmt_ratio(moved.speedup.value) if moved else "n/a",
        noise=moved.speedup.noise if moved else "n/a",
        movement=moved.movement.text(names) if moved else "n/a",
        baseline=case.variants[0].variant,
        latest=case.variants[-1].variant,
        operator=", ".join(dict.fromkeys(o.kind for o in ops)) or "n/a",
        launches=str(len(v.launches)),
        memory_bound_launches=str(memory_bound),
    )
    modelled = {x.split(".", 1)[0] for r in v.launches for x in r.modelled}
    sets = {
        "class": frozenset({v.klass}),
        "binding": _forms(v.binding, machine),
        "runner_up": _forms(v.runner_up, machine),
        "operator": frozenset(o.kind for o in ops),
        "precision": frozenset(
            p for r, k in zip(v.launches, kernels, strict=True) if (p := _precision(k, r))
        ),
        "phase": frozenset(o.phase for o in ops if o.phase),
        "history": frozenset(history),
        "missing": _missing(v.coverage.unknown, v.coverage.covered, machine),
        "evidence": frozenset(),
        "modelled": frozenset(modelled),
    }
    return Facts("variant", case.case.id, v.variant, None, None, sets, numbers, text, gain)
