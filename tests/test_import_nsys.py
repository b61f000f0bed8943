"""`roofgen import nsys`: Nsight Systems traces as a case's kernels, steps and
end-to-end time.

tests/data/nsys/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz is a real `nsys export
--type sqlite` (Nsight Systems 2022.2.1, export schema 2.9.1) of an MPI + CUDA saxpy
on Perlmutter, gzipped: five NVTX push/pop ranges named "saxpy", each launching one
`saxpy` kernel through cudaLaunchKernel. Its rows, as read with the sqlite3 shell
(`SELECT start, end, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL`, `SELECT start,
end FROM NVTX_EVENTS WHERE text = 'saxpy'`), are the literals below; a test checks the
file still holds exactly them.

tests/data/nsys/cuda_gpu_trace_rtx5090_head.csv is the header and the first 15 rows
of a real `nsys stats --report cuda_gpu_trace --format csv` from an RTX 5090: three
memory copies, then twelve XLA kernels of one CUDA graph (one CorrId, 74611).
"""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from roofgen.cli import main
from roofgen.spec.quantity import parse_quantity
from roofgen.spec.yamlload import load_file

DATA = Path(__file__).resolve().parent / "data" / "nsys"
SAXPY_GZ = DATA / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz"
CSV = DATA / "cuda_gpu_trace_rtx5090_head.csv"

# (start, end, correlationId) of the five kernels, and (start, end) of the five
# "saxpy" ranges, in the export's ns.
KERNELS = [
    (924922186, 942626994, 140),
    (1196058242, 1213791658, 156),
    (1449177557, 1466878365, 172),
    (1696275954, 1713996442, 188),
    (1947782617, 1965496577, 204),
]
RANGES = [
    (924881857, 924940911),
    (1196019772, 1196067224),
    (1449139403, 1449181324),
    (1696238391, 1696280102),
    (1947745106, 1947786216),
]


@pytest.fixture(autouse=True)
def _in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(tmp_path)


@pytest.fixture()
def saxpy(tmp_path: Path) -> Path:
    path = tmp_path / "saxpy.sqlite"
    path.write_bytes(gzip.decompress(SAXPY_GZ.read_bytes()))
    return path


def _data(path: Path) -> Any:
    doc, problems = load_file(path)
    assert doc is not None, problems
    return doc.data


def _import(source: Path, *extra: str, out: str = "case.yaml") -> int:
    return main(["import", "nsys", str(source), "--machine", "a100-40gb-sxm", "-o", out, *extra])


def _ns(text: str) -> float:
    """A time the case holds, in ns (to compare with figures computed here)."""
    return parse_quantity(text, "time") * 1e9


def test_the_export_holds_the_rows_cited(saxpy: Path):
    db = sqlite3.connect(saxpy)
    rows = db.execute(
        "SELECT start, end, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start"
    ).fetchall()
    assert rows == KERNELS
    ranges = db.execute("SELECT start, end FROM NVTX_EVENTS WHERE text = 'saxpy'").fetchall()
    assert ranges == RANGES


def test_nvtx_range_steps_from_a_real_export(saxpy: Path, capsys: pytest.CaptureFixture[str]):
    assert _import(saxpy, "--range", "saxpy") == 0
    case = _data(Path("case.yaml"))
    durations = [end - start for start, end, _ in KERNELS]
    assert sum(durations) == 88573480
    m = case["variants"][0]["launches"][0]["measurement"]
    assert m["time"] == {
        "mean": "17.714696 ms",
        "min": "17.700808 ms",
        "max": "17.733416 ms",
        "repeats": 5,
    }
    assert _ns(m["time"]["mean"]) == pytest.approx(sum(durations) / 5, abs=1e-6)
    assert _ns(m["time"]["min"]) == pytest.approx(min(durations), abs=1e-6)
    assert _ns(m["time"]["max"]) == pytest.approx(max(durations), abs=1e-6)
    assert m["timing"] == "nsys"
    assert m["grid"] == [2, 1, 1] and m["block"] == [512, 1, 1]
    assert case["variants"][0]["launches"][0].get("calls", 1) == 1  # one kernel per step
    # each step runs from its range's start to its kernel's end (the kernel ends later)
    spans = [k[1] - r[0] for k, r in zip(KERNELS, RANGES, strict=True)]
    assert all(k[1] > r[1] for k, r in zip(KERNELS, RANGES, strict=True))
    assert _ns(case["end_to_end"]["baseline"]["time"]) == pytest.approx(sum(spans) / 5, abs=1e-6)
    idle = sum(spans) - sum(durations)
    assert idle == 192027
    assert "idle 192.027 us" in case["end_to_end"]["baseline"]["description"]
    assert main(["check", "case.yaml", "-q"]) == 0
    out = capsys.readouterr().err
    assert "5 step(s) (NVTX range 'saxpy')" in out


def test_whole_trace_is_one_step_with_its_idle_time(saxpy: Path):
    assert _import(saxpy) == 0
    case = _data(Path("case.yaml"))
    first, last = KERNELS[0][0], KERNELS[-1][1]
    assert case["end_to_end"]["baseline"]["time"] == "1.040574391 s"
    assert _ns(case["end_to_end"]["baseline"]["time"]) == pytest.approx(last - first, abs=1e-6)
    launch = case["variants"][0]["launches"][0]
    assert launch["calls"] == 5


def test_unknown_range_names_the_ranges_there(saxpy: Path, capsys: pytest.CaptureFixture[str]):
    assert _import(saxpy, "--range", "train") == 1
    err = capsys.readouterr().err
    assert "no NVTX range 'train'" in err and "'saxpy' (5)" in err
    assert "Traceback" not in err
    assert not Path("case.yaml").exists()


A, B = 1, 2  # StringIds of kernel_a and kernel_b


Row = tuple[int, int, int, int]


def _tiny(
    path: Path, kernels: list[Row], calls: list[Row], ranges: list[tuple[int, int, str, int]],
    graph_calls: int = 0,
) -> Path:  # fmt: skip
    """An export with the real tables' columns (kernels: start, end, correlationId,
    name's StringIds id; calls: start, end, thread, correlationId); only the columns
    read are filled."""
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,"
        " correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, gridX INTEGER,"
        " gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER,"
        " graphNodeId INTEGER);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,"
        " correlationId INTEGER, nameId INTEGER);"
        "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT,"
        " globalTid INTEGER, textId INTEGER);"
        "INSERT INTO StringIds VALUES (1, 'kernel_a'), (2, 'kernel_b'), (3, 'cudaLaunchKernel'),"
        " (4, 'cudaGraphLaunch_v10000');"
    )
    pid = 7 * 2**24
    db.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, ?, ?, ?, 1, 1, 1, 32, 1, 1, NULL)",
        [(s, e, corr, pid, name) for s, e, corr, name in kernels],
    )
    db.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?, ?, 3)",
        [(s, e, pid + tid, corr) for s, e, tid, corr in calls],
    )
    db.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?, ?, 4)",
        [(20 + n, 21 + n, pid + 1, 900 + n) for n in range(graph_calls)],
    )
    db.executemany(
        "INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, ?, ?, NULL)",
        [(s, e, text, pid + tid) for s, e, text, tid in ranges],
    )
    db.commit()
    db.close()
    return path


def test_kernels_belong_to_the_range_that_launched_them_not_the_one_they_overlap(tmp_path: Path):
    # range "step" on thread 1 at 0-100 launches corr 1 at 50; the kernel runs at 250-280,
    # inside the time of the second range (200-300), whose own launch (corr 3, at 210)
    # runs at 220-230. A call on thread 2 inside the first range's time (corr 5) is
    # another thread's: not the range's.
    path = _tiny(
        tmp_path / "t.sqlite",
        kernels=[(250, 280, 1, A), (220, 230, 3, B), (60, 70, 5, A)],
        calls=[(50, 55, 1, 1), (210, 212, 1, 3), (40, 45, 2, 5)],
        ranges=[(0, 100, "step", 1), (200, 300, "step", 1)],
    )
    assert _import(path, "--range", "step") == 0
    case = _data(Path("case.yaml"))
    launches = {x["kernel"]: x["measurement"] for x in case["variants"][0]["launches"]}
    assert set(launches) == {"kernel_a", "kernel_b"}  # corr 5 (kernel_a, 10 ns) is not there
    assert "1 run(s), 30 ns in all" in launches["kernel_a"]["notes"]  # corr 1 only: 280 - 250
    assert "1 run(s), 10 ns in all" in launches["kernel_b"]["notes"]  # corr 3
    # one run in two steps: its time per step, as one entry
    assert (launches["kernel_a"]["time"], launches["kernel_b"]["time"]) == ("15 ns", "5 ns")
    # step 1: 0 .. max(100, 280) = 280; step 2: 200 .. max(300, 230) = 100
    assert case["end_to_end"]["baseline"]["time"] == "190 ns"


def test_busy_time_is_the_union_of_overlapping_kernels(tmp_path: Path):
    path = _tiny(
        tmp_path / "u.sqlite",
        kernels=[(100, 110, 1, A), (105, 115, 3, A), (120, 130, 5, B)],
        calls=[(10, 11, 1, 1), (12, 13, 1, 3), (14, 15, 1, 5)],
        ranges=[(0, 50, "step", 1)],
    )
    assert _import(path, "--range", "step") == 0
    case = _data(Path("case.yaml"))
    # union [100, 115] + [120, 130] = 25 ns; the step spans 0 .. 130
    assert "GPU busy 25 ns" in case["end_to_end"]["baseline"]["description"]
    assert "idle 105 ns" in case["end_to_end"]["baseline"]["description"]
    notes = {x["kernel"]: x["measurement"]["notes"] for x in case["variants"][0]["launches"]}
    assert "80.0% of the GPU-busy time" in notes["kernel_a"]  # 10 + 10 of 25


def test_graph_launches_without_their_kernels_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    path = _tiny(
        tmp_path / "g.sqlite",
        kernels=[(100, 110, 1, A)],
        calls=[(10, 11, 1, 1)],
        ranges=[(0, 50, "step", 1)],
        graph_calls=3,
    )
    assert _import(path) == 1
    err = capsys.readouterr().err
    assert "3 CUDA graph launch(es)" in err and "--cuda-graph-trace=node" in err
    assert "Traceback" not in err


def test_a_real_cuda_gpu_trace_csv(capsys: pytest.CaptureFixture[str]):
    assert _import(CSV) == 0
    case = _data(Path("case.yaml"))
    # kernel rows, lines 5 to 16 of the file: (start, duration), in order and not overlapping
    rows = [
        (10795984619, 704),
        (10795986859, 512),
        (10795987435, 1152),
        (10795988683, 3360),
        (10795992107, 3168),
        (10795995339, 3136),
        (10795998571, 608),
        (10795999275, 608),
        (10795999947, 640),
        (10796000651, 864),
        (10796001579, 832),
        (10796002507, 1056),
    ]
    assert all(a[0] + a[1] <= b[0] for a, b in zip(rows, rows[1:], strict=False))
    busy = sum(d for _, d in rows)
    span = rows[-1][0] + rows[-1][1] - rows[0][0]
    assert (busy, span) == (16640, 18944)
    assert case["end_to_end"]["baseline"]["time"] == "18.944 us"
    assert "GPU busy 16.64 us" in case["end_to_end"]["baseline"]["description"]
    launches = {x["kernel"]: x["measurement"] for x in case["variants"][0]["launches"]}
    assert launches["loop_multiply_fusion_1"]["time"] == "3.36 us"
    assert launches["input_concatenate_fusion_2"]["block"] == [2, 1, 1]
    err = capsys.readouterr().err
    # the three copies of lines 2 to 4: 1280 + 1408 + 256 ns
    assert "3 memory copies and memsets (2.944 us)" in err


def test_a_window_takes_the_kernels_inside_it():
    assert _import(CSV, "--window", "10795986859:10795990000") == 0
    case = _data(Path("case.yaml"))
    kernels = {x["kernel"] for x in case["variants"][0]["launches"]}
    # 10795986859+512, 10795987435+1152 inside; 10795988683+3360 ends past the window
    assert kernels == {"loop_multiply_fusion", "loop_multiply_fusion_4"}
    assert case["end_to_end"]["baseline"]["time"] == "3.141 us"


def test_a_kernel_summary_csv_is_refused_naming_the_report_to_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    path = tmp_path / "kern_sum.csv"
    path.write_text(
        "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
        "100.0,88573480,5,17714696.0,17713960.0,17700808,17733416,12703.5,saxpy\n"
    )
    assert _import(path) == 1
    err = capsys.readouterr().err
    assert "cuda_gpu_kern_sum" in err and "--report cuda_gpu_trace" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "content",
    [b'{"traceEvents": []}', b"\x00\x01\x02binary", b"SQLite format 3\x00" + b"\x00" * 200],
)
def test_files_that_are_not_traces_get_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
):
    path = tmp_path / "x.sqlite"
    path.write_bytes(content)
    assert _import(path) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "x.sqlite" in err


def test_a_report_file_is_sent_to_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "run.nsys-rep"
    path.write_bytes(b"\x00" * 64)
    assert _import(path) == 1
    assert "nsys export --type sqlite run.nsys-rep" in capsys.readouterr().err


def test_into_adds_a_variant_and_its_end_to_end_time(saxpy: Path):
    assert _import(saxpy, "--range", "saxpy") == 0
    args = ["import", "nsys", str(saxpy), "--machine", "a100-40gb-sxm"]
    assert main([*args, "--into", "case.yaml", "--variant", "whole"]) == 0
    case = _data(Path("case.yaml"))
    assert set(case["end_to_end"]) == {"baseline", "whole"}
    assert [v["id"] for v in case["variants"]] == ["baseline", "whole"]
    assert main(["check", "case.yaml", "-q"]) == 0


def test_a_second_import_into_the_case_gets_an_amdahl_projection(
    saxpy: Path, capsys: pytest.CaptureFixture[str]
):
    import json

    assert _import(saxpy, "--range", "saxpy") == 0
    args = ["import", "nsys", str(saxpy), "--machine", "a100-40gb-sxm", "--range", "saxpy"]
    assert main([*args, "--into", "case.yaml", "--variant", "again"]) == 0
    case = _data(Path("case.yaml"))
    assert [k["id"] for k in case["kernels"]] == ["saxpy"]  # the same kernel, not saxpy-2
    capsys.readouterr()
    assert main(["analyze", "case.yaml", "--format", "json", "-q"]) == 0
    doc = json.loads(capsys.readouterr().out)
    e2e = doc["cases"][0]["end_to_end"]["variants"][0]
    assert e2e["variant"] == "again"
    # the same trace twice: the kernel's share of the step, and no speedup
    share = sum(end - start for start, end, _ in KERNELS) / sum(
        k[1] - r[0] for k, r in zip(KERNELS, RANGES, strict=True)
    )
    assert e2e["kernel_share"] == pytest.approx(share, rel=1e-9)
    assert e2e["terms"][0]["kernel"] == "saxpy"
    assert e2e["projected_speedup"] == pytest.approx(1.0) == e2e["measured_speedup"]


def test_graph_kernels_traced_node_by_node_are_taken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    # one cudaGraphLaunch (corr 900, at 20 on thread 1) whose two nodes ran at 100-110, 110-125
    path = _tiny(
        tmp_path / "n.sqlite",
        kernels=[(100, 110, 900, A), (110, 125, 900, B)],
        calls=[],
        ranges=[(0, 50, "step", 1)],
        graph_calls=1,
    )
    assert _import(path, "--range", "step") == 0
    case = _data(Path("case.yaml"))
    assert {x["kernel"] for x in case["variants"][0]["launches"]} == {"kernel_a", "kernel_b"}
    assert "GPU busy 25 ns" in case["end_to_end"]["baseline"]["description"]
    assert "1 CUDA graph launch(es); their kernels are traced node by node" in (
        capsys.readouterr().err
    )
