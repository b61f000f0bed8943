"""Nsight Compute profiles to a case study, or to a new variant of an existing one.

A new case (``-o``) is written with ruamel.yaml; ``--into`` loads an existing case
round-trip, appends the variant (and any kernel or machine it needs) and writes
the file back only if every line that was there is still there, unchanged.
Every figure carries an end-of-line comment naming the metric it came from.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from roofgen.importers import ImportFailure
from roofgen.importers.kernel_names import KernelIds, KernelMap, derived_id, kernel_id
from roofgen.importers.ncu_csv import Launch, Profile
from roofgen.importers.ncu_derived import quantity
from roofgen.importers.ncu_metrics import (
    Derived,
    Figure,
    MachineView,
    collect_command,
    derive,
)
from roofgen.importers.ncu_notes import notes, pairing_warnings, replay_clocks, unknown_clock
from roofgen.importers.timing import Timing
from roofgen.spec.roundtrip import eol


@dataclass
class Group:
    """Launches of one kernel with one shape: one launch entry of the variant."""

    kernel: str
    name: str
    launches: list[Launch] = field(default_factory=list)
    mapped: bool = False  # the id came from --kernel-map (else from the name)


def group_launches(
    profile: Profile, kernel_map: Sequence[KernelMap], only_mapped: bool
) -> list[Group]:
    groups: dict[tuple[Any, ...], Group] = {}
    ids = KernelIds()
    for launch in profile.launches:
        ident = kernel_id(launch.name, kernel_map)
        mapped = ident is not None
        if ident is None:
            if only_mapped:
                continue
            ident = ids.of(launch.name)
        key = (ident, launch.name, launch.grid, launch.block)
        group = groups.setdefault(key, Group(ident, launch.name, mapped=mapped))
        group.launches.append(launch)
    return list(groups.values())


def _mean(figures: list[Figure]) -> Figure:
    if len(figures) == 1:
        return figures[0]
    value = sum((f.value for f in figures), Decimal(0)) / len(figures)
    return Figure(
        value, figures[0].unit, f"mean of {len(figures)} launches; first: {figures[0].origin}"
    )


def combine(derived: list[Derived]) -> Derived:
    """One measurement from several launches of one kernel and shape: the median time
    (with min and max), the mean of every count."""
    if len(derived) == 1:
        return derived[0]
    out = Derived()
    _combine_time(derived, out)
    first = derived[0]
    for key in first.clocks:
        out.clocks[key] = _mean([d.clocks[key] for d in derived if key in d.clocks])
    for unit, by_precision in first.flops.items():
        for precision in by_precision:
            found = [
                d.flops[unit][precision] for d in derived if precision in d.flops.get(unit, {})
            ]
            out.flops.setdefault(unit, {})[precision] = _mean(found)
    for level in first.bytes:
        _put_mean(out.bytes, level, [d.bytes.get(level) for d in derived])
    for level in first.transactions:
        _put_mean(out.transactions, level, [d.transactions.get(level) for d in derived])
    for name in first.accesses:
        _put_mean(out.accesses, name, [d.accesses.get(name) for d in derived])
    out.notes = list(dict.fromkeys(n for d in derived for n in d.notes))
    out.clock_moved = any(d.clock_moved for d in derived)
    if first.instructions is not None:
        out.instructions = _mean([d.instructions for d in derived if d.instructions])
    if first.occupancy is not None:
        out.occupancy = _mean([d.occupancy for d in derived if d.occupancy])
    for d in derived:
        out.missing |= d.missing
        out.warnings += [w for w in d.warnings if w not in out.warnings]
    return out


def _combine_time(derived: list[Derived], out: Derived) -> None:
    """The median time of the launches (with min and max); summaries' means stay means."""
    times = [d.time for d in derived if d.time is not None]
    if any(d.time_statistic == "mean" for d in derived):
        out.time_statistic = "mean"
        if times:
            out.time = _mean_of_means(derived)
        return
    if times:
        values = sorted(t.value for t in times)
        median = Decimal(statistics.median(values))
        out.time = Figure(
            median, "s", f"median of {len(values)} launches; first: {times[0].origin}"
        )
        out.time_min = Figure(values[0], "s", "fastest launch")
        out.time_max = Figure(values[-1], "s", "slowest launch")


def _mean_of_means(derived: list[Derived]) -> Figure:
    values = [d.time.value for d in derived if d.time is not None]
    value = sum(values, Decimal(0)) / len(values)
    return Figure(value, "s", f"mean of {len(values)} summary rows' means")


def _put_mean(into: dict[str, Any], key: str, per_launch: list[Any]) -> None:
    """``into[key]``: the mean figure (or each part's) over the launches, unless one lacks
    it (a metric one replay lost): then unknown, not the others' mean passed off as all."""
    if all(isinstance(f, Figure) for f in per_launch):
        into[key] = _mean(per_launch)
    elif all(isinstance(f, dict) and f.keys() == per_launch[0].keys() for f in per_launch):
        into[key] = {part: _mean([f[part] for f in per_launch]) for part in per_launch[0]}


# ---------------------------------------------------------------- building YAML


@dataclass
class Options:
    variant: str
    clock_control: str = "base"
    clock_control_given: bool = True  # False: Nsight Compute's default, assumed
    cache_control: str = "all"
    partial: bool = False
    timing: list[Timing] = field(default_factory=list)
    kernel_map: Sequence[KernelMap] = ()
    files: Sequence[str] = ()


@dataclass
class Built:
    variant: Any  # ruamel CommentedMap
    kernels: list[Any]  # new kernel entries (CommentedMap), for kernels not in the case
    warnings: list[str]
    groups: list[Group]
    sm_clock: Figure | None = None  # the first launch's SM clock during the replay
    clock_moved: bool = False  # some launch's SM clock varied across its invocations


def _cm(*pairs: tuple[str, Any]) -> Any:
    from ruamel.yaml.comments import CommentedMap

    return CommentedMap(pairs)


def _flow(*pairs: tuple[str, Any]) -> Any:
    item = _cm(*pairs)
    item.fa.set_flow_style()
    return item


def _put(mapping: Any, key: str, figure: Figure) -> None:
    mapping[key] = quantity(figure)
    eol(mapping, key, figure.origin)


def method_text(options: Options, clock: Figure | None, moved: bool = False) -> tuple[str, str]:
    said = "" if options.clock_control_given else " (assumed: the profile does not say)"
    if moved:
        clocks = (
            f"--clock-control {options.clock_control}{said}, but the SM clock moved across "
            "the profiled invocations: not locked"
        )
    elif options.clock_control == "base":
        clocks = f"Nsight Compute's --clock-control base, its default{said}: SM clock locked"
    else:
        clocks = "--clock-control none: clocks not locked by Nsight Compute"
    if clock is not None:
        clocks += f" (SM clock during replay: {quantity(clock)}, from the profile)"
    else:
        clocks += " (no clock metric in the profile)"
    caches = {
        "all": "Nsight Compute's default --cache-control all: caches flushed before each "
        "replay pass",
        "none": "--cache-control none: caches not flushed between replay passes",
    }[options.cache_control]
    return clocks, caches


def build_variant(
    groups: list[Group],
    machine: MachineView,
    machine_ref: str | None,
    known_kernels: set[str],
    options: Options,
) -> Built:
    from ruamel.yaml.comments import CommentedSeq

    warnings: list[str] = []
    missing: dict[tuple[str, ...], Missing] = {}
    launches = CommentedSeq()
    kernels: list[Any] = []
    listed = set(known_kernels)  # kernel ids already in the case or added here
    sm_clock, moved = None, False
    options.timing, warnings = _shapeless(groups, options)
    for group in groups:
        derived = combine([derive(launch, machine) for launch in group.launches])
        moved = moved or derived.clock_moved
        timing = _timing_for(group, options)
        if timing is not None and timing.kind == "ncu-replay" and timing.sm_clock is not None:
            sm_clock = sm_clock or Figure(timing.sm_clock, "Hz", timing.clock_origin)
        sm_clock = sm_clock or derived.clocks.get("sm")
        if timing is not None:
            derived.missing.pop("time", None)
        label = f"kernel {group.kernel!r} ({_short(group.name)})"
        warnings += [f"{label}: {w}" for w in derived.warnings]
        if derived.missing:
            entry = missing.setdefault(tuple(sorted(derived.missing)), Missing([], {}))
            entry.labels.append(label)
            entry.metrics |= derived.missing
            if not options.partial or "time" in derived.missing:
                continue
            warnings.append(f"{label}: imported without {', '.join(sorted(derived.missing))}")
        launches.append(_launch(group, derived, timing, machine, options))
        warnings += [f"{label}: {w}" for w in pairing_warnings(derived, timing, options)]
        if (timing is None or timing.kind == "ncu-replay") and not replay_clocks(
            derived, timing, machine, options
        ):
            warnings.append(f"{label}: {unknown_clock(options.clock_control)}")
        if group.kernel not in listed:
            listed.add(group.kernel)
            kernels.append(_kernel(group))
    _fail_on_missing(missing, options)
    if not launches:
        raise ImportFailure("no kernel launches to import (check --kernel-map and --only-mapped)")
    variant = _cm(("id", options.variant))
    if machine_ref is not None:
        variant["machine"] = machine_ref
    variant["description"] = f"Imported from {', '.join(options.files)} by roofgen import ncu."
    variant["launches"] = launches
    return Built(variant, kernels, warnings, groups, sm_clock, moved)


def _short(name: str) -> str:
    return name if len(name) <= 60 else name[:57] + "..."


@dataclass
class Missing:
    labels: list[str]  # the kernels that lack them
    metrics: dict[str, list[str]]  # what is missing -> the metrics that would give it


def _fail_on_missing(missing: dict[tuple[str, ...], Missing], options: Options) -> None:
    """Stop, naming the missing metrics and the ncu line that collects them."""
    blocking = {
        needs: entry for needs, entry in missing.items() if not options.partial or "time" in needs
    }
    messages = []
    for needs, entry in blocking.items():
        lines = [f"the profile lacks metrics a roofline needs for {', '.join(entry.labels)}:"]
        for need in needs:
            lines.append(f"  {need}: none of {', '.join(entry.metrics[need])}")
        lines.append("collect them with:")
        lines.append(f"  {collect_command(entry.metrics)}")
        if "time" in needs:
            lines.append("or give measured times with --timing FILE (nsys or CUDA events)")
        else:
            lines.append(
                "or pass --partial to import what is there (the missing roofs stay unknown)"
            )
        messages.append("\n".join(lines))
    if messages:
        raise ImportFailure(*messages)


def _timing_for(group: Group, options: Options) -> Timing | None:
    """The timing of the group's kernel: by name (and, where the timing file gives the
    shape, by grid and block too: one kernel runs at several shapes)."""
    return next((t for t in options.timing if _matches(t, group, options)), None)


def _matches(timing: Timing, group: Group, options: Options) -> bool:
    first = group.launches[0]
    if timing.grid is not None and timing.grid != first.grid:
        return False
    if timing.block is not None and timing.block != first.block:
        return False
    if timing.name in (group.kernel, group.name):
        return True
    mapped = kernel_id(timing.name, options.kernel_map) or derived_id(timing.name)
    return mapped == group.kernel


def _shapeless(groups: list[Group], options: Options) -> tuple[list[Timing], list[str]]:
    """The timings to use: one without a shape (grid, block) that fits a kernel the
    profile ran at several shapes cannot say which shape it timed, so it is not used."""
    kept, warnings = [], []
    for timing in options.timing:
        fits = [g for g in groups if _matches(timing, g, options)]
        shapes = {(g.launches[0].grid, g.launches[0].block) for g in fits}
        if timing.grid is None and timing.block is None and len(shapes) > 1:
            warnings.append(
                f"the timing of {_short(timing.name)!r} ({timing.origin}) gives no grid or "
                f"block, and the profile ran that kernel at {len(shapes)} shapes: not used "
                "(give per-launch times with their shapes: nsys's cuda_gpu_trace report, or "
                "an Nsight Compute export of the times)"
            )
            continue
        kept.append(timing)
    return kept, warnings


def _kernel(group: Group) -> Any:
    from roofgen.spec.ids import MAX_TEXT

    name = group.name
    if len(name) > MAX_TEXT:  # as long as a spec's text may be, the rest elided
        name = name[: MAX_TEXT - 1] + "\u2026"
    kernel = _cm(("id", group.kernel), ("name", name))
    if name != group.name:
        eol(kernel, "name", f"the profile's name, {len(group.name):,} characters, shortened")
    kernel["operator"] = _flow(("kind", "other"))
    eol(kernel, "operator", "set the operator's kind and shape")
    return kernel


def _time_block(derived: Derived, timing: Timing | None) -> tuple[Any, str]:
    if timing is not None:
        stats = _flow((timing.statistic, quantity(Figure(timing.median, "s", ""))))
        quartiles = (("q1", timing.q1), ("q3", timing.q3)) if timing.statistic == "median" else ()
        for key, value in (
            *quartiles,
            ("min", timing.minimum),
            ("max", timing.maximum),
        ):
            if value is not None:
                stats[key] = quantity(Figure(value, "s", ""))
        if timing.repeats:
            stats["repeats"] = timing.repeats
        if timing.warmup is not None:
            stats["warmup"] = timing.warmup
        return stats, timing.origin
    assert derived.time is not None
    stats = _flow((derived.time_statistic, quantity(derived.time)))
    if derived.time_min is not None and derived.time_max is not None:
        stats["min"] = quantity(derived.time_min)
        stats["max"] = quantity(derived.time_max)
    return stats, derived.time.origin


def _launch(
    group: Group, derived: Derived, timing: Timing | None, machine: MachineView, options: Options
) -> Any:
    launch = _cm(("kernel", group.kernel))
    count = sum(launch.invocations for launch in group.launches)
    if count > 1:
        launch["calls"] = count
        eol(launch, "calls", "launches of this kernel and shape in the profile: set calls per step")
    m = _cm()
    m["time"], origin = _time_block(derived, timing)
    eol(m, "time", origin)
    m["timing"] = timing.kind if timing is not None else "ncu-replay"
    clocks = replay_clocks(derived, timing, machine, options)
    if clocks:
        m["clocks"] = _cm()
        for key, figure in clocks.items():
            _put(m["clocks"], key, figure)
    if derived.flops:
        m["flops"] = _cm()
        for unit, by_precision in derived.flops.items():
            m["flops"][unit] = _cm()
            for precision, figure in by_precision.items():
                _put(m["flops"][unit], precision, figure)
    _counts(m, derived)
    _shape(m, group, derived)
    m["notes"] = notes(group, derived, timing, machine, options)
    launch["measurement"] = m
    return launch


def _counts(m: Any, derived: Derived) -> None:
    if derived.bytes:
        m["bytes"] = _cm()
        for level, value in derived.bytes.items():
            if isinstance(value, dict):
                m["bytes"][level] = _cm()
                for part, figure in value.items():
                    _put(m["bytes"][level], part, figure)
            else:
                _put(m["bytes"], level, value)
    if derived.instructions is not None:
        _put(m, "instructions", derived.instructions)
    if derived.transactions:
        m["transactions"] = _cm()
        for level, figure in derived.transactions.items():
            _put(m["transactions"], level, figure)
    for name, figure in derived.accesses.items():
        _put(m, name, figure)


def _shape(m: Any, group: Group, derived: Derived) -> None:
    from ruamel.yaml.comments import CommentedSeq

    first = group.launches[0]
    for key, dims in (("grid", first.grid), ("block", first.block)):
        if dims:
            seq = CommentedSeq(list(dims))
            seq.fa.set_flow_style()
            m[key] = seq
    if derived.occupancy is not None:
        m["occupancy"] = float(round(derived.occupancy.value, 4))
        eol(m, "occupancy", derived.occupancy.origin)
