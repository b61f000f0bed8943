"""``roofgen import torch-trace``: a ``torch.profiler`` trace (Chrome trace JSON, as
``export_chrome_trace`` or the TensorBoard handler write it, gzipped or not) into a
case's operators, steps and end-to-end time.

Times are microseconds (``ts``, ``dur``), often fractional; they are read exactly
(as decimals) and kept as whole nanoseconds.

Each GPU kernel is linked to the CPU event that launched it: the runtime call
(``cudaLaunchKernel``, ``cuLaunchKernel``, ``hipLaunchKernel``, ...) with the same
``args.correlation``, or, where a kernel lacks it, through the flow events
(``ph: s`` at the call, ``ph: f`` at the kernel, ``cat: ac2g``, one ``id``). The
call's ``External id`` names the op it was made in, the innermost one (else the
innermost op around the call on its thread): ``aten::addmm``, not the
``aten::linear`` around it, so nothing is counted twice. One case entry per op
name and shape: each call of the op runs its kernels once; an entry's time is
the sum of its kernels' GPU times per call. Kernels launched outside any op are
entries of their own.

A step is a ``ProfilerStep#N`` range: a kernel belongs to the step whose range
holds its launching call (CPU time, any thread of the process); a step lasts from
its start to its end or its last kernel's end, whichever is later. Without
``ProfilerStep`` ranges the whole trace is one step. GPU-busy time is the union of
the step's kernel intervals; memory copies and memsets are not kernels.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from roofgen.importers import ImportFailure
from roofgen.importers.kernel_names import clean_name
from roofgen.importers.torch_ops import ShapeError, operator_of
from roofgen.importers.trace_case import KernelStat, Operator, Steps, Trace, duration
from roofgen.importers.trace_json import DEFAULT_MAX_SIZE, read_json

_STEP = re.compile(r"^ProfilerStep#(\d+)$")
_OPS = {"cpu_op", "operator"}
_RUNTIME = {"cuda_runtime", "cuda_driver", "runtime"}
_COMPILED = re.compile(r"^triton_|Torch-Compiled Region|CompiledFunction")
MAX_ENTRIES = 2000
_LATEST_US = Decimal(10**16)  # microseconds: some three hundred years


class _BadField(Exception):
    """A field of one event holds what a trace cannot: the message says which and why."""


def _ns(value: Any, field: str, duration_: bool = False) -> int | None:
    """A time in microseconds (``ts``, ``dur``) as whole nanoseconds; None when absent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise _BadField(f"{field} {_shown(value)} is not a number of microseconds")
    if not -_LATEST_US <= value <= _LATEST_US:  # no clock reads past a thousand years
        raise _BadField(f"{field} {_shown(value)} lies beyond any clock (microseconds)")
    if duration_ and value < 0:
        raise _BadField(f"{field} {_shown(value)} is negative: a duration is 0 or more")
    return int((Decimal(value) * 1000).to_integral_value())


def _shown(value: Any) -> str:
    text = repr(value) if not isinstance(value, Decimal) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _load(path: Path, max_size: int) -> list[Any]:
    data = read_json(path, max_size)
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list):
        raise ImportFailure(
            f"{path}: not a Chrome trace: no 'traceEvents' list (torch.profiler writes one "
            "with prof.export_chrome_trace(PATH) or tensorboard_trace_handler)"
        )
    return events


@dataclass
class _Op:
    name: str
    start: int
    end: int
    args: dict[str, Any]
    index: int  # the event's place in traceEvents
    parent: int | None = None


@dataclass(frozen=True)
class _Kernel:
    name: str
    ts: int
    dur: int
    pid: Any
    tid: Any
    args: dict[str, Any]


@dataclass
class _Call:
    """One op call (or one kernel launched outside any op) in one step."""

    kernels: list[str] = field(default_factory=list)
    ns: int = 0


@dataclass
class _Parsed:
    ops: list[_Op] = field(default_factory=list)
    by_thread: dict[tuple[Any, Any], list[int]] = field(default_factory=dict)
    by_external: dict[Any, int] = field(default_factory=dict)
    runtime: dict[Any, tuple[Any, Any, int, Any]] = field(default_factory=dict)
    kernels: list[_Kernel] = field(default_factory=list)
    steps: list[tuple[int, int, Any]] = field(default_factory=list)  # start, end, pid
    flow_s: dict[tuple[Any, Any, int], Any] = field(default_factory=dict)
    flow_f: dict[tuple[Any, Any, int], Any] = field(default_factory=dict)
    copies: list[int] = field(default_factory=list)
    shapes: bool = False


def _key(value: Any) -> Any:
    """A field usable as a key (an id, a pid, a tid); anything else (a list, a
    mapping, a float) is no key at all."""
    if isinstance(value, str | int) and not isinstance(value, bool):
        return value
    return None


def _args(event: dict[str, Any]) -> dict[str, Any]:
    args = event.get("args")
    return args if isinstance(args, dict) else {}


def _parse(path: Path, events: list[Any]) -> _Parsed:
    p = _Parsed()
    runtime: list[tuple[dict[str, Any], int]] = []
    for index, e in enumerate(events):
        if not isinstance(e, dict):
            continue
        try:
            _event(p, e, index, runtime)
        except _BadField as exc:
            name = e.get("name")
            what = f" {_shown(clean_name(name))}" if isinstance(name, str) else ""
            raise ImportFailure(f"{path}: traceEvents[{index}]{what}: {exc}") from None
    for e, ts in runtime:
        pid, tid = _key(e.get("pid")), _key(e.get("tid"))
        corr = _key(_args(e).get("correlation"))
        if corr is None:
            corr = p.flow_s.get((pid, tid, ts))
        if corr is not None:
            p.runtime[corr] = (pid, tid, ts, _key(_args(e).get("External id")))
    _nest(p)
    return p


def _name(e: dict[str, Any]) -> str:
    name = e.get("name")
    if name is None:
        return ""
    if not isinstance(name, str):
        raise _BadField(f"name {_shown(name)} is not a string")
    return clean_name(name)


def _kind(e: dict[str, Any]) -> str | None:
    """What roofgen reads the event as (None: it is not read)."""
    ph, cat = e.get("ph"), e.get("cat")
    cat = cat.lower() if isinstance(cat, str) else ""
    if ph in ("s", "f") and cat == "ac2g":
        return "flow"
    if ph != "X":
        return None
    if cat in ("user_annotation", *_OPS, *_RUNTIME, "kernel", "gpu_memcpy", "gpu_memset"):
        return cat
    return None


def _event(
    p: _Parsed, e: dict[str, Any], index: int, runtime: list[tuple[dict[str, Any], int]]
) -> None:
    cat = _kind(e)
    if cat is None:
        return
    ts = _ns(e.get("ts"), "ts")
    if ts is None:
        raise _BadField("no ts (its start, in microseconds)")
    pid, tid = _key(e.get("pid")), _key(e.get("tid"))
    if cat == "flow":
        (p.flow_s if e.get("ph") == "s" else p.flow_f)[(pid, tid, ts)] = _key(e.get("id"))
        return
    dur = _ns(e.get("dur"), "dur", duration_=True)
    if dur is None:
        raise _BadField("no dur (a complete event's duration, in microseconds)")
    args, name = _args(e), _name(e)
    if cat in ("user_annotation", *_OPS) and _STEP.match(name):
        p.steps.append((ts, ts + dur, pid))
    elif cat in _OPS:
        p.ops.append(_Op(name, ts, ts + dur, args, index))
        p.shapes = p.shapes or bool(args.get("Input Dims"))
        at = len(p.ops) - 1
        p.by_thread.setdefault((pid, tid), []).append(at)
        if _key(args.get("External id")) is not None:
            p.by_external.setdefault(args["External id"], at)
    elif cat in _RUNTIME:
        runtime.append((e, ts))
    elif cat == "kernel":
        p.kernels.append(_Kernel(name, ts, dur, pid, tid, args))
    elif cat in ("gpu_memcpy", "gpu_memset"):
        p.copies.append(dur)


def _nest(p: _Parsed) -> None:
    """Each op's parent: the innermost op around it on its thread."""
    for key, indices in p.by_thread.items():
        indices.sort(key=lambda i: (p.ops[i].start, -p.ops[i].end))
        stack: list[int] = []
        for i in indices:
            op = p.ops[i]
            while stack and p.ops[stack[-1]].end < op.end:
                stack.pop()
            op.parent = stack[-1] if stack else None
            stack.append(i)
        p.by_thread[key] = indices


def _innermost(p: _Parsed, pid: Any, tid: Any, ts: int) -> int | None:
    indices = p.by_thread.get((pid, tid))
    if not indices:
        return None
    starts = [p.ops[i].start for i in indices]  # sorted by _nest
    at = bisect.bisect_right(starts, ts) - 1
    candidate = indices[at] if at >= 0 else None
    while candidate is not None and p.ops[candidate].end < ts:
        candidate = p.ops[candidate].parent
    return candidate


def _launcher(p: _Parsed, kernel: _Kernel) -> tuple[int | None, int | None]:
    """The op a kernel was launched in and the launch's CPU time (None: not found)."""
    args = kernel.args
    corr = _key(args.get("correlation"))
    if corr is None:
        corr = p.flow_f.get((_key(kernel.pid), _key(kernel.tid), kernel.ts))
    call = p.runtime.get(corr) if corr is not None else None
    if call is None:
        op = p.by_external.get(_key(args.get("External id")))
        return op, (p.ops[op].start if op is not None else None)
    pid, tid, at, external = call
    op = p.by_external.get(external) if external is not None else None
    if op is None:
        op = _innermost(p, pid, tid, at)
    return op, at


def read_torch_trace(
    path: Path, device: int | None = None, max_size: int = DEFAULT_MAX_SIZE
) -> Trace:
    """The trace in ``path`` (at most ``max_size`` bytes of JSON, see
    :mod:`roofgen.importers.trace_json`), its kernels on one device."""
    p = _parse(path, _load(path, max_size))
    if not p.kernels:
        raise ImportFailure(
            f"{path}: no GPU kernel in the trace: profile with "
            "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]"
        )
    devices = sorted({str(k.pid) for k in p.kernels})
    if device is not None:
        p.kernels = [k for k in p.kernels if str(k.pid) == str(device)]
        if not p.kernels:
            raise ImportFailure(f"{path}: no kernel on device {device} ({', '.join(devices)})")
    elif len(devices) > 1:
        raise ImportFailure(
            f"{path}: kernels on devices {', '.join(devices)}: a step's busy time is one GPU's;"
            " choose one with --device N"
        )
    steps = sorted(p.steps, key=lambda step: (step[0], step[1]))
    starts = [s[0] for s in steps]
    calls: dict[tuple[int, Any], _Call] = {}  # (step, op index or kernel) -> call
    intervals: dict[int, list[tuple[int, int]]] = defaultdict(list)
    outside = 0
    for n, kernel in enumerate(p.kernels):
        ts, dur = kernel.ts, kernel.dur
        op, launched = _launcher(p, kernel)
        step = 0
        if steps:
            at = bisect.bisect_right(starts, launched if launched is not None else ts) - 1
            if at < 0 or launched is None or launched > steps[at][1]:
                outside += 1
                continue
            step = at
        call = calls.setdefault((step, op if op is not None else ("kernel", n)), _Call())
        call.kernels.append(kernel.name)
        call.ns += dur
        intervals[step].append((ts, ts + dur))
    if not intervals:
        raise ImportFailure(f"{path}: no kernel was launched inside a ProfilerStep range")
    return _trace(path, p, steps, calls, intervals, outside)


def _operator(path: Path, op: _Op) -> Operator | None:
    try:
        return operator_of(op.name, op.args)
    except ShapeError as exc:
        raise ImportFailure(f"{path}: traceEvents[{op.index}] {_shown(op.name)}: {exc}") from None


def _union(spans: list[tuple[int, int]]) -> int:
    total, reach = 0, None
    for start, end in sorted(spans):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def _trace(
    path: Path,
    p: _Parsed,
    steps: list[tuple[int, int, Any]],
    calls: dict[tuple[int, Any], _Call],
    intervals: dict[int, list[tuple[int, int]]],
    outside: int,
) -> Trace:
    span = 0
    for step, spans in intervals.items():
        last = max(e for _, e in spans)
        if steps:
            span += max(steps[step][1], last) - steps[step][0]
        else:
            span += last - min(s for s, _ in spans)
    busy = sum(_union(spans) for spans in intervals.values())
    entries: dict[str, KernelStat] = {}
    per_call: dict[str, set[int]] = defaultdict(set)
    kernel_names: dict[str, dict[str, int]] = defaultdict(dict)
    compiled = 0
    for (_, who), call in calls.items():
        op = p.ops[who] if isinstance(who, int) else None
        name = op.name if op is not None else call.kernels[0]
        operator = _operator(path, op) if op is not None else None
        shape = str(op.args.get("Input Dims", "")) if op is not None else ""
        if _COMPILED.search(name) or any(_COMPILED.search(k) for k in call.kernels):
            compiled += 1
        key = f"{name}\x00{shape}"
        entry = entries.get(key)
        if entry is None:
            entry = entries[key] = KernelStat(key, name, 0, 0, call.ns, call.ns, operator=operator)
        entry.count += 1
        entry.total_ns += call.ns
        entry.min_ns, entry.max_ns = min(entry.min_ns, call.ns), max(entry.max_ns, call.ns)
        per_call[key].add(len(call.kernels))
        for k in call.kernels:
            kernel_names[key][k] = kernel_names[key].get(k, 0) + 1
    if len(entries) > MAX_ENTRIES:
        raise ImportFailure(
            f"{path}: {len(entries):,} different ops (name and shape), more than a case may "
            f"hold ({MAX_ENTRIES:,})"
        )
    for key, entry in entries.items():
        counts = per_call[key]
        entry.kernels_per_call = next(iter(counts)) if len(counts) == 1 else None
        listed = "; ".join(f"{_short(k)} x{n}" for k, n in kernel_names[key].items())
        entry.description = f"GPU kernels: {listed}"[:2000]
        if entry.operator is None and entry.name != next(iter(kernel_names[key])):
            shape = key.split("\x00", 1)[1]
            if shape:
                entry.description += f". Input Dims {shape}"
    kernels = sorted(entries.values(), key=lambda k: (-k.total_ns, k.key))
    what = "ProfilerStep ranges" if steps else "the whole trace (no ProfilerStep range)"
    trace = Trace(
        tool="torch-trace",
        source="PyTorch profiler",
        timing="other",
        files=[path.name],
        kernels=kernels,
        steps=Steps(what, len(intervals), span, busy),
        method=(
            f"GPU kernel times from the torch.profiler trace {path.name}, each kernel "
            "attributed to the op that launched it (correlation id, flow events, External "
            "id); FLOPs from roofgen's operator models where recorded shapes name a GEMM, "
            "attention or norm."
        ),
    )
    _notes(trace, p, steps, intervals, outside, compiled)
    return trace


def _notes(
    trace: Trace,
    p: _Parsed,
    steps: list[tuple[int, int, Any]],
    intervals: dict[int, list[tuple[int, int]]],
    outside: int,
    compiled: int,
) -> None:
    if steps and len(intervals) < len(steps):
        trace.notes.append(
            f"{len(steps) - len(intervals)} of the {len(steps)} ProfilerStep ranges launched "
            "no kernel: not counted as steps"
        )
    if outside:
        trace.notes.append(f"{outside} kernel(s) launched outside every ProfilerStep: left out")
    if p.copies:
        trace.notes.append(
            f"{len(p.copies)} memory copies and memsets ({duration(sum(p.copies))}) are not "
            "kernels: not counted in the GPU-busy time"
        )
    if not p.shapes:
        trace.notes.append(
            "the trace records no shapes (profile with record_shapes=True): no FLOPs"
        )
    if compiled:
        trace.notes.append(
            f"{compiled} call(s) of compiled code (Triton kernels from torch.compile) carry "
            "no shapes an operator model reads: their FLOPs are unknown"
        )
    modelled = [k for k in trace.kernels if isinstance(k.operator, Operator)]
    unknown = len(trace.kernels) - len(modelled)
    if unknown:
        trace.notes.append(
            f"{unknown} of {len(trace.kernels)} entries are not a GEMM, attention or norm with "
            "recorded shapes: their FLOPs are unknown"
        )
    if any(k.operator.kind == "attention" for k in modelled if k.operator):
        trace.warnings.append(
            "attention shapes say nothing of a causal mask: the model counts every score; "
            "set causal on the kernel if the mask was causal"
        )


def _short(name: str) -> str:
    name = re.sub(r"\s+", " ", name)
    return name if len(name) <= 90 else name[:87] + "..."
