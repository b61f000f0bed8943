"""Pieces shared by the sections: section and table types, a case's launches on a machine.

The sections only read results: every number comes from the analysis (a launch's and a
variant's roofline kinds, read with ``result.get(Kind)``); they format and lay it out."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from roofgen.analysis.analyse import CaseResult, LaunchResult, VariantResult
from roofgen.charts.kinds import ChartInput
from roofgen.charts.roofline_inputs import LaunchKey
from roofgen.model import Kernel, Launch
from roofgen.site.pagetypes import ChartSlot


@dataclass(frozen=True)
class Table:
    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...]  # right-align the column


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    intro: str
    charts: tuple[ChartSlot, ...]
    tables: tuple[Table, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Item:
    variant: VariantResult
    result: LaunchResult
    launch: Launch  # as analysed: the operator model's values filled in
    kernel: Kernel | None
    key: LaunchKey

    @property
    def label(self) -> str:
        calls = f" x{self.result.calls}" if self.result.calls != 1 else ""
        return f"{self.key.label}{calls}"


def launch_items(case: CaseResult, machine_id: str) -> Iterator[Item]:
    for v in case.variants:
        if v.machine != machine_id:
            continue
        repeated = {r.kernel for r in v.launches if r.occurrence > 1}
        for r in v.launches:
            number = str(r.occurrence) if r.kernel in repeated else ""
            key = LaunchKey(case.case.id, v.variant, r.kernel, number)
            yield Item(v, r, r.launch, case.case.kernel(r.kernel), key)


def slot(key: str, spec_id: str, caption: str, inp: ChartInput) -> ChartSlot:

    return ChartSlot(key=key, spec_id=spec_id, caption=caption, input=inp)


def precision_name(precision: str) -> str:
    base, sparse, _ = precision.partition("-sparse")
    return base.upper() + (" sparse" if sparse else "")
