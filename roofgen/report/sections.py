"""Sections of the analysis JSON beyond the roofline numbers: operator models and what
was modelled, shape sweeps, speedups against the baseline with their noise, the
end-to-end projection, and recommendations (``schemas/output.schema.json``)."""

from __future__ import annotations

from typing import Any

from roofgen.advice import Advice, Recommendation
from roofgen.analysis.analyse import CaseResult, LaunchResult
from roofgen.analysis.compare import CaseComparison, EndToEnd, LaunchComparison, Movement, Speedup
from roofgen.operators.models import OpModel

__all__ = ["add_case_sections", "model_json", "recommendation_json", "speedup_json"]


def speedup_json(s: Speedup | None) -> dict[str, Any] | None:
    if s is None:
        return None
    return {
        "value": s.value,
        "low": s.low,
        "high": s.high,
        "significant": s.significant,
        "noise": s.noise,
        "interval": s.source,
    }


def movement_json(m: Movement | None) -> dict[str, Any] | None:
    if m is None:
        return None
    return {
        "binding_from": m.binding_from,
        "binding_to": m.binding_to,
        "binding_changed": m.binding_changed,
        "class_from": m.class_from,
        "class_to": m.class_to,
        "efficiency_from": m.efficiency_from,
        "efficiency_to": m.efficiency_to,
        "intensity_from_flop_per_byte": m.intensity_from,
        "intensity_to_flop_per_byte": m.intensity_to,
        "text": m.text(),
    }


def model_json(model: OpModel | None) -> dict[str, Any] | None:
    if model is None:
        return None
    return {
        "kind": model.kind,
        "flop": model.flop,
        "matrix_flop": model.matrix_flop,
        "vector_flop": model.vector_flop,
        "transcendental_op": model.transcendental_op,
        "matrix_precision": model.matrix_precision,
        "vector_precision": model.vector_precision,
        "bytes_min": model.bytes_min,
        "tensors": [
            {"name": t.name, "elements": t.elements, "dtype": t.dtype, "access": t.access}
            for t in model.tensors
        ],
        "notes": list(model.notes),
    }


def recommendation_json(r: Recommendation) -> dict[str, Any]:
    return {
        "rule": r.rule,
        "severity": r.severity,
        "title": r.title,
        "text": r.text,
        "gain": None
        if r.gain is None
        else {
            "roof": r.gain.roof,
            "to_roof": r.gain.to_roof,
            "next_roof": r.gain.next_roof,
            "beyond": r.gain.beyond,
            "text": r.gain_text,
        },
        "techniques": [{"id": t.id, "name": t.name} for t in r.techniques],
        "metrics": list(r.metrics),
    }


def _sweep_json(r: LaunchResult, cmp: LaunchComparison | None) -> list[dict[str, Any]]:
    speedups = {p.label: p.speedup for p in cmp.points} if cmp is not None else {}
    return [
        {
            "label": p.label,
            "shape": p.shape,
            "weight": p.weight,
            "time_s": p.result.time_s,
            "flop": p.result.flop,
            "achieved_flop_per_s": p.result.achieved_flop_per_s,
            "intensity_flop_per_byte": p.result.intensity_flop_per_byte,
            "lower_bound_s": p.result.lower_bound_s,
            "binding": p.result.binding,
            "class": p.result.klass,
            "efficiency": p.result.efficiency,
            "modelled": list(p.result.modelled),
            "speedup": speedup_json(speedups.get(p.label)),
        }
        for p in r.sweep
    ]


def _launch_sections(
    r: LaunchResult, cmp: LaunchComparison | None, advice: Advice | None
) -> dict[str, Any]:
    recs = advice.for_launch(r.case, r.variant, r.index) if advice is not None else ()
    return {
        "model": model_json(r.model),
        "model_reason": r.model_reason or None,
        "modelled": list(r.modelled),
        "speedup": speedup_json(cmp.speedup) if cmp is not None else None,
        "movement": movement_json(cmp.movement) if cmp is not None else None,
        "sweep": _sweep_json(r, cmp),
        "sweep_weighted_speedup": cmp.weighted_speedup if cmp is not None else None,
        "recommendations": [recommendation_json(x) for x in recs],
    }


def _end_to_end_json(comparison: CaseComparison, e2e: tuple[EndToEnd, ...]) -> dict[str, Any]:
    return {
        "baseline": comparison.baseline,
        "tolerance": comparison.tolerance,
        "variants": [
            {
                "variant": e.variant,
                "measured_speedup": e.measured,
                "projected_speedup": e.projected,
                "kernel_share": e.kernel_share,
                "limit": e.limit,
                "terms": [
                    {"kernel": t.kernel, "index": t.index, "share": t.share, "speedup": t.speedup}
                    for t in e.terms
                ],
                "agree": e.agree,
                "reason": e.reason,
            }
            for e in e2e
        ],
    }


def add_case_sections(
    doc: dict[str, Any], case: CaseResult, advice: Advice | None
) -> dict[str, Any]:
    """``doc`` (one case of the analysis JSON) with the sections of this module added."""
    comparison = case.comparison
    for vdoc, v in zip(doc["variants"], case.variants, strict=True):
        vcmp = comparison.variant(v.variant)
        recs = advice.for_variant(case.case.id, v.variant) if advice is not None else ()
        vdoc["speedup"] = speedup_json(vcmp.speedup) if vcmp is not None else None
        vdoc["movement"] = movement_json(vcmp.movement) if vcmp is not None else None
        vdoc["recommendations"] = [recommendation_json(x) for x in recs]
        for ldoc, r in zip(vdoc["launches"], v.launches, strict=True):
            ldoc.update(_launch_sections(r, comparison.launch(v.variant, r.index), advice))
    has_e2e = any(case.case.end_to_end_s.get(v.variant) for v in case.variants)
    doc["end_to_end"] = _end_to_end_json(comparison, comparison.end_to_end) if has_e2e else None
    return doc
