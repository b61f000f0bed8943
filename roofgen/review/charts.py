"""``roofgen diff``'s static charts: a hierarchical roofline per case with changed
launches, base -> head, drawn by the site's chart code (:mod:`roofgen.charts`) from points
made by the site's rule (:func:`roofgen.report.chartinputs.launch_points`) under the
roofs the site draws (``roofs``: :func:`roofgen.site.charts.machine_roofs`, handed in by
:func:`roofgen.api.diff`, the site being above this layer)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from roofgen.analysis.analyse import Analysis, LaunchResult
from roofgen.charts.inputs import ChartPoint, RoofLine
from roofgen.model import Machine, Specs
from roofgen.report.chartinputs import launch_points
from roofgen.review.diff import Diff

__all__ = ["ChartsUnavailable", "Roofs", "changed_charts"]

Roofs = Callable[[Machine], tuple[RoofLine, ...]]


class ChartsUnavailable(Exception):
    """Rendering SVGs needs roofgen[site] (altair, vl-convert-python)."""


def _launches(analysis: Analysis) -> Iterator[tuple[str, str, LaunchResult, int]]:
    """(case, variant, launch result, occurrence of its kernel) for every launch."""
    for case in analysis.cases:
        for v in case.variants:
            for r in v.launches:
                yield case.case.id, v.variant, r, r.occurrence


def _points(
    d: Diff, head_specs: Specs, head: Analysis, base: Analysis
) -> dict[str, list[ChartPoint]]:
    """The points of the changed launches by case: base's then head's, each launch by its
    kernel's display name, variant and occurrence, on the head's machine."""
    changed = {
        (c.case, c.variant, c.kernel, c.occurrence) for c in d.launches if c.status == "changed"
    }
    by_case: dict[str, list[ChartPoint]] = {}
    for side, analysis in (("base", base), ("head", head)):
        for case_id, variant, r, n in _launches(analysis):
            if (case_id, variant, r.kernel, n) not in changed:
                continue
            name = d.kernel_names.get((case_id, r.kernel)) or r.kernel
            label = f"{name} ({variant})" + (f" #{n}" if n > 1 else "")
            machine = head_specs.machines.get(r.machine)
            points = launch_points(
                r, machine, case=case_id, kernel=label, variant=side, binding=r.binding
            )
            if points:
                by_case.setdefault(case_id, []).extend(points)
    return by_case


def changed_charts(
    d: Diff, head_specs: Specs, head: Analysis, base: Analysis, folder: Path, roofs: Roofs
) -> dict[Path, str]:
    """Static SVG hierarchical rooflines of the changed launches, base -> head, by the
    file each goes to (``folder/CASE.svg``): kernels and memory levels by their display
    names (as the roofs are), base points hollow and head points filled, under the
    ``roofs`` of the head's machine of the case's first variant. Raises
    :class:`ChartsUnavailable` without the chart renderer."""
    try:
        from roofgen.charts import hierarchical_chart
        from roofgen.charts.inputs import RooflineInput
        from roofgen.charts.render import to_svg
    except ImportError:
        raise ChartsUnavailable from None
    by_case = _points(d, head_specs, head, base)
    svgs: dict[Path, str] = {}
    for case in head.cases:
        points = by_case.get(case.case.id)
        if not points:
            continue
        machine = head_specs.machines[case.variants[0].machine]
        inp = RooflineInput(
            title=f"{case.case.title}: base → head",
            roofs=roofs(machine),
            points=tuple(points),
            variant_order=("base", "head"),
            subtitle="base: hollow points; head: filled",
        )
        svgs[folder / f"{case.case.id}.svg"] = to_svg(hollow_base(hierarchical_chart(inp)))
    return svgs


def hollow_base(spec: Any) -> Any:
    """``spec`` with the base's launch points drawn hollow (an outline in the level's
    colour), so base and head differ on the picture, not only in tooltips."""
    base = "datum.variant === 'base'"
    if isinstance(spec, dict):
        if spec.get("name") == "launches" and isinstance(spec.get("encoding"), dict):
            enc = spec["encoding"]
            enc["fillOpacity"] = {"condition": {"test": base, "value": 0}, "value": 1}
            enc["strokeWidth"] = {"condition": {"test": base, "value": 1.5}, "value": 0}
            if "color" in enc:
                enc["stroke"] = {k: v for k, v in enc["color"].items() if k != "legend"}
                enc["stroke"]["legend"] = None
        for value in spec.values():
            hollow_base(value)
    elif isinstance(spec, list):
        for value in spec:
            hollow_base(value)
    return spec
