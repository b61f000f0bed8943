"""`roofgen import nsys` on exports made hostile: a schema that computes (generated
columns, views, virtual tables), a WAL-mode database, values of the wrong type or out
of range, names with control characters or bytes that are not UTF-8, and SQLite's
limits. Each is a real SQLite file edited here with the sqlite3 module; the import
either gives the figures computed here or exits 1 naming the file, the table, the row
and the column, never 4 and never "please report".

The export edited is tests/data/nsys/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz (real
Nsight Systems output, see tests/test_import_nsys.py): five saxpy kernels.
"""

from __future__ import annotations

import gzip
import os
import sqlite3
from pathlib import Path

import pytest

from roofgen.cli import main
from roofgen.importers import nsys_sql
from roofgen.importers.kernel_names import MAX_NAME
from roofgen.spec.yamlload import load_file

DATA = Path(__file__).resolve().parent / "data" / "nsys"
SAXPY_GZ = DATA / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz"
KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL"
# the five kernels' (start, end): the whole trace spans first start .. last end
FIRST_START, LAST_END = 924922186, 1965496577
BUSY = 88573480  # the five kernels' durations summed (they do not overlap)


@pytest.fixture(autouse=True)
def _in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(tmp_path)


@pytest.fixture()
def saxpy(tmp_path: Path) -> Path:
    path = tmp_path / "exports" / "saxpy.sqlite"
    path.parent.mkdir()
    path.write_bytes(gzip.decompress(SAXPY_GZ.read_bytes()))
    return path


def _edit(path: Path, *statements: str) -> Path:
    db = sqlite3.connect(path)
    for sql in statements:
        db.executescript(sql)
    db.commit()
    db.close()
    return path


def _import(path: Path, *extra: str) -> int:
    return main(["import", "nsys", str(path), "--machine", "a100-40gb-sxm", "-o", "case.yaml",
                 *extra])  # fmt: skip


def _refused(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    assert _import(path, *extra) == 1
    err = capsys.readouterr().err
    assert str(path) in err and "Traceback" not in err and "please report" not in err, err
    assert not Path("case.yaml").exists()
    return err


def _case() -> dict:
    doc, problems = load_file(Path("case.yaml"))
    assert doc is not None, problems
    return doc.data


# ---------------------------------------------------------------- a schema that computes


def _rebuild_kernels(path: Path, end_column: str = "") -> Path:
    """The kernel table made again with its columns untyped and unconstrained (so a
    value keeps the type written), ``end`` declared as ``end_column`` when given."""
    db = sqlite3.connect(path)
    cols = [r[1] for r in db.execute(f"PRAGMA table_info({KERNELS})")]
    db.close()
    kept = [c for c in cols if c != "end" or not end_column]
    decl = ", ".join(f'"{c}"' for c in kept)
    end = f', "end" {end_column}' if end_column else ""
    return _edit(
        path,
        f"ALTER TABLE {KERNELS} RENAME TO k_old;"
        f"CREATE TABLE {KERNELS} ({decl}{end});"
        f"INSERT INTO {KERNELS} ({decl}) SELECT {decl} FROM k_old; DROP TABLE k_old;",
    )


def test_a_generated_column_is_refused_before_it_is_computed(
    saxpy: Path, capsys: pytest.CaptureFixture[str]
):
    _rebuild_kernels(saxpy, "INTEGER GENERATED ALWAYS AS (start + 1000) VIRTUAL")
    err = _refused(saxpy, capsys)
    assert f"{KERNELS}.end is a generated column" in err


def test_a_stored_generated_column_is_refused(saxpy: Path, capsys: pytest.CaptureFixture[str]):
    _rebuild_kernels(saxpy, "INTEGER GENERATED ALWAYS AS (start + 1000) STORED")
    assert f"{KERNELS}.end is a generated column" in _refused(saxpy, capsys)


def test_a_view_in_place_of_a_table_is_refused(saxpy: Path, capsys: pytest.CaptureFixture[str]):
    _edit(saxpy, f"ALTER TABLE {KERNELS} RENAME TO k_real;"
                 f"CREATE VIEW cupti_activity_kind_kernel AS SELECT * FROM k_real;")  # fmt: skip
    assert "cupti_activity_kind_kernel is a view, not a stored table" in _refused(saxpy, capsys)


def test_a_virtual_table_in_place_of_a_table_is_refused(
    saxpy: Path, capsys: pytest.CaptureFixture[str]
):
    _edit(saxpy, "ALTER TABLE StringIds RENAME TO s_real;"
                 "CREATE VIRTUAL TABLE StringIds USING fts4(id, value);"
                 "INSERT INTO StringIds SELECT id, value FROM s_real;")  # fmt: skip
    assert "StringIds is a virtual table" in _refused(saxpy, capsys)


def test_triggers_in_the_export_never_fire(saxpy: Path):
    # a trigger that would empty the kernel table on any write; the import writes nothing
    _edit(saxpy, f"CREATE TRIGGER wipe AFTER INSERT ON StringIds BEGIN "
                 f"DELETE FROM {KERNELS}; END;")  # fmt: skip
    assert _import(saxpy) == 0
    assert _case()["end_to_end"]["baseline"]["time"] == "1.040574391 s"
    db = sqlite3.connect(saxpy)
    assert db.execute(f"SELECT count(*) FROM {KERNELS}").fetchone() == (5,)


# ---------------------------------------------------------------- WAL mode, side files


def _wal(path: Path) -> Path:
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    db.close()
    assert path.read_bytes()[18:20] == b"\x02\x02"
    return path


def test_a_wal_export_is_refused_with_how_to_checkpoint_it_and_no_file_made(
    saxpy: Path, capsys: pytest.CaptureFixture[str]
):
    _wal(saxpy)
    before = sorted(os.listdir(saxpy.parent))
    err = _refused(saxpy, capsys)
    assert sorted(os.listdir(saxpy.parent)) == before == ["saxpy.sqlite"]
    assert "WAL" in err and "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;" in err


def test_the_checkpointed_copy_imports(saxpy: Path):
    _wal(saxpy)
    db = sqlite3.connect(saxpy)  # what the message says to do, on a copy
    db.executescript("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;")
    db.close()
    assert _import(saxpy) == 0


def test_a_log_beside_the_export_is_refused(saxpy: Path, capsys: pytest.CaptureFixture[str]):
    Path(f"{saxpy}-wal").write_bytes(b"")
    assert "saxpy.sqlite-wal" in _refused(saxpy, capsys)


def test_an_export_in_a_read_only_folder_imports_and_nothing_is_written_beside_it(saxpy: Path):
    before = sorted(os.listdir(saxpy.parent))
    saxpy.parent.chmod(0o555)
    try:
        assert _import(saxpy, "--range", "saxpy") == 0
    finally:
        saxpy.parent.chmod(0o755)
    assert sorted(os.listdir(saxpy.parent)) == before


# ---------------------------------------------------------------- values


@pytest.mark.parametrize("column", ["start", "end", "gridX", "blockZ", "deviceId"])
@pytest.mark.parametrize(
    ("value", "kind"),
    [("'924922186'", "TEXT"), ("1e999", "REAL"), ("924922186.0", "REAL"), ("x'00'", "BLOB"),
     ("NULL", "NULL")],
)  # fmt: skip
def test_a_value_of_the_wrong_type_is_refused_naming_table_row_and_column(
    saxpy: Path, capsys: pytest.CaptureFixture[str], column: str, value: str, kind: str
):
    _rebuild_kernels(saxpy)
    _edit(saxpy, f'UPDATE {KERNELS} SET "{column}" = {value} WHERE _rowid_ = 3')
    err = _refused(saxpy, capsys)
    assert f"{KERNELS} row 3: {column} is {kind}" in err and "not an INTEGER" in err


@pytest.mark.parametrize(
    ("column", "value", "says"),
    [("gridX", 2**63 - 1, "gridX 9223372036854775807 is out of range"),
     ("gridX", -5, "gridX -5 is out of range"), ("gridY", 65536, "gridY 65536 is out of range"),
     ("blockX", 0, "blockX 0 is out of range"), ("start", -1, "start -1 is out of range"),
     ("blockY", 8, "a block of 4,096 threads")],
)  # fmt: skip
def test_a_value_out_of_range_is_refused(
    saxpy: Path, capsys: pytest.CaptureFixture[str], column: str, value: int, says: str
):
    # blockX is 512 in this export: 512 * 8 threads is more than a block holds
    _edit(saxpy, f'UPDATE {KERNELS} SET "{column}" = {value} WHERE _rowid_ = 2')
    assert f"{KERNELS} row 2: {says}" in _refused(saxpy, capsys)


def test_an_end_before_its_start_is_refused(saxpy: Path, capsys: pytest.CaptureFixture[str]):
    _edit(saxpy, f"UPDATE {KERNELS} SET end = start - 1 WHERE _rowid_ = 4")
    assert f"{KERNELS} row 4: end 1696275953 is before start 1696275954" in _refused(saxpy, capsys)


def test_an_nvtx_range_of_the_wrong_type_is_refused(
    saxpy: Path, capsys: pytest.CaptureFixture[str]
):
    _edit(saxpy, "UPDATE NVTX_EVENTS SET end = 1e999 WHERE text = 'saxpy' AND start = 1196019772")
    err = _refused(saxpy, capsys, "--range", "saxpy")
    assert "NVTX_EVENTS row" in err and "end is REAL inf" in err


def test_a_runtime_call_of_the_wrong_type_is_refused(
    saxpy: Path, capsys: pytest.CaptureFixture[str]
):
    _edit(saxpy, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = 'soon' WHERE correlationId = 156")
    err = _refused(saxpy, capsys, "--range", "saxpy")
    assert "CUPTI_ACTIVITY_KIND_RUNTIME row" in err and "start is TEXT 'soon'" in err


def test_a_span_of_2_to_the_64_is_refused_not_imported_with_a_negative_idle(
    saxpy: Path, capsys: pytest.CaptureFixture[str]
):
    # 2^64 does not fit SQLite's INTEGER: it is stored as a REAL, and was summed as one
    _edit(saxpy, f"UPDATE {KERNELS} SET end = 18446744073709551616 WHERE _rowid_ = 5")
    assert f"{KERNELS} row 5: end is REAL 1.8446744073709552e+19" in _refused(saxpy, capsys)


def test_a_span_of_2_to_the_63_imports_with_no_negative_idle(saxpy: Path):
    top = 2**63 - 1
    _edit(saxpy, f"UPDATE {KERNELS} SET start = 0 WHERE _rowid_ = 1;"
                 f"UPDATE {KERNELS} SET end = {top} WHERE _rowid_ = 5")  # fmt: skip
    status = _import(saxpy)
    assert status in (0, 1)
    if status == 0:
        text = _case()["end_to_end"]["baseline"]["description"]
        assert "idle -" not in text


def test_a_kernel_before_its_range_gives_no_negative_idle(saxpy: Path):
    # the first range (924881857 .. 924940911) launches a kernel that now runs from 0 ns:
    # the step runs from 0 to the kernel's end, and the idle time is never negative
    _edit(saxpy, f"UPDATE {KERNELS} SET start = 0 WHERE correlationId = 140")
    assert _import(saxpy, "--range", "saxpy") == 0
    description = _case()["end_to_end"]["baseline"]["description"]
    assert "idle -" not in description and "idle " in description


def test_control_characters_and_bytes_not_utf8_in_a_name_are_made_safe(saxpy: Path):
    name_id = (
        sqlite3.connect(saxpy).execute(f"SELECT demangledName FROM {KERNELS} LIMIT 1").fetchone()[0]
    )
    # ESC, then a lone surrogate as SQLite may hold it (CESU-8 bytes, not UTF-8)
    _edit(saxpy, f"UPDATE StringIds SET value = 'sax' || char(27) || 'py' || "
                 f"CAST(x'eda080' AS TEXT) WHERE id = {name_id}")  # fmt: skip
    assert _import(saxpy) == 0
    name = _case()["kernels"][0]["name"]
    assert name.startswith("sax\\x1bpy") and "\ufffd" in name
    assert main(["check", "case.yaml", "-q"]) == 0


def test_a_long_name_is_cut_in_sql(saxpy: Path):
    name_id = (
        sqlite3.connect(saxpy).execute(f"SELECT demangledName FROM {KERNELS} LIMIT 1").fetchone()[0]
    )
    _edit(saxpy, f"UPDATE StringIds SET value = 'void k<' || hex(zeroblob(50000)) || '>(int)' "
                 f"WHERE id = {name_id}")  # fmt: skip
    assert _import(saxpy) == 0
    name = _case()["kernels"][0]["name"]
    assert len(name) == MAX_NAME == 4096 and name.startswith("void k<0000")
    assert name.endswith("0\u2026")  # cut in SQL to 4,097 characters, then marked


# ---------------------------------------------------------------- SQLite's limits


def test_the_step_budget_stops_sqlite_and_names_itself(
    saxpy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(nsys_sql, "STEPS_PER_BYTE", 0)
    monkeypatch.setattr(nsys_sql, "MIN_STEPS", 1000)
    monkeypatch.setattr(nsys_sql, "_EVERY", 100)
    err = _refused(saxpy, capsys)
    assert "SQLite took more than 1,000 steps reading it" in err


def test_a_value_past_the_length_limit_names_the_limit(
    saxpy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    limits = list(nsys_sql.LIMITS)
    limits[0] = (sqlite3.SQLITE_LIMIT_LENGTH, 1000, "a value longer than 1,000 bytes")
    monkeypatch.setattr(nsys_sql, "LIMITS", tuple(limits))
    _edit(saxpy, "UPDATE StringIds SET value = hex(zeroblob(1000)) WHERE id = 1")
    assert "a value longer than 1,000 bytes" in _refused(saxpy, capsys)


def test_the_connection_is_bounded(saxpy: Path):
    with nsys_sql.database(saxpy) as db:
        assert db.execute("PRAGMA trusted_schema").fetchone() == (0,)
        assert db.execute("PRAGMA query_only").fetchone() == (1,)
        for limit, value, _ in nsys_sql.LIMITS:
            assert db.getlimit(limit) == value
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            db.execute("CREATE TEMP TABLE t (x)")


# ---------------------------------------------------------------- the CSV


@pytest.mark.parametrize(
    ("cells", "says"),
    [("1e30,704,74611,1,1,1,32,1,1", "past 2^63-1 ns"),
     ("10795984619,704,74611,0,1,1,32,1,1", "GrdX '0' is not a grid size"),
     ("10795984619,704,74611,1,1,1,64,64,1", "a block of 4,096 threads")],
)  # fmt: skip
def test_csv_rows_out_of_range_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cells: str, says: str
):
    path = tmp_path / "trace.csv"
    path.write_text(
        f"Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Name\n{cells},kern\x1bel\n"
    )
    err = _refused(path, capsys)
    assert f"{path}:2: " in err and says in err
