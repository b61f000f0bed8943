"""Fuzzing `roofgen import nsys` with schema-level mutations of real Nsight Systems
exports, in a child process under CPU-time and memory limits (the runner and the
oracle: tests/fuzzcli.py).

The exports are real: tests/data/nsys's saxpy export, and the exports of
``../shared/fixtures/real/nsys/`` (a DLProf run on an RTX 2070 SUPER, an nvFuser run
on an H200, a Windows run on an RTX 5070 Ti; see that folder's README). Those are
third-party files kept beside the project, not in it: without them the test runs on
the saxpy export alone and says so, and under ``CI=true`` it fails instead.

Each example copies one export and applies one to three mutations with the sqlite3
module: a column read turned into a generated one (VIRTUAL or STORED), a table read
replaced by a view or (StringIds) a virtual table, a trigger added, a value of a
column read replaced by TEXT, REAL, BLOB or NULL (the table made again untyped so the
value keeps its type) or by an extreme (2^63-1, -1, 1e999, 2^64), the database put in
WAL mode or given a ``-wal`` file. Whatever the mutation, the import exits 0 or 1,
never 4, prints no traceback, a failure names the export, and nothing is made beside
the export. A generated column is refused before it is computed: the one used here
would take minutes per row. A trigger alone changes nothing: the figures are those of
the export unmutated.
"""

from __future__ import annotations

import gzip
import os
import sqlite3
from pathlib import Path

import pytest
from browser import in_ci
from fuzzcli import (
    DATA,
    FUZZ_TIMEOUT_S,
    Outcome,
    assert_handled,
    fuzz_settings,
    run_roofgen,
    workdir,
)
from hypothesis import given
from hypothesis import strategies as st

pytestmark = [pytest.mark.slow, pytest.mark.timeout(FUZZ_TIMEOUT_S)]

REAL = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "real" / "nsys"
SAXPY_GZ = DATA / "nsys" / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz"
# the real exports and an NVTX range of each (None: the export has no NVTX table)
REAL_EXPORTS = {
    "01_dlprof_nsys_profile.sqlite": "aten::conv2d, seq = 0",
    "02_fuser_report1.sqlite": "KernelExecutor::runFusion",
    "04_cudakernels_prof.sqlite": None,
}
KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL"
READ = {
    KERNELS: ["start", "end", "deviceId", "correlationId", "globalPid", "demangledName",
              "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ"],
    "CUPTI_ACTIVITY_KIND_RUNTIME": ["start", "end", "globalTid", "correlationId", "nameId"],
    "NVTX_EVENTS": ["start", "end", "text", "textId", "globalTid"],
    "StringIds": ["id", "value"],
}  # fmt: skip
# what a generated column computes: a minute or more a row if it were ever evaluated
SLOW = "(length(hex(zeroblob(100000000))) * 0 + length(hex(zeroblob(100000000))) * 0 + {c})"
ODD_VALUES = ["'924922186'", "'x'", "1.5", "1e999", "-1e999", "x'00ff'", "NULL",
              "9223372036854775807", "-1", "18446744073709551616", "0"]  # fmt: skip


def _exports() -> dict[Path, str | None]:
    found: dict[Path, str | None] = {}
    if REAL.is_dir():
        found = {REAL / name: rng for name, rng in REAL_EXPORTS.items() if (REAL / name).exists()}
    if len(found) < len(REAL_EXPORTS) and in_ci():
        pytest.fail(f"{REAL}: the real nsys exports are missing (see that folder's README)")
    return found


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, str | None]:
    folder = tmp_path_factory.mktemp("nsys-sources")
    saxpy = folder / "saxpy.sqlite"
    saxpy.write_bytes(gzip.decompress(SAXPY_GZ.read_bytes()))
    return {saxpy: "saxpy", **_exports()}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-import-nsys")


def test_the_real_exports_are_here() -> None:
    if not _exports():
        pytest.skip(f"{REAL} is absent: the fuzzer runs on tests/data's saxpy export alone")


# --------------------------------------------------------------------------- mutations


def _tables(db: sqlite3.Connection) -> list[str]:
    rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return [t for t in READ if (t,) in rows]


def _rebuild(db: sqlite3.Connection, table: str, column: str | None, decl: str) -> None:
    """``table`` made again with untyped, unconstrained columns (``column`` declared
    ``decl`` instead, its values dropped when it is generated)."""
    cols = [r[1] for r in db.execute(f'PRAGMA table_info("{table}")')]
    kept = [c for c in cols if c != column or "GENERATED" not in decl]
    names = ", ".join(f'"{c}"' for c in kept)
    extra = f', "{column}" {decl}' if column is not None and "GENERATED" in decl else ""
    db.executescript(
        f'ALTER TABLE "{table}" RENAME TO fuzz_old; CREATE TABLE "{table}" ({names}{extra});'
        f'INSERT INTO "{table}" ({names}) SELECT {names} FROM fuzz_old; DROP TABLE fuzz_old;'
    )


@st.composite
def mutation(draw: st.DrawFn, tables: list[str]) -> tuple[str, ...]:
    table = draw(st.sampled_from(tables))
    column = draw(st.sampled_from(READ[table]))
    how = draw(st.sampled_from(["generated", "view", "virtual", "trigger", "value", "value",
                                "all-rows", "wal", "wal-file"]))  # fmt: skip
    if how == "generated":
        kind = draw(st.sampled_from(["VIRTUAL", "STORED"]))
        expr = SLOW.format(c="1") if kind == "VIRTUAL" else "(1 + 1)"
        return (how, table, column, f"GENERATED ALWAYS AS {expr} {kind}")
    if how in ("value", "all-rows"):
        return (how, table, column, draw(st.sampled_from(ODD_VALUES)), str(draw(st.integers(1, 5))))
    return (how, table)


def apply(path: Path, change: tuple[str, ...]) -> None:
    how, table = change[0], change[1]
    db = sqlite3.connect(path)
    try:
        if how == "generated":
            _rebuild(db, table, change[2], change[3])
        elif how == "view":
            db.executescript(f'ALTER TABLE "{table}" RENAME TO fuzz_real;'
                             f'CREATE VIEW "{table}" AS SELECT * FROM fuzz_real;')  # fmt: skip
        elif how == "virtual":
            db.executescript('ALTER TABLE StringIds RENAME TO fuzz_s;'
                             'CREATE VIRTUAL TABLE StringIds USING fts4(id, value);'
                             'INSERT INTO StringIds SELECT id, value FROM fuzz_s;')  # fmt: skip
        elif how == "trigger":
            db.executescript(f'CREATE TRIGGER fuzz_wipe AFTER INSERT ON "{table}" BEGIN '
                             f'DELETE FROM "{table}"; END;')  # fmt: skip
        elif how in ("value", "all-rows"):
            _rebuild(db, table, None, "")
            where = "" if how == "all-rows" else f" WHERE _rowid_ = {change[4]}"
            db.execute(f'UPDATE "{table}" SET "{change[2]}" = {change[3]}{where}')
        elif how == "wal":
            db.execute("PRAGMA journal_mode=WAL")
        db.commit()
    except sqlite3.DatabaseError:
        pass  # a mutation that cannot be made leaves what was made
    finally:
        db.close()
    if how == "wal-file":
        Path(f"{path}-wal").write_bytes(b"")


def _table_names(path: Path) -> list[str]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return _tables(db)
    finally:
        db.close()


# --------------------------------------------------------------------------- the fuzzer


def _run(cwd: Path, rng: str | None, whole: bool) -> tuple[Outcome, str]:
    """Import ``cwd/in/export.sqlite`` in ``cwd``: the outcome and the case written."""
    args = ["import", "nsys", "in/export.sqlite", "--machine", "h100-sxm", "-o", "out.yaml"]
    if rng is not None and not whole:
        args += ["--range", rng]
    outcome = run_roofgen(args, cwd)
    out = (cwd / "out.yaml").read_text("utf-8") if (cwd / "out.yaml").exists() else ""
    return outcome, out


def _export(cwd: Path, source: Path) -> Path:
    export = cwd / "in" / "export.sqlite"
    export.parent.mkdir()
    export.write_bytes(source.read_bytes())
    return export


@fuzz_settings(ci=25)
@given(data=st.data())
def test_import_nsys_mutated_schema(
    data: st.DataObject, sources: dict[Path, str | None], scratch: Path
) -> None:
    source = data.draw(st.sampled_from(sorted(sources)), label="export")
    rng = sources[source]
    whole = data.draw(st.booleans(), label="whole trace")
    tables = _table_names(source)
    changes = data.draw(st.lists(mutation(tables), min_size=1, max_size=3), label="mutations")
    with workdir(scratch) as cwd:
        export = _export(cwd, source)
        for change in changes:
            apply(export, change)
        before = sorted(os.listdir(export.parent))
        outcome, out = _run(cwd, rng, whole)
        assert_handled(outcome, ["in/export.sqlite", "out.yaml"])
        assert sorted(os.listdir(export.parent)) == before, "files made beside the export"
        assert "idle -" not in out
        if out and all(c[0] == "trigger" for c in changes):
            (cwd / "clean").mkdir()
            _export(cwd / "clean", source)
            _, expected = _run(cwd / "clean", rng, whole)
            assert out == expected, "a trigger changed the figures"


def test_the_unmutated_exports_import(sources: dict[Path, str | None], scratch: Path) -> None:
    """The exports the mutations start from import (a check on the fuzzer)."""
    for source, rng in sources.items():
        with workdir(scratch) as cwd:
            _export(cwd, source)
            outcome, _ = _run(cwd, rng, whole=False)
            assert outcome.status == 0, outcome.describe()
