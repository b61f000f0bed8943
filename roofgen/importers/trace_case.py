"""A timeline trace's kernels and steps as a case: the writer shared by ``roofgen
import nsys`` and ``roofgen import torch-trace``.

A trace gives, per entry (a kernel, or an operator and the kernels it launched), how
many times it ran in the steps imported and the time of each run; and per step its
span and the union of its GPU-busy intervals. The case gets one launch entry per
entry with its calls per step, and the variant's ``end_to_end`` time (the mean step
span), so the case's end-to-end comparison and Amdahl's projection read a trace, not
typed-in shares. Times are whole nanoseconds; means are written exactly to 15
significant digits.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from roofgen.importers import Imported, ImportFailure
from roofgen.importers.kernel_names import KernelMap, derived_id, kernel_id, suffixed
from roofgen.spec.roundtrip import eol

__all__ = [
    "KernelStat",
    "Operator",
    "Steps",
    "Trace",
    "duration",
    "new_case",
    "into_case",
    "summary_lines",
]


@dataclass(frozen=True)
class Operator:
    """What an entry computes, read from recorded shapes: an operator kind and shape
    roofgen's operator models know, the dtypes, and where it was read."""

    kind: str
    shape: dict[str, int]
    dtypes: dict[str, str]
    origin: str
    flop: float | None = None  # the model's FLOPs of one call (None: no model)


@dataclass
class KernelStat:
    """One entry: runs of one kernel (or operator) with one shape, over all steps."""

    key: str  # what makes it one entry (the name, plus the shape where there is one)
    name: str  # the kernel's (or operator's) name
    count: int  # runs in all the steps imported
    total_ns: int
    min_ns: int
    max_ns: int
    grid: tuple[int, ...] | None = None
    block: tuple[int, ...] | None = None
    kernels_per_call: int | None = None  # an operator's kernel launches per call
    operator: Operator | None = None
    description: str = ""  # e.g. the GPU kernels an operator launched


@dataclass
class Steps:
    """What a step is and the steps' figures (ns, summed over the steps)."""

    what: str  # e.g. "NVTX range 'train_step'"
    count: int
    span_ns: int  # from each step's start to its end or its last kernel's end
    busy_ns: int  # the union of the steps' kernel intervals

    @property
    def idle_ns(self) -> int:
        return self.span_ns - self.busy_ns


@dataclass
class Trace:
    tool: str  # the verb: nsys, torch-trace
    source: str  # the tool, for people: "Nsight Systems", "PyTorch profiler"
    timing: str  # the measurement's timing field
    files: list[str]
    kernels: list[KernelStat]
    steps: Steps
    method: str  # how the trace was read, for the case's method
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # printed, not warnings


# ---------------------------------------------------------------- numbers


def _decimal_text(value: Decimal) -> str:
    if value == value.to_integral_value():
        return format(value.to_integral_value(), "f")
    rounded = Decimal(format(value, ".15g"))
    return format(rounded.normalize(), "f")


def duration(ns: Decimal | int) -> str:
    """A time in nanoseconds as a quantity in the largest unit below it."""
    value = Decimal(ns)
    for factor, unit in ((10**9, "s"), (10**6, "ms"), (10**3, "us")):
        if abs(value) >= factor:
            return f"{_decimal_text(value / factor)} {unit}"
    return f"{_decimal_text(value)} ns"


def _percent(part: Decimal | int, whole: Decimal | int) -> str:
    if not whole:
        return "unknown"
    return f"{Decimal(part) * 100 / Decimal(whole):.1f}%"


# ---------------------------------------------------------------- ids


def _identity(name: Any, operator: Any) -> tuple[str, str]:
    """What makes a case's kernel the same kernel: its name and operator."""
    return str(name), repr(operator)


class _Ids:
    """Kernel ids: ``--kernel-map`` first, else made from the name; entries of one
    name with different shapes get ``id``, ``id-2``, ... A kernel already in the case
    with the same name and operator keeps its id (``existing``: id -> identity), so
    the variants' launches match and Amdahl's projection has one term per kernel."""

    def __init__(self, existing: dict[str, tuple[str, str]], kernel_map: list[KernelMap]) -> None:
        self.taken = set(existing)
        self.existing = existing
        self.kernel_map = kernel_map
        self.by_key: dict[str, str] = {}
        self.reused: set[str] = set()

    def of(self, entry: KernelStat, identity: tuple[str, str]) -> str:
        known = self.by_key.get(entry.key)
        if known is not None:
            return known
        base = kernel_id(entry.name, self.kernel_map) or derived_id(entry.name)
        candidate, n = base, 1
        while candidate in self.taken:
            if self.existing.get(candidate) == identity and candidate not in self.reused:
                self.reused.add(candidate)
                break
            n += 1
            candidate = suffixed(base, n)
        self.taken.add(candidate)
        self.by_key[entry.key] = candidate
        return candidate


# ---------------------------------------------------------------- YAML


def _cm(*pairs: tuple[str, Any]) -> Any:
    from ruamel.yaml.comments import CommentedMap

    return CommentedMap(pairs)


def _flow_seq(items: list[Any]) -> Any:
    from ruamel.yaml.comments import CommentedSeq

    seq = CommentedSeq(items)
    seq.fa.set_flow_style()
    return seq


def _flow(*pairs: tuple[str, Any]) -> Any:
    item = _cm(*pairs)
    item.fa.set_flow_style()
    return item


def _kernel(ident: str, entry: KernelStat) -> Any:
    from roofgen.spec.ids import MAX_TEXT

    name = entry.name if len(entry.name) <= MAX_TEXT else entry.name[: MAX_TEXT - 1] + "\u2026"
    kernel = _cm(("id", ident), ("name", name))
    op = entry.operator
    if op is None:
        kernel["operator"] = _flow(("kind", "other"))
        eol(kernel, "operator", "the trace does not say what it computes: set kind and shape")
    else:
        kernel["operator"] = _cm(("kind", op.kind), ("shape", _flow(*op.shape.items())))
        eol(kernel["operator"], "shape", f"from {op.origin}")
        if op.dtypes:
            kernel["dtypes"] = _flow(*op.dtypes.items())
    if entry.description:
        kernel["description"] = entry.description
    return kernel


def _launch(ident: str, entry: KernelStat, trace: Trace) -> Any:
    steps = trace.steps.count
    launch = _cm(("kernel", ident))
    m = _cm()
    whole = entry.count % steps == 0
    per_step = entry.count // steps if whole else 1
    if per_step > 1:
        launch["calls"] = per_step
        eol(launch, "calls", f"{entry.count} runs over {steps} step(s)")
    if not whole:
        m["time"] = duration(Decimal(entry.total_ns) / steps)
        eol(
            m,
            "time",
            f"{entry.count} runs over {steps} steps, not a whole number per step: "
            "their time per step as one entry",
        )
    elif entry.count == 1:
        m["time"] = duration(entry.total_ns)
    else:
        stats: list[tuple[str, Any]] = [("mean", duration(Decimal(entry.total_ns) / entry.count))]
        if entry.min_ns > 0:  # 0: a run shorter than the trace's resolution (whole us)
            stats.append(("min", duration(entry.min_ns)))
        stats += [("max", duration(entry.max_ns)), ("repeats", entry.count)]
        m["time"] = _flow(*stats)
        shorter = "" if entry.min_ns > 0 else "; the shortest recorded as 0, below its resolution"
        eol(m, "time", f"over the {entry.count} runs in the trace{shorter}")
    m["timing"] = trace.timing
    if entry.kernels_per_call is not None and whole:
        m["launches"] = entry.kernels_per_call
        eol(m, "launches", "kernel launches per call")
    if entry.grid:
        m["grid"] = _flow_seq(list(entry.grid))
    if entry.block:
        m["block"] = _flow_seq(list(entry.block))
    busy, span = trace.steps.busy_ns, trace.steps.span_ns
    m["notes"] = (
        f"From {', '.join(trace.files)} ({trace.source}, roofgen import {trace.tool}): "
        f"{entry.count} run(s), {duration(entry.total_ns)} in all, "
        f"{_percent(entry.total_ns, busy)} of the GPU-busy time and "
        f"{_percent(entry.total_ns, span)} of the steps' time."
    )
    launch["measurement"] = m
    return launch


def _end_to_end(trace: Trace) -> Any:
    s = trace.steps
    entry = _cm(("time", duration(Decimal(s.span_ns) / s.count)))
    entry["description"] = (
        f"Mean over {s.count} step(s) ({s.what}) in {', '.join(trace.files)}, each from "
        f"its start to its end or its last kernel's end, whichever is later. GPU busy "
        f"{duration(s.busy_ns)} (the union of the kernels' intervals), idle "
        f"{duration(s.idle_ns)} ({_percent(s.idle_ns, s.span_ns)}) over the steps."
    )
    return entry


def _plain(value: Any) -> Any:
    """A YAML value as plain dicts and lists (ruamel's keep comments and styles)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


@dataclass
class _Built:
    kernels: list[Any]
    variant: Any
    ids: list[str]


def _build(
    trace: Trace,
    variant_id: str,
    machine_ref: str | None,
    known: dict[str, tuple[str, str]],
    kernel_map: Any,
) -> _Built:
    from ruamel.yaml.comments import CommentedSeq

    from roofgen.importers.trace_checks import check_trace, timed

    check_trace(trace)
    entries = timed(trace)
    ids = _Ids(known, list(kernel_map))
    launches, kernels, written = CommentedSeq(), [], []
    for entry in entries:
        kernel = _kernel("", entry)
        ident = ids.of(entry, _identity(kernel["name"], _plain(kernel["operator"])))
        if ident not in ids.reused:
            kernel["id"] = ident
            kernels.append(kernel)
        launches.append(_launch(ident, entry, trace))
        written.append(ident)
    variant = _cm(("id", variant_id))
    if machine_ref is not None:
        variant["machine"] = machine_ref
    variant["description"] = (
        f"Imported from {', '.join(trace.files)} by roofgen import {trace.tool}: "
        f"{trace.steps.count} step(s), {trace.steps.what}."
    )
    variant["launches"] = launches
    return _Built(kernels, variant, written)


def _header(trace: Trace, machine: Any) -> str:
    text = (
        f"Imported by `roofgen import {trace.tool}` from {', '.join(trace.files)} "
        f"({trace.source}) for machine {machine.id} ({machine.origin}). A trace gives "
        "times, not FLOPs or bytes: set each kernel's operator kind and shape where the "
        "trace could not, or add counters with `roofgen import ncu --into`."
    )
    return "\n".join(textwrap.wrap(text, 86, break_on_hyphens=False))


def new_case(
    trace: Trace,
    machine: Any,
    target: Path | None,
    case_id: str,
    title: str | None,
    variant_id: str,
    kernel_map: Any = (),
) -> Imported:
    from ruamel.yaml.comments import CommentedSeq

    from roofgen.importers.ncu import _ref, _validate
    from roofgen.spec.roundtrip import dump, make_yaml, schema_comment

    built = _build(trace, variant_id, None, {}, kernel_map)
    root = _cm(("roofgen", 1), ("kind", "case"), ("id", case_id))
    root["title"] = title or f"{trace.source} trace: {', '.join(trace.files)}"
    root["machines"] = CommentedSeq([_ref(machine)])
    root["method"] = _cm(("description", trace.method))
    root["end_to_end"] = _cm((variant_id, _end_to_end(trace)))
    root["kernels"] = CommentedSeq(built.kernels)
    root["variants"] = CommentedSeq([built.variant])
    schema_line = schema_comment(target or Path.cwd() / "case.yaml", "case")
    root.yaml_set_start_comment(schema_line.removeprefix("# "))
    root.yaml_set_comment_before_after_key("id", before=_header(trace, machine))
    text = dump(make_yaml(), root)
    _validate(text, machine, None)
    return Imported(text, list(trace.warnings), built.ids)


def into_case(
    trace: Trace,
    machine: Any,
    case_path: Path,
    variant_id: str,
    other_machines: dict[str, dict[str, Any]] | None = None,
    kernel_map: Any = (),
) -> Imported:
    from roofgen.importers.ncu import _case_bytes, _name_machine, _ref, _round_trip, _validate
    from roofgen.spec.roundtrip import dump, lf_text, only_added

    before = lf_text(_case_bytes(case_path))
    yaml, data = _round_trip(before, case_path)
    variants = data.get("variants") or []
    if any(isinstance(v, dict) and v.get("id") == variant_id for v in variants):
        raise ImportFailure(
            f"{case_path}: the case already has a variant {variant_id!r}: choose another "
            "name with --variant (roofgen only adds to a case, it never replaces a variant)"
        )
    e2e = data.get("end_to_end")
    if e2e is not None and not isinstance(e2e, dict):
        raise ImportFailure(f"{case_path}: end_to_end is not a mapping: fix the case first")
    refs = data.get("machines") or []
    ids = [r if isinstance(r, str) else r.get("id") for r in refs]
    if machine.id not in ids:
        plain = refs and all(isinstance(r, str) for r in refs)
        refs.append(machine.id if plain and machine.version is None else _ref(machine))
        if len(ids) == 1:
            _name_machine(variants, str(ids[0]))
        ids.append(machine.id)
    variant_machine = machine.id if len(ids) > 1 else None
    known = {
        str(k.get("id")): _identity(k.get("name"), _plain(k.get("operator")))
        for k in data.get("kernels") or []
        if isinstance(k, dict)
    }
    built = _build(trace, variant_id, variant_machine, known, kernel_map)
    data["kernels"].extend(built.kernels)
    data["variants"].append(built.variant)
    if e2e is None:
        data["end_to_end"] = _cm((variant_id, _end_to_end(trace)))
    else:
        e2e[variant_id] = _end_to_end(trace)
    after = dump(yaml, data)
    changed = only_added(before, after)
    if changed:
        raise ImportFailure(
            f"{case_path}: adding the variant would rewrite lines that are already there "
            f"({'; '.join(changed[:3])}): nothing was written; write it to a new file with -o"
        )
    _validate(after, machine, before, other_machines or {})
    return Imported(after, list(trace.warnings), built.ids)


# ---------------------------------------------------------------- what is printed


def summary_lines(trace: Trace, top: int = 10) -> list[str]:
    """The steps' figures and the largest entries' shares, for the person importing."""
    s = trace.steps
    lines = [
        f"{s.count} step(s) ({s.what}): {duration(Decimal(s.span_ns) / s.count)} per step; "
        f"GPU busy {duration(s.busy_ns)}, idle {duration(s.idle_ns)} "
        f"({_percent(s.idle_ns, s.span_ns)} of {duration(s.span_ns)})",
    ]
    ranked = sorted(trace.kernels, key=lambda k: (-k.total_ns, k.key))
    for entry in ranked[:top]:
        flop = ""
        if entry.operator is not None and entry.operator.flop is not None:
            flop = f", model {entry.operator.flop:.6g} FLOP per call"
        lines.append(
            f"  {_percent(entry.total_ns, s.busy_ns):>6} of busy  {entry.count:>8} x  "
            f"{_short(entry.name)}{flop}"
        )
    if len(ranked) > top:
        lines.append(f"  ... and {len(ranked) - top} more")
    return lines + trace.notes


def _short(name: str) -> str:
    name = re.sub(r"\s+", " ", name)
    return name if len(name) <= 70 else name[:67] + "..."
