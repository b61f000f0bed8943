"""The sparse roofline: 2:4 structured sparsity."""

from __future__ import annotations

from collections.abc import Mapping

from roofgen.analysis.analyse import CaseResult
from roofgen.analysis.sparse import SparseResult
from roofgen.charts.roofline_inputs import (
    SparseInput,
    SparsePointInput,
)
from roofgen.model import Machine
from roofgen.site.sections.base import (
    Section,
    Table,
    launch_items,
    precision_name,
    slot,
)
from roofgen.site.sections.precision import machine_ceilings
from roofgen.units import fmt_percent, fmt_si


def sparse_section(
    case: CaseResult, machine: Machine, names: Mapping[str, str], n: int
) -> Section | None:
    items = [i for i in launch_items(case, machine.id) if i.launch.measurement.sparsity is not None]
    if not items:
        return None
    device = machine.device_level
    points = []
    rows = []
    units: dict[str, set[str]] = {}
    for item in items:
        for sp in item.result.get(SparseResult).points:
            unit = machine.unit(sp.unit)
            unit_name = unit.name if unit else sp.unit
            units.setdefault(sp.unit, set()).update({sp.precision, f"{sp.precision}-sparse"})
            if sp.device_bytes:
                for kind, flop, rate in (
                    ("executed", sp.executed_flop, sp.executed_flop_per_s),
                    ("dense-equivalent", sp.dense_equivalent_flop, sp.dense_equivalent_flop_per_s),
                ):
                    points.append(
                        SparsePointInput(
                            item.key,
                            unit_name,
                            sp.precision,
                            kind,
                            flop / sp.device_bytes,
                            rate,
                            sp.metadata_share,
                        )
                    )
            of_dense = sp.executed_flop_per_s / sp.dense_peak if sp.dense_peak else None
            rows.append(
                (
                    item.key.variant,
                    item.key.kernel,
                    f"{unit_name} {precision_name(sp.precision)} 2:4",
                    fmt_si(sp.executed_flop, "FLOP"),
                    fmt_si(sp.dense_equivalent_flop, "FLOP"),
                    f"{fmt_si(sp.executed_flop_per_s, 'FLOP/s')} "
                    f"({fmt_percent(of_dense)} of dense)",
                    f"{fmt_si(sp.dense_equivalent_flop_per_s, 'FLOP/s')} ("
                    f"{fmt_percent(sp.dense_equivalent_flop_per_s / sp.sparse_peak)} of sparse)",
                    fmt_si(sp.metadata_b, "B"),
                    fmt_percent(sp.metadata_share),
                )
            )
    ceilings = tuple(
        c
        for c in machine_ceilings(machine, set(units))
        if any(p in units.get(c.unit, set()) for p in c.id.split(".", 1)[1].split("+"))
    )
    title = f"Sparse roofline of {case.case.title} on {machine.name}"
    inp = SparseInput(
        title,
        "Executed FLOPs against the dense peak; dense-equivalent FLOPs against the 2:4 sparse peak",
        ceilings,
        device.name if device else "",
        device.bandwidth.value() if device else None,
        tuple(points),
    )
    header = (
        "Variant",
        "Kernel",
        "Work",
        "Executed",
        "Dense-equivalent",
        "Executed rate",
        "Dense-equivalent rate",
        "Metadata",
        "Metadata share",
    )
    return Section(
        id="sparse",
        title="Sparsity",
        intro=(
            "A 2:4 structured-sparse launch keeps two values of every four. The datasheet's "
            "sparse peak counts the skipped zeros, so executed FLOPs meet the dense roof and "
            "dense-equivalent FLOPs the sparse roof; with a sparse peak twice the dense one "
            "both points sit at the same fraction of their roof. The index and metadata bytes "
            "are part of the device-memory bytes."
        ),
        charts=(slot(f"case:{case.case.id}:{machine.id}:sparse", f"sparse-{n}", title, inp),),
        tables=(Table("", header, tuple(rows), (False, False, False, *(True,) * 6)),),
        notes=(),
    )
