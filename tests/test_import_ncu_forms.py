# ruff: noqa: E501 (ncu's rows are long)
"""`roofgen import ncu` on every form of Nsight Compute output, with real exports.

tests/data/ncu (byte for byte; origins in tests/data/README.md):
- 06_spmm_cc89.csv: RTX 4090 (CC 8.9) long form, cuSPARSE SpMM (M, N, K = 128, 128,
  256): dram/lts sectors, global and shared access counts, no time and no clock.
- 08_spmm_cc89_sections.csv: the same SpMM shapes profiled again on that RTX 4090 with
  sections and raw metrics ("Duration", "SM Frequency", dram__bytes.sum); the kernel
  names are demangled differently (another Nsight Compute release).
- 07_thor_summary.out: Jetson AGX Thor (CC 11.0), Nsight Compute 2025.3.1
  `--print-summary per-kernel` of the default sections: one kernel at two shapes,
  14 invocations each, Minimum/Maximum/Average per section value.
- 07_thor_nsys_kern_sum.out: nsys 2025.3.2 cuda_gpu_kern_sum of that kernel (no shape).

Every expected figure is computed here from the numbers in those files.
"""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from roofgen.cli import main
from roofgen.importers.ncu_csv import Launch, Metric, Unit, read_file, read_profiles
from roofgen.importers.ncu_metrics import MachineView, derive
from roofgen.spec.yamlload import load_file

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "ncu"
SPMM = DATA / "06_spmm_cc89.csv"
SPMM_TIMES = DATA / "08_spmm_cc89_sections.csv"
THOR = DATA / "07_thor_summary.out"
THOR_NSYS = DATA / "07_thor_nsys_kern_sum.out"
SGEMM = DATA / "01_sgemm.csv"
SAXPY = DATA / "05_saxpy.csv"

# Test machines: only what the import needs. The Thor and RTX 4090 figures are not
# library data; each value says where it comes from.
THOR_MACHINE = """\
roofgen: 1
kind: machine
id: jetson-thor
name: NVIDIA Jetson AGX Thor (test machine)
clocks: {sm: 1330.98 MHz}   # the highest "SM Frequency" in 07_thor_summary.out
compute:
  - {id: fp32, kind: fp32, peaks: {fp32: 6.814 TFLOP/s}}  # 20 SMs x 128 FP32 lanes x 2 x 1330.98 MHz
memory:
  - {id: lpddr5x, role: device, bandwidth: 273 GB/s}  # Jetson AGX Thor module data sheet
"""
RTX_4090 = """\
roofgen: 1
kind: machine
id: rtx-4090
name: NVIDIA GeForce RTX 4090 (test machine)
clocks: {sm: 2520 MHz}   # boost clock
compute:
  - {id: fp32, kind: fp32, peaks: {fp32: 82.58 TFLOP/s}}  # 16,384 FP32 lanes x 2 x 2520 MHz
memory:
  - {id: gddr6x, role: device, bandwidth: 1008 GB/s}  # 384 bit x 21 Gbit/s / 8
"""
# RTX 5070 for 05_saxpy.csv, which records no clock; base_sm exercises the rule only.
RTX_5070 = """\
roofgen: 1
kind: machine
id: rtx-5070
name: NVIDIA GeForce RTX 5070 (test machine)
clocks: {sm: 2.625 GHz{base}}
compute:
  - {id: fp32, kind: fp32, peaks: {fp32: 32.256 TFLOP/s}}
memory:
  - {id: gddr7, role: device, bandwidth: 672.048 GB/s}
"""


@pytest.fixture(autouse=True)
def _in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(tmp_path)


def _machine(tmp_path: Path, name: str, text: str) -> None:
    folder = tmp_path / "specs" / "machines"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.yaml").write_text(text)


def _yaml(path: Path) -> Any:
    doc, problems = load_file(path)
    assert doc is not None, problems
    return doc.data


def _launches(path: Path) -> list[Any]:
    return _yaml(path)["variants"][0]["launches"]


def _view(*levels: tuple[str, str]) -> MachineView:
    memory = [{"id": ident, "role": role} for ident, role in levels]
    return MachineView({"id": "m", "compute": [], "memory": memory})


# ------------------------------------------------------------------ the files


def test_the_files_are_the_real_exports():
    assert len(SPMM.read_bytes()) == 14808
    assert len(SPMM_TIMES.read_bytes()) == 103689
    assert len(THOR.read_bytes()) == 22203
    assert len(THOR_NSYS.read_bytes()) == 393
    assert SPMM.read_bytes().startswith(b"==PROF== Connected to process 3416815")
    assert b'"Rule Name","Rule Type","Rule Description"' in SPMM_TIMES.read_bytes()
    assert b"Nsight" not in THOR.read_bytes()[:200] and THOR.read_bytes().count(b"\n") == 89


# ------------------------------------------------------------------ per-kernel summary


def test_a_summary_average_is_written_as_a_mean_with_its_spread(tmp_path, capsys):
    """07: "Duration" us 57.79 / 124.77 / 89.32 over 14 invocations at grid 4096, ms
    3.40 / 4.08 / 3.78 at grid 1,048,576: a mean, never a median."""
    _machine(tmp_path, "thor", THOR_MACHINE)
    args = ["import", "ncu", str(THOR), "--machine", "jetson-thor", "-o", "t.yaml", "--partial"]
    assert main(args) == 0
    err = capsys.readouterr().err
    small, large = _launches(tmp_path / "t.yaml")
    assert small["calls"] == large["calls"] == 14
    assert small["measurement"]["grid"] == [4096, 1, 1] and small["measurement"]["block"] == [
        256,
        1,
        1,
    ]
    assert small["measurement"]["time"] == {
        "mean": "89.32 us",
        "min": "57.79 us",
        "max": "124.77 us",
    }
    assert large["measurement"]["time"] == {"mean": "3.78 ms", "min": "3.4 ms", "max": "4.08 ms"}
    # "SM Frequency" Mhz average 650.45; Ghz average 1.19
    assert small["measurement"]["clocks"] == {"sm": "650.45 MHz"}
    assert large["measurement"]["clocks"] == {"sm": "1.19 GHz"}
    assert "mean over the profiled invocations" in small["measurement"]["notes"]
    # 314.19 MHz to 1,330.98 MHz: not locked, said so.
    assert "the SM clock moved from 314.19 MHz to 1,330.98 MHz" in err
    assert "the SM clock moved from 1,080.00 MHz to 1,330.00 MHz" in err
    method = _yaml(tmp_path / "t.yaml")["method"]["clock_control"]
    assert "the SM clock moved across the profiled invocations: not locked" in method
    assert main(["check", "t.yaml", "specs"]) == 0


def test_gpu_time_active_alone_is_a_time(tmp_path, capsys):
    """The Thor summary with its "Duration" rows given as gpu__time_active.avg in
    nanoseconds (the form that used to be refused): 89,320 ns is 89.32 us."""
    _machine(tmp_path, "thor", THOR_MACHINE)
    text = THOR.read_text()
    old = '"Duration","us","57.79","124.77","89.32"'
    assert old in text
    text = text.replace(
        old, '"gpu__time_active.avg","nsecond","57,790.00","124,770.00","89,320.00"'
    )
    (tmp_path / "active.csv").write_text(text)
    args = ["import", "ncu", "active.csv", "--machine", "jetson-thor", "-o", "a.yaml", "--partial"]
    assert main(args) == 0, capsys.readouterr().err
    small = _launches(tmp_path / "a.yaml")[0]["measurement"]
    assert small["time"] == {"mean": "89.32 us", "min": "57.79 us", "max": "124.77 us"}
    assert "gpu__time_active.avg" in (tmp_path / "a.yaml").read_text()


def test_a_timing_without_shapes_is_not_used_for_a_kernel_of_two_shapes(tmp_path, capsys):
    """nsys's cuda_gpu_kern_sum has one row per name (median 2,890,848 ns over 61
    launches): the profile ran the kernel at two shapes, so it cannot say which."""
    _machine(tmp_path, "thor", THOR_MACHINE)
    args = ["import", "ncu", str(THOR), "--machine", "jetson-thor", "-o", "n.yaml",
            "--partial", "--timing", str(THOR_NSYS)]  # fmt: skip
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "gives no grid or block, and the profile ran that kernel at 2 shapes: not used" in err
    small, large = _launches(tmp_path / "n.yaml")
    assert small["measurement"]["timing"] == large["measurement"]["timing"] == "ncu-replay"
    assert large["measurement"]["time"]["mean"] == "3.78 ms"


def test_one_shape_takes_the_shapeless_timing(tmp_path, capsys):
    """With only the grid-4096 shape in the profile, nsys's median applies: 2,890,848 ns
    = 2.890848 ms (61 instances, min 2,852,032 ns, max 3,774,688 ns)."""
    _machine(tmp_path, "thor", THOR_MACHINE)
    lines = THOR.read_text().splitlines(keepends=True)
    (tmp_path / "one.csv").write_text(
        "".join(line for line in lines if "(1048576, 1, 1)" not in line)
    )
    args = ["import", "ncu", "one.csv", "--machine", "jetson-thor", "-o", "o.yaml",
            "--partial", "--timing", str(THOR_NSYS)]  # fmt: skip
    assert main(args) == 0, capsys.readouterr().err
    m = _launches(tmp_path / "o.yaml")[0]["measurement"]
    assert m["timing"] == "nsys"
    assert m["time"] == {"median": "2.89085 ms", "min": "2.85203 ms", "max": "3.77469 ms",
                         "repeats": 61}  # fmt: skip
    assert "clocks" not in m  # the nsys run's clock is not recorded


# ------------------------------------------------------------------ joining two exports


def test_counters_joined_with_a_separate_time_export_by_name_grid_and_block(tmp_path, capsys):
    """06 has the counters and no time; 08 has "Duration" and the SM clock of the same
    shapes. The names differ ("csrmm_alg2_kernel<CsrMMPolicy<..." and
    "cusparse::csrmm_alg2_kernel<cusparse::CsrMMPolicy<..."): the kernel id, grid
    (103, 1, 1) and block (128, 1, 1) join them."""
    counters = [launch.name for launch in read_file(SPMM)[1]]
    times = [launch.name for launch in read_file(SPMM_TIMES)[1]]
    assert not set(counters) & set(times)
    _machine(tmp_path, "rtx-4090", RTX_4090)
    args = ["import", "ncu", str(SPMM), "--machine", "rtx-4090", "-o", "j.yaml",
            "--partial", "--timing", str(SPMM_TIMES)]  # fmt: skip
    assert main(args) == 0, capsys.readouterr().err
    scale, partition, csrmm = _launches(tmp_path / "j.yaml")
    m = csrmm["measurement"]
    assert (m["grid"], m["block"]) == ([103, 1, 1], [128, 1, 1])
    assert m["timing"] == "ncu-replay"
    assert m["time"] == {"median": "7.36 us"}  # "Duration" 7360 nsecond in 08
    assert m["clocks"] == {"sm": "2.11641 GHz"}  # 08: 2,116,414,741.85 cycle/second
    assert m["bytes"] == {"gddr6x": {"read": f"{32 * 9268} B", "write": "0 B"}}  # 06's sectors
    assert m["instructions"] == "294232 inst"
    assert m["global_ldst_instructions"] == f"{41370 + 0} inst"
    assert m["global_transactions"] == f"{161998 + 0} txn"
    assert m["shared_ldst_instructions"] == "0 inst" and m["shared_wavefronts"] == "0 txn"
    assert "08_spmm_cc89_sections.csv" in m["notes"]
    assert partition["measurement"]["time"] == {"median": "3.2 us"}  # 3200 nsecond
    assert scale["measurement"]["time"] == {"median": "1.984 us"}  # 1984 nsecond
    assert main(["check", "j.yaml", "specs"]) == 0


def test_a_time_export_without_time_is_refused(tmp_path, capsys):
    _machine(tmp_path, "rtx-4090", RTX_4090)
    args = ["import", "ncu", str(SPMM), "--machine", "rtx-4090", "-o", "x.yaml",
            "--partial", "--timing", str(SPMM)]  # fmt: skip
    assert main(args) == 1
    assert "has no kernel time (gpu__time_duration.sum or gpu__time_active.sum)" in (
        capsys.readouterr().err
    )


# ------------------------------------------------------------------ traffic


def _csrmm() -> Launch:
    return read_profiles([SPMM]).launches[2]


def test_l2_from_read_and_write_sectors_says_atomics_are_missing():
    derived = derive(_csrmm(), _view(("l2", "llc")))
    l2 = derived.bytes["l2"]
    assert isinstance(l2, dict)
    assert l2["read"].value == 32 * 157911 and l2["write"].value == 32 * 158
    assert (
        "lts__t_sectors_op_atom.sum and lts__t_sectors_op_red.sum not collected"
        in l2["read"].origin
    )
    assert derived.transactions["l2"].value == 157911 + 158


def test_l2_bytes_count_reductions_and_atomics(tmp_path):
    """06's csrmm kernel with atomic and reduction sector rows added (the counts are
    made up; the rows are the file's own): 32 B x (read + write + atom + red)."""
    text = SPMM.read_text()
    row = next(
        line
        for line in text.splitlines()
        if line.startswith('"2",') and "lts__t_sectors_op_write.sum" in line
    )
    atom = row.replace("lts__t_sectors_op_write.sum", "lts__t_sectors_op_atom.sum").replace(
        '"158"', '"1,200"'
    )
    red = row.replace("lts__t_sectors_op_write.sum", "lts__t_sectors_op_red.sum").replace(
        '"158"', '"2,706,000"'
    )
    (tmp_path / "red.csv").write_text(text.replace(row, "\n".join([row, atom, red])))
    derived = derive(read_profiles([tmp_path / "red.csv"]).launches[2], _view(("l2", "llc")))
    l2 = derived.bytes["l2"]
    assert not isinstance(l2, dict)
    assert l2.value == 32 * (157911 + 158 + 1200 + 2706000)
    assert derived.transactions["l2"].value == 157911 + 158 + 1200 + 2706000
    assert "lts__t_sectors_op_red.sum = 2,706,000 sector" in l2.origin


def _metrics(cc: str, counts: dict[str, int]) -> Launch:
    metrics = {n: Metric(Decimal(v), Unit("", Decimal(1)), f"{v:,}") for n, v in counts.items()}
    return Launch(("0",), "k", "f.csv", cc=cc, metrics=metrics)


def test_shared_wavefronts_beyond_instructions_are_bank_conflicts():
    derived = derive(
        _metrics("8.0", {
            "smsp__inst_executed_op_shared_ld.sum": 1000,
            "smsp__inst_executed_op_shared_st.sum": 200,
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 4000,
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": 200,
            "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 64,
            "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": 32,
            "smsp__inst_executed_op_global_ld.sum": 999,  # requests are preferred
            "smsp__inst_executed_op_global_st.sum": 999,
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 256,
            "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": 128,
        }),
        _view(),
    )  # fmt: skip
    a = derived.accesses
    assert a["shared_ldst_instructions"].value == 1200
    assert a["shared_wavefronts"].value == 4200
    assert a["global_ldst_instructions"].value == 96
    assert a["global_transactions"].value == 384
    assert any("3000 wavefronts beyond one per load/store instruction" in n for n in derived.notes)


def test_v100_tensor_flops_are_512_per_tensor_instruction():
    from roofgen.spec.library import document

    doc = document("v100-sxm2")
    assert doc is not None
    derived = derive(
        _metrics("7.0", {"sm__inst_executed_pipe_tensor.sum": 1000}), MachineView(doc.data)
    )
    assert derived.flops["tensor"]["fp16"].value == 512 * 1000
    assert not any("tensor FLOPs unknown" in w for w in derived.warnings)


# ------------------------------------------------------------------ clocks


@pytest.mark.parametrize(
    ("base", "flag", "clock", "said"),
    [
        (
            ", base_sm: 2.5 GHz",
            [],
            {"sm": "2.5 GHz"},
            "the SM clock is machine rtx-5070's base clock",
        ),
        ("", [], None, "no base clock (clocks.base_sm)"),
        (", base_sm: 2.5 GHz", ["--clock-control", "none"], None, "the clocks were not locked"),
    ],
    ids=["base-clock", "no-base-clock", "not-locked"],
)
def test_without_a_clock_metric_the_base_clock_or_unknown(
    tmp_path, capsys, base, flag, clock, said
):
    """05_saxpy.csv has no clock metric: the machine's base clock under --clock-control
    base (Nsight Compute's default), else the clock is unknown and said to be."""
    _machine(tmp_path, "rtx-5070", RTX_5070.replace("{base}", base))
    args = [
        "import",
        "ncu",
        str(SAXPY),
        "--machine",
        "rtx-5070",
        "-o",
        "s.yaml",
        "--partial",
        *flag,
    ]
    assert main(args) == 0
    err = capsys.readouterr().err
    m = _launches(tmp_path / "s.yaml")[0]["measurement"]
    assert m.get("clocks") == clock
    assert said in m["notes"]
    assert ("SM clock unknown" in err) == (clock is None)
    assert main(["check", "s.yaml", "specs"]) == 0


def test_flushed_bytes_with_warm_times_are_flagged(tmp_path, capsys):
    (tmp_path / "nsys.csv").write_text(
        "Time (%),Total Time (ns),Instances,Avg (ns),Name\n"
        '95.1,30000000000,3,10000000000.0,"void gemm_v1<float>(float *, float *, float *, int, int, int)"\n'
    )
    args = ["import", "ncu", str(SGEMM), "--machine", "a100-40gb-sxm", "-o", "w.yaml", "--timing",
            "nsys.csv", "--kernel-map", "gemm_v1=gemm", "--only-mapped"]  # fmt: skip
    assert main(args) == 0
    assert "caches flushed before each replay (--cache-control all)" in capsys.readouterr().err
    m = _launches(tmp_path / "w.yaml")[0]["measurement"]
    assert m["time"] == {"mean": "10 s", "repeats": 3}  # nsys without a median: its mean
    assert "bytes were counted with caches flushed" in m["notes"]


# ------------------------------------------------------------------ what is written


def test_the_schema_line_is_local_like_new_case_and_the_hint_names_kernels(tmp_path, capsys):
    """`roofgen init` writes .roofgen/case.schema.json; a case imported under it points
    there (offline), as `new case` does, not at the published URL."""
    assert main(["init", "-q"]) == 0
    assert (tmp_path / ".roofgen" / "case.schema.json").is_file()
    capsys.readouterr()
    (tmp_path / "cases").mkdir(exist_ok=True)
    assert (
        main(["import", "ncu", str(SGEMM), "--machine", "a100-40gb-sxm", "-o", "cases/s.yaml"]) == 0
    )
    err = capsys.readouterr().err
    first = (tmp_path / "cases" / "s.yaml").read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=../.roofgen/case.schema.json"
    assert main(["new", "case", "t", "--machine", "a100-40gb-sxm", "-o", "cases/t.yaml"]) == 0
    assert (tmp_path / "cases" / "t.yaml").read_text().splitlines()[0] == first
    capsys.readouterr()
    assert "next: roofgen check && roofgen explain s/randominit" in err
    assert main(["new", "case", "n", "--machine", "a100-40gb-sxm", "--from-ncu", str(SGEMM),
                 "-o", "cases/n.yaml"]) == 0  # fmt: skip
    err = capsys.readouterr().err
    assert (tmp_path / "cases" / "n.yaml").read_text().splitlines()[0] == first
    assert "roofgen explain n/randominit" in err and "KERNEL" not in err


def test_every_metric_read_is_a_row_of_the_table_and_of_the_guide():
    from roofgen.importers import ncu_metrics, ncu_traffic
    from roofgen.importers.ncu_table import METRICS, SECTION_LABELS
    from roofgen.site.guide import MEASURE_PATH, guide_pages

    rows = {row.metric for row in METRICS}
    read = set(ncu_traffic.traffic_metric_names()) | set(SECTION_LABELS.values())
    read |= {n for n in vars(ncu_metrics)["_TIMES"]}
    read |= {
        ncu_metrics.sass_metric(op) for ops in ncu_metrics.FLOP_WEIGHTS.values() for op, _ in ops
    }
    read |= {
        "smsp__inst_executed.sum",
        "sm__inst_executed.sum",
        "sm__inst_executed_pipe_tensor.sum",
    }
    read |= {f"{p}__cycles_elapsed.{s}" for p in ("sm", "smsp", "gpc") for s in ("avg", "max")}
    read |= {f"{p}__cycles_elapsed.avg.per_second" for p in ("sm", "smsp", "gpc", "dram")}
    missing = read - rows
    assert not missing, missing
    page = guide_pages("")[MEASURE_PATH]
    assert "<!-- ncu-metric-table -->" not in page
    for row in METRICS:
        assert f"| `{row.metric}` | `{row.field}` |" in page
    assert re.search(r"lts__t_sectors_op_red\.sum` \| `bytes\.<llc>`", page)


# The layout of `nsys stats --report cuda_gpu_trace --format csv` (written here, not tool
# output): one row per launch with its grid and block; a memory copy has no grid.
TRACE = """\
Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name
1000,4000,10,,,,,,,,,,4.194,1048.5,Pageable,Device,Thor (0),1,,7,[CUDA memcpy Host-to-Device]
9000,90000,11,4096,1,1,256,1,1,16,0.000,0.000,,,,,Thor (0),1,,7,"vernier::bench::demo::<unnamed>::saxpyKernel(float, const float *, float *, unsigned long)"
99000,92000,12,4096,1,1,256,1,1,16,0.000,0.000,,,,,Thor (0),1,,7,"vernier::bench::demo::<unnamed>::saxpyKernel(float, const float *, float *, unsigned long)"
191000,91000,13,4096,1,1,256,1,1,16,0.000,0.000,,,,,Thor (0),1,,7,"vernier::bench::demo::<unnamed>::saxpyKernel(float, const float *, float *, unsigned long)"
282000,3700000,14,1048576,1,1,1,1,1,16,0.000,0.000,,,,,Thor (0),1,,7,"vernier::bench::demo::<unnamed>::saxpyKernel(float, const float *, float *, unsigned long)"
3982000,3800000,15,1048576,1,1,1,1,1,16,0.000,0.000,,,,,Thor (0),1,,7,"vernier::bench::demo::<unnamed>::saxpyKernel(float, const float *, float *, unsigned long)"
"""


def test_nsys_per_launch_times_join_each_shape(tmp_path, capsys):
    """cuda_gpu_trace gives each launch's grid and block: grid 4096 gets 90, 92, 91 us
    (median 91 us; inclusive quartiles 90.5 and 91.5 us), grid 1,048,576 gets 3.7 and
    3.8 ms (median 3.75 ms; quartiles 3.725 and 3.775 ms)."""
    _machine(tmp_path, "thor", THOR_MACHINE)
    (tmp_path / "trace.csv").write_text(TRACE)
    args = ["import", "ncu", str(THOR), "--machine", "jetson-thor", "-o", "g.yaml",
            "--partial", "--timing", "trace.csv"]  # fmt: skip
    assert main(args) == 0, capsys.readouterr().err
    small, large = (launch["measurement"] for launch in _launches(tmp_path / "g.yaml"))
    assert small["timing"] == large["timing"] == "nsys"
    assert small["time"] == {"median": "91 us", "q1": "90.5 us", "q3": "91.5 us",
                             "min": "90 us", "max": "92 us", "repeats": 3}  # fmt: skip
    assert large["time"] == {"median": "3.75 ms", "q1": "3.725 ms", "q3": "3.775 ms",
                             "min": "3.7 ms", "max": "3.8 ms", "repeats": 2}  # fmt: skip
    assert "clocks" not in small and "clocks" not in large
    assert main(["check", "g.yaml", "specs"]) == 0


def test_a_real_cuda_gpu_trace_reads_per_kernel_and_shape():
    """tests/data/nsys/cuda_gpu_trace_rtx5090_head.csv (an RTX 5090 export): three memory
    copies (no grid: skipped) and twelve kernels, each launched once."""
    from roofgen.importers.timing import read_timing

    timings = read_timing(ROOT / "tests" / "data" / "nsys" / "cuda_gpu_trace_rtx5090_head.csv")
    assert len(timings) == 12
    by_name = {t.name: t for t in timings}
    assert not any(name.startswith("[CUDA memcpy") for name in by_name)
    concat = by_name["input_concatenate_fusion_2"]
    assert (concat.grid, concat.block) == ((1, 1, 1), (2, 1, 1))
    assert concat.median == Decimal(832) * Decimal("1e-9") and concat.repeats == 1
    assert by_name["input_concatenate_fusion_1"].block == (4, 1, 1)
    assert by_name["loop_multiply_fusion_1"].median == Decimal(3360) * Decimal("1e-9")
    assert all(t.kind == "nsys" and t.statistic == "median" for t in timings)
