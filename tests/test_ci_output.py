"""CI ergonomics: `check --format github|gitlab`, colour by NO_COLOR and FORCE_COLOR,
progress lines in a log, and a README that lists every verb."""

from __future__ import annotations

import io
import json
import re
import shutil
import threading
from pathlib import Path

import jsonschema
import pytest

from roofgen.cli import main
from roofgen.commands import VERBS, common
from roofgen.commands.progress import Ticker
from roofgen.problems import Problem, Severity
from roofgen.report.ci import github_commands, github_summary, gitlab_issues

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"
README = Path(__file__).parent.parent / "README.md"

# What GitHub's runner reads as one workflow command: the name, properties with neither a
# raw ',' nor ':' inside a value, '::', and a message on the same line.
COMMAND = re.compile(r"^::(error|warning|notice) (file=[^,:\r\n]*)(,line=\d+)?(,col=\d+)?"
                     r"(,title=[^,:\r\n]*)::[^\r\n]*$")  # fmt: skip


def test_a_file_name_cannot_inject_a_workflow_command():
    hostile = "specs/a%0A::warning::b,line=9:c\n::error::d.yaml"
    problem = Problem(hostile, 3, 7, "kernels[0]", "bad\n::warning file=x::y 100%", code="r.x")
    lines, left = github_commands([problem])
    assert left == 0 and len(lines) == 1
    # % first (so an encoded %0A stays text), then CR, LF, and in properties ':' and ','.
    assert lines[0] == (
        "::error file=specs/a%250A%3A%3Awarning%3A%3Ab%2Cline=9%3Ac%0A%3A%3Aerror%3A%3Ad.yaml,"
        "line=3,col=7,title=roofgen check%3A r.x::kernels[0]: bad%0A::warning file=x::y 100%25"
    )
    assert COMMAND.match(lines[0])


def test_check_with_a_hostile_file_name_writes_one_command_per_problem(tmp_path, monkeypatch,
                                                                      capsys):  # fmt: skip
    specs = tmp_path / "specs"
    shutil.copytree(MINIMAL, specs)
    (specs / "x%0A::warning::y,z:w.yaml").write_text("roofgen: 1\nkind: case\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    assert main(["check", "--format", "github"]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines and all(COMMAND.match(line) for line in lines), out
    assert all(line.startswith("::error file=specs/x%250A%3A%3Awarning%3A%3Ay%2Cz%3Aw.yaml,")
               for line in lines)  # fmt: skip


def _problems(errors: int, warnings: int) -> list[Problem]:
    return [Problem(f"specs/e{i:02d}.yaml", i + 1, 1, "", f"error {i}") for i in range(errors)] + [
        Problem(f"specs/w{i:02d}.yaml", 1, 1, "id", f"warning {i}", Severity.WARNING)
        for i in range(warnings)
    ]


def test_annotations_are_capped_and_the_summary_lists_every_problem():
    problems = _problems(25, 12)
    lines, left = github_commands(problems)
    assert sum(line.startswith("::error ") for line in lines) == 10
    assert sum(line.startswith("::warning ") for line in lines) == 10
    assert left == 15 + 2
    summary = github_summary(problems, files=37, left_out=left)
    assert summary.splitlines()[0] == "### ❌ roofgen check: 37 file(s), 25 error(s), 12 warning(s)"
    assert "17 more are listed here only" in summary
    rows = [line for line in summary.splitlines() if line.startswith("| `specs/")]
    assert len(rows) == 37
    assert rows[0] == "| `specs/e00.yaml:1:1` | error |  | error 0 |"


def test_check_writes_the_job_summary(tmp_path, monkeypatch, capsys):
    specs = tmp_path / "specs"
    shutil.copytree(MINIMAL, specs)
    (specs / "bad.yaml").write_text("roofgen: 1\nkind: case\n")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path.parent))  # the repository's root
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--format", "github"]) == 1
    out = capsys.readouterr().out
    # names relative to the repository's root, as annotations need them
    assert out.startswith(f"::error file={tmp_path.name}/specs/bad.yaml,line=1,col=1,")
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("### ❌ roofgen check: 3 file(s), 5 error(s), 0 warning(s)\n")
    assert f"| `{tmp_path.name}/specs/bad.yaml:1:1` | error |  | missing required key 'id'" in text


# GitLab's documented Code Quality format (docs.gitlab.com/ci/testing/code_quality/,
# "Code Quality report format"): an array of issues with these fields.
GITLAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "minLength": 1},
                    "lines": {
                        "type": "object",
                        "required": ["begin"],
                        "properties": {"begin": {"type": "integer", "minimum": 1}},
                    },
                },
            },
        },
    },
}


def test_gitlab_code_quality_report(tmp_path, monkeypatch, capsys):
    specs = tmp_path / "specs"
    shutil.copytree(MINIMAL, specs)
    (specs / "bad.yaml").write_text("roofgen: 1\nkind: case\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CI_PROJECT_DIR", raising=False)
    argv = ["check", "--format", "gitlab", "-o", "gl-code-quality-report.json"]
    assert main(argv) == 1
    report = json.loads((tmp_path / "gl-code-quality-report.json").read_text())
    jsonschema.validate(report, GITLAB_SCHEMA)
    assert len(report) == 5
    assert {i["location"]["path"] for i in report} == {"specs/bad.yaml"}
    assert {i["severity"] for i in report} == {"major"}
    assert len({i["fingerprint"] for i in report}) == 5  # each issue its own
    # Stable: the same problems give the same fingerprints, even a line further down.
    (specs / "bad.yaml").write_text("# a comment\nroofgen: 1\nkind: case\n")
    assert main([*argv, "--force"]) == 1
    again = json.loads((tmp_path / "gl-code-quality-report.json").read_text())
    assert [i["fingerprint"] for i in again] == [i["fingerprint"] for i in report]
    assert {i["location"]["lines"]["begin"] for i in again} == {2}


def test_gitlab_identical_problems_keep_distinct_fingerprints():
    twice = [Problem("a.yaml", 1, 1, "", "same"), Problem("a.yaml", 9, 1, "", "same")]
    issues = gitlab_issues([*twice, Problem("b.yaml", 0, 0, "", "no line", Severity.WARNING)])
    assert issues[0]["fingerprint"] != issues[1]["fingerprint"]
    assert issues[2]["severity"] == "minor" and issues[2]["location"]["lines"] == {"begin": 1}


# ------------------------------------------------------------------------------ colour


class _Pipe(io.StringIO):
    def isatty(self) -> bool:
        return False


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("env", "tty", "colour"),
    [
        ({}, True, True),
        ({}, False, False),
        ({"NO_COLOR": "1"}, True, False),
        ({"CI": "true"}, True, False),
        ({"FORCE_COLOR": "1"}, False, True),  # a CI log that shows colour asks for it
        ({"FORCE_COLOR": "1", "CI": "true"}, False, True),
        ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, True, False),  # NO_COLOR wins
        ({"FORCE_COLOR": "0"}, True, False),
        ({"FORCE_COLOR": ""}, True, True),  # empty: not set
    ],
)
def test_colour_follows_no_color_and_force_color(monkeypatch, env, tty, colour):
    for name in ("NO_COLOR", "FORCE_COLOR", "CI"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert common.use_colour(_Tty() if tty else _Pipe()) is colour


def test_force_color_keeps_colour_in_a_pipe(monkeypatch, capsys):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    common.say("broken", fg="red")
    assert capsys.readouterr().err == "\x1b[31mbroken\x1b[0m\n"
    monkeypatch.setenv("NO_COLOR", "1")
    common.say("broken", fg="red")
    assert capsys.readouterr().err == "broken\n"


# ---------------------------------------------------------------------------- progress


def test_progress_lines_say_the_step_its_count_and_the_time():
    now = [100.0]
    out = io.StringIO()
    ticker = Ticker("build", 5.0, out, clock=lambda: now[0])
    now[0] = 103.2
    assert ticker.line() == "build: 3 s"
    ticker("rendering charts", 340, 1000)
    now[0] = 141.4
    ticker.tick()
    assert out.getvalue() == "build: rendering charts 340/1000, 41 s\n"


def test_progress_lines_come_on_a_timer_until_stopped():
    seen = threading.Event()

    class Stream(io.StringIO):
        def write(self, text: str) -> int:
            seen.set()
            return super().write(text)

    stream = Stream()
    ticker = Ticker("check", 0.01, stream).start()
    ticker("checking specs", 0, 0)
    assert seen.wait(60)
    ticker.stop()
    written = stream.getvalue()
    assert re.match(r"check: (checking specs, )?\d+ s\n", written)
    assert ticker._thread is not None and not ticker._thread.is_alive()  # stop() ends it


def test_progress_is_a_ticker_off_a_terminal_and_nothing_when_quiet(monkeypatch):
    monkeypatch.setattr("sys.stderr", _Pipe())
    assert common.start_progress(quiet=True) is None
    progress = common.start_progress(quiet=False, verb="analyze")
    try:
        assert isinstance(progress, Ticker) and progress.verb == "analyze"
    finally:
        common.end_progress(progress)


# ------------------------------------------------------------------------------ README


def test_the_readme_commands_table_lists_every_verb():
    table = README.read_text(encoding="utf-8").split("## Commands", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `roofgen ([a-z-]+)", table, flags=re.M))
    assert {verb.name for verb in VERBS} <= listed, {verb.name for verb in VERBS} - listed
