"""`roofgen import ert`: an Empirical Roofline Toolkit roofline.json as a machine file.

tests/data/ert/01_roofline.json is a real ERT 1.1.0 result of a P100 GPU run
(byte for byte): FP64 4258.4 GFLOP/s; "L1" 1723.76, "L2" 1301.09, "DRAM" 508.35 GB/s.
On GPUs ERT's "L1" is the L2. The other layout (ERT 1.0 / Python 2 releases: an
unnamed "GFLOPs" entry and metadata as a mapping) is built here from ERT's
ert_core.build_database, which writes both.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from roofgen.cli import main
from roofgen.importers.ert import place_levels, read_ert
from roofgen.spec.quantity import parse_quantity
from roofgen.spec.yamlload import load_file

FIXTURE = Path(__file__).resolve().parent / "data" / "ert" / "01_roofline.json"


@pytest.fixture(autouse=True)
def _in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(tmp_path)


def _data(path: Path) -> Any:
    doc, problems = load_file(path)
    assert doc is not None, problems
    return doc.data


def _import(*extra: str, source: Path = FIXTURE, out: str = "m.yaml") -> int:
    args = [
        "import",
        "ert",
        str(source),
        "-o",
        out,
        "--id",
        "p100-kingspeak",
        "--name",
        "NVIDIA Tesla P100 (kingspeak)",
        *extra,
    ]
    if "--sm-clock" not in extra:
        args += ["--sm-clock", "1329 MHz"]
    return main(args)


def test_the_fixture_reads():
    run = read_ert(FIXTURE)
    assert run.compute == [("FP64 GFLOPs", 4258.4)]
    assert run.levels == [("L1", 1723.76), ("L2", 1301.09), ("DRAM", 508.35)]
    assert run.meta["ERT_VERSION"] == "1.1.0"
    assert run.config["ERT_GPU"] == ["True"]
    assert run.config["ERT_PRECISION"] == ["FP64"]


def test_import_writes_a_machine_with_measured_roofs(tmp_path, capsys):
    assert _import() == 0
    err = capsys.readouterr().err
    assert "warning: ERT level 'L2' (1301.09 GB/s) has no roofgen role: left out" in err
    text = (tmp_path / "m.yaml").read_text("utf-8")
    assert text.startswith("# yaml-language-server: $schema=")
    assert "it is really the L2" in text  # the comment block says what ERT's L1 is
    assert 'role: llc # ERT calls this level "L1": on a GPU it is the L2' in text
    assert "sm: 1329 MHz # given with --sm-clock: ERT does not record the clock it ran at" in text
    data = _data(tmp_path / "m.yaml")
    fp64 = data["compute"][0]
    assert (fp64["id"], fp64["kind"]) == ("fp64", "fp64")
    roof = fp64["peaks"]["fp64"]
    assert set(roof) == {"measured", "measured_source"}  # no datasheet value is invented
    assert parse_quantity(roof["measured"], "flop_rate") == 4258.4e9
    assert "ERT 1.1.0 on kp361.kingspeak.peaks run 2021-03-30" in roof["measured_source"]
    levels = {m["role"]: m for m in data["memory"]}
    assert [m["id"] for m in data["memory"]] == ["dram", "l2"]
    assert parse_quantity(levels["device"]["bandwidth"]["measured"], "bandwidth") == 508.35e9
    assert parse_quantity(levels["llc"]["bandwidth"]["measured"], "bandwidth") == 1723.76e9
    assert "ERT level 'L1'" in levels["llc"]["bandwidth"]["measured_source"]
    assert main(["check", "m.yaml"]) == 0
    assert "1 file(s) checked: 0 error(s)" in capsys.readouterr().err


def test_the_sm_clock_is_required_and_checked(capsys):
    assert main(["import", "ert", str(FIXTURE), "-o", "m.yaml", "--id", "p", "--name", "P"]) == 2
    assert "--sm-clock" in capsys.readouterr().err
    assert _import("--sm-clock", "1.2 GB") == 2
    assert "--sm-clock '1.2 GB'" in capsys.readouterr().err


def _old_layout(tmp_path: Path, levels: list[list[Any]], gpu: str, precision: str | None) -> Path:
    """The ERT 1.0 / Python 2 layout: "GFLOPs" unnamed, metadata as a mapping."""
    config: dict[str, Any] = {"ERT_GPU": [gpu]}
    if precision:
        config["ERT_PRECISION"] = [precision]
    doc = {
        "empirical": {
            "metadata": {
                "ERT_VERSION": "1.0.0",
                "CONFIG": config,
                "HOSTNAME": "node1",
                "TIMESTAMP_DATA": 1500000000.0,
            },
            "gflops": {"data": [["GFLOPs", 2772.78]], "metadata": {"GPU_BLOCKS": 1}},
            "gbytes": {"data": levels, "metadata": {}},
        },
        "spec": {"gflops": {"data": [["GFLOPs", 3000.0]]}, "gbytes": {"data": [["DRAM", 256]]}},
    }
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc, indent=3))
    return path


def test_the_older_layout_and_spec_values(tmp_path, capsys):
    levels = [["L1", 8259.44], ["L2", 3120.85], ["L3", 1000.0], ["DRAM", 200.3]]
    source = _old_layout(tmp_path, levels, "False", "FP32")
    assert _import(source=source) == 0
    data = _data(tmp_path / "m.yaml")
    roof = data["compute"][0]["peaks"]["fp32"]
    assert parse_quantity(roof["measured"], "flop_rate") == 2772.78e9
    assert parse_quantity(roof["datasheet"], "flop_rate") == 3000e9  # ERT_SPEC_GFLOPS
    assert "ERT config ERT_SPEC_GFLOPS" in roof["source"]
    roles = {m["role"]: m["id"] for m in data["memory"]}
    assert roles == {"device": "dram", "llc": "l3", "l1": "l1"}  # a CPU: L1, L3 (last), DRAM
    assert "'L2' (3120.85 GB/s) has no roofgen role" in capsys.readouterr().err
    dram = next(m for m in data["memory"] if m["role"] == "device")
    assert parse_quantity(dram["bandwidth"]["datasheet"], "bandwidth") == 256e9
    assert main(["check", "m.yaml"]) == 0


def test_an_unnamed_precision_needs_the_config_or_an_option(tmp_path, capsys):
    source = _old_layout(tmp_path, [["L1", 100.0], ["DRAM", 10.0]], "True", None)
    assert _import(source=source) == 1
    assert "pass --precision FP64" in capsys.readouterr().err
    assert _import("--precision", "fp64", "--force", source=source) == 0
    assert _data(tmp_path / "m.yaml")["compute"][0]["id"] == "fp64"


def test_level_placement():
    gpu = place_levels([("L1", 3.0), ("L2", 2.0), ("DRAM", 1.0)], gpu=True)
    assert gpu.roles == {"device": ("DRAM", 1.0), "llc": ("L1", 3.0)}
    assert gpu.dropped == [("L2", 2.0)]
    cpu = place_levels([("L1", 4.0), ("L2", 3.0), ("DRAM", 1.0)], gpu=False)
    assert cpu.roles == {"device": ("DRAM", 1.0), "l1": ("L1", 4.0), "llc": ("L2", 3.0)}


def test_bad_input_is_reported(tmp_path, capsys):
    (tmp_path / "bad.json").write_text("{not json")
    assert _import(source=tmp_path / "bad.json") == 1
    assert "bad.json:1:2: not JSON" in capsys.readouterr().err
    (tmp_path / "other.json").write_text('{"a": 1}')
    assert _import(source=tmp_path / "other.json") == 1
    assert "not an ERT roofline.json" in capsys.readouterr().err
    assert _import() == 0
    assert _import() == 1  # never overwrites without --force
    assert "exists; pass --force" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('{"empirical": {"gflops": "caf\xe9"}}'.encode("latin-1"), "not UTF-8 text (byte"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (
            b'{"empirical": {"gflops": {"data": [["FP64", ' + b"9" * 5000 + b"]]}}}",
            "a number of 5,000 characters",
        ),
    ],
    ids=["latin-1", "deep", "5000-digits"],
)
def test_hostile_ert_files_are_refused_with_a_message(tmp_path, capsys, content, said) -> None:
    """Each used to end in an internal error (exit 4)."""
    from roofgen.cli import main

    path = tmp_path / "roofline.json"
    path.write_bytes(content)
    status = main(["import", "ert", str(path), "-o", str(tmp_path / "m.yaml"), "--id", "m",
                   "--name", "M", "--sm-clock", "1 GHz"])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 1 and said in err, err
    assert not (tmp_path / "m.yaml").exists()


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("0", "'0 GFLOP/s' is not a rate: not a positive, finite number"),
        ("-1", "'-1 GFLOP/s' is not a rate: not a positive, finite number"),
        ("NaN", "'nan GFLOP/s' is not a rate: not a positive, finite number"),
        ("1e999", "'inf GFLOP/s' is not a rate: not a positive, finite number"),
        ("1e300", "'1e+300 GFLOP/s' is too large"),
    ],
)
def test_an_ert_figure_no_roof_can_hold_is_refused_naming_the_entry(tmp_path, capsys, value, said):
    """Each used to build a machine file that did not check ("please report")."""
    source = FIXTURE.read_text()
    assert source.count("4258.4") == 1
    (tmp_path / "r.json").write_text(source.replace("4258.4", value))
    assert _import(source=tmp_path / "r.json") == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{tmp_path / 'r.json'}: gflops.data entry 'FP64 GFLOPs': {said}"), err
    assert "please report" not in err


@pytest.mark.parametrize("data", ["1e999", "{}", '"x"', "7"])
def test_results_that_are_no_list_are_refused(tmp_path, capsys, data):
    """gflops.data of 1e999 (a float) used to end in exit 4."""
    source = json.loads(FIXTURE.read_text())
    text = json.dumps(source).replace('"data": [["FP64 GFLOPs", 4258.4]]', f'"data": {data}')
    assert text != json.dumps(source)
    (tmp_path / "r.json").write_text(text)
    assert _import(source=tmp_path / "r.json") == 1
    err = capsys.readouterr().err
    assert f"{tmp_path / 'r.json'}: gflops.data is not a list of [name, value] entries" in err


@pytest.mark.parametrize("clock", ["0 MHz", "-1 GHz"])
def test_a_clock_of_zero_or_less_is_a_usage_error(capsys, clock):
    """It used to build a machine file that did not check ("please report")."""
    assert _import("--sm-clock", clock) == 2
    assert f"--sm-clock {clock!r}: a clock is above zero" in capsys.readouterr().err


def test_control_characters_and_long_names_in_the_file_still_give_a_machine_that_checks(
    tmp_path, capsys
):
    """A NUL in a name used to be written as the escape "\\0", which check refuses ("the
    machine file roofgen built does not check; please report")."""
    source = json.loads(FIXTURE.read_text())
    text = json.dumps(source)
    assert text.count('"FP64 GFLOPs"') == 1
    text = text.replace('"FP64 GFLOPs"', '"FP64 GFLOPs\\u0000\\u001b[2J' + "D" * 5000 + '"')
    (tmp_path / "r.json").write_text(text)
    assert _import(source=tmp_path / "r.json") == 0, capsys.readouterr().err
    written = (tmp_path / "m.yaml").read_text(encoding="utf-8")
    assert "\\0" not in written and "\x1b" not in written
    # 200 characters: 16 of them before the Ds, then 183 Ds and an ellipsis
    assert "FP64 GFLOPs\ufffd\ufffd[2J" + "D" * 183 + "\u2026" in written
    assert "D" * 184 not in written
    assert main(["check", "m.yaml"]) == 0
