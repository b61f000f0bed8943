"""What ``roofgen import nsys`` accepts of an export's schema and rows.

An SQLite file is a program as much as data: a view, a virtual table or a generated
column under a name roofgen reads would be computed on every read (a generated column
costing a second a row made a 10-row file take 76 s). So before any row is read, each
table read must be a plain table, and each column read a stored one (``PRAGMA
table_xinfo``: hidden 2 or 3 is generated). Triggers never fire: the export is opened
read-only and roofgen writes only its own temporary tables.

Rows are checked as they are read, in the query that reads them: a fast SQL test per
row (:func:`ok_sql`) and, for the first row that fails it, a Python diagnosis
(:class:`BadRows`) naming the table, the row id and the column. Times are INTEGER
nanoseconds in 0 .. 2^63-1 with ``end >= start``; grid and block within CUDA's ranges.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from roofgen.importers import ImportFailure
from roofgen.importers.trace_checks import BLOCK_LIMITS, GRID_LIMITS, MAX_THREADS

KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
NVTX = "NVTX_EVENTS"
STRINGS = "StringIds"

INT64_MAX = 2**63 - 1
_NOT_WRITTEN = "not an export Nsight Systems writes"


@dataclass(frozen=True)
class Rule:
    """A column read: INTEGER within ``low`` .. ``high`` (NULL where ``null_ok``)."""

    column: str
    low: int
    high: int
    null_ok: bool
    meaning: str


def _time(column: str, null_ok: bool = False) -> Rule:
    return Rule(column, 0, INT64_MAX, null_ok, "a time in ns, 0 to 2^63-1")


def _ident(column: str) -> Rule:
    return Rule(column, 0, INT64_MAX, True, "an id, 0 to 2^63-1")


# CUDA's launch bounds (trace_checks): a size of at least 1 in each column, and at most
# MAX_THREADS threads in a block in all (checked with the product).
def _dims(kind: str, limits: tuple[int, ...]) -> tuple[Rule, ...]:
    return tuple(
        Rule(f"{kind}{axis}", 1, limit, False, f"a {kind} size, 1 to {_shown(limit)}")
        for axis, limit in zip("XYZ", limits, strict=True)
    )


def _shown(limit: int) -> str:
    return "2^31-1" if limit == 2**31 - 1 else f"{limit:,}"


GRID_BLOCK = (*_dims("grid", GRID_LIMITS), *_dims("block", BLOCK_LIMITS))

# Checked on every row read, in SQL: the times. A kernel's name and shape are checked
# once per group of rows (name, grid and block: a few thousand at most), its device
# once per device; an odd id (correlationId, globalPid, globalTid) only fails to match.
TIMES = (_time("start"), _time("end"))
NVTX_TIMES = (_time("start"), _time("end", null_ok=True))
DEVICE = Rule("deviceId", 0, INT64_MAX, False, "a device number, 0 or more")
SHAPE = (Rule("demangledName", 0, INT64_MAX, False, "a StringIds id"), *GRID_BLOCK)
IDS = (_ident("correlationId"), _ident("globalPid"))

#: The columns read of each table; a table outside this map is never read.
READ: dict[str, tuple[str, ...]] = {
    KERNELS: tuple(r.column for r in (*TIMES, DEVICE, *IDS, *SHAPE)),
    RUNTIME: ("start", "end", "globalTid", "correlationId", "nameId"),
    NVTX: ("start", "end", "text", "textId", "globalTid"),
    STRINGS: ("id", "value"),
}


# ---------------------------------------------------------------- the schema


def plain_tables(db: sqlite3.Connection, path: Path) -> set[str]:
    """The tables of :data:`READ` the export has, each checked to be a stored table
    whose columns read are stored columns; a view, a virtual table, a WITHOUT ROWID
    table or a generated column under those names is refused before it is read."""
    names = ",".join("?" * len(READ))
    rows = db.execute(
        f"SELECT type, name, sql FROM main.sqlite_master WHERE name COLLATE NOCASE IN ({names})",
        list(READ),
    ).fetchall()
    found: set[str] = set()
    for kind, name, sql in rows:
        table = next(t for t in READ if t.lower() == str(name).lower())
        text = " ".join(str(sql or "").split()).upper()
        if kind != "table" or text.startswith("CREATE VIRTUAL TABLE"):
            what = "a virtual table" if kind == "table" else f"a {kind}"
            raise ImportFailure(
                f"{path}: {name} is {what}, not a stored table: an export whose reads would "
                f"run code, {_NOT_WRITTEN}; re-export the report with `nsys export --type sqlite`"
            )
        if re.search(r"\)\s*(WITHOUT\s+ROWID|STRICT\s*,\s*WITHOUT\s+ROWID)", text):
            raise ImportFailure(f"{path}: {name} is a WITHOUT ROWID table: {_NOT_WRITTEN}")
        _stored_columns(db, name, table, path)
        found.add(table)
    return found


def _stored_columns(db: sqlite3.Connection, name: str, table: str, path: Path) -> None:
    quoted = '"' + name.replace('"', '""') + '"'
    for row in db.execute(f"PRAGMA main.table_xinfo({quoted})"):
        column, hidden = str(row[1]), row[6]
        if column in READ[table] and hidden in (2, 3):
            raise ImportFailure(
                f"{path}: {name}.{column} is a generated column (computed by the file's own "
                f"SQL on every read), not a stored one: {_NOT_WRITTEN}"
            )
        if column.lower() in ("rowid", "_rowid_", "oid"):
            raise ImportFailure(f"{path}: {name} has a column named {column}: {_NOT_WRITTEN}")


def columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in db.execute(f"PRAGMA main.table_info({table})")}


# ---------------------------------------------------------------- the rows


def ok_sql(rules: tuple[Rule, ...], alias: str) -> str:
    """True for a row of ``alias`` whose columns pass ``rules`` (and ``end >= start``,
    and a block of at most 1,024 threads, where those columns are among them)."""
    parts = []
    for rule in rules:
        c = f"{alias}.{rule.column}"
        test = f"(typeof({c}) = 'integer' AND {c} BETWEEN {rule.low} AND {rule.high})"
        parts.append(f"({c} IS NULL OR {test})" if rule.null_ok else test)
    names = {r.column for r in rules}
    if {"start", "end"} <= names:
        parts.append(f"({alias}.end IS NULL OR {alias}.end >= {alias}.start)")
    if "blockX" in names:
        parts.append(f"{alias}.blockX * {alias}.blockY * {alias}.blockZ <= {MAX_THREADS}")
    return "(" + " AND ".join(parts) + ")"


def checked_sql(rules: tuple[Rule, ...], table: str, alias: str) -> str:
    """A WHERE term: true for a row that passes, else records the row (the function
    :class:`BadRows` registers) and is false."""
    values = ", ".join(f"{alias}.{r.column}" for r in rules)
    return (
        f"(CASE WHEN {ok_sql(rules, alias)} THEN 1 ELSE "
        f"roofgen_bad('{table}', {alias}._rowid_, {values}) END)"
    )


class BadRows:
    """The SQL function ``roofgen_bad(table, rowid, values...)``, called for a row that
    failed :func:`ok_sql`: keeps the first such row's diagnosis, returns 0 (the row is
    left out of the query; :meth:`raise_first` refuses the file after it)."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.path = path
        self.first: str | None = None
        self.rules = {KERNELS: TIMES, RUNTIME: TIMES, NVTX: NVTX_TIMES}
        db.create_function("roofgen_bad", -1, self._record)

    def _record(self, table: str, rowid: int, *values: object) -> int:
        if self.first is None:
            self.first = diagnose(table, rowid, self.rules[table], values)
        return 0

    def raise_first(self) -> None:
        if self.first is not None:
            raise ImportFailure(f"{self.path}: {self.first}")


def check_shapes(db: sqlite3.Connection, keys: list[tuple[object, ...]], path: Path) -> None:
    """Refuse the first group key (demangledName, grid and block, as read) out of
    :data:`SHAPE`'s ranges, naming a row that holds it."""
    for key in keys:
        if _shape_ok(key):
            continue
        terms = " AND ".join(f'"{r.column}" IS ?' for r in SHAPE)
        found = db.execute(
            f"SELECT _rowid_ FROM main.{KERNELS} WHERE {terms} LIMIT 1", list(key)
        ).fetchone()
        rowid = found[0] if found else "?"
        raise ImportFailure(f"{path}: {diagnose(KERNELS, rowid, SHAPE, key)}")


def _shape_ok(key: tuple[object, ...]) -> bool:
    if not all(type(v) is int and r.low <= v <= r.high for r, v in zip(SHAPE, key, strict=True)):
        return False
    bx, by, bz = key[4:7]
    return int(bx) * int(by) * int(bz) <= MAX_THREADS  # type: ignore[call-overload]


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_TYPES = {float: "REAL", str: "TEXT", bytes: "BLOB", type(None): "NULL"}


def diagnose(
    table: str, rowid: int | str, rules: tuple[Rule, ...], values: tuple[object, ...]
) -> str:
    """Why a row fails its rules, naming the table, row id and column."""
    where = f"{table} row {rowid}"
    row = dict(zip((r.column for r in rules), values, strict=True))
    for rule in rules:
        value = row[rule.column]
        if value is None and rule.null_ok:
            continue
        if not isinstance(value, int):
            kind = _TYPES.get(type(value), type(value).__name__)
            return (
                f"{where}: {rule.column} is {kind} {_show(value)}, not an INTEGER "
                f"({rule.meaning}): {_NOT_WRITTEN}"
            )
        if not rule.low <= value <= rule.high:
            return (
                f"{where}: {rule.column} {value} is out of range ({rule.meaning}): " + _NOT_WRITTEN
            )
    if isinstance(row.get("end"), int) and row["end"] < row["start"]:  # type: ignore[operator]
        return f"{where}: end {row['end']} is before start {row['start']}: {_NOT_WRITTEN}"
    if "blockX" in row:
        threads = int(row["blockX"]) * int(row["blockY"]) * int(row["blockZ"])  # type: ignore[call-overload]
        return (
            f"{where}: a block of {threads:,} threads (blockX * blockY * blockZ), more than "
            f"CUDA's {MAX_THREADS:,}: {_NOT_WRITTEN}"
        )
    return f"{where}: a row SQLite found out of range and roofgen did not: please report this"
