"""The points of a launch on a roofline chart, made from the analysis. The site's case
pages (:mod:`roofgen.site.charts`) and ``roofgen diff``'s charts
(:mod:`roofgen.review.charts`) both draw with them, so that a launch is put on a
roofline by one rule wherever it is drawn."""

from __future__ import annotations

from typing import Any

from roofgen.analysis.analyse import LaunchResult
from roofgen.charts.inputs import ChartPoint
from roofgen.model import Machine

__all__ = ["launch_points"]


def launch_points(
    r: LaunchResult,
    machine: Machine | None,
    *,
    case: str,
    kernel: str,
    variant: str,
    binding: str | None,
    **extra: Any,
) -> list[ChartPoint]:
    """``r`` on the hierarchical roofline: one point per memory level with a positive
    intensity, all at the launch's achieved FLOP/s, in the order of the levels (the
    analysis keeps its intensities in the machine's order); none without an achieved
    FLOP/s. A level is shown by ``machine``'s name and role for it; one ``machine`` lacks
    (a base launch drawn on the head's machine) keeps its id and the device role.
    ``kernel``, ``variant`` and ``binding`` are as the chart shows them; ``extra`` holds
    the point's optional fields (its launch label, sweep place, shape, spread)."""
    if not r.achieved_flop_per_s or r.achieved_flop_per_s <= 0:
        return []
    points = []
    for level_id, intensity in r.intensity_flop_per_byte.items():
        if not intensity or intensity <= 0:
            continue
        level = machine.level(level_id) if machine is not None else None
        points.append(
            ChartPoint(
                case=case,
                kernel=kernel,
                variant=variant,
                level=level.name if level else level_id,
                level_role=level.role if level else "device",
                intensity_flop_per_byte=intensity,
                flop_per_s=r.achieved_flop_per_s,
                efficiency=r.efficiency,
                klass=r.klass,
                binding=binding,
                **extra,
            )
        )
    return points
