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


def _dims(*values: object) -> tuple[int, ...] | None:
    dims = tuple(v for v in values if isinstance(v, int))
    return dims if len(dims) == len(values) else None


def whole_span(found: dict[int, tuple[int, int]]) -> int:
    """The span of one step: its first kernel's start to its last kernel's end."""
    return sum(last - first for first, last in found.values())


def aggregate(
    db: sqlite3.Connection,
    source: str,
    span_of: Callable[[dict[int, tuple[int, int]]], int],
    what: str,
    names: Callable[[sqlite3.Connection, list[object]], dict[object, str]],
    path: Path,
) -> Trace:
    """Per kernel name and shape, and per step, the figures of the kernels ``source``
    selects (columns step, name, gx, gy, gz, bx, by_, bz, s, e; ns). SQLite groups
    the rows by step, name and shape, and Python reads the groups in chunks and sums
    them per entry and per step; a second query sums what each kernel adds to the
    union of its step's intervals so far (a window function). ``span_of`` gives the
    steps' summed span from each step's first kernel start and last end."""
    with_src = f"WITH src AS ({source}) "
    cursor = db.execute(
        with_src + "SELECT step, name, gx, gy, gz, bx, by_, bz, count(*), sum(e - s), "
        "min(e - s), max(e - s), min(s), max(e) FROM src "
        "GROUP BY step, name, gx, gy, gz, bx, by_, bz"
    )
    groups: dict[tuple[object, ...], list[int]] = {}
    steps: dict[int, list[int]] = {}  # step -> first start, last end
    while chunk := cursor.fetchmany(10_000):
        for step, *key, count, total, low, high, first, last in chunk:
            group = groups.get(tuple(key))
            if group is None:
                if len(groups) >= MAX_ENTRIES:
                    raise ImportFailure(
                        f"{path}: more than {MAX_ENTRIES:,} different kernels (name, grid and "
                        f"block) in {what}, more than a case may hold: import a --range or "
                        "--window"
                    )
                groups[tuple(key)] = [count, total, low, high]
            else:
                group[0] += count
                group[1] += total
                group[2], group[3] = min(group[2], low), max(group[3], high)
            found = steps.get(step)
            if found is None:
                steps[step] = [first, last]
            else:
                found[0], found[1] = min(found[0], first), max(found[1], last)
    if not groups:
        raise ImportFailure(f"{path}: no kernel in {what}")
    span_ns = span_of({step: (v[0], v[1]) for step, v in steps.items()})
    busy = db.execute(
        with_src + "SELECT sum(max(0, e - max(s, coalesce(reach, s)))) FROM (SELECT s, e, "
        "max(e) OVER (PARTITION BY step ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING AND "
        "1 PRECEDING) AS reach FROM src)"
    ).fetchone()[0]
    lookup = names(db, [key[0] for key in groups])
    kernels = []
    for (name_key, gx, gy, gz, bx, by, bz), (count, total, low, high) in groups.items():
        name = lookup.get(name_key, str(name_key))
        grid = _dims(gx, gy, gz)
        block = _dims(bx, by, bz)
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
    return _trace(path, what, kernels, Steps(what, len(steps), span_ns, int(busy or 0)))


def _trace(path: Path, what: str, kernels: list[KernelStat], steps: Steps) -> Trace:
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
