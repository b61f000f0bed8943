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
from roofgen.importers.nsys_schema import (
    DEVICE,
    KERNELS,
    NVTX,
    NVTX_TIMES,
    READ,
    RUNTIME,
    TIMES,
    BadRows,
    check_shapes,
    checked_sql,
    columns,
    diagnose,
    plain_tables,
)
from roofgen.importers.nsys_sql import MAX_NAME_CHARS, aggregate, temp_writes, whole_span
from roofgen.importers.nsys_sql import database as _database
from roofgen.importers.trace_case import Trace

SQLITE_MAGIC = b"SQLite format 3\x00"
_PID = 16777216  # globalTid / 2^24 = globalPid / 2^24: the process, as nsys encodes it
_KEY = 4294967296  # a launch's key: process * 2^32 + correlationId (32 bits)


def _key(tid: str, corr: str) -> str:
    """A launch's key in SQL, never past 2^63 (which would make it a REAL): the
    process's low 31 bits, then the correlation id's 32."""
    return f"(({tid} / {_PID}) % 2147483648) * {_KEY} + ({corr} % {_KEY})"


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


def _read_export(path: Path, options: Options) -> Trace:
    with _database(path) as db:
        tables = plain_tables(db, path)
        if KERNELS not in tables:
            raise ImportFailure(
                f"{path}: no {KERNELS} table: the trace recorded no CUDA kernels (profile with "
                "`nsys profile --trace=cuda`), or this is not an `nsys export --type sqlite` file"
            )
        needed = set(READ[KERNELS])
        missing = needed - columns(db, KERNELS) or ({"StringIds"} - tables)
        if missing:
            raise ImportFailure(
                f"{path}: {KERNELS} lacks {', '.join(sorted(missing))}: not an export roofgen "
                "reads (Nsight Systems 2021 or later)"
            )
        bad = BadRows(db, path)
        warnings: list[str] = []
        graph = _graph_check(db, tables, path, bad)
        device = _device(db, options.device, path)
        # the rows' check first: SQLite evaluates the terms in order, and a later one
        # (end > start) would otherwise leave a bad row out unseen
        where = "{check}"
        where += "" if device is None else f" AND k.deviceId = {int(device)}"
        if options.range_name is not None:
            what = _ranges(db, tables, options.range_name, path, bad)
            source = (
                f"SELECT l.step AS step, k.demangledName AS name, k.gridX AS gx, k.gridY AS gy, "
                f"k.gridZ AS gz, k.blockX AS bx, k.blockY AS by_, k.blockZ AS bz, "
                f"k.start AS s, k.end AS e FROM main.{KERNELS} k CROSS JOIN temp.launch l "
                f"ON l.key = {_key('k.globalPid', 'k.correlationId')} "
                f"WHERE {where} AND k.end > k.start"
            )
            ranges = {
                step: (start, end)
                for step, start, end in db.execute("SELECT step, start, end FROM temp.steps")
            }

            def by_range(found: dict[int, tuple[int, int]]) -> int:
                """Each step from the earlier of its start and its first kernel's start
                (a kernel starts after its launch, inside the range, in any real trace)
                to the later of its end and its last kernel's end."""
                return sum(
                    max(ranges[k][1], last) - min(ranges[k][0], first)
                    for k, (first, last) in found.items()
                )

            spans: Callable[[dict[int, tuple[int, int]]], int] = by_range

        else:
            what, source, spans = _plain(KERNELS, where, options, path, db, warnings)

        def checked(keys: list[tuple[object, ...]]) -> None:
            bad.raise_first()
            check_shapes(db, keys, path)

        check = checked_sql(TIMES, KERNELS, "k")
        trace = aggregate(db, source, spans, what, _names, path, checked, check)
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
        source = f"SELECT {cols} FROM main.{table} k WHERE {where} AND k.end > k.start"
        return "the whole trace", source, whole_span
    start, end = options.window
    inside = f"k.start >= {start} AND k.end <= {end}"
    partly = db.execute(
        f"SELECT count(*) FROM main.{table} k WHERE {where.replace('{check}', '1')} "
        f"AND k.end > {start} "
        f"AND k.start < {end} AND NOT ({inside})"
    ).fetchone()[0]
    if partly:
        warnings.append(
            f"{partly} kernel(s) lie partly inside the window: left out (widen the window "
            "to take them)"
        )
    source = f"SELECT {cols} FROM main.{table} k WHERE {where} AND {inside} AND k.end > k.start"
    return f"the window {start} ns to {end} ns", source, lambda _found: end - start


def _graph_check(db: sqlite3.Connection, tables: set[str], path: Path, bad: BadRows) -> list[str]:
    """Refuse a trace whose CUDA graph launches have no kernel rows: without
    ``--cuda-graph-trace=node`` Nsight Systems records a graph as a whole, and its
    kernels' times are missing. A graph launch's kernels share its correlationId."""
    if RUNTIME not in tables or not set(READ[RUNTIME]) <= columns(db, RUNTIME):
        return []
    graph_names = (
        "SELECT id FROM main.StringIds WHERE value LIKE 'cudaGraphLaunch%' "
        "OR value LIKE 'cuGraphLaunch%'"
    )
    if db.execute(graph_names + " LIMIT 1").fetchone() is None:
        return []
    with temp_writes(db):
        db.execute("CREATE TEMP TABLE graph (key INTEGER PRIMARY KEY)")
        db.execute(
            f"INSERT OR IGNORE INTO temp.graph SELECT {_key('r.globalTid', 'r.correlationId')} "
            f"FROM main.{RUNTIME} r WHERE r.nameId IN ({graph_names}) "
            f"AND {checked_sql(TIMES, RUNTIME, 'r')}"
        )
    bad.raise_first()
    launches = db.execute("SELECT count(*) FROM temp.graph").fetchone()[0]
    if not launches:
        return []
    traced = db.execute(
        f"SELECT count(DISTINCT key) FROM (SELECT {_key('k.globalPid', 'k.correlationId')} "
        f"AS key FROM main.{KERNELS} k) WHERE key IN (SELECT key FROM temp.graph)"
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
    odd = next((d for d in devices if not isinstance(d, int) or d < 0), False)
    if odd is not False:
        rowid = db.execute(
            f"SELECT _rowid_ FROM main.{KERNELS} WHERE deviceId IS ? LIMIT 1", (odd,)
        ).fetchone()[0]
        raise ImportFailure(f"{path}: {diagnose(KERNELS, rowid, (DEVICE,), (odd,))}")
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


def _ranges(db: sqlite3.Connection, tables: set[str], name: str, path: Path, bad: BadRows) -> str:
    """Fill ``temp.steps`` with the instances of the NVTX range ``name`` and
    ``temp.launch`` with each runtime call made inside one, keyed by process and
    correlationId; the steps' description. The rows read are checked as they are read."""
    for table in (NVTX, RUNTIME):
        if table not in tables:
            raise ImportFailure(
                f"{path}: no {table} table: --range needs the NVTX ranges and the CUDA API "
                "calls (profile with `nsys profile --trace=cuda,nvtx`)"
            )
        lacking = set(READ[table]) - columns(db, table)
        if lacking:
            raise ImportFailure(
                f"{path}: {table} lacks {', '.join(sorted(lacking))}: not an export roofgen "
                "reads (Nsight Systems 2021 or later)"
            )
    text = "coalesce(n.text, t.value)"
    with temp_writes(db):
        db.executescript(
            "CREATE TEMP TABLE steps (step INTEGER PRIMARY KEY, tid INTEGER, start INTEGER, "
            "end INTEGER); "
            "CREATE TEMP TABLE launch (key INTEGER PRIMARY KEY, step INTEGER);"
        )
        db.execute(
            f"INSERT INTO temp.steps (tid, start, end) SELECT n.globalTid, n.start, n.end "
            f"FROM main.{NVTX} n LEFT JOIN main.StringIds t ON t.id = n.textId "
            f"WHERE n.end IS NOT NULL AND {text} = ? "
            f"AND {checked_sql(NVTX_TIMES, NVTX, 'n')} ORDER BY n.start",
            (name,),
        )
        bad.raise_first()
        db.execute("DELETE FROM temp.steps WHERE end = start")  # an empty range is no step
    count = db.execute("SELECT count(*) FROM temp.steps").fetchone()[0]
    if not count:
        found = db.execute(
            f"SELECT substr({text}, 1, {MAX_NAME_CHARS}) AS name, count(*) FROM main.{NVTX} n "
            f"LEFT JOIN main.StringIds t ON t.id = n.textId WHERE n.end IS NOT NULL "
            f"AND name IS NOT NULL GROUP BY name ORDER BY count(*) DESC, name LIMIT 12"
        ).fetchall()
        listed = ", ".join(f"{_short(r[0])!r} ({r[1]})" for r in found) or "none"
        raise ImportFailure(
            f"{path}: no NVTX range {name!r} (matched by its whole text); the trace's "
            f"ranges: {listed}"
        )
    with temp_writes(db):
        db.execute("CREATE INDEX temp.steps_at ON steps (tid, start)")
        db.execute(
            f"INSERT OR IGNORE INTO temp.launch (key, step) SELECT c.key, c.step FROM "
            f"(SELECT {_key('r.globalTid', 'r.correlationId')} AS key, r.end AS rend, "
            f"(SELECT st.step FROM temp.steps st WHERE st.tid = r.globalTid AND "
            f"st.start <= r.start ORDER BY st.start DESC LIMIT 1) AS step "
            f"FROM main.{RUNTIME} r WHERE r.globalTid IN (SELECT tid FROM temp.steps) "
            f"AND {checked_sql(TIMES, RUNTIME, 'r')}) c "
            f"JOIN temp.steps st ON st.step = c.step WHERE c.rend <= st.end"
        )
    bad.raise_first()
    return f"NVTX range {name!r}"


def _short(value: object) -> str:
    text = str(value)
    return text if len(text) <= 200 else text[:199] + "\u2026"


def _names(db: sqlite3.Connection, keys: list[object]) -> dict[object, str]:
    """The StringIds text of each name id, cut in SQL to MAX_NAME_CHARS characters; a
    value that is not TEXT stands as its id."""
    out: dict[object, str] = {}
    ids = [k for k in keys if isinstance(k, int)]
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for ident, value in db.execute(
            f"SELECT id, substr(value, 1, {MAX_NAME_CHARS}) FROM main.StringIds "
            f"WHERE id IN ({marks}) AND typeof(value) = 'text'",
            chunk,
        ):
            out[ident] = str(value)
    return out
