"""Checks of operator shapes and shape sweeps in a case document, each located.

``shape`` is an open mapping in the schema; for the operator kinds with a model
(:mod:`roofgen.operators.models`) a key the model cannot use is an error that names
the valid keys, and a complete shape the model cannot count (a filter larger than its
input, GQA heads that do not divide, a negative count) is an error that names the
shape. A launch gives one measurement or a sweep of shapes, not both; the points of a
sweep carry a weight each or none, and distinct labels. Only attention kernels have a
KV cache to give a ``kv_cache`` dtype to.
"""

from __future__ import annotations

from typing import Any

from roofgen.model import Measurement, SweepPoint, TimeStats
from roofgen.operators.models import KV_CACHE, check_shape, shape_error
from roofgen.operators.sweep import label
from roofgen.problems import Problem
from roofgen.spec.yamlload import Document, PathKey

__all__ = ["check_operators"]


def check_operators(doc: Document) -> list[Problem]:
    data = doc.data
    problems: list[Problem] = []
    kernels: dict[str, dict[str, Any]] = {}
    for k_index, kernel in enumerate(data["kernels"]):
        kernels.setdefault(kernel["id"], kernel)
        base: PathKey = ("kernels", k_index, "operator", "shape")
        problems += _shape(doc, kernel, kernel["operator"].get("shape", {}), base)
        problems += _kv_cache(doc, kernel, k_index)
    for v_index, variant in enumerate(data["variants"]):
        for l_index, launch in enumerate(variant["launches"]):
            path: PathKey = ("variants", v_index, "launches", l_index)
            problems += _launch(doc, launch, path, kernels.get(launch["kernel"]))
    return problems


def _shape(
    doc: Document,
    kernel: dict[str, Any],
    shape: dict[str, Any],
    base: PathKey,
    whole: dict[str, Any] | None = None,
) -> list[Problem]:
    """The keys of ``shape`` (a kernel's, or a sweep point's); then the model of the
    ``whole`` shape (a point's keys over its kernel's; by default ``shape``)."""
    op = kernel["operator"]
    problems = [
        doc.problem((*base, key), message, key=message.startswith("unknown"), code="ref.shape")
        for key, message in check_shape(op["kind"], shape)
    ]
    error = shape_error(
        op["kind"],
        shape if whole is None else whole,
        kernel.get("dtypes", {}),
        phase=op.get("phase"),
        causal=op.get("causal"),
    )
    if error:
        problems.append(doc.problem(base, error, code="ref.shape"))
    return problems


def _kv_cache(doc: Document, kernel: dict[str, Any], k_index: int) -> list[Problem]:
    if KV_CACHE not in kernel.get("dtypes", {}) or kernel["operator"]["kind"] == "attention":
        return []
    return [
        doc.problem(
            ("kernels", k_index, "dtypes", KV_CACHE),
            f"{KV_CACHE} (the type K and V are stored in) applies to attention kernels only; "
            "give this kernel's tensors their own types",
            key=True,
            code="ref.shape",
        )
    ]


def _launch(
    doc: Document, launch: dict[str, Any], path: PathKey, kernel: dict[str, Any] | None
) -> list[Problem]:
    has_measurement, sweep = "measurement" in launch, launch.get("sweep")
    if has_measurement and sweep is not None:
        return [
            doc.problem(
                (*path, "sweep"),
                "give 'measurement' (one shape) or 'sweep' (several shapes), not both",
                key=True,
                code="ref.sweep",
            )
        ]
    if not has_measurement and sweep is None:
        return [
            doc.problem(
                path,
                "missing required key 'measurement' (what was measured for one launch), "
                "or 'sweep' for a launch measured over several shapes",
                code="schema.required",
            )
        ]
    if sweep is None:
        return []
    problems: list[Problem] = []
    weighted = [("weight" in p) for p in sweep]
    if any(weighted) and not all(weighted):
        first = weighted.index(False)
        problems.append(
            doc.problem(
                (*path, "sweep", first),
                "give a weight to every point of the sweep or to none",
                code="ref.sweep",
            )
        )
    seen: dict[str, int] = {}
    for i, point in enumerate(sweep):
        where: PathKey = (*path, "sweep", i)
        if kernel is not None:
            whole = {**kernel["operator"].get("shape", {}), **point["shape"]}
            problems += _shape(doc, kernel, point["shape"], (*where, "shape"), whole)
        name = label(_point(point))
        if name in seen:
            problems.append(
                doc.problem(
                    where,
                    f"the sweep has the shape {name!r} twice (also point {seen[name]}): "
                    "give each point its own shape or label",
                    code="ref.sweep",
                )
            )
        seen.setdefault(name, i)
    return problems


def _point(point: dict[str, Any]) -> SweepPoint:
    """Just enough of a sweep point to name it."""
    return SweepPoint(
        dict(point["shape"]), Measurement(TimeStats(0.0)), None, point.get("label", "")
    )
