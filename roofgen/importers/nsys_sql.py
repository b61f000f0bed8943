"""The SQL both Nsight Systems readers share: a bounded read-only connection, and the
sums over a source of kernel rows (per kernel name and shape; per step, the union of
the kernels' intervals by a window function), so millions of rows stay in SQLite."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from roofgen.importers import ImportFailure
from roofgen.importers.kernel_names import MAX_NAME, clean_name
from roofgen.importers.trace_case import KernelStat, Steps, Trace

#: A case holds at most this many entries (kernel name, grid and block).
MAX_ENTRIES = 2000
#: Kernel names are cut in SQL, before anything else reads them, to one character more
#: than the case keeps (kernel_names.MAX_NAME, shared with import torch-trace), so
#: clean_name sees the cut and marks it.
MAX_NAME_CHARS = MAX_NAME + 1

# SQLite's limits on an import's connection (``Connection.setlimit``): the longest
# string or blob a value may be, the longest statement, the deepest expression. Far
# above what a real export or roofgen's own SQL needs, far below SQLite's defaults.
LIMITS = (
    (sqlite3.SQLITE_LIMIT_LENGTH, 16 << 20, "a value longer than 16 MiB"),
    (sqlite3.SQLITE_LIMIT_SQL_LENGTH, 1 << 20, "an SQL statement longer than 1 MiB"),
    (sqlite3.SQLITE_LIMIT_EXPR_DEPTH, 200, "an expression nested more than 200 deep"),
)
#: SQLite's virtual-machine steps an import may take: this many per byte of input, and
#: at least MIN_STEPS (imports of the real exports and of bench/bench_nsys.py take 0.6
#: to 4 a byte).
STEPS_PER_BYTE = 100
MIN_STEPS = 100_000_000
_EVERY = 10_000  # steps between two calls of the progress handler


class _Budget:
    """The progress handler: interrupts SQLite once it has taken ``steps`` steps."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.calls_left = steps // _EVERY
        self.spent = False

    def __call__(self) -> int:
        self.calls_left -= 1
        self.spent = self.calls_left < 0
        return 1 if self.spent else 0


def refuse_wal(path: Path) -> None:
    """Refuse a write-ahead-log database before SQLite opens it: reading one creates
    ``-wal`` and ``-shm`` files beside it (and fails in a read-only folder), and
    ``immutable=1`` would silently read what the log has not yet written back."""
    try:
        with path.open("rb") as handle:
            header = handle.read(20)
    except OSError as exc:
        raise ImportFailure(f"{path}: cannot read the file: {exc.strerror}") from None
    log = Path(f"{path}-wal")
    if 2 not in header[18:20] and not log.exists():
        return
    copies = f"{path.name} and {log.name}" if log.exists() else path.name
    raise ImportFailure(
        f"{path}: an SQLite database in WAL (write-ahead log) mode, which roofgen does not "
        "open: reading it would create files beside it. Copy "
        f"{copies} elsewhere and make the copy a plain database with `sqlite3 "
        f"COPY.sqlite 'PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;'`, "
        "then import the copy (`nsys export --type sqlite` writes a plain one)"
    )


def _decoded(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


@contextmanager
def database(path: Path | None, size: int = 0) -> Iterator[sqlite3.Connection]:
    """A read-only connection to ``path`` (None: SQLite's private temporary database
    for ``size`` bytes of CSV), bounded: SQLite's limits above, a schema that is not
    trusted to run functions, queries only (see :func:`temp_writes`), a step budget
    proportional to the input's size, text decoded with U+FFFD for what is not
    UTF-8, the cache bounded. Every SQLite error becomes an :class:`ImportFailure`,
    one that hit a limit naming it."""
    where = str(path) if path is not None else "the CSV"
    if path is not None:
        refuse_wal(path)
        size = path.stat().st_size
    budget = _Budget(max(MIN_STEPS, STEPS_PER_BYTE * size))
    try:
        if path is None:
            db = sqlite3.connect("")
        else:
            db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        with closing(db):
            for limit, value, _ in LIMITS:
                db.setlimit(limit, value)
            db.text_factory = _decoded
            db.set_progress_handler(budget, _EVERY)
            db.execute("PRAGMA trusted_schema = OFF")
            db.execute("PRAGMA cache_size = -65536")
            db.execute("PRAGMA temp.cache_size = -65536")
            db.execute("PRAGMA temp_store = FILE")
            db.execute("PRAGMA query_only = ON")
            yield db
    except sqlite3.DatabaseError as exc:
        raise ImportFailure(_sqlite_failure(where, exc, budget)) from None


@contextmanager
def temp_writes(db: sqlite3.Connection) -> Iterator[None]:
    """Let roofgen's own statements write its temporary tables: ``query_only`` is
    lifted for them alone (the export itself is opened read-only all along)."""
    db.execute("PRAGMA query_only = OFF")
    try:
        yield
    finally:
        db.execute("PRAGMA query_only = ON")


def _sqlite_failure(where: str, exc: sqlite3.DatabaseError, budget: _Budget) -> str:
    text = str(exc)
    if budget.spent or text == "interrupted":
        return (
            f"{where}: SQLite took more than {budget.steps:,} steps reading it (the budget "
            f"for its size: {STEPS_PER_BYTE:,} a byte, at least {MIN_STEPS:,}): an export "
            "whose schema or rows make SQLite compute far more than an nsys export needs"
        )
    hit = {
        "string or blob too big": LIMITS[0][2],
        "statement too long": LIMITS[1][2],
        "Expression tree is too large": LIMITS[2][2],
    }
    for words, what in hit.items():
        if words.lower() in text.lower():
            return f"{where}: {what}, more than an import allows ({text}): not an nsys export"
    if text == "integer overflow":
        return f"{where}: the kernels' times add up past 2^63 ns (integer overflow): not a trace"
    return (
        f"{where}: not an Nsight Systems SQLite export SQLite can read ({text}): "
        "export the report with `nsys export --type sqlite`"
    )


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
    checked: Callable[[list[tuple[object, ...]]], None] = lambda _keys: None,
    check: str = "1",
) -> Trace:
    """Per kernel name and shape, and per step, the figures of the kernels ``source``
    selects (columns step, name, gx, gy, gz, bx, by_, bz, s, e; ns). SQLite groups
    the rows by step, name and shape, and Python reads the groups in chunks and sums
    them per entry and per step; a second query sums what each kernel adds to the
    union of its step's intervals so far (a window function). ``span_of`` gives the
    steps' summed span from each step's first kernel start and last end. ``source``
    holds ``{check}``, a row's check: it runs in the first pass only, and ``checked``
    after it, given the groups' keys, refuses the file if a row or a group failed."""
    with_src = "WITH src AS (" + source.replace("{check}", check) + ") "
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
    checked(list(groups))
    with_src = "WITH src AS (" + source.replace("{check}", "1") + ") "
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
        name = clean_name(lookup.get(name_key, str(name_key)))  # not UTF-8: U+FFFD already
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
