"""From Nsight Compute metrics to a roofline measurement: FLOPs, bytes, time, clocks.

Every figure keeps the metric(s) it came from, so the YAML written can say so.

FLOPs come from SASS instruction counts with a versioned weight table
(:data:`FLOP_WEIGHTS`), and tensor FLOPs from ``sm__ops_path_tensor_*`` counts
(compute capability 8.0 and newer). A counter collected and read zero gives an
explicit 0 (known zero), never a gap. Where only tensor-pipe instruction counts
exist, tensor FLOPs are a known zero when the MMA counters of the compute
capability (``smsp__inst_executed_pipe_tensor_op_{hmma,imma,dmma}.sum``) all read
zero, or when the aggregate pipe count holds no MMA instruction; otherwise they
stay unknown: one tensor instruction does a different amount of work for each
shape and precision. Bytes come from ``dram__``,
``lts__`` and ``l1tex__`` byte or sector (32 B) counts and go to the machine's
memory levels by role: dram to the device level, lts (the L2) to the last-level
cache, l1tex to the L1. Time is ``gpu__time_duration`` or elapsed SM cycles over
the SM clock rate; the clock is recorded (Nsight Compute locks base clocks by
default).
"""

from __future__ import annotations

import dataclasses
import re
from decimal import Decimal

from roofgen.importers.ncu_csv import Launch, Metric
from roofgen.importers.ncu_derived import Derived, Figure, MachineView
from roofgen.importers.ncu_table import SECTION_LABELS
from roofgen.importers.ncu_traffic import derive_traffic
from roofgen.units import work_unit

__all__ = ["Derived", "Figure", "MachineView", "collect_command", "derive", "time_and_clock"]

# FLOPs per thread-level SASS instruction, by precision class. Version 1:
# FP64: dadd + dmul + 2 x dfma; FP32: fadd + fmul + 2 x ffma, and Blackwell's
# paired fadd2 / fmul2 / ffma2 at 2, 2, 4; FP16: hadd / hmul / hfma count packed
# pairs (two halves per instruction), so 2, 2 and 4.
FLOP_WEIGHTS_VERSION = 1
FLOP_WEIGHTS: dict[str, tuple[tuple[str, int], ...]] = {
    "fp64": (("dadd", 1), ("dmul", 1), ("dfma", 2)),
    "fp32": (("fadd", 1), ("fmul", 1), ("ffma", 2), ("fadd2", 2), ("fmul2", 2), ("ffma2", 4)),
    "fp16": (("hadd", 2), ("hmul", 2), ("hfma", 4)),
}
PAIRED_OPS = ("fadd2", "fmul2", "ffma2")  # compute capability 10.0 and newer

_TENSOR = re.compile(r"^(?:sm|smsp)__ops_path_tensor_src_([a-z0-9]+?)(?:_dst_([a-z0-9]+))?\.sum$")
_TENSOR_PRECISIONS = {"fp64", "tf32", "bf16", "fp16", "fp8", "fp6", "fp4", "int8", "int4"}
_TENSOR_SUGGESTED = (
    "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
    "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
)

TIME_METRICS = ("gpu__time_duration.sum",)
# A launch's duration, best first: gpu__time_duration is the kernel's span, gpu__time_active
# the time the GPU was busy with it (the same for one kernel, and what some summaries give).
_TIMES = (
    "gpu__time_duration.sum",
    "gpu__time_duration.avg",
    "gpu__time_active.sum",
    "gpu__time_active.avg",
)


def sass_metric(op: str, prefix: str = "smsp") -> str:
    return f"{prefix}__sass_thread_inst_executed_op_{op}_pred_on.sum"


def _shown(name: str, metric: Metric) -> str:
    return f"{name} = {metric.text}"


def _first(metrics: dict[str, Metric], *names: str, kind: str | None = None) -> str | None:
    for name in names:
        metric = metrics.get(name)
        if metric is not None and (kind is None or metric.unit.kind == kind):
            return name
    return None


def cc_major(launch: Launch) -> int | None:
    match = re.match(r"\s*(\d+)", launch.cc or "")
    return int(match.group(1)) if match else None


# The unit kinds a metric may have, by what it counts (ncu_csv.parse_unit's kinds; "" is
# a bare count). A metric in another unit is refused with a warning, never converted:
# a byte count in seconds or percent, or in "mbyte" (milli-bytes), is not a byte count.
_UNIT_KINDS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("__bytes", "_bytes."), ("byte",)),
    (("__sectors", "_sectors_", "_sectors."), ("sector", "")),
    (("inst_executed",), ("inst", "")),
    (("__time_duration", "__time_active"), ("second",)),
    (("cycles_elapsed.avg.per_second",), ("cycle/second", "hz", "/second")),
    (("pct_of_peak",), ("%",)),
)


def unit_kinds(name: str) -> tuple[str, ...] | None:
    """The unit kinds metric ``name`` may be given in (None: any)."""
    for patterns, kinds in _UNIT_KINDS:
        if any(p in name for p in patterns):
            return kinds
    return None


def _with_section_values(metrics: dict[str, Metric]) -> dict[str, Metric]:
    """The metrics, plus the raw metric behind each section value Nsight Compute's
    default sections print by label ("Duration" is gpu__time_duration.sum), where the
    raw metric itself was not collected."""
    out = dict(metrics)
    for label, name in SECTION_LABELS.items():
        metric = metrics.get(label)
        if metric is not None and name not in metrics:
            text = f'{metric.text}, the section value "{label}"'
            out[name] = dataclasses.replace(metric, text=text)
    return out


def _checked_units(launch: Launch, out: Derived) -> Launch:
    """``launch`` without the metrics whose unit cannot be what they count (each named
    in a warning: the figure stays unknown)."""
    kept: dict[str, Metric] = {}
    for name, metric in _with_section_values(launch.metrics).items():
        kinds = unit_kinds(name)
        if kinds is None or metric.unit.kind in kinds:
            kept[name] = metric
        else:
            wanted = " or ".join(k or "a count" for k in kinds)
            out.warnings.append(
                f"{launch.name}: {name} = {metric.text} is not in {wanted}: left out "
                "(unknown), not converted"
            )
    return dataclasses.replace(launch, metrics=kept)


def derive(launch: Launch, machine: MachineView) -> Derived:
    out = Derived()
    launch = _checked_units(launch, out)
    metrics = launch.metrics
    _time(metrics, out)
    _clocks(metrics, out)
    _sass_flops(launch, machine, out)
    _tensor_flops(launch, machine, out)
    derive_traffic(metrics, machine, out)
    name = _first(metrics, "smsp__inst_executed.sum", "sm__inst_executed.sum")
    if name is not None:
        out.instructions = Figure(metrics[name].value, "inst", _shown(name, metrics[name]))
    name = _first(metrics, "sm__warps_active.avg.pct_of_peak_sustained_active", kind="%")
    if name is not None:
        value = min(max(metrics[name].value / 100, Decimal(0)), Decimal(1))
        out.occupancy = Figure(value, "", _shown(name, metrics[name]))
    return out


def time_and_clock(launch: Launch) -> Derived:
    """Only the time and the clocks of one launch (a timing file's)."""
    out = Derived()
    launch = _checked_units(launch, out)
    _time(launch.metrics, out)
    _clocks(launch.metrics, out)
    return out


def _time(metrics: dict[str, Metric], out: Derived) -> None:
    name = _first(metrics, *_TIMES, kind="second")
    if name is not None:
        metric = metrics[name]
        out.time = Figure(metric.value, "s", _shown(name, metric))
        if metric.minimum is not None and metric.maximum is not None:
            # A per-kernel summary: "Average" over its invocations is a mean, not a median.
            out.time_statistic = "mean"
            out.time = Figure(metric.value, "s", f"{_shown(name, metric)}: the mean")
            out.time_min = Figure(metric.minimum, "s", f"{name}, minimum over the invocations")
            out.time_max = Figure(metric.maximum, "s", f"{name}, maximum over the invocations")
        return
    for prefix in ("sm", "smsp", "gpc"):
        cycles = _first(metrics, f"{prefix}__cycles_elapsed.avg", f"{prefix}__cycles_elapsed.max")
        rate = _rate_metric(metrics, prefix)
        if cycles is not None and rate is not None and metrics[rate].value > 0:
            seconds = metrics[cycles].value / metrics[rate].value
            origin = f"{cycles} / {rate} = {metrics[cycles].text} / {metrics[rate].text}"
            out.time = Figure(seconds, "s", origin)
            return
    out.missing["time"] = list(TIME_METRICS)


def _rate_metric(metrics: dict[str, Metric], prefix: str) -> str | None:
    name = f"{prefix}__cycles_elapsed.avg.per_second"
    metric = metrics.get(name)
    if metric is not None and metric.unit.kind in ("cycle/second", "hz", "/second"):
        return name
    return None


# A clock that moved by more than this across a summary's invocations was not locked.
CLOCK_SPREAD = Decimal("0.05")


def _clocks(metrics: dict[str, Metric], out: Derived) -> None:
    for prefix in ("sm", "smsp", "gpc"):
        name = _rate_metric(metrics, prefix)
        if name is not None:
            metric = metrics[name]
            out.clocks["sm"] = Figure(metric.value, "Hz", _shown(name, metric))
            low, high = metric.minimum, metric.maximum
            if low is not None and high is not None and high > low * (1 + CLOCK_SPREAD):
                out.clock_moved = True
                out.warnings.append(
                    f"the SM clock moved from {low / 10**6:,.2f} MHz to {high / 10**6:,.2f} MHz "
                    f"over the invocations ({name}): the clocks were not locked, and the "
                    "clock written is their mean, not each invocation's"
                )
            break
    name = _rate_metric(metrics, "dram")
    if name is not None:
        out.clocks["memory"] = Figure(metrics[name].value, "Hz", _shown(name, metrics[name]))


def _sass_count(metrics: dict[str, Metric], op: str) -> tuple[str, Metric] | None:
    for prefix in ("smsp", "sm"):
        name = sass_metric(op, prefix)
        if name in metrics:
            return name, metrics[name]
    return None


def _sass_flops(launch: Launch, machine: MachineView, out: Derived) -> None:
    metrics = launch.metrics
    collected = False
    paired = (cc_major(launch) or 0) >= 10
    for precision, weights in FLOP_WEIGHTS.items():
        total = Decimal(0)
        terms = []
        expected = [op for op, _ in weights if paired or op not in PAIRED_OPS]
        absent = [sass_metric(op) for op in expected if _sass_count(metrics, op) is None]
        for op, weight in weights:
            found = _sass_count(metrics, op)
            if found is None:
                continue
            collected = True
            name, metric = found
            total += weight * metric.value
            if metric.value:
                terms.append(f"{weight} x {op} ({_shown(name, metric)})")
        if 0 < len(absent) < len(expected):
            out.warnings.append(
                f"{precision.upper()} FLOPs count only the SASS ops collected: "
                f"{', '.join(absent)} missing"
            )
        if total:
            _place(out, machine, precision, precision, Figure(total, "FLOP", " + ".join(terms)))
        elif not absent:  # every counter collected and read zero: known zero, not unknown
            origin = "0: " + ", ".join(f"{sass_metric(op)} = 0" for op in expected)
            _place(out, machine, precision, precision, Figure(Decimal(0), "FLOP", origin))
    if not collected and not any(_TENSOR.match(n) for n in metrics):
        out.missing["FLOP counts"] = [
            sass_metric(op) for w in FLOP_WEIGHTS.values() for op, _ in w if op not in PAIRED_OPS
        ] + (list(_TENSOR_SUGGESTED) if (cc_major(launch) or 0) >= 8 else [])


def _place(out: Derived, machine: MachineView, kind: str, precision: str, figure: Figure) -> None:
    unit = machine.unit(kind)
    if unit is None or precision not in unit["peaks"]:
        if not figure.value:
            return  # no work for a unit or precision the machine lacks: nothing to say
        where = "unit" if unit is None else f"{precision!r} peak on unit {unit['id']!r}"
        out.warnings.append(
            f"machine {machine.id!r} has no {kind} {where}: {figure.value} {precision} "
            f"{figure.unit} ({figure.origin}) left out"
        )
        return
    flops = out.flops.setdefault(unit["id"], {})
    if precision in flops:  # a second source for one precision: add them
        first = flops[precision]
        figure = Figure(
            first.value + figure.value, figure.unit, f"{first.origin} + {figure.origin}"
        )
    flops[precision] = figure


def _tensor_flops(launch: Launch, machine: MachineView, out: Derived) -> None:
    metrics = launch.metrics
    by_src: dict[str, dict[str | None, str]] = {}
    for name in metrics:
        match = _TENSOR.match(name)
        if match:
            by_src.setdefault(match.group(1), {})[match.group(2)] = name
    for src, names in sorted(by_src.items()):
        chosen = [names[None]] if None in names else sorted(n for n in names.values())
        total = sum((metrics[n].value for n in chosen), Decimal(0))
        if src not in _TENSOR_PRECISIONS:
            if total:
                out.warnings.append(f"tensor ops of source type {src!r} have no roofgen precision")
            continue
        unit = work_unit(src)
        origin = " + ".join(_shown(n, metrics[n]) for n in chosen)
        _place(out, machine, "tensor", src, Figure(total, unit, origin))  # 0: collected, zero
    if by_src:
        return
    _tensor_from_pipe(launch, machine, out)


# Matrix (MMA) instruction counters of the tensor pipe by compute capability: HMMA from
# Volta, IMMA from Turing, DMMA on the parts with FP64 tensor cores (GA100, GH100). Past
# Hopper the counters differ (tcgen05): the MMA work is then not decided from them.
_MMA_OPS: dict[str, tuple[str, ...]] = {
    "7.0": ("hmma",),
    "7.2": ("hmma", "imma"),
    "7.5": ("hmma", "imma"),
    "8.0": ("hmma", "imma", "dmma"),
    "8.6": ("hmma", "imma"),
    "8.7": ("hmma", "imma"),
    "8.9": ("hmma", "imma"),
    "9.0": ("hmma", "imma", "dmma"),
}
_PIPE = ("smsp__inst_executed_pipe_tensor.sum", "sm__inst_executed_pipe_tensor.sum")
# Compute capabilities whose tensor-pipe count also holds the FP16 SASS instructions (the
# A100 export in tests/data: pipe_tensor = HFMA thread instructions / 32 exactly).
_FP16_ON_TENSOR_PIPE = ("8.0",)


def mma_metric(op: str, prefix: str = "smsp") -> str:
    return f"{prefix}__inst_executed_pipe_tensor_op_{op}.sum"


def _cc(launch: Launch) -> str:
    match = re.match(r"\s*(\d+)\.(\d+)", launch.cc or "")
    return f"{match.group(1)}.{match.group(2)}" if match else ""


def _tensor_from_pipe(launch: Launch, machine: MachineView, out: Derived) -> None:
    """Without per-precision op counts, tensor FLOPs are unknown unless the MMA
    instruction counts show none: then they are a known zero. The MMA counters of the
    compute capability decide; the aggregate tensor-pipe count alone decides only when it
    is zero, or when it is no larger than the FP16 SASS instructions that also issue to
    that pipe (so no MMA instruction is left)."""
    metrics = launch.metrics
    if _cc(launch) == "7.0" and _volta_tensor(launch, machine, out):
        return
    ops = _MMA_OPS.get(_cc(launch))
    if ops is not None:
        found = [next((n for n in (mma_metric(o), mma_metric(o, "sm")) if n in metrics), None)
                 for o in ops]  # fmt: skip
        if all(found):
            names = [n for n in found if n is not None]
            if not any(metrics[n].value for n in names):
                _tensor_zero(machine, out, ", ".join(_shown(n, metrics[n]) for n in names))
                return
            name = next(n for n in names if metrics[n].value)
            _tensor_unknown(launch, out, _shown(name, metrics[name]))
            return
    pipe = _first(metrics, *_PIPE)
    if pipe is None:
        return
    count = metrics[pipe].value
    if not count:
        _tensor_zero(
            machine, out, f"no instruction on the tensor pipe: {_shown(pipe, metrics[pipe])}"
        )
        return
    fp16 = [_sass_count(metrics, op) for op in ("hadd", "hmul", "hfma")]
    if _cc(launch) in _FP16_ON_TENSOR_PIPE and all(fp16):
        # Each warp instruction runs at most 32 threads, so thread counts / 32 is at most
        # the FP16 warp instructions; a pipe count no larger leaves no MMA instruction.
        warp = sum((f[1].value for f in fp16 if f is not None), Decimal(0)) / 32
        if count <= warp:
            _tensor_zero(
                machine,
                out,
                f"{_shown(pipe, metrics[pipe])} <= FP16 SASS thread instructions / 32 = "
                f"{warp:,.2f}: the pipe ran FP16 instructions, no MMA",
            )
            return
    _tensor_unknown(launch, out, _shown(pipe, metrics[pipe]))


# FLOPs of one V100 tensor-pipe warp instruction (HMMA): NERSC's roofline scripts and
# Yang, Kurth and Williams (2020) count 512 per sm__inst_executed_pipe_tensor instruction.
VOLTA_TENSOR_FLOPS = 512


def _volta_tensor(launch: Launch, machine: MachineView, out: Derived) -> bool:
    """V100 (CC 7.0) has no per-precision tensor op counts, and every tensor-pipe
    instruction is an FP16 HMMA: FLOPs = 512 x instructions."""
    metrics = launch.metrics
    name = _first(metrics, mma_metric("hmma"), mma_metric("hmma", "sm"), *_PIPE)
    if name is None:
        return False
    count = metrics[name].value
    origin = f"{VOLTA_TENSOR_FLOPS} x {_shown(name, metrics[name])} (V100: 512 FLOPs per HMMA)"
    _place(out, machine, "tensor", "fp16", Figure(count * VOLTA_TENSOR_FLOPS, "FLOP", origin))
    return True


def _tensor_zero(machine: MachineView, out: Derived, origin: str) -> None:
    unit = machine.unit("tensor")
    if unit is None:
        return
    peaks = [p for p in unit["peaks"] if not p.endswith("-sparse")] or list(unit["peaks"])
    precision = "fp16" if "fp16" in peaks else peaks[0]
    _place(out, machine, "tensor", precision, Figure(Decimal(0), "FLOP", f"0: {origin}"))


def _tensor_unknown(launch: Launch, out: Derived, shown: str) -> None:
    if (cc_major(launch) or 0) >= 8:
        advice = (
            "collect the per-precision tensor op counts, e.g. "
            + ", ".join(_TENSOR_SUGGESTED)
            + " (`ncu --query-metrics` lists the sm__ops_path_tensor_src_* metrics of "
            "each precision)"
        )
    else:
        advice = (
            "Nsight Compute has no per-precision tensor op counts before compute "
            "capability 8.0: write the operator's FLOPs as model_flops instead"
        )
    out.warnings.append(
        f"tensor FLOPs unknown: the profile has only a tensor-pipe instruction count "
        f"({shown}), and a tensor instruction does a different amount of work for each "
        f"shape and precision; {advice}"
    )


def collect_command(missing: dict[str, list[str]]) -> str:
    """The ``ncu`` command line that collects the missing metrics."""
    names = list(dict.fromkeys(n for names in missing.values() for n in names))
    return f"ncu --csv --metrics {','.join(names)} ./your_program > profile.csv"
