"""`roofgen check` on the spec sets under tests/cases, run in-process.

Each folder under ``tests/cases/invalid`` holds spec files broken in one way and
``expected.txt``: the error lines ``check`` must print, word for word, with file
names relative to that folder. Each folder under ``tests/cases/valid`` must pass.
"""

from __future__ import annotations

import re
import tracemalloc
from pathlib import Path

import pytest

from roofgen.cli import main
from roofgen.commands.progress import Ticker

CASES = Path(__file__).parent / "cases"
SUMMARY = re.compile(
    r"^(\d+) file\(s\) checked: (\d+) error\(s\), \d+ warning\(s\), \d+ note\(s\)$"
)
# Off a terminal, a check that outlasts the progress interval (10 s: a loaded machine,
# tracemalloc) writes ``check: checking specs, 10 s`` before its report
# (commands/progress.py).
PROGRESS = re.compile(r"^check: (checking specs, )?\d+ s$")

MEMORY_BOUND = 256 * 1024**2  # bytes of Python allocations a check of one folder may peak at

# Folders whose expected.txt says what roofgen should print, not what it prints
# today. Each reason names the fault; drop the entry once the fault is fixed.
KNOWN_BAD_INVALID: dict[str, str] = {}

KNOWN_BAD_VALID: dict[str, str] = {}


def _folders(kind: str, known_bad: dict[str, str]) -> list:
    folders = sorted(p for p in (CASES / kind).iterdir() if p.is_dir())
    unknown = set(known_bad) - {p.name for p in folders}
    assert not unknown, f"known-bad entries without a folder: {sorted(unknown)}"
    return [
        pytest.param(
            folder,
            id=folder.name,
            marks=[pytest.mark.xfail(strict=True, reason=known_bad[folder.name])]
            if folder.name in known_bad
            else [],
        )
        for folder in folders
    ]


def _check(folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.chdir(folder)
    monkeypatch.setenv("NO_COLOR", "1")
    tracemalloc.start()
    try:
        status = main(["check", str(folder)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert "internal error" not in err
    assert peak < MEMORY_BOUND, f"the check peaked at {peak / 1024**2:.0f} MB"
    return status, out, err


def _report(err: str) -> list[str]:
    """The lines of ``check``'s report: ``err`` less the progress lines written before it."""
    lines = err.splitlines()
    while lines and PROGRESS.match(lines[0]):
        lines.pop(0)
    return lines


# A guard against a hang (an alias bomb expanding without end), not a speed test: a
# quadratic alias bomb is refused in well under a second alone and must still pass on a
# loaded machine.
@pytest.mark.timeout(120)
@pytest.mark.parametrize("folder", _folders("invalid", KNOWN_BAD_INVALID))
def test_invalid(folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    _assert_invalid(folder, *_check(folder, monkeypatch, capsys))


def _assert_invalid(folder: Path, status: int, out: str, err: str) -> None:
    expected = (folder / "expected.txt").read_text(encoding="utf-8").splitlines()
    assert expected, "expected.txt lists no error"
    lines = _report(err)
    summaries = [m for m in map(SUMMARY.match, lines) if m]
    errors = [line for line in lines if not SUMMARY.match(line)]
    assert errors == expected
    assert status == 1
    assert out == ""
    assert len(summaries) == 1
    assert int(summaries[0].group(2)) == len(expected)
    spec_files = [p for p in folder.iterdir() if p.suffix in (".yaml", ".yml")]
    assert int(summaries[0].group(1)) == len(spec_files)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("folder", _folders("valid", KNOWN_BAD_VALID))
def test_valid(folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    status, out, err = _check(folder, monkeypatch, capsys)
    assert status == 0, err
    summary = err.splitlines()[-1]
    match = SUMMARY.match(summary)
    assert match, err
    assert match.group(2) == "0"
    spec_files = list(folder.glob("*.yaml"))
    assert int(match.group(1)) == len(spec_files)


def test_a_progress_line_before_the_report_leaves_it_exact(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A check that outlasts the progress interval (an alias bomb on a loaded machine)
    writes a progress line first; the report after it is still compared word for word."""
    stop = Ticker.stop

    def stop_after_a_line(ticker: Ticker) -> None:  # as if the check took 10 s
        ticker.tick()
        stop(ticker)

    monkeypatch.setattr(Ticker, "stop", stop_after_a_line)
    folder = CASES / "invalid" / "alias-bomb-quadratic"
    status, out, err = _check(folder, monkeypatch, capsys)
    assert re.fullmatch(r"check: checking specs, \d+ s", err.splitlines()[0]), err
    _assert_invalid(folder, status, out, err)


def test_at_least_150_invalid_folders() -> None:
    assert len([p for p in (CASES / "invalid").iterdir() if p.is_dir()]) >= 150


def test_every_invalid_folder_is_complete() -> None:
    for folder in sorted((CASES / "invalid").iterdir()):
        assert (folder / "expected.txt").is_file(), folder.name
        assert any(p.suffix == ".yaml" for p in folder.iterdir()), folder.name
