"""The per-launch CSV of ``nsys stats --report cuda_gpu_trace --format csv``.

Its header (Nsight Systems 2023 and later; older releases lack ``GreenCtx``)::

    Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,...,Device,...,Name

One row per kernel, memory copy and memset; copies and memsets (no grid) are not
kernels and are counted apart. ``nsys stats`` may print lines before the header; the
time unit is the one the header names (``--timeunit``). The rows are read in chunks
into SQLite's private temporary database, and the same SQL as for an export sums
them. The CSV has no NVTX ranges nor API calls: a step is a ``--window`` or the
whole trace. ``cuda_gpu_kern_sum`` (one row per kernel name, with totals) cannot give
steps nor busy time, and is refused with the report to export instead.
"""

from __future__ import annotations

import csv
import io
import re
import sqlite3
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING

from roofgen.importers import ImportFailure
from roofgen.importers.nsys_schema import GRID_BLOCK, INT64_MAX
from roofgen.importers.trace_checks import MAX_THREADS

if TYPE_CHECKING:
    from roofgen.importers.nsys import Options
    from roofgen.importers.trace_case import Trace

_UNITS = {"ns": 1, "us": 1000, "\u00b5s": 1000, "ms": 10**6, "s": 10**9}
_TIMED = re.compile(r"^(Start|Duration) \((ns|us|\u00b5s|ms|s)\)$")
_NEEDED = ("CorrId", "GrdX", "GrdY", "GrdZ", "BlkX", "BlkY", "BlkZ", "Name")
_CHUNK = 50_000


def _header_index(lines: io.TextIOBase, path: Path) -> tuple[list[str], int]:
    """The header's fields and its line number, skipping what ``nsys stats`` printed
    before it; a summary report is refused."""
    for number, line in enumerate(lines, 1):
        if number > 200:
            break
        fields = next(csv.reader([line]), [])
        names = [f.strip() for f in fields]
        if not names:
            continue
        if any(n.startswith("Time (%)") or n == "Time(%)" for n in names) and (
            "Instances" in names or "Calls" in names or "Num Calls" in names
        ):
            raise ImportFailure(
                f"{path}:{number}: a summary report (cuda_gpu_kern_sum: one row per kernel "
                "name with totals), which says nothing of steps, launches in a step or GPU "
                "idle time: export the per-launch trace with `nsys stats --report "
                "cuda_gpu_trace --format csv REPORT.nsys-rep`, or the SQLite export with "
                "`nsys export --type sqlite`"
            )
        if names and _TIMED.match(names[0]):
            return names, number
    raise ImportFailure(
        f"{path}: not an Nsight Systems cuda_gpu_trace CSV nor an SQLite export: no header "
        "line 'Start (ns),Duration (ns),CorrId,...,Name' (export it with `nsys stats "
        "--report cuda_gpu_trace --format csv`, or `nsys export --type sqlite`)"
    )


def _ns(text: str, factor: int, path: Path, line: int, column: str) -> int:
    try:
        value = Decimal(text.replace(",", "")) * factor
    except InvalidOperation:
        raise ImportFailure(f"{path}:{line}: {column} {text!r} is not a number") from None
    if not value.is_finite() or value < 0:
        raise ImportFailure(f"{path}:{line}: {column} {text!r} is not a time")
    if value > INT64_MAX:
        raise ImportFailure(f"{path}:{line}: {column} {text!r} is past 2^63-1 ns: not a trace")
    return int(value.to_integral_value())


_DIM_RULES = dict(zip(_NEEDED[1:7], GRID_BLOCK, strict=True))


def _dim(text: str, path: Path, line: int, column: str) -> int | None:
    text = text.strip()
    if not text:
        return None
    rule = _DIM_RULES[column]
    if not text.isdigit() or len(text) > 20 or not rule.low <= int(text) <= rule.high:
        raise ImportFailure(f"{path}:{line}: {column} {text[:40]!r} is not {rule.meaning}")
    return int(text)


def read_csv_trace(path: Path, options: Options) -> Trace:
    from roofgen.importers.nsys_sql import database as _database
    from roofgen.importers.nsys_sql import temp_writes

    try:
        handle = path.open(encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise ImportFailure(f"{path}: cannot read the file: {exc.strerror}") from None
    try:
        with handle, _database(None, path.stat().st_size) as db:
            names, header_line = _header_index(handle, path)
            column = {name: i for i, name in enumerate(names)}
            missing = [n for n in _NEEDED if n not in column]
            if missing:
                raise ImportFailure(
                    f"{path}:{header_line}: the header lacks {', '.join(missing)}: not a "
                    "cuda_gpu_trace report"
                )
            start_f = _UNITS[_TIMED.match(names[0]).group(2)]  # type: ignore[union-attr]
            dur_name = next((n for n in names if n.startswith("Duration (")), None)
            if dur_name is None or not _TIMED.match(dur_name):
                raise ImportFailure(f"{path}:{header_line}: no 'Duration (ns)' column")
            dur_f = _UNITS[_TIMED.match(dur_name).group(2)]  # type: ignore[union-attr]
            with temp_writes(db):
                db.execute(
                    "CREATE TEMP TABLE k (name TEXT, gx INTEGER, gy INTEGER, gz INTEGER, "
                    "bx INTEGER, by_ INTEGER, bz INTEGER, s INTEGER, e INTEGER, dev TEXT)"
                )
            others = _load(
                handle, db, column, names[0], dur_name, (start_f, dur_f), path, header_line
            )
            return _summarise(db, options, path, others)
    except UnicodeDecodeError as exc:
        raise ImportFailure(f"{path}: not UTF-8 text (byte {exc.start}): not an nsys CSV") from None
    except csv.Error as exc:
        raise ImportFailure(f"{path}: not a CSV file nsys writes: {exc}") from None


def _load(
    handle: io.TextIOBase,
    db: object,
    column: dict[str, int],
    start_name: str,
    dur_name: str,
    factors: tuple[int, int],
    path: Path,
    header_line: int,
) -> tuple[int, int]:
    """Kernel rows into ``temp.k``, in chunks; the copies and memsets left out and
    their time (ns)."""
    from roofgen.importers.kernel_names import clean_name

    rows: list[tuple[object, ...]] = []
    skipped, skipped_ns = 0, 0
    width = max(column.values()) + 1
    dev = column.get("Device")
    for number, fields in enumerate(csv.reader(handle), header_line + 1):
        if not fields:
            continue
        if len(fields) < width:
            raise ImportFailure(
                f"{path}:{number}: {len(fields)} fields where the header has {width}"
            )
        start = _ns(fields[column[start_name]], factors[0], path, number, start_name)
        dur = _ns(fields[column[dur_name]], factors[1], path, number, dur_name)
        dims = [_dim(fields[column[n]], path, number, n) for n in _NEEDED[1:7]]
        if dims[0] is None:  # a copy or memset: no grid
            skipped += 1
            skipped_ns += dur
            continue
        _fits(start, dur, dims, path, number)
        rows.append(
            (
                clean_name(fields[column["Name"]]),
                *dims,
                start,
                start + dur,
                fields[dev] if dev is not None else "",
            )
        )
        if len(rows) >= _CHUNK:
            _insert(db, rows)
            rows.clear()
    if rows:
        _insert(db, rows)
    return skipped, skipped_ns


def _insert(db: object, rows: list[tuple[object, ...]]) -> None:
    from roofgen.importers.nsys_sql import temp_writes

    assert isinstance(db, sqlite3.Connection)
    with temp_writes(db):
        db.executemany("INSERT INTO temp.k VALUES (?,?,?,?,?,?,?,?,?,?)", rows)


def _fits(start: int, dur: int, dims: list[int | None], path: Path, line: int) -> None:
    """A kernel row's end within 2^63-1 ns and its block of at most 1,024 threads."""
    if start + dur > INT64_MAX:
        raise ImportFailure(f"{path}:{line}: the kernel ends past 2^63-1 ns: not a trace")
    if None in dims:
        raise ImportFailure(f"{path}:{line}: a kernel row with part of its grid or block")
    bx, by, bz = dims[3:6]
    threads = int(bx or 0) * int(by or 0) * int(bz or 0)
    if threads > MAX_THREADS:
        raise ImportFailure(
            f"{path}:{line}: a block of {threads:,} threads (BlkX * BlkY * BlkZ), more "
            f"than CUDA's {MAX_THREADS:,}"
        )


def _summarise(db: object, options: Options, path: Path, others: tuple[int, int]) -> Trace:
    import sqlite3

    from roofgen.importers.nsys_sql import aggregate, whole_span
    from roofgen.importers.trace_case import duration

    assert isinstance(db, sqlite3.Connection)
    devices = [r[0] for r in db.execute("SELECT DISTINCT dev FROM temp.k ORDER BY dev")]
    where = ""
    if len(devices) > 1:
        if options.device is None:
            raise ImportFailure(
                f"{path}: kernels ran on {', '.join(devices)}: a step's busy time is one "
                "GPU's; choose one with --device N (the number in brackets)"
            )
        wanted = [d for d in devices if d.rstrip().endswith(f"({options.device})")]
        if not wanted:
            raise ImportFailure(f"{path}: no kernel ran on device {options.device}")
        where = " AND dev = " + "'" + wanted[0].replace("'", "''") + "'"
    cols = "0 AS step, name, gx, gy, gz, bx, by_, bz, s, e"
    spans: Callable[[dict[int, tuple[int, int]]], int]
    if options.window is None:
        what = "the whole trace"
        source = f"SELECT {cols} FROM temp.k WHERE e > s{where}"
        spans = whole_span
    else:
        start, end = options.window
        what = f"the window {start} ns to {end} ns"
        source = f"SELECT {cols} FROM temp.k WHERE s >= {start} AND e <= {end} AND e > s{where}"
        spans = lambda _found: end - start  # noqa: E731
    trace = aggregate(db, source, spans, what, lambda _db, _keys: {}, path)
    trace.method = trace.method.replace("(CUPTI kernel records)", "(nsys stats cuda_gpu_trace)")
    skipped, skipped_ns = others
    if skipped:
        trace.notes.append(
            f"{skipped} memory copies and memsets ({duration(skipped_ns)}) are not kernels: "
            "not counted in the GPU-busy time"
        )
    trace.notes.append(
        "a cuda_gpu_trace CSV lists no CUDA API calls: if the program launches CUDA graphs, "
        "their kernels are here only when profiled with --cuda-graph-trace=node"
    )
    return trace
