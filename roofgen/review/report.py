"""`roofgen diff` reports: JSON and text (the Markdown comment is
:mod:`roofgen.review.comment`).

Both start from the same verdict at kernel level (:mod:`roofgen.review.verdict`); the
JSON holds every change, with the commits compared and the threshold.
"""

from __future__ import annotations

from typing import Any

from roofgen.analysis.compare import Speedup
from roofgen.review.comment import COMMENT_LIMIT, MARKER, Side
from roofgen.review.diff import Change, Diff
from roofgen.review.gate import ContextChange, Reason
from roofgen.review.verdict import DEFAULT_THRESHOLD, kernels, verdict_line
from roofgen.units import fmt_ratio, fmt_si, fmt_time

__all__ = ["COMMENT_LIMIT", "MARKER", "json_doc", "text"]


def _speedup(s: Speedup | None) -> str:
    if s is None:
        return "n/a"
    if s.low is None or s.high is None:
        return fmt_ratio(s.value)
    return f"{fmt_ratio(s.value)} ({s.low:.2f}-{s.high:.2f})"


def _change_json(c: Change) -> dict[str, Any]:
    s = c.speedup
    return {
        "case": c.case,
        "variant": c.variant,
        "kernel": c.kernel or None,
        "occurrence": c.occurrence or None,
        "status": c.status,
        "base_time_s": c.base_s,
        "head_time_s": c.head_s,
        "speedup": None if s is None else {
            "value": s.value, "low": s.low, "high": s.high, "noise": s.noise,
        },
        "verdict": c.verdict,
        "binding_from": c.movement.binding_from if c.movement else None,
        "binding_to": c.movement.binding_to if c.movement else None,
        "base_efficiency": c.base_efficiency,
        "head_efficiency": c.head_efficiency,
        "roofs_moved": c.roofs_moved,
    }  # fmt: skip


def _gate_json(gate: tuple[Reason, ...] | None, limit: float | None) -> dict[str, Any] | None:
    if gate is None:
        return None
    reasons = [{"kind": r.kind, "subject": r.subject, "reason": r.what, "allow": r.allow,
                "allowed": r.allowed} for r in gate]  # fmt: skip
    return {"fail_on_regression": limit, "failed": any(not r.allowed for r in gate),
            "reasons": reasons}  # fmt: skip


def json_doc(d: Diff, base: Side, head: Side, threshold: float = DEFAULT_THRESHOLD,
             context: tuple[ContextChange, ...] = (), gate: tuple[Reason, ...] | None = None,
             limit: float | None = None) -> dict[str, Any]:  # fmt: skip
    """Every change; the changes of context; the gate's verdict and reasons (null
    without ``--fail-on-regression``)."""
    ks = kernels(d, threshold)
    return {
        "roofgen_diff": 1,
        "base": base.name,
        "head": head.name,
        "base_commit": base.commit,
        "head_commit": head.commit,
        "threshold": threshold,
        "kernels": {
            kind: [k.label for k in ks if k.kind == kind]
            for kind in ("faster", "slower", "unknown", "unchanged", "added", "removed")
        },  # fmt: skip
        "counts": d.counts(),
        "cases_added": list(d.cases_added),
        "cases_removed": list(d.cases_removed),
        "roofs": [
            {"machine": r.machine, "roof": r.roof, "base": r.base, "head": r.head, "unit": r.unit}
            for r in d.roofs
        ],
        "variants": [_change_json(c) for c in d.variants],
        "launches": [_change_json(c) for c in d.launches],
        "context": [{"name": c.name, "change": c.what} for c in context],
        "gate": _gate_json(gate, limit),
    }


def text(d: Diff, base: Side, head: Side, threshold: float = DEFAULT_THRESHOLD,
         context: tuple[ContextChange, ...] = (),
         gate: tuple[Reason, ...] | None = None) -> str:  # fmt: skip
    def shown(side: Side) -> str:
        return side.name + (f" ({side.commit[:10]})" if side.commit else "")

    verdict = verdict_line(d, threshold).replace("`", "")
    lines = [f"{shown(base)} -> {shown(head)}: {verdict}"]
    lines += [f"  context: {c.what}" for c in context]
    if gate is not None:
        failed = any(not r.allowed for r in gate)
        lines.append(f"  gate: {'fails' if failed else 'passes'}")
        for reason in gate:
            allow = reason.allow or ""
            if allow:
                allow = f" ({'allowed by' if reason.allowed else 'to allow:'} {allow})"
            lines.append(f"  gate: {reason.subject}: {reason.what}{allow}")
    for r in d.roofs:
        lines.append(
            f"  roof {r.machine} {r.roof}: {fmt_si(r.base, r.unit)} -> {fmt_si(r.head, r.unit)}"
        )
    for c in (*d.variants, *d.launches):
        who = f"{c.case}/{c.kernel or '*'}/{c.variant}"
        if c.status != "changed":
            t = fmt_time(c.head_s if c.status == "added" else c.base_s)
            lines.append(f"  {who}: {c.status} ({t})")
            continue
        move = c.movement.text(d.names.get(c.machine, {})) if c.movement else ""
        lines.append(
            f"  {who}: {fmt_time(c.base_s)} -> {fmt_time(c.head_s)}, "
            f"{_speedup(c.speedup)}, {c.verdict}; {move}"
        )
    return "\n".join(lines) + "\n"
