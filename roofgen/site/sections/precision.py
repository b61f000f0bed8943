"""The precision (tensor-core) roofline and what a lower precision would give."""

from __future__ import annotations

from collections.abc import Mapping

from roofgen.analysis.analyse import CaseResult
from roofgen.analysis.precision import PrecisionResult
from roofgen.charts.roofline_inputs import (
    Ceiling,
    PrecisionInput,
    PrecisionPoint,
    Projection,
)
from roofgen.model import Machine
from roofgen.site.sections.base import (
    Item,
    Section,
    Table,
    launch_items,
    precision_name,
    slot,
)
from roofgen.units import fmt_frequency, fmt_ratio, fmt_time


def machine_ceilings(
    machine: Machine,
    units: set[str] | None = None,
    only: set[str] | None = None,
    clock_hz: float | None = None,
) -> tuple[Ceiling, ...]:
    """Every peak of the machine (or of ``units``, at the precisions ``only`` names), at
    SM clock ``clock_hz`` where the roof follows it (None: at the clocks they are stated
    at), scaled as the bounds scale them; equal peaks of one unit and sparsity share a
    ceiling."""
    grouped: dict[tuple[str, float, str, bool], list[str]] = {}
    for unit in machine.compute:
        if units is not None and unit.id not in units:
            continue
        for precision, roof in unit.peaks.items():
            if only is not None and precision not in only:
                continue
            value = roof.value() * roof.clock_factor(clock_hz, roof.basis)
            key = (unit.id, value, roof.basis, precision.endswith("-sparse"))
            grouped.setdefault(key, []).append(precision)
    out = []
    for (unit_id, value, basis, sparse), precisions in grouped.items():
        found = machine.unit(unit_id)
        assert found is not None
        names = "/".join(precision_name(p.removesuffix("-sparse")) for p in precisions)
        short = _short(found.name)
        if found.kind == "tensor":
            label = names
        elif short.split(" ", 1)[0] == names or precisions[0] == "transcendental":
            label = short  # "FP32 pipe", not "FP32, FP32 pipe": the unit's name once
        else:
            label = f"{names}, {short}"
        out.append(
            Ceiling(
                f"{unit_id}.{'+'.join(precisions)}",
                label,
                unit_id,
                precisions[0],
                value,
                basis,
                sparse,
            )
        )
    return tuple(out)


def _others(machine: Machine, shown: set[str]) -> set[str]:
    """The machine's precisions a case's chart does not show."""
    return {p for unit in machine.compute for p in unit.peaks} - shown


def _short(name: str) -> str:
    """A unit's name without its parenthesis: ``FP16/BF16 pipe (non-tensor)`` → ``FP16/BF16
    pipe``."""
    return name.split(" (", 1)[0]


def _clock(items: list[Item]) -> tuple[float | None, str]:
    """The SM clock the case's roofs are drawn at, and how the chart says so: the
    launches' clock where the analysis scaled their peaks to one clock, else the clocks
    the roofs are stated at."""
    clocks = {w.clock_hz for item in items for w in item.result.get(PrecisionResult).work}
    known = {c for c in clocks if c is not None}
    if len(known) == 1 and None not in clocks:
        clock = known.pop()
        return clock, f"roofs at {fmt_frequency(clock)}, the launches' SM clock"
    if len(known) > 1:
        return None, "roofs at their stated clocks (the launches ran at different clocks)"
    if known:
        return None, "roofs at their stated clocks (some launches' clock is not recorded)"
    return None, "roofs at their stated clocks (the launches' clock is not recorded)"


def used_precisions(items: list[Item]) -> set[str]:
    """The precisions a case's chart shows: those its launches have work at, those the
    table moves them to, and each one's 2:4 sparse peak only when a launch works sparse;
    integer and special-function peaks only where a launch has such work."""
    used: set[str] = set()
    for item in items:
        result = item.result.get(PrecisionResult)
        used |= {w.precision for w in result.work}
        used |= {o.from_precision for o in result.options}
        used |= {o.to_precision for o in result.options if o.available}
    if any(p.endswith("-sparse") for p in used):
        used |= {f"{p}-sparse" for p in used}
    return used


def _precision_points(items: list[Item], machine: Machine) -> list[PrecisionPoint]:
    points = []
    for item in items:
        for w in item.result.get(PrecisionResult).work:
            unit = machine.unit(w.unit)
            if w.intensity_per_byte is None or unit is None:
                continue  # no device-memory bytes: no place on the chart
            points.append(
                PrecisionPoint(
                    item.key,
                    w.unit,
                    unit.name,
                    w.precision,
                    w.intensity_per_byte,
                    w.rate_per_s,
                    w.peak_per_s,
                    w.share_of_peak,
                )
            )
    return points


def _projections(items: list[Item]) -> list[Projection]:
    """Per launch, its best available lower-precision option (the highest speedup over
    1), drawn from the launch's point of that unit and precision."""
    out = []
    for item in items:
        result = item.result.get(PrecisionResult)
        options = [
            o
            for o in result.options
            if o.available and o.moves != "kv-cache" and o.speedup and o.speedup > 1
            and o.byte_scale
        ]  # fmt: skip
        if not options:
            continue
        best = max(options, key=lambda o: (o.speedup or 0.0, o.to_precision))
        work = next(
            (
                w
                for w in result.work
                if w.unit == best.unit and w.precision == best.from_precision
                and w.intensity_per_byte
            ),
            None,
        )  # fmt: skip
        if work is None or work.intensity_per_byte is None:
            continue
        assert best.byte_scale is not None and best.speedup is not None
        out.append(
            Projection(
                item.key,
                best.from_precision,
                best.to_precision,
                work.intensity_per_byte,
                work.rate_per_s,
                work.intensity_per_byte / best.byte_scale,
                work.rate_per_s * best.speedup,
                best.speedup,
            )
        )
    return out


_KV_CACHE_INTRO = (
    " For decode attention it also stores the KV cache at FP8 and FP4 where narrower "
    "(dequantised in registers): K and V shrink, the arithmetic keeps its precision."
)


def precision_section(
    case: CaseResult, machine: Machine, names: Mapping[str, str], n: int
) -> Section | None:
    items = list(launch_items(case, machine.id))
    points = _precision_points(items, machine)
    rows = []
    for item in items:
        for o in item.result.get(PrecisionResult).options:
            unit = machine.unit(o.unit) if o.unit is not None else None
            where = "KV cache" if o.moves == "kv-cache" else unit.name if unit else o.unit
            what = f"{where} {precision_name(o.from_precision)}"
            if not o.available:
                rows.append(
                    (
                        item.key.variant,
                        item.key.kernel,
                        what,
                        precision_name(o.to_precision),
                        "not available on this machine",
                        "",
                        "",
                        "",
                        "",
                    )
                )
                continue
            rows.append(
                (
                    item.key.variant,
                    item.key.kernel,
                    what,
                    precision_name(o.to_precision),
                    "unchanged" if o.moves == "kv-cache" else fmt_time(o.compute_s),
                    f"{o.byte_scale:.2f}x",
                    fmt_time(o.bound_s),
                    o.binding or "n/a",
                    fmt_ratio(o.speedup),
                )
            )
    if not points and not rows:
        return None
    device = machine.device_level
    title = f"Precision roofline of {case.case.title} on {machine.name}"
    used = used_precisions(items)
    special = "transcendental"
    clock, said = _clock(items)
    inp = PrecisionInput(
        title=title,
        subtitle=f"Precisions used and lower ones; tensor cores unless a unit is named; {said}",
        ceilings=machine_ceilings(machine, only=used - {special}, clock_hz=clock),
        memory_label=device.name if device else "",
        bandwidth=device.bandwidth.value() if device else None,
        bandwidth_basis=device.bandwidth.basis if device else "datasheet",
        points=tuple(p for p in points if p.precision != special),
        projections=tuple(_projections(items)),
        other_ceilings=machine_ceilings(
            machine, only=_others(machine, used | {special}), clock_hz=clock
        ),
    )
    charts = [slot(f"case:{case.case.id}:{machine.id}:precision", f"precision-{n}", title, inp)]
    if any(p.precision == special for p in points):
        sfu_title = f"Special-function work of {case.case.title} on {machine.name}"
        sfu = PrecisionInput(
            title=sfu_title,
            subtitle=f"exp, log, rsqrt... on the special-function units, drawn apart; {said}",
            ceilings=machine_ceilings(machine, only={special}, clock_hz=clock),
            memory_label=inp.memory_label,
            bandwidth=inp.bandwidth,
            bandwidth_basis=inp.bandwidth_basis,
            points=tuple(p for p in points if p.precision == special),
        )
        charts.append(
            slot(
                f"case:{case.case.id}:{machine.id}:precision-sfu",
                f"precision-sfu-{n}",
                sfu_title,
                sfu,
            )
        )
    tables = []
    if rows:
        tables.append(
            Table(
                "What a lower precision would give",
                (
                    "Variant",
                    "Kernel",
                    "Work",
                    "At",
                    "Unit time",
                    "Bytes",
                    "Bound",
                    "Binding",
                    "Speedup",
                ),
                tuple(rows),
                (False, False, False, False, True, True, True, False, True),
            )
        )
    return Section(
        id="precision",
        title="Precisions and units",
        intro=(
            "The ceilings of the precisions the launches use and of the lower ones the "
            "table moves them to (the machine's other ceilings behind a check box in the "
            "interactive chart; measured solid, datasheet dashed), each launch against the "
            "units it uses, and, hollow at the end of an arrow, its best lower-precision "
            "option where one would help; special-function work has a chart of its own. "
            "Precisions on one unit share "
            "its time (BF16 and FP8 matrix work both run on the tensor cores); different "
            "units run concurrently (a GEMM's FP32 epilogue, softmax on the FP32 pipe and "
            "the special-function unit), so the bound is the max over units, the serial sum "
            "beside it. The table moves each launch's tensor-core work to every lower "
            "precision the machine has: the work runs at that precision's peak and the "
            "operand tensors shrink (accumulators and FP32 statistics do not; each tensor's "
            "share of the bytes is its elements times its bits)."
            + (_KV_CACHE_INTRO if any(r[2].startswith("KV cache") for r in rows) else "")
        ),
        charts=tuple(charts),
        tables=tuple(tables),
        notes=(),
    )
