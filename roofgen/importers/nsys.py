"""``roofgen import nsys``: an Nsight Systems trace into a case's kernels, steps and
end-to-end time.

Reads the SQLite export (``nsys export --type sqlite``: ``CUPTI_ACTIVITY_KIND_KERNEL``,
``StringIds``, ``CUPTI_ACTIVITY_KIND_RUNTIME``, ``NVTX_EVENTS``) or the per-launch CSV
of ``nsys stats --report cuda_gpu_trace --format csv`` (:mod:`roofgen.importers.nsys_csv`).

A step is one of:

* an NVTX range (``--range NAME``, matched by its text): a kernel belongs to the
  range whose runtime API call launched it, found through the call's
  ``correlationId`` on the range's own thread (``globalTid``), the call lying inside
  the range. Never by time overlap: a kernel runs on the GPU after its launch, often
  after the range has ended. Nested ranges of one name: the innermost;
* a time window (``--window START:END``): the kernels lying wholly inside it;
* else the whole trace, one step.

A step lasts from its start to its end or its last kernel's end, whichever is
later. Its GPU-busy time is the union of its kernels' intervals (concurrent kernels
count once); the rest is idle. Each kernel's share is over that union.

Millions of rows stay in SQLite: grouping, the union of intervals (a window
function) and the step of each launch are SQL; Python sees one row per kernel
name and shape, per step. The export is opened read-only; the tables roofgen makes
are SQLite's temporary ones, on disk past a 64 MiB cache.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from roofgen.importers import ImportFailure
from roofgen.importers.nsys_sql import aggregate, whole_span
from roofgen.importers.nsys_sql import database as _database
from roofgen.importers.trace_case import Trace

SQLITE_MAGIC = b"SQLite format 3\x00"
KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
NVTX = "NVTX_EVENTS"
_PID = 16777216  # globalTid / 2^24 = globalPid / 2^24: the process, as nsys encodes it
_KEY = 4294967296  # a launch's key: process * 2^32 + correlationId (32 bits)


@dataclass(frozen=True)
class Options:
    range_name: str | None = None
    window: tuple[int, int] | None = None  # ns, in the trace's clock
    device: int | None = None


def read_trace(path: Path, options: Options) -> Trace:
    """The trace of ``path`` (a SQLite export or a cuda_gpu_trace CSV)."""
    if path.suffix in (".nsys-rep", ".qdrep"):
        raise ImportFailure(
            f"{path}: a report file, which only Nsight Systems reads: export it first with "
            f"`nsys export --type sqlite {path.name}` (or `nsys stats --report cuda_gpu_trace "
            f"--format csv {path.name}`) and import that"
        )
    try:
        with path.open("rb") as handle:
            magic = handle.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise ImportFailure(f"{path}: cannot read the file: {exc.strerror}") from None
    if magic == SQLITE_MAGIC:
        return _read_export(path, options)
    from roofgen.importers.nsys_csv import read_csv_trace

    return read_csv_trace(path, options)


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in db.execute(f"PRAGMA main.table_info({table})")}


def _read_export(path: Path, options: Options) -> Trace:
    with _database(path) as db:
        tables = {
            r[0] for r in db.execute("SELECT name FROM main.sqlite_master WHERE type = 'table'")
        }
        if KERNELS not in tables:
            raise ImportFailure(
                f"{path}: no {KERNELS} table: the trace recorded no CUDA kernels (profile with "
                "`nsys profile --trace=cuda`), or this is not an `nsys export --type sqlite` file"
            )
        needed = {"start", "end", "correlationId", "globalPid", "demangledName", "deviceId"}
        missing = needed - _columns(db, KERNELS) or ({"StringIds"} - tables)
        if missing:
            raise ImportFailure(
                f"{path}: {KERNELS} lacks {', '.join(sorted(missing))}: not an export roofgen "
                "reads (Nsight Systems 2021 or later)"
            )
        warnings: list[str] = []
        graph = _graph_check(db, tables, path)
        device = _device(db, options.device, path)
        where = "" if device is None else f" AND k.deviceId = {int(device)}"
        if options.range_name is not None:
            what = _ranges(db, tables, options.range_name, path)
            source = (
                f"SELECT l.step AS step, k.demangledName AS name, k.gridX AS gx, k.gridY AS gy, "
                f"k.gridZ AS gz, k.blockX AS bx, k.blockY AS by_, k.blockZ AS bz, "
                f"k.start AS s, k.end AS e FROM main.{KERNELS} k CROSS JOIN temp.launch l "
                f"ON l.key = (k.globalPid / {_PID}) * {_KEY} + k.correlationId "
                f"WHERE k.end > k.start{where}"
            )
            ranges = {
                step: (start, end)
                for step, start, end in db.execute("SELECT step, start, end FROM temp.steps")
            }

            def by_range(found: dict[int, tuple[int, int]]) -> int:
                return sum(max(ranges[k][1], last) - ranges[k][0] for k, (_, last) in found.items())

            spans: Callable[[dict[int, tuple[int, int]]], int] = by_range

        else:
            what, source, spans = _plain(KERNELS, where, options, path, db, warnings)
        trace = aggregate(db, source, spans, what, _names, path)
        if options.range_name is not None:
            ranges = db.execute("SELECT count(*) FROM temp.steps").fetchone()[0]
            if ranges > trace.steps.count:
                trace.notes.append(
                    f"{ranges - trace.steps.count} of the {ranges} instances of the range "
                    "launched no kernel: not counted as steps"
                )
        trace.warnings += warnings
        trace.notes += graph
        return trace


def _plain(
    table: str,
    where: str,
    options: Options,
    path: Path,
    db: sqlite3.Connection,
    warnings: list[str],
) -> tuple[str, str, Callable[[dict[int, tuple[int, int]]], int]]:
    """A window's (or the whole trace's) source of kernels and its one step's span."""
    cols = (
        "0 AS step, k.demangledName AS name, k.gridX AS gx, k.gridY AS gy, k.gridZ AS gz, "
        "k.blockX AS bx, k.blockY AS by_, k.blockZ AS bz, k.start AS s, k.end AS e"
    )
    if options.window is None:
        source = f"SELECT {cols} FROM main.{table} k WHERE k.end > k.start{where}"
        return "the whole trace", source, whole_span
    start, end = options.window
    inside = f"k.start >= {start} AND k.end <= {end}"
    partly = db.execute(
        f"SELECT count(*) FROM main.{table} k WHERE k.end > {start} AND k.start < {end} "
        f"AND NOT ({inside}){where}"
    ).fetchone()[0]
    if partly:
        warnings.append(
            f"{partly} kernel(s) lie partly inside the window: left out (widen the window "
            "to take them)"
        )
    source = f"SELECT {cols} FROM main.{table} k WHERE {inside} AND k.end > k.start{where}"
    return f"the window {start} ns to {end} ns", source, lambda _found: end - start


def _graph_check(db: sqlite3.Connection, tables: set[str], path: Path) -> list[str]:
    """Refuse a trace whose CUDA graph launches have no kernel rows: without
    ``--cuda-graph-trace=node`` Nsight Systems records a graph as a whole, and its
    kernels' times are missing. A graph launch's kernels share its correlationId."""
    if RUNTIME not in tables or "nameId" not in _columns(db, RUNTIME):
        return []
    ids = [
        r[0]
        for r in db.execute(
            "SELECT id FROM main.StringIds WHERE value LIKE 'cudaGraphLaunch%' "
            "OR value LIKE 'cuGraphLaunch%'"
        )
    ]
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    db.execute("CREATE TEMP TABLE graph (key INTEGER PRIMARY KEY)")
    db.execute(
        f"INSERT OR IGNORE INTO temp.graph SELECT (globalTid / {_PID}) * {_KEY} + correlationId "
        f"FROM main.{RUNTIME} WHERE nameId IN ({marks})",
        ids,
    )
    launches = db.execute("SELECT count(*) FROM temp.graph").fetchone()[0]
    if not launches:
        return []
    traced = db.execute(
        f"SELECT count(DISTINCT key) FROM (SELECT (globalPid / {_PID}) * {_KEY} + correlationId "
        f"AS key FROM main.{KERNELS}) WHERE key IN (SELECT key FROM temp.graph)"
    ).fetchone()[0]
    missing = launches - traced
    if missing == launches:
        raise ImportFailure(
            f"{path}: {launches} CUDA graph launch(es) (cudaGraphLaunch) and no kernel row of "
            "any: Nsight Systems traced each graph as a whole, so its kernels' times are "
            "missing. Profile again with `nsys profile --cuda-graph-trace=node`"
        )
    if missing:
        return [
            f"{missing} of {launches} CUDA graph launches have no kernel rows (profiled "
            "without --cuda-graph-trace=node, or cut off at the trace's end)"
        ]
    return [f"{launches} CUDA graph launch(es); their kernels are traced node by node"]


def _device(db: sqlite3.Connection, given: int | None, path: Path) -> int | None:
    devices = [r[0] for r in db.execute(f"SELECT DISTINCT deviceId FROM main.{KERNELS}")]
    if given is not None:
        if given not in devices:
            raise ImportFailure(
                f"{path}: no kernel ran on device {given}; devices with kernels: "
                f"{', '.join(map(str, sorted(devices))) or 'none'}"
            )
        return given
    if len(devices) > 1:
        raise ImportFailure(
            f"{path}: kernels ran on devices {', '.join(map(str, sorted(devices)))}: a step's "
            "busy time is one GPU's; choose one with --device N"
        )
    return None


def _ranges(db: sqlite3.Connection, tables: set[str], name: str, path: Path) -> str:
    """Fill ``temp.steps`` with the instances of the NVTX range ``name`` and
    ``temp.launch`` with each runtime call made inside one, keyed by process and
    correlationId; the steps' description."""
    for table in (NVTX, RUNTIME):
        if table not in tables:
            raise ImportFailure(
                f"{path}: no {table} table: --range needs the NVTX ranges and the CUDA API "
                "calls (profile with `nsys profile --trace=cuda,nvtx`)"
            )
    text = "coalesce(n.text, t.value)"
    db.executescript(
        "CREATE TEMP TABLE steps (step INTEGER PRIMARY KEY, tid INTEGER, start INTEGER, "
        "end INTEGER); CREATE TEMP TABLE launch (key INTEGER PRIMARY KEY, step INTEGER);"
    )
    db.execute(
        f"INSERT INTO temp.steps (tid, start, end) SELECT n.globalTid, n.start, n.end "
        f"FROM main.{NVTX} n LEFT JOIN main.StringIds t ON t.id = n.textId "
        f"WHERE n.end IS NOT NULL AND n.end > n.start AND {text} = ? ORDER BY n.start",
        (name,),
    )
    count = db.execute("SELECT count(*) FROM temp.steps").fetchone()[0]
    if not count:
        found = db.execute(
            f"SELECT {text} AS name, count(*) FROM main.{NVTX} n "
            f"LEFT JOIN main.StringIds t ON t.id = n.textId WHERE n.end IS NOT NULL "
            f"AND name IS NOT NULL GROUP BY name ORDER BY count(*) DESC, name LIMIT 12"
        ).fetchall()
        listed = ", ".join(f"{r[0]!r} ({r[1]})" for r in found) or "none"
        raise ImportFailure(
            f"{path}: no NVTX range {name!r} (matched by its whole text); the trace's "
            f"ranges: {listed}"
        )
    db.execute("CREATE INDEX temp.steps_at ON steps (tid, start)")
    db.execute(
        f"INSERT OR IGNORE INTO temp.launch (key, step) SELECT c.key, c.step FROM "
        f"(SELECT (r.globalTid / {_PID}) * {_KEY} + r.correlationId AS key, r.end AS rend, "
        f"(SELECT st.step FROM temp.steps st WHERE st.tid = r.globalTid AND "
        f"st.start <= r.start ORDER BY st.start DESC LIMIT 1) AS step "
        f"FROM main.{RUNTIME} r WHERE r.globalTid IN (SELECT tid FROM temp.steps)) c "
        f"JOIN temp.steps st ON st.step = c.step WHERE c.rend <= st.end"
    )
    return f"NVTX range {name!r}"


def _names(db: sqlite3.Connection, keys: list[object]) -> dict[object, str]:
    out: dict[object, str] = {}
    ids = [k for k in keys if isinstance(k, int)]
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for ident, value in db.execute(
            f"SELECT id, value FROM main.StringIds WHERE id IN ({marks})", chunk
        ):
            out[ident] = str(value)
    return out
