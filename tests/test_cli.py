"""The CLI conventions: exit statuses, streams, output files, versions, laziness."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from roofgen.cli import main
from roofgen.commands import common

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = ROOT / "tests" / "cases" / "valid" / "minimal"  # one machine, one case
PROGRESS = re.compile(r"check: .*\d+ s$")  # commands/progress.py


def test_version_names_the_rendering_stack(capsys):
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    for name in ("roofgen", "spec format", "vega", "vega-lite", "vega-embed", "mkdocs",
                 "mkdocs-material"):  # fmt: skip
        assert f"\n{name} " in "\n" + out


def test_usage_error_is_status_2(capsys):
    assert main(["check", "--format", "yaml"]) == 2
    assert main(["no-such-verb"]) == 2


def test_no_spec_files_is_an_error_not_a_silent_pass(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["check"]) == 1
    assert "specs: no such file or folder" in capsys.readouterr().err
    (tmp_path / "specs").mkdir()
    assert main(["check"]) == 1
    assert "specs: no spec files (*.yaml, *.yml) found" in capsys.readouterr().err


def test_check_json_goes_to_stdout_and_messages_to_stderr(tmp_path, capsys, monkeypatch):
    shutil.copytree(MINIMAL, tmp_path / "specs")
    case = tmp_path / "specs" / "case.yaml"
    case.write_text(case.read_text("utf-8").replace("warmup: 10", "warmup: 0"), "utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--format", "json", "specs"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["ok"] is True and doc["roofgen_output"] == 1
    assert doc["files"] == ["specs/case.yaml", "specs/machine.yaml"]
    assert "warmup" in {p["path"].rsplit(".", 1)[-1] for p in doc["problems"]}
    # (a progress line comes first when the check takes longer than its interval)
    messages = [line for line in captured.err.splitlines() if not PROGRESS.match(line)]
    assert messages[0].startswith(
        "specs/case.yaml:13:68: warning: variants[0].launches[0].measurement.time.warmup: "
    )  # the same warning, as a message


def test_output_file_is_never_overwritten_without_force(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(MINIMAL.parent)
    out = tmp_path / "a.json"
    assert main(["analyze", "-q", "--format", "json", "-o", str(out), "minimal"]) == 0
    first = out.read_bytes()
    out.write_text("keep me")
    assert main(["analyze", "-q", "--format", "json", "-o", str(out), "minimal"]) == 1
    assert out.read_text() == "keep me"
    assert "--force" in capsys.readouterr().err
    assert main(["analyze", "-q", "--format", "json", "-o", str(out), "--force", "minimal"]) == 0
    assert out.read_bytes() == first


def test_internal_error_is_status_4_with_a_report_file(capsys, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr("roofgen.api.check", boom)
    monkeypatch.chdir(MINIMAL.parent)
    assert main(["check", "minimal"]) == 4
    err = capsys.readouterr().err
    assert "please report" in err and "Traceback" not in err
    report = Path(err.rsplit(" in ", 1)[1].strip())
    assert "simulated bug" in report.read_text()
    report.unlink()


def test_interrupt_is_status_130(monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("roofgen.api.check", interrupted)
    monkeypatch.chdir(MINIMAL.parent)
    assert main(["check", "minimal"]) == 130


def test_no_colour_when_no_color_or_ci(monkeypatch):
    class Tty:
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("CI", raising=False)
    assert common.use_colour(Tty())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not common.use_colour(Tty())
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("CI", "true")
    assert not common.use_colour(Tty())


def test_schema_write_and_print(tmp_path, capsys):
    assert main(["schema", "--write", str(tmp_path), "-q"]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [f"{k}.schema.json" for k in ("case", "config", "machine", "output", "rules")]
    assert main(["schema", "case"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "roofgen case study"


def test_strict_turns_warnings_into_failure(tmp_path, capsys, monkeypatch, gpu_machine_yaml):
    (tmp_path / "m.yaml").write_text(gpu_machine_yaml)
    (tmp_path / "c.yaml").write_text(
        "roofgen: 1\nkind: case\nid: c\ntitle: C\nmachines: [gpu]\n"
        "kernels: [{id: k, operator: {kind: other}}]\n"
        "variants:\n  - id: v\n    launches:\n      - kernel: k\n        measurement:\n"
        "          time: {median: 1 ms, warmup: 0, repeats: 50}\n"
        "          flops: {tensor: {fp16: 1e9}}\n          bytes: {hbm: 1e8}\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["check", "."]) == 0
    assert main(["check", "--strict", "."]) == 1
    err = capsys.readouterr().err
    assert "c.yaml:12:40: warning: variants[0].launches[0].measurement.time.warmup:" in err


def test_check_imports_nothing_heavy():
    """The light core never loads the site stack."""
    code = (
        "import sys; from roofgen.cli import main; main(['check', '-q', 'minimal']); "
        "print(sorted(m for m in ('altair', 'pandas', 'mkdocs', 'vl_convert', 'jinja2') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=MINIMAL.parent, capture_output=True, text=True
    )
    assert out.stdout.strip() == "[]", out.stderr


@pytest.mark.parametrize("verb", ["check", "analyze", "schema", "config"])
def test_every_verb_takes_the_common_flags(verb, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main([verb, "--help"]) == 0
    text = capsys.readouterr().out
    for flag in ("--strict", "--quiet", "--verbose"):
        assert flag in text


def test_a_newline_in_a_file_name_cannot_split_a_problem_line(tmp_path, capsys) -> None:
    bad = tmp_path / "a\nb.yaml"
    bad.write_text("roofgen: 1\nkind: case\n")
    assert main(["check", str(bad)]) == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if "b.yaml" in line]
    assert lines and all("a\\nb.yaml:" in line for line in lines), lines


def test_analyze_json_is_strict_json_even_for_extreme_input(tmp_path, capsys) -> None:
    """A 1e-320 ms median made the achieved rate overflow to infinity, written as null
    (unknown), never the non-JSON token Infinity. check now refuses it: the shortest
    time is 1e-60 s, and the rate at that edge is finite."""
    case = tmp_path / "case.yaml"
    shutil.copytree(Path(__file__).parent / "cases" / "valid" / "minimal", tmp_path,
                    dirs_exist_ok=True)  # fmt: skip
    text = case.read_text()
    assert "median: 1.1 ms, q1: 1.09 ms, q3: 1.12 ms" in text
    case.write_text(text.replace("median: 1.1 ms, q1: 1.09 ms, q3: 1.12 ms",
                                 "median: 1e-320 ms, q1: 1e-320 ms, q3: 1e-320 ms"))  # fmt: skip
    assert main(["analyze", "--format", "json", str(tmp_path)]) == 1
    assert "'1e-320 ms' is too small" in capsys.readouterr().err
    case.write_text(text.replace("median: 1.1 ms, q1: 1.09 ms, q3: 1.12 ms",
                                 "median: 1e-60 s, q1: 1e-60 s, q3: 1e-60 s"))  # fmt: skip
    assert main(["analyze", "--format", "json", str(tmp_path)]) == 0
    out = capsys.readouterr().out

    def refuse(token: str) -> None:
        raise AssertionError(f"{token} is not JSON")

    doc = json.loads(out, parse_constant=refuse)
    launch = doc["cases"][0]["variants"][0]["launches"][0]
    assert launch["achieved_flop_per_s"] == pytest.approx(1.5e9 / 1e-60)


def test_a_huge_value_gives_a_short_error_line(tmp_path, capsys) -> None:
    """A 100,000-item grid used to be quoted whole: a 300 KB error line."""
    shutil.copytree(Path(__file__).parent / "cases" / "valid" / "minimal", tmp_path,
                    dirs_exist_ok=True)  # fmt: skip
    case = tmp_path / "case.yaml"
    text = case.read_text()
    assert text.count("        measurement:\n") == 1
    grid = "          grid: [" + ", ".join(["1"] * 100_000) + "]\n"
    case.write_text(text.replace("        measurement:\n", "        measurement:\n" + grid))
    assert main(["check", str(tmp_path)]) == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if "grid" in line]
    assert lines and all(len(line) < 300 for line in lines), [len(x) for x in lines]


@pytest.mark.parametrize(
    ("ident", "why"),
    [
        ("con", "is a device name on Windows"),
        ("nul", "is a device name on Windows"),
        ("com1", "is a device name on Windows"),
        ("lpt9.txt", "is a device name on Windows"),
        ("x.", "ends with '.'"),
        ("a" * 300, "is 300 characters long: an id has at most 64"),
    ],
)
def test_ids_every_file_system_can_hold(tmp_path, capsys, ident, why) -> None:
    """Case ids name folders of the site: a 300-character id ended in 'File name too
    long' with no location, and Windows refuses device names and drops a trailing dot."""
    shutil.copytree(Path(__file__).parent / "cases" / "valid" / "minimal", tmp_path,
                    dirs_exist_ok=True)  # fmt: skip
    case = tmp_path / "case.yaml"
    text = case.read_text()
    assert "id: pts\n" in text
    case.write_text(text.replace("id: pts\n", f'id: "{ident}"\n'))
    assert main(["check", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "case.yaml:3:5: id: id " in err and why in err, err


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ("title: Points", "title: " + "T" * 700_000, "the title is 700,000 characters long"),
        ("title: Points", "title: Points \u202eevil", "bidirectional control"),
        (
            "title: Points",
            "title: Points\ntags: [" + ", ".join(["t"] * 100_000) + "]",
            "100,000 tags: at most 50",
        ),
    ],
    ids=["700k-title", "bidi", "100k-tags"],
)
def test_titles_and_tags_a_site_can_show(tmp_path, capsys, old, new, said) -> None:
    """A 700 KB title or 100,000 tags passed check and then stalled the chart renderer;
    a bidirectional control makes a title read as something else."""
    shutil.copytree(Path(__file__).parent / "cases" / "valid" / "minimal", tmp_path,
                    dirs_exist_ok=True)  # fmt: skip
    case = tmp_path / "case.yaml"
    text = case.read_text()
    assert text.count(old) == 1
    case.write_text(text.replace(old, new), encoding="utf-8")
    assert main(["check", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "case.yaml:" in err and said in err, err[:500]
