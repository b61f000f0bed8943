"""The SQL both Nsight Systems readers share: a bounded read-only connection, and the
sums over a source of kernel rows (per kernel name and shape; per step, the union of
the kernels' intervals by a window function), so millions of rows stay in SQLite."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from roofgen.importers import ImportFailure
from roofgen.importers.trace_case import KernelStat, Steps, Trace

#: A case holds at most this many entries (kernel name, grid and block).
MAX_ENTRIES = 2000


@contextmanager
def database(path: Path | None) -> Iterator[sqlite3.Connection]:
    """A read-only connection to ``path`` (None: SQLite's private temporary database),
    its cache bounded; every SQLite error becomes an :class:`ImportFailure`."""
    where = str(path) if path is not None else "the CSV"
    try:
        if path is None:
            db = sqlite3.connect("")
        else:
            db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        with closing(db):
            db.execute("PRAGMA cache_size = -65536")
            db.execute("PRAGMA temp.cache_size = -65536")
            db.execute("PRAGMA temp_store = FILE")
            yield db
    except sqlite3.DatabaseError as exc:
        raise ImportFailure(
            f"{where}: not an Nsight Systems SQLite export SQLite can read ({exc}): "
            "export the report with `nsys export --type sqlite`"
        ) from None


def aggregate(
    db: sqlite3.Connection,
    source: str,
    spans: str,
    what: str,
    names: Callable[[sqlite3.Connection, list[object]], dict[object, str]],
    path: Path,
) -> Trace:
    """Per kernel name and shape, and per step, the figures of the kernels ``source``
    selects (columns step, name, gx, gy, gz, bx, by_, bz, s, e; ns); ``spans`` gives
    each step's span from ``src``."""
    with_src = f"WITH src AS ({source}) "
    rows = db.execute(
        with_src + "SELECT name, gx, gy, gz, bx, by_, bz, count(*), sum(e - s), min(e - s), "
        "max(e - s) FROM src GROUP BY name, gx, gy, gz, bx, by_, bz"
    ).fetchall()
    if not rows:
        raise ImportFailure(f"{path}: no kernel in {what}")
    if len(rows) > MAX_ENTRIES:
        raise ImportFailure(
            f"{path}: {len(rows):,} different kernels (name, grid and block) in {what}, more "
            f"than a case may hold ({MAX_ENTRIES:,}): import a --range or --window"
        )
    busy = db.execute(
        with_src + "SELECT count(DISTINCT step), sum(gain) FROM (SELECT step, "
        "max(0, e - max(s, coalesce(reach, s))) AS gain FROM (SELECT step, s, e, max(e) OVER "
        "(PARTITION BY step ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) "
        "AS reach FROM src))"
    ).fetchone()
    span_ns = sum(int(r[1]) for r in db.execute(with_src + f"SELECT * FROM ({spans})"))
    lookup = names(db, [r[0] for r in rows])
    kernels = []
    for name_key, gx, gy, gz, bx, by, bz, count, total, low, high in rows:
        name = lookup.get(name_key, str(name_key))
        grid = (gx, gy, gz) if None not in (gx, gy, gz) else None
        block = (bx, by, bz) if None not in (bx, by, bz) else None
        kernels.append(
            KernelStat(
                key=f"{name}\x00{grid}\x00{block}",
                name=name,
                count=int(count),
                total_ns=int(total),
                min_ns=int(low),
                max_ns=int(high),
                grid=grid,
                block=block,
            )
        )
    kernels.sort(key=lambda k: (-k.total_ns, k.key))
    steps = Steps(what, int(busy[0]), span_ns, int(busy[1] or 0))
    return Trace(
        tool="nsys",
        source="Nsight Systems",
        timing="nsys",
        files=[path.name],
        kernels=kernels,
        steps=steps,
        method=(
            f"Kernel times from the Nsight Systems trace {path.name} (CUPTI kernel records); "
            f"steps: {what}. A kernel's share is over the union of the GPU-busy intervals."
        ),
    )
