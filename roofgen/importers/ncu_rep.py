"""Read Nsight Compute ``.ncu-rep`` reports through NVIDIA's ``ncu_report`` package.

``ncu_report`` is on PyPI (``pip install ncu-report``, roofgen's ``ncu-rep`` extra); it ships
its own native libraries and loads reports without Nsight Compute installed. Each
profiled kernel (an "action" of a "range") becomes a launch with every metric
the report holds; the rest of the import is the CSV path's.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from roofgen.importers import ImportFailure
from roofgen.importers.kernel_names import clean_name
from roofgen.importers.ncu_csv import Launch, Metric, Profile, parse_unit


def _module() -> Any:
    try:
        import ncu_report  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise ImportFailure(
            "reading .ncu-rep reports needs NVIDIA's ncu_report package: "
            "pip install ncu-report (roofgen's ncu-rep extra), or export the report to CSV with "
            "`ncu --import report.ncu-rep --csv > profile.csv`"
        ) from None
    return ncu_report


def read_reports(paths: Sequence[Path]) -> Profile:
    module = _module()
    launches: list[Launch] = []
    for path in paths:
        if not path.is_file():
            raise ImportFailure(f"{path}: no such file")
        try:
            context = module.load_report(str(path))
        except Exception as exc:  # the package raises plain exceptions with a message
            raise ImportFailure(f"{path}: ncu_report cannot load the report: {exc}") from None
        found = list(_launches(context, path, module))
        if not found:
            raise ImportFailure(f"{path}: the report holds no profiled kernels")
        launches += found
    return Profile(launches, [], {str(p): "ncu-rep" for p in paths})


def _launches(context: Any, path: Path, module: Any) -> Any:
    demangled = module.IAction.NameBase_DEMANGLED
    for r in range(context.num_ranges()):
        rng = context.range_by_idx(r)
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)
            launch = Launch(
                key=(str(r), str(a), path.name),
                name=clean_name(action.name(demangled)),
                source=path.name,
            )
            for name in action.metric_names():
                metric = _metric(action.metric_by_name(name))
                if metric is not None:
                    launch.metrics[name] = metric
            launch.grid = _dims(launch.metrics, "launch__grid_dim") or _size(
                launch.metrics, "launch__grid_size"
            )
            launch.block = _dims(launch.metrics, "launch__block_dim") or _size(
                launch.metrics, "launch__block_size"
            )
            launch.cc = _cc(launch.metrics)
            yield launch


def _metric(metric: Any) -> Metric | None:
    if metric is None:
        return None
    value = metric.value()
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = Decimal(value) if isinstance(value, int) else Decimal(repr(value))
    unit = parse_unit(metric.unit() or "")
    return Metric(number * unit.factor, unit, f"{value} {metric.unit()}".strip())


def _dims(metrics: dict[str, Metric], prefix: str) -> tuple[int, ...] | None:
    parts = [metrics.get(f"{prefix}_{axis}") for axis in "xyz"]
    if all(p is not None for p in parts):
        return tuple(int(p.value) for p in parts if p is not None)
    return None


def _size(metrics: dict[str, Metric], name: str) -> tuple[int, ...] | None:
    metric = metrics.get(name)
    return (int(metric.value),) if metric is not None else None


def _cc(metrics: dict[str, Metric]) -> str:
    major = metrics.get("device__attribute_compute_capability_major")
    minor = metrics.get("device__attribute_compute_capability_minor")
    if major is None:
        return ""
    return f"{int(major.value)}.{int(minor.value) if minor is not None else 0}"
