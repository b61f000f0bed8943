"""Kernel times measured outside Nsight Compute's replay, to replace its durations.

Three inputs are read:

- Nsight Compute CSV (any layout :mod:`roofgen.importers.ncu_csv` reads): the time of
  each kernel shape (name, grid, block) from ``gpu__time_duration`` (or
  ``gpu__time_active``), with the SM clock where the file has it, so a per-kernel
  summary of counters can be joined with a separate export of its times;
- nsys: ``nsys stats --report cuda_gpu_trace --format csv`` (one row per launch, with
  its grid and block: "Duration (ns)", "GrdX", ..., "BlkZ", "Name"), or
  ``nsys stats --report cuda_gpu_kern_sum --format csv`` (columns "Instances",
  "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", ..., "Name"; older releases
  spell them "Average", "Median", "Minimum", "Maximum");
- a simple CSV of CUDA-event times with a ``kernel`` column and either one row
  per timed repeat (a ``time`` column) or statistics (``median`` and optionally
  ``min``, ``max``, ``q1``, ``q3``, ``repeats``, ``warmup``). Times carry a unit
  (``2.478 ms``), or the column name does (``time_ms``, ``median (us)``).
"""

from __future__ import annotations

import csv
import dataclasses
import re
import statistics
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from roofgen.importers import ImportFailure
from roofgen.importers.ncu_csv import parse_number

if TYPE_CHECKING:
    from roofgen.importers.ncu_csv import Launch

Dims = tuple[int, ...] | None

_UNIT_IN_NAME = re.compile(r"(?:[ _(]\(?)(ns|us|ms|s)\)?$")
_SCALE = {"ns": Decimal("1e-9"), "us": Decimal("1e-6"), "ms": Decimal("1e-3"), "s": Decimal(1)}


@dataclass(frozen=True)
class Timing:
    """Time statistics of one kernel, in seconds."""

    name: str
    median: Decimal  # the central value: the median, or the mean where ``statistic`` says so
    minimum: Decimal | None = None
    maximum: Decimal | None = None
    q1: Decimal | None = None
    q3: Decimal | None = None
    repeats: int | None = None
    warmup: int | None = None
    kind: str = "cuda-events"  # or "nsys", "ncu-replay"
    origin: str = ""
    statistic: str = "median"  # or "mean"
    grid: tuple[int, ...] | None = None  # the kernel's shape, where the file gives it
    block: tuple[int, ...] | None = None
    sm_clock: Decimal | None = None  # Hz, where the file gives the clock it ran at
    clock_origin: str = ""


def read_timing(path: Path) -> list[Timing]:
    try:
        text = path.read_text(encoding="utf-8-sig", errors="replace")
    except OSError as exc:
        raise ImportFailure(f"{path}: cannot read the timing file: {exc.strerror}") from None
    if '"Kernel Name"' in text or "Kernel Name," in text:
        return _ncu(path)
    rows = [r for r in csv.reader(text.splitlines()) if any(c.strip() for c in r)]
    for i, row in enumerate(rows):
        cells = [c.strip() for c in row]
        if "Name" in cells and "Instances" in cells:
            return _nsys(path, cells, rows[i + 1 :])
        if "Name" in cells and "GrdX" in cells and "Duration (ns)" in cells:
            return _nsys_trace(path, cells, rows[i + 1 :])
        lowered = [c.lower() for c in cells]
        if "kernel" in lowered or "name" in lowered:
            return _events(path, lowered, rows[i + 1 :])
    raise ImportFailure(
        f"{path}: not a timing file roofgen reads: expected nsys's cuda_gpu_kern_sum CSV "
        "(columns Instances, Med (ns), ..., Name) or a CSV with a 'kernel' column and "
        "'time' or 'median' times"
    )


def _column(header: list[str], *patterns: str) -> int | None:
    for pattern in patterns:
        for i, name in enumerate(header):
            if re.match(pattern, name, re.IGNORECASE):
                return i
    return None


def _nsys(path: Path, header: list[str], rows: list[list[str]]) -> list[Timing]:
    name = header.index("Name")
    count = header.index("Instances")
    median = _column(header, r"^Med(ian)?\b")
    average = _column(header, r"^Av(g|erage)\b")
    low, high = _column(header, r"^Min(imum)?\b"), _column(header, r"^Max(imum)?\b")
    central = median if median is not None else average
    if central is None:
        raise ImportFailure(f"{path}: the nsys summary has no 'Med (ns)' or 'Avg (ns)' column")
    unit = _scale_of(header[central], default="ns")
    what = "median" if median is not None else "mean (this nsys report has no median)"
    statistic = "median" if median is not None else "mean"
    out = []
    for row in rows:
        if len(row) <= max(name, central):
            continue
        value = parse_number(row[central])
        if value is None:
            continue
        out.append(
            Timing(
                name=row[name],
                median=value * unit,
                minimum=_opt(row, low, unit),
                maximum=_opt(row, high, unit),
                repeats=int(parse_number(row[count]) or 0) or None,
                kind="nsys",
                origin=f"nsys cuda_gpu_kern_sum {what} ({path.name})",
                statistic=statistic,
            )
        )
    return out


def _opt(row: list[str], index: int | None, unit: Decimal) -> Decimal | None:
    if index is None or index >= len(row):
        return None
    value = parse_number(row[index])
    return None if value is None else value * unit


def _scale_of(column: str, default: str | None = None) -> Decimal:
    match = _UNIT_IN_NAME.search(column.strip())
    unit = match.group(1) if match else default
    return _SCALE[unit] if unit else Decimal(0)


def _seconds(text: str, scale: Decimal, where: str) -> Decimal:
    """A time cell: ``"2.478 ms"``, or a bare number in the column's unit."""
    text = text.strip()
    number = parse_number(text)
    if number is not None:
        if not scale:
            raise ImportFailure(
                f"{where}: {text!r} has no unit: write '{text} ms' or name the column 'time_ms'"
            )
        return number * scale
    match = re.fullmatch(r"([-+0-9.,eE]+)\s*(ns|us|µs|ms|s)", text)
    value = parse_number(match.group(1)) if match else None
    if match is None or value is None:
        raise ImportFailure(f"{where}: {text!r} is not a time (e.g. '2.478 ms')")
    return value * _SCALE[match.group(2).replace("µ", "u")]


def _events(path: Path, header: list[str], rows: list[list[str]]) -> list[Timing]:
    name = header.index("kernel") if "kernel" in header else header.index("name")
    median = _column(header, r"^median(\b|_)")
    time = _column(header, r"^time(\b|_)", r"^elapsed(\b|_)", r"^duration(\b|_)")
    if median is None and time is None:
        raise ImportFailure(f"{path}: the timing CSV needs a 'time' or a 'median' column")
    if median is not None:
        return _event_stats(path, header, rows, name, median)
    assert time is not None
    scale = _scale_of(header[time])
    samples: dict[str, list[Decimal]] = {}
    for n, row in enumerate(rows, start=2):
        if len(row) > max(name, time):
            where = f"{path}:{n}"
            samples.setdefault(row[name].strip(), []).append(_seconds(row[time], scale, where))
    return [_from_samples(k, v, path) for k, v in samples.items()]


def _from_samples(kernel: str, values: list[Decimal], path: Path) -> Timing:
    ordered = sorted(values)
    q1 = q3 = None
    if len(ordered) >= 2:
        quartiles = statistics.quantiles(ordered, n=4, method="inclusive")
        q1, q3 = Decimal(quartiles[0]), Decimal(quartiles[2])
    return Timing(
        name=kernel,
        median=Decimal(statistics.median(ordered)),
        minimum=ordered[0],
        maximum=ordered[-1],
        q1=q1,
        q3=q3,
        repeats=len(ordered),
        origin=f"CUDA-event times, median of {len(ordered)} repeats ({path.name})",
    )


def _event_stats(
    path: Path, header: list[str], rows: list[list[str]], name: int, median: int
) -> list[Timing]:
    columns = {
        key: _column(header, rf"^{key}(\b|_)") for key in ("min", "max", "q1", "q3", "repeats")
    }
    warmup = _column(header, r"^warm-?up")
    out = []
    for n, row in enumerate(rows, start=2):
        if len(row) <= max(name, median):
            continue
        where = f"{path}:{n}"

        def time(key: str, row: list[str] = row, where: str = where) -> Decimal | None:
            index = columns[key]
            if index is None or index >= len(row) or not row[index].strip():
                return None
            return _seconds(row[index], _scale_of(header[index]), where)

        repeats = columns["repeats"]
        out.append(
            Timing(
                name=row[name].strip(),
                median=_seconds(row[median], _scale_of(header[median]), where),
                minimum=time("min"),
                maximum=time("max"),
                q1=time("q1"),
                q3=time("q3"),
                repeats=_int(row, repeats),
                warmup=_int(row, warmup),
                origin=f"CUDA-event times ({path.name})",
            )
        )
    return out


def _int(row: list[str], index: int | None) -> int | None:
    if index is None or index >= len(row):
        return None
    value = parse_number(row[index])
    return None if value is None else int(value)


def _ncu(path: Path) -> list[Timing]:
    """Kernel times of an Nsight Compute CSV, one per kernel name, grid and block."""
    from roofgen.importers.ncu_csv import read_file
    from roofgen.importers.ncu_metrics import time_and_clock

    _, launches, _ = read_file(path)
    shapes: dict[tuple[str, Dims, Dims], list[Launch]] = {}
    for launch in launches:
        shapes.setdefault((launch.name, launch.grid, launch.block), []).append(launch)
    out = []
    for (name, grid, block), group in shapes.items():
        derived = [time_and_clock(launch) for launch in group]
        timed = [d for d in derived if d.time is not None]
        if not timed:
            continue
        first = timed[0]
        assert first.time is not None
        clock = first.clocks.get("sm")
        common: dict[str, Any] = {
            "name": name,
            "kind": "ncu-replay",
            "grid": grid,
            "block": block,
            "sm_clock": clock.value if clock is not None else None,
            "clock_origin": f"{clock.origin} ({path.name})" if clock is not None else "",
        }
        if len(timed) == 1:
            invocations = group[0].invocations
            out.append(
                Timing(
                    median=first.time.value,
                    minimum=first.time_min.value if first.time_min else None,
                    maximum=first.time_max.value if first.time_max else None,
                    repeats=invocations if invocations > 1 else None,
                    origin=f"{first.time.origin} ({path.name})",
                    statistic=first.time_statistic,
                    **common,
                )
            )
            continue
        values = sorted(d.time.value for d in timed if d.time is not None)
        out.append(
            Timing(
                median=Decimal(statistics.median(values)),
                minimum=values[0],
                maximum=values[-1],
                repeats=len(values),
                origin=f"median of {len(values)} replayed launches ({path.name})",
                **common,
            )
        )
    if not out:
        raise ImportFailure(
            f"{path}: the Nsight Compute export has no kernel time (gpu__time_duration.sum "
            "or gpu__time_active.sum): it cannot give --timing"
        )
    return out


def _nsys_trace(path: Path, header: list[str], rows: list[list[str]]) -> list[Timing]:
    """Per-launch kernel rows of nsys's cuda_gpu_trace, grouped by name, grid and block
    (memory copies, which have no grid, are skipped)."""
    at = {name: header.index(name) for name in header}
    grid_cols = [at[c] for c in ("GrdX", "GrdY", "GrdZ") if c in at]
    block_cols = [at[c] for c in ("BlkX", "BlkY", "BlkZ") if c in at]
    samples: dict[tuple[str, Dims, Dims], list[Decimal]] = {}
    for row in rows:
        if len(row) <= max(at["Name"], at["Duration (ns)"], *grid_cols, *block_cols):
            continue
        grid = _dims(row, grid_cols)
        duration = parse_number(row[at["Duration (ns)"]])
        if grid is None or duration is None:
            continue
        key = (row[at["Name"]].strip(), grid, _dims(row, block_cols))
        samples.setdefault(key, []).append(duration * _SCALE["ns"])
    out = []
    for (name, grid, block), values in samples.items():
        timing = _from_samples(name, values, path)
        out.append(
            dataclasses.replace(
                timing,
                kind="nsys",
                grid=grid,
                block=block,
                origin=f"nsys cuda_gpu_trace, median of {len(values)} launches ({path.name})",
            )
        )
    return out


def _dims(row: list[str], columns: list[int]) -> Dims:
    values = [parse_number(row[i]) for i in columns]
    if not values or any(v is None or v < 1 or v != int(v) for v in values):
        return None
    return tuple(int(v) for v in values if v is not None)
