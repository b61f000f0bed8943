"""``roofgen explain --format json``: the explanation as a versioned JSON document."""

from __future__ import annotations

from typing import Any

from roofgen.advice import Recommendation
from roofgen.report.analysis import launch_json
from roofgen.report.explain import Explanation, ResourceRow
from roofgen.version import __version__

__all__ = ["explanation_json"]

# Where a launch's recommendations come from: always the check's rules now; the field
# stays in the document for readers of its format.
RECOMMENDATIONS_FROM = "roofgen.advice"


def explanation_json(e: Explanation) -> dict[str, Any]:
    """The explanation as a JSON-ready dict (``roofgen_output`` 1)."""
    t = e.thresholds
    return {
        "roofgen_output": 1,
        "roofgen_version": __version__,
        "case": e.case.case.id,
        "title": e.case.case.title,
        "kernel": e.kernel,
        "variant": e.variant,
        "thresholds": {
            "co_bound_margin": t.co_bound_margin,
            "below_roofs_efficiency": t.below_roofs_efficiency,
        },
        "variants": [
            {
                "variant": ve.variant.variant,
                "machine": ve.variant.machine,
                "kernel_time_s": ve.kernel_time_s,
                "speedup_vs_first": ve.speedup_vs_first,
                "launches": [
                    {
                        **launch_json(le.result),
                        "resources": [_row_json(row) for row in le.rows],
                        "recommendations": [_recommendation_json(x) for x in le.recommendations],
                        "recommendations_from": RECOMMENDATIONS_FROM,
                    }
                    for le in ve.launches
                ],
            }
            for ve in e.variants
        ],
        "absent_from": list(e.absent),
    }


def _row_json(row: ResourceRow) -> dict[str, Any]:
    return {
        "resource": row.resource,
        "name": row.name,
        "known": row.seconds is not None,
        "demand": row.demand,
        "demand_unit": row.demand_unit,
        "capacity": row.capacity,
        "capacity_unit": row.capacity_unit,
        "seconds": row.seconds,
        "datasheet_seconds": row.datasheet_seconds,
        "share_of_measured": row.share_of_measured,
        "role": row.role,
        "note": row.note,
    }


def _recommendation_json(rec: Recommendation) -> dict[str, Any]:
    return {
        "title": rec.title,
        "text": rec.text,
        "gain": rec.gain_text,
        "severity": rec.severity,
        "rule": rec.rule,
        "techniques": [t.name for t in rec.techniques],
    }
