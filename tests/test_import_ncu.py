# ruff: noqa: E501 (the synthetic CSV layouts below keep ncu's long lines)
"""`roofgen import ncu` on real Nsight Compute exports (tests/data/ncu, byte for byte).

01_sgemm.csv: an A100 (CC 8.0) long-form export, 3 kernels, thousands separators,
SM clock locked at ~765 MHz, no gpu__time_duration (time = cycles / clock).
05_saxpy.csv: an RTX 5070 (CC 12.0) export with CRLF line endings, program output
and ==PROF== lines before the header, dram read/write bytes and ns durations, and
no FLOP counts. Every expected figure below was computed by hand from the files.
"""

from __future__ import annotations

import difflib
import shutil
import sys
import types
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from roofgen.cli import main
from roofgen.importers.ncu_case import KernelMap, derived_id, kernel_id
from roofgen.importers.ncu_csv import Launch, Metric, Unit, parse_unit, read_file, read_profiles
from roofgen.importers.ncu_derived import number
from roofgen.importers.ncu_metrics import MachineView, derive
from roofgen.spec.library import document
from roofgen.spec.quantity import parse_quantity
from roofgen.spec.yamlload import load_file

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "ncu"
SGEMM = DATA / "01_sgemm.csv"
SAXPY = DATA / "05_saxpy.csv"
VECTOR_ADD = ROOT / "tests" / "cases" / "valid" / "a100-kernels" / "vector-add.yaml"

FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
HFMA = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"

RTX_5070 = """\
roofgen: 1
kind: machine
id: rtx-5070
name: NVIDIA GeForce RTX 5070 (test machine)
clocks: {sm: 2.625 GHz}   # the 05_saxpy.csv run header: "48 SMs, 2.625 GHz"
compute:
  - {id: fp32, kind: fp32, peaks: {fp32: 32.256 TFLOP/s}}
memory:
  - {id: gddr7, role: device, bandwidth: 672.048 GB/s}
"""


@pytest.fixture(autouse=True)
def _in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(tmp_path)


def _a100() -> MachineView:
    doc = document("a100-40gb-sxm")
    assert doc is not None
    return MachineView(doc.data)


def _yaml(path: Path) -> Any:
    doc, problems = load_file(path)
    assert doc is not None, problems
    return doc.data


def _m(data: Any, launch: int) -> Any:
    return data["variants"][0]["launches"][launch]["measurement"]


# ------------------------------------------------------------------ the fixtures


def test_the_fixtures_are_the_real_files():
    raw = SAXPY.read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n") > 10  # CRLF kept
    assert raw.startswith(b"==PROF== Connected to process 58960")
    assert b"5,323,503,232.00" in SGEMM.read_bytes()


def test_sgemm_parses_three_launches_with_thousands_separators():
    layout, launches, messages = read_file(SGEMM)
    assert layout == "long"
    assert messages == []
    assert [launch.name for launch in launches] == [
        "void randomInit<float>(T1 *, int, int, unsigned int)",
        "void randomInit<float>(T1 *, int, int, unsigned int)",
        "void gemm_v1<float>(float *, float *, float *, int, int, int)",
    ]
    gemm = launches[2]
    assert gemm.grid == (1280, 1280, 1) and gemm.block == (32, 32, 1) and gemm.cc == "8.0"
    assert gemm.metrics["dram__bytes.sum"].value == Decimal("807658682624")
    assert gemm.metrics[FFMA].value == Decimal("34359738368000")
    assert gemm.metrics["smsp__cycles_elapsed.avg.per_second"].value == Decimal("764999999.31")


def test_sgemm_flops_bytes_time_and_clock_by_hand():
    launches = read_profiles([SGEMM]).launches
    gemm = derive(launches[2], _a100())
    # FP32: 2 x ffma = 2 x 34,359,738,368,000; FP16: hfma counts packed pairs, 4 x
    # 2,149,161,369,600; fadd, fmul, dadd, dmul, dfma, hadd and hmul are all zero.
    assert gemm.flops["fp32"]["fp32"].value == 68_719_476_736_000
    assert gemm.flops["fp16"]["fp16"].value == 8_596_645_478_400
    # Collected and read zero: an explicit 0, not an unknown. dadd, dmul and dfma are all 0.
    assert gemm.flops["fp64"]["fp64"].value == 0
    # The tensor pipe ran 67,161,292,800 warp instructions, exactly the FP16 SASS thread
    # instructions / 32 (2,149,161,369,600 / 32 = 67,161,292,800): FP16 FMAs issued to
    # that pipe on CC 8.0, leaving no MMA instruction. Tensor work is a known zero.
    assert 2_149_161_369_600 / 32 == 67_161_292_800
    assert gemm.flops["tensor"] == {"fp16": gemm.flops["tensor"]["fp16"]}
    assert gemm.flops["tensor"]["fp16"].value == 0
    assert "no MMA" in gemm.flops["tensor"]["fp16"].origin
    assert set(gemm.flops) == {"fp32", "fp16", "fp64", "tensor"}
    assert FFMA in gemm.flops["fp32"]["fp32"].origin
    assert gemm.bytes == {
        "hbm": gemm.bytes["hbm"],
        "l2": gemm.bytes["l2"],
        "l1": gemm.bytes["l1"],
    }
    assert gemm.bytes["hbm"].value == 807_658_682_624  # type: ignore[union-attr]
    assert gemm.bytes["l2"].value == 40_927_345_510_272  # type: ignore[union-attr]
    assert gemm.bytes["l1"].value == 38_708_392_755_200  # type: ignore[union-attr]
    # time = smsp__cycles_elapsed.avg / smsp__cycles_elapsed.avg.per_second
    assert gemm.time is not None
    assert gemm.time.value == Decimal("25610472227.46") / Decimal("764999999.31")
    assert float(gemm.time.value) == pytest.approx(33.47774150, rel=1e-9)
    assert gemm.clocks["sm"].value == Decimal("764999999.31")  # base clock, ~765 MHz
    assert not any("tensor FLOPs unknown" in w for w in gemm.warnings)
    init = derive(launches[0], _a100())
    assert set(init.flops) == {"fp32", "fp16", "fp64", "tensor"}
    assert init.flops["fp32"]["fp32"].value == 1_677_721_600  # 2 x 838,860,800
    # fp64 and fp16 SASS counters and the tensor-pipe count all read 0: known zeros.
    assert init.flops["fp64"]["fp64"].value == init.flops["fp16"]["fp16"].value == 0
    assert init.flops["tensor"]["fp16"].value == 0
    assert init.bytes["hbm"].value == 5_323_503_232  # type: ignore[union-attr]
    assert init.warnings == []  # the tensor pipe count is zero: no tensor work


def test_saxpy_parses_crlf_and_program_output():
    layout, launches, _ = read_file(SAXPY)
    assert layout == "long"
    assert len(launches) == 1
    saxpy = launches[0]
    assert saxpy.name == "unnamed>::saxpy_kernel(float, const float *, float *, int)"
    assert saxpy.grid == (65536, 1, 1) and saxpy.cc == "12.0"
    assert saxpy.metrics["gpu__time_duration.sum"].value == Decimal("0.000292928")  # 292,928 ns
    view = MachineView({"id": "m", "compute": [], "memory": [{"id": "gddr7", "role": "device"}]})
    derived = derive(saxpy, view)
    assert derived.time is not None and derived.time.value == Decimal("0.000292928")
    hbm = derived.bytes["gddr7"]
    assert isinstance(hbm, dict)
    assert hbm["read"].value == 134_221_568 and hbm["write"].value == 43_631_104
    assert derived.missing == {"FLOP counts": derived.missing["FLOP counts"]}
    assert derived.occupancy is not None and derived.occupancy.value == Decimal("0.8382")


# ------------------------------------------------------------------ the CLI


def test_import_writes_a_case_that_checks_clean(tmp_path, capsys):
    assert main(["import", "ncu", str(SGEMM), "--machine", "a100-40gb-sxm", "-o", "s.yaml"]) == 0
    err = capsys.readouterr().err
    assert "tensor FLOPs unknown" not in err  # the tensor pipe ran FP16 FMAs, no MMA
    text = (tmp_path / "s.yaml").read_text("utf-8")
    assert text.startswith("# yaml-language-server: $schema=")
    assert f"fp32: 68719476736000 FLOP # 2 x ffma ({FFMA} = 34,359,738,368,000.00 inst)" in text
    assert f"fp16: 8596645478400 FLOP # 4 x hfma ({HFMA} = 2,149,161,369,600.00 inst)" in text
    assert "hbm: 807658682624 B # dram__bytes.sum = 807,658,682,624.00 byte" in text
    # 764,999,999.31 cycle/s is a quotient: written to 6 significant digits, 765 MHz.
    assert "sm: 765 MHz # smsp__cycles_elapsed.avg.per_second" in text
    data = _yaml(tmp_path / "s.yaml")
    assert data["machines"] == [{"id": "a100-40gb-sxm", "version": 2}]
    assert [k["id"] for k in data["kernels"]] == ["randominit", "gemm_v1"]
    gemm = _m(data, 2)
    assert gemm["timing"] == "ncu-replay"
    assert parse_quantity(gemm["flops"]["fp32"]["fp32"], "flop") == 68_719_476_736_000
    assert parse_quantity(gemm["clocks"]["sm"], "frequency") == 765e6
    # 25,610,472,227.46 cycles / 764,999,999.31 cycle/s = 33.47774150 s, to 6 digits
    assert gemm["time"] == {"median": "33.4777 s"}
    assert "--cache-control all" in data["method"]["cache_control"]
    assert main(["check", "s.yaml"]) == 0
    assert "0 error(s), 0 warning(s)" in capsys.readouterr().err
    assert main(["import", "ncu", str(SGEMM), "--machine", "a100-40gb-sxm", "-o", "s.yaml"]) == 1
    assert "exists; pass --force" in capsys.readouterr().err


def test_generated_case_checks_against_a_team_machine(tmp_path, capsys):
    machines = tmp_path / "specs" / "machines"
    machines.mkdir(parents=True)
    (machines / "rtx-5070.yaml").write_text(RTX_5070)
    out = tmp_path / "specs" / "saxpy.yaml"
    args = ["import", "ncu", str(SAXPY), "--machine", "rtx-5070", "-o", str(out), "--partial"]
    assert main(args) == 0
    data = _yaml(out)
    assert data["machines"] == ["rtx-5070"]
    saxpy = _m(data, 0)
    assert saxpy["time"] == {"median": "292.928 us"}
    assert saxpy["bytes"]["gddr7"] == {"read": "134221568 B", "write": "43631104 B"}
    assert "flops" not in saxpy
    assert main(["check", str(tmp_path / "specs")]) == 0
    assert "2 file(s) checked: 0 error(s), 0 warning(s)" in capsys.readouterr().err


def test_missing_metrics_name_them_and_the_ncu_command(tmp_path, capsys):
    machines = tmp_path / "specs" / "machines"
    machines.mkdir(parents=True)
    (machines / "rtx-5070.yaml").write_text(RTX_5070)
    assert main(["import", "ncu", str(SAXPY), "--machine", "rtx-5070", "-o", "x.yaml"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "Traceback" not in err
    assert "the profile lacks metrics a roofline needs for kernel 'saxpy_kernel'" in err
    assert "FLOP counts: none of smsp__sass_thread_inst_executed_op_dadd_pred_on.sum" in err
    assert "  ncu --csv --metrics smsp__sass_thread_inst_executed_op_dadd_pred_on.sum," in err
    assert f"{FFMA}," in err and "sm__ops_path_tensor_src_fp16_dst_fp32.sum" in err
    assert "or pass --partial" in err
    assert not (tmp_path / "x.yaml").exists()


def test_missing_time_cannot_be_partial(tmp_path, capsys):
    lines = SGEMM.read_text("utf-8").splitlines(keepends=True)
    kept = [line for line in lines if "cycles_elapsed" not in line]
    (tmp_path / "p.csv").write_text("".join(kept))
    args = ["import", "ncu", "p.csv", "--machine", "a100-40gb-sxm", "-o", "x.yaml", "--partial"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "time: none of gpu__time_duration.sum" in err
    assert "--timing FILE" in err


def test_into_only_adds_lines(tmp_path, capsys):
    case = tmp_path / "vector-add.yaml"
    shutil.copyfile(VECTOR_ADD, case)
    before = case.read_text("utf-8")
    args = [
        "import",
        "ncu",
        str(SGEMM),
        "--machine",
        "a100-40gb-sxm",
        "--into",
        str(case),
        "--variant",
        "profiled",
        "--kernel-map",
        "gemm_v1=add",
        "--only-mapped",
    ]
    assert main(args) == 0, capsys.readouterr().err
    after = case.read_text("utf-8")
    diff = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0))
    removed = [d for d in diff if d.startswith("-") and not d.startswith("---")]
    added = [d for d in diff if d.startswith("+") and not d.startswith("+++")]
    assert removed == []
    assert added[0] == "+  - id: profiled"
    assert any("fp32: 68719476736000 FLOP" in line for line in added)
    assert after.startswith(before.splitlines()[0])  # the $schema line
    data = _yaml(case)
    assert [v["id"] for v in data["variants"]] == ["baseline", "vectorised", "profiled"]
    assert [launch["kernel"] for launch in data["variants"][2]["launches"]] == ["add"]
    assert main(["check", str(case)]) == 0
    assert main(args) == 1  # the variant exists now: never replaced
    assert "already has a variant 'profiled'" in capsys.readouterr().err


def test_into_keeps_crlf_and_adds_a_machine(tmp_path, capsys):
    case = tmp_path / "c.yaml"
    text = (VECTOR_ADD).read_text("utf-8")
    case.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    args = [
        "import",
        "ncu",
        str(SGEMM),
        "--machine",
        "a100-80gb-sxm",
        "--into",
        str(case),
        "--variant",
        "on-80gb",
        "--kernel-map",
        "gemm_v1=add",
        "--only-mapped",
    ]
    assert main(args) == 0, capsys.readouterr().err
    raw = case.read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n")
    data = _yaml(case)
    assert data["machines"][-1] == {"id": "a100-80gb-sxm", "version": 1}
    assert [v.get("machine") for v in data["variants"]] == [
        "a100-40gb-sxm",
        "a100-40gb-sxm",
        "a100-80gb-sxm",
    ]
    assert main(["check", str(case)]) == 0


def test_kernel_map_names_kernels(tmp_path, capsys):
    args = [
        "import",
        "ncu",
        str(SGEMM),
        "--machine",
        "a100-40gb-sxm",
        "-o",
        "k.yaml",
        "--kernel-map",
        "randomInit=init",
        "--kernel-map",
        "gemm_v\\d=sgemm",
    ]
    assert main(args) == 0
    data = _yaml(tmp_path / "k.yaml")
    assert [k["id"] for k in data["kernels"]] == ["init", "sgemm"]
    assert [launch["kernel"] for launch in data["variants"][0]["launches"]] == [
        "init",
        "init",
        "sgemm",
    ]
    assert (
        main(
            [
                "import",
                "ncu",
                str(SGEMM),
                "--machine",
                "a100-40gb-sxm",
                "-o",
                "b.yaml",
                "--kernel-map",
                "gemm=Bad Id",
            ]
        )
        == 2
    )
    assert "write REGEX=ID" in capsys.readouterr().err


def test_kernel_ids_from_names():
    assert derived_id("void gemm_v1<float>(float *, float *, float *, int, int, int)") == "gemm_v1"
    assert derived_id("void randomInit<float>(T1 *, int, int, unsigned int)") == "randominit"
    assert derived_id("unnamed>::saxpy_kernel(float, const float *, float *, int)") == (
        "saxpy_kernel"
    )
    assert derived_id("_Z7gemm_v1IfEvPT_S1_S1_iii") == "gemm_v1"
    assert derived_id("_ZN7cutlass6KernelINS_4gemmEEEvT_") == "kernel"
    assert derived_id("void ns::f<ns::A<int>, 3>(ns::A<int>)") == "f"
    maps = [KernelMap.parse("_Z7gemm=gemm"), KernelMap.parse("x=y=z")]
    assert kernel_id("_Z7gemm_v1IfEvPT_S1_S1_iii", maps) == "gemm"
    assert maps[1].pattern.pattern == "x=y"
    assert kernel_id("other", maps) is None


def test_different_kernels_never_share_a_made_up_id():
    from roofgen.importers.ncu_case import group_launches
    from roofgen.importers.ncu_csv import Launch, Profile

    names = ["void a::k(int)", "void b::k(int)", "void a::k(int)"]
    launches = [Launch((str(i), n), n, "f.csv", grid=(1,), block=(1,)) for i, n in enumerate(names)]
    groups = group_launches(Profile(launches, [], {}), [], only_mapped=False)
    assert [(g.kernel, g.name, len(g.launches)) for g in groups] == [
        ("k", "void a::k(int)", 2),
        ("k-2", "void b::k(int)", 1),
    ]


def test_several_files_of_one_run_merge_by_launch(tmp_path, capsys):
    lines = SGEMM.read_text("utf-8").splitlines(keepends=True)
    header, rows = lines[0], lines[1:]
    memory = [r for r in rows if "__bytes" in r]
    rest = [r for r in rows if "__bytes" not in r]
    (tmp_path / "a.csv").write_text(header + "".join(memory))
    (tmp_path / "b.csv").write_text("==PROF== pass 2\n" + header + "".join(rest))
    assert (
        main(["import", "ncu", "a.csv", "b.csv", "--machine", "a100-40gb-sxm", "-o", "m.yaml"]) == 0
    )
    assert main(["import", "ncu", str(SGEMM), "--machine", "a100-40gb-sxm", "-o", "s.yaml"]) == 0
    merged, single = _yaml(tmp_path / "m.yaml"), _yaml(tmp_path / "s.yaml")
    for i in range(3):
        a, b = _m(merged, i), _m(single, i)
        assert (a["flops"], a["bytes"], a["time"]) == (b["flops"], b["bytes"], b["time"])


RAW_PAGE = """\
some program output
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes_read.sum","dram__bytes_write.sum","gpu__time_duration.sum","lts__t_sectors.sum","smsp__sass_thread_inst_executed_op_ffma_pred_on.sum","sm__cycles_elapsed.avg.per_second"
"","","","","","","","","","","","Mbyte","Kbyte","usecond","sector","inst","cycle/nsecond"
"0","7","app","h","void axpy<float>(float, float*, float*)","1","7","(256, 1, 1)","(4096, 1, 1)","0","8.0","12.5","2,048","1.5","1,000","4,096","1.41"
"1","7","app","h","void axpy<float>(float, float*, float*)","1","7","(256, 1, 1)","(4096, 1, 1)","0","8.0","12.7","2,048","1.7","1,000","4,096","1.41"
==PROF== Disconnected from process 7
"""

SUMMARY = """\
==PROF== Connected to process 9
"Process ID","Process Name","Host Name","Kernel Name","Block Size","Grid Size","Device","CC","Invocations","Section Name","Metric Name","Metric Unit","Minimum","Maximum","Average"
"9","app","h","axpy","(256, 1, 1)","(4096, 1, 1)","0","8.0","4","Command line profiler metrics","dram__bytes.sum","Gbyte","1.00","1.10","1.05"
"9","app","h","axpy","(256, 1, 1)","(4096, 1, 1)","0","8.0","4","Command line profiler metrics","gpu__time_duration.sum","msecond","1.00","2.00","1.50"
"9","app","h","axpy","(256, 1, 1)","(4096, 1, 1)","0","8.0","4","Command line profiler metrics","smsp__sass_thread_inst_executed_op_fadd_pred_on.sum","inst","10","10","10"
==WARNING== a warning from ncu
"""


def test_raw_page_with_a_units_row(tmp_path, capsys):
    (tmp_path / "raw.csv").write_text(RAW_PAGE)
    layout, launches, _ = read_file(tmp_path / "raw.csv")
    assert layout == "raw" and len(launches) == 2
    m = launches[0].metrics
    assert m["dram__bytes_read.sum"].value == Decimal("12500000")  # 12.5 Mbyte
    assert m["dram__bytes_write.sum"].value == Decimal("2048000")  # 2,048 Kbyte
    assert m["gpu__time_duration.sum"].value == Decimal("0.0000015")  # 1.5 usecond
    assert m["sm__cycles_elapsed.avg.per_second"].value == Decimal("1410000000")  # 1.41/ns
    assert main(["import", "ncu", "raw.csv", "--machine", "a100-40gb-sxm", "-o", "r.yaml"]) == 0
    launch = _yaml(tmp_path / "r.yaml")["variants"][0]["launches"][0]
    assert launch["calls"] == 2  # two launches of one kernel and shape
    measurement = launch["measurement"]
    assert measurement["time"] == {"median": "1.6 us", "min": "1.5 us", "max": "1.7 us"}
    assert measurement["flops"] == {"fp32": {"fp32": "8192 FLOP"}}
    assert measurement["bytes"]["l2"] == "32000 B"  # 32 B x 1,000 sectors
    assert measurement["transactions"] == {"l2": "1000 txn"}
    assert measurement["bytes"]["hbm"] == {"read": "12600000 B", "write": "2048000 B"}
    assert measurement["clocks"] == {"sm": "1.41 GHz"}


def test_per_kernel_summary(tmp_path, capsys):
    (tmp_path / "sum.csv").write_text(SUMMARY)
    layout, launches, messages = read_file(tmp_path / "sum.csv")
    assert layout == "summary" and launches[0].invocations == 4
    assert messages == ["==WARNING== a warning from ncu"]
    assert main(["import", "ncu", "sum.csv", "--machine", "a100-40gb-sxm", "-o", "s.yaml"]) == 0
    assert "warning: Nsight Compute said: ==WARNING== a warning from ncu" in (
        capsys.readouterr().err
    )
    launch = _yaml(tmp_path / "s.yaml")["variants"][0]["launches"][0]
    assert launch["calls"] == 4
    # The summary's "Average" over 4 invocations is a mean: written as one.
    assert launch["measurement"]["time"] == {"mean": "1.5 ms", "min": "1 ms", "max": "2 ms"}
    assert launch["measurement"]["bytes"] == {"hbm": "1050000000 B"}


def test_unit_spellings():
    cases = {
        "ns": ("second", "1e-9"),
        "nsecond": ("second", "1e-9"),
        "usecond": ("second", "1e-6"),
        "msecond": ("second", "1e-3"),
        "second": ("second", "1"),
        "byte": ("byte", "1"),
        "Kbyte": ("byte", "1e3"),
        "Mbyte": ("byte", "1e6"),
        "Gbyte": ("byte", "1e9"),
        "KiB": ("byte", "1024"),
        "cycle/nsecond": ("cycle/second", "1e9"),
        "cycle/second": ("cycle/second", "1"),
        "Ghz": ("hz", "1e9"),
        "Mhz": ("hz", "1e6"),
        "sector": ("sector", "1"),
        "inst": ("inst", "1"),
        "%": ("%", "1"),
        "": ("", "1"),
    }
    for text, (kind, factor) in cases.items():
        unit = parse_unit(text)
        assert (unit.kind, unit.factor) == (kind, Decimal(factor)), text


def test_numbers_are_written_exactly():
    assert number(Decimal("68719476736000.00")) == "68719476736000"
    assert number(Decimal("764.99999931")) == "765"  # a quotient: 6 significant digits
    assert number(Decimal(1) / Decimal(3)) == "0.333333"


NSYS = """\
Processing [report.sqlite] with [cuda_gpu_kern_sum.py]...
Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name
95.1,30000000000,3,10000000000.0,9000000000.0,8000000000,13000000000,100.0,"void gemm_v1<float>(float *, float *, float *, int, int, int)"
"""

EVENTS = """\
kernel,time_ms
gemm_v1,9.5
gemm_v1,10.5
gemm_v1,10.0
gemm_v1,11.0
"""


def test_timing_from_nsys_replaces_the_replay_time(tmp_path, capsys):
    (tmp_path / "nsys.csv").write_text(NSYS)
    args = [
        "import",
        "ncu",
        str(SGEMM),
        "--machine",
        "a100-40gb-sxm",
        "-o",
        "t.yaml",
        "--timing",
        "nsys.csv",
        "--kernel-map",
        "gemm_v1=gemm",
        "--only-mapped",
    ]
    assert main(args) == 0, capsys.readouterr().err
    m = _m(_yaml(tmp_path / "t.yaml"), 0)
    assert m["timing"] == "nsys"
    assert m["time"] == {"median": "9 s", "min": "8 s", "max": "13 s", "repeats": 3}
    assert "clocks" not in m  # the nsys run's clocks are not the replay's
    assert "not from the replay" in m["notes"]
    assert main(["check", "t.yaml"]) == 0


def test_timing_from_cuda_events(tmp_path, capsys):
    (tmp_path / "events.csv").write_text(EVENTS)
    args = [
        "import",
        "ncu",
        str(SGEMM),
        "--machine",
        "a100-40gb-sxm",
        "-o",
        "e.yaml",
        "--timing",
        "events.csv",
        "--kernel-map",
        "gemm_v1=gemm_v1",
        "--only-mapped",
    ]
    assert main(args) == 0, capsys.readouterr().err
    m = _m(_yaml(tmp_path / "e.yaml"), 0)
    assert m["timing"] == "cuda-events"
    assert m["time"]["median"] == "10.25 ms"
    assert (m["time"]["min"], m["time"]["max"], m["time"]["repeats"]) == ("9.5 ms", "11 ms", 4)


def test_usage_errors(tmp_path, capsys):
    assert main(["import", "ncu", str(SGEMM), "--machine", "a100-40gb-sxm"]) == 2
    assert main(["import", "ncu", str(SGEMM), "--machine", "a100-40gb-sxm", "--into", "x"]) == 2
    assert main(["import", "ncu", "nope.csv", "--machine", "a100-40gb-sxm", "-o", "x.yaml"]) == 1
    assert main(["import", "ncu", str(SGEMM), "--machine", "zz-9000", "-o", "x.yaml"]) == 1
    err = capsys.readouterr().err
    assert "nope.csv: no such file" in err
    assert "no machine 'zz-9000' in the specs or in roofgen's machine library" in err
    (tmp_path / "junk.csv").write_text("a,b\n1,2\n")
    assert main(["import", "ncu", "junk.csv", "--machine", "a100-40gb-sxm", "-o", "x.yaml"]) == 1
    assert "no Nsight Compute CSV header found" in capsys.readouterr().err


# ------------------------------------------------------------------ .ncu-rep


class _FakeMetric:
    def __init__(self, value: Any, unit: str):
        self._value, self._unit = value, unit

    def value(self) -> Any:
        return self._value

    def unit(self) -> str:
        return self._unit


class _FakeAction:
    NameBase_DEMANGLED = 1

    def __init__(self, name: str, metrics: dict[str, tuple[Any, str]]):
        self._name, self._metrics = name, metrics

    def name(self, base: int = 0) -> str:
        return self._name

    def metric_names(self) -> tuple[str, ...]:
        return tuple(self._metrics)

    def metric_by_name(self, name: str) -> _FakeMetric:
        return _FakeMetric(*self._metrics[name])


def _fake_ncu_report(actions: list[_FakeAction]) -> types.ModuleType:
    module = types.ModuleType("ncu_report")
    rng = types.SimpleNamespace(num_actions=lambda: len(actions), action_by_idx=actions.__getitem__)
    context = types.SimpleNamespace(num_ranges=lambda: 1, range_by_idx=lambda i: rng)
    module.load_report = lambda path: context  # type: ignore[attr-defined]
    module.IAction = _FakeAction  # type: ignore[attr-defined]
    return module


def test_ncu_rep_goes_through_ncu_report(tmp_path, capsys, monkeypatch):
    gemm = _FakeAction(
        "void gemm_v1<float>(float *, float *, float *, int, int, int)",
        {
            FFMA: (34359738368000, "inst"),
            "dram__bytes.sum": (807658682624, "byte"),
            "gpu__time_duration.sum": (33477741.5, "usecond"),
            "sm__ops_path_tensor_src_bf16_dst_fp32.sum": (1000, ""),
            "launch__grid_dim_x": (1280, ""),
            "launch__grid_dim_y": (1280, ""),
            "launch__grid_dim_z": (1, ""),
            "device__attribute_compute_capability_major": (8, ""),
            "device__attribute_display_name": ("NVIDIA A100", ""),
        },
    )
    monkeypatch.setitem(sys.modules, "ncu_report", _fake_ncu_report([gemm]))
    (tmp_path / "r.ncu-rep").write_bytes(b"fake")
    assert main(["import", "ncu", "r.ncu-rep", "--machine", "a100-40gb-sxm", "-o", "r.yaml"]) == 0
    m = _m(_yaml(tmp_path / "r.yaml"), 0)
    assert m["flops"] == {"fp32": {"fp32": "68719476736000 FLOP"}, "tensor": {"bf16": "1000 FLOP"}}
    assert m["time"] == {"median": "33.4777 s"}  # 33,477,741.5 us to 6 digits
    assert m["grid"] == [1280, 1280, 1]


def test_ncu_rep_without_the_package_says_how_to_get_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ncu_report", None)  # import fails
    (tmp_path / "r.ncu-rep").write_bytes(b"fake")
    assert main(["import", "ncu", "r.ncu-rep", "--machine", "a100-40gb-sxm", "-o", "r.yaml"]) == 1
    assert "pip install ncu-report (roofgen's ncu-rep extra)" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('"5,323,503,232.00"', '"1e999999999"'),  # a counter beyond any float
        ('"(640, 1280, 1)"', '"(' + "9" * 5000 + ', 1, 1)"'),  # a 5,000-digit grid
    ],
    ids=["huge-exponent", "huge-grid"],
)
def test_unreadable_numbers_are_unknown_not_an_internal_error(tmp_path, capsys, old, new):
    """Each used to end in exit 4; the value is now unreadable, so unknown."""
    source = (DATA / "01_sgemm.csv").read_text()
    assert old in source
    bad = tmp_path / "bad.csv"
    bad.write_text(source.replace(old, new, 1))
    for extra in ([], ["--partial"]):
        status = main(["import", "ncu", str(bad), "--machine", "a100-40gb-sxm",
                       "-o", str(tmp_path / "case.yaml"), "--force", *extra])  # fmt: skip
        err = capsys.readouterr().err
        assert status in (0, 1) and "internal error" not in err, err
    assert status == 0
    text = (tmp_path / "case.yaml").read_text()
    assert "1e999999999" not in text and "9" * 100 not in text


def _counted(cc: str, counts: dict[str, int]) -> Launch:
    metrics = {
        n: Metric(Decimal(v), Unit("inst", Decimal(1)), f"{v:,} inst") for n, v in counts.items()
    }
    return Launch(("0",), "k", "f.csv", cc=cc, metrics=metrics)


_MMA = "smsp__inst_executed_pipe_tensor_op_{}.sum"


@pytest.mark.parametrize(
    ("cc", "ops"),
    [("7.0", ["hmma"]), ("8.0", ["hmma", "imma", "dmma"]), ("8.9", ["hmma", "imma"])],
)
def test_mma_counters_of_the_compute_capability_decide_tensor_zero(cc, ops):
    """Every MMA counter the compute capability has, collected and zero: tensor work is a
    known 0, whatever the aggregate pipe count (here 1,000 FP16 instructions)."""
    counts = {_MMA.format(op): 0 for op in ops}
    counts["smsp__inst_executed_pipe_tensor.sum"] = 1000
    derived = derive(_counted(cc, counts), _a100())
    assert derived.flops["tensor"]["fp16"].value == 0
    assert not derived.warnings


def test_a_missing_or_non_zero_mma_counter_leaves_tensor_work_unknown():
    """CC 8.0 has DMMA too: hmma and imma alone do not decide, and the aggregate (1,000)
    exceeds the FP16 instructions (none collected). A non-zero HMMA count is unknown work."""
    partial = {_MMA.format("hmma"): 0, _MMA.format("imma"): 0}
    partial["smsp__inst_executed_pipe_tensor.sum"] = 1000
    derived = derive(_counted("8.0", partial), _a100())
    assert "tensor" not in derived.flops
    assert any("tensor FLOPs unknown" in w for w in derived.warnings)
    busy = {_MMA.format("hmma"): 5, _MMA.format("imma"): 0, _MMA.format("dmma"): 0}
    derived = derive(_counted("8.0", busy), _a100())
    assert "tensor" not in derived.flops
    assert any("tensor FLOPs unknown" in w and "hmma" in w for w in derived.warnings)


def test_a_zero_tensor_pipe_count_is_a_known_zero_on_any_compute_capability():
    derived = derive(_counted("12.0", {"smsp__inst_executed_pipe_tensor.sum": 0}), _a100())
    assert derived.flops["tensor"]["fp16"].value == 0


@pytest.mark.parametrize("unit", ["second", "%", "mbyte", "inst"])
def test_a_byte_metric_in_another_unit_is_refused_not_converted(tmp_path, capsys, unit):
    """dram__bytes.sum given in seconds, percent or milli-bytes is not a byte count: it is
    left out with a warning (device bytes unknown), as a time in the wrong unit is."""
    source = (DATA / "01_sgemm.csv").read_text()
    row = '"dram__bytes.sum","byte","5,323,503,232.00"'
    assert row in source
    bad = tmp_path / "bad.csv"
    bad.write_text(source.replace(row, f'"dram__bytes.sum","{unit}","5,323,503,232.00"'))
    status = main(["import", "ncu", str(bad), "--machine", "a100-40gb-sxm", "--partial",
                   "-o", str(tmp_path / "case.yaml")])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 0, err
    assert f"dram__bytes.sum = 5,323,503,232.00 {unit} is not in byte" in err
    assert "5323503232" not in (tmp_path / "case.yaml").read_text().replace(",", "")


def test_kilo_and_mega_bytes_are_still_bytes() -> None:
    assert parse_unit("Kbyte").kind == "byte" and parse_unit("Kbyte").factor == 1000
    assert parse_unit("Mbyte").factor == 10**6
    assert parse_unit("mbyte").kind != "byte"  # milli-bytes do not exist
    assert parse_unit("msecond").kind == "second" and parse_unit("msecond").factor == Decimal(
        "1e-3"
    )


def test_a_level_one_launch_lacks_is_unknown_for_the_kernel(tmp_path, capsys):
    """A second launch of kernel 0 (same name and shape) without the dram__bytes.sum row
    (a metric one replay lost) used to end in exit 4. The kernel's device bytes are now
    unknown, as for a kernel that lacks them: refused, or left out with --partial."""
    source = (DATA / "01_sgemm.csv").read_text()
    again = [line.replace('"0",', '"3",', 1) for line in source.splitlines(keepends=True)
             if line.startswith('"0",') and '"dram__bytes.sum"' not in line]  # fmt: skip
    assert len(again) == 14
    bad = tmp_path / "bad.csv"
    bad.write_text(source + "".join(again))
    args = ["import", "ncu", str(bad), "--machine", "a100-40gb-sxm", "-o", str(tmp_path / "c.yaml")]
    assert main(args) == 1
    assert "device-memory bytes: none of" in capsys.readouterr().err
    assert main([*args, "--partial"]) == 0
    assert "imported without device-memory bytes" in capsys.readouterr().err
    randominit = _m(_yaml(tmp_path / "c.yaml"), 0)
    assert "hbm" not in randominit["bytes"] and "l2" in randominit["bytes"]


@pytest.mark.parametrize("block", ["(1, 2, 3, 4)", "(0, 32, 1)", "(-1, 32, 1)"])
def test_a_block_size_cuda_cannot_have_is_unknown(tmp_path, capsys, block):
    """Four sizes or a zero built a case that did not check ('please report'); a sign
    was dropped, so (-1, 32, 1) read as (1, 32, 1). Each is now unknown (left out)."""
    lines = (DATA / "01_sgemm.csv").read_text().splitlines(keepends=True)
    bad = tmp_path / "bad.csv"
    bad.write_text("".join(line.replace('"(32, 32, 1)"', f'"{block}"') if line.startswith('"0",')
                           else line for line in lines))  # fmt: skip
    status = main(["import", "ncu", str(bad), "--machine", "a100-40gb-sxm",
                   "-o", str(tmp_path / "c.yaml")])  # fmt: skip
    assert status == 0, capsys.readouterr().err
    data = _yaml(tmp_path / "c.yaml")
    assert "block" not in _m(data, 0) and _m(data, 1)["block"] == [32, 32, 1]
