"""`roofgen check` on the spec sets under tests/cases, run in-process.

Each folder under ``tests/cases/invalid`` holds spec files broken in one way and
``expected.txt``: the error lines ``check`` must print, word for word, with file
names relative to that folder. Each folder under ``tests/cases/valid`` must pass.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from roofgen.cli import main

CASES = Path(__file__).parent / "cases"
SUMMARY = re.compile(
    r"^(\d+) file\(s\) checked: (\d+) error\(s\), \d+ warning\(s\), \d+ note\(s\)$"
)

# Folders whose expected.txt says what roofgen should print, not what it prints
# today. Each reason names the fault; drop the entry once the fault is fixed.
KNOWN_BAD_INVALID = {
    "case-with-invalid-machine": (
        "a case that names a machine whose file has errors also gets "
        "\"unknown machine 'seed'; known: none (add its machine file to the specs)\", "
        "though the machine file is in the specs"
    ),
    "case-with-unreadable-machine": (
        "a machine file that cannot be parsed makes every case naming it report "
        "'unknown machine ... (add its machine file to the specs)'"
    ),
    "duplicate-compute-unit-id": (
        "with two compute units 'tensor', the case is checked against the second one "
        "(references build {id: unit}, last wins) while the machine check keeps the "
        "first: a spurious 'has no fp16 peak' error"
    ),
    "type-repeats-string": (
        "time is oneOf(quantity, mapping); a wrong type inside the mapping makes "
        "_best_branch discard the meant branch (it only looks for 'type' errors), so "
        "the message is jsonschema's 'is not valid under any of the given schemas' "
        "with a Python dict repr, located at the mapping"
    ),
    "type-repeats-float": "same fault as type-repeats-string",
    "type-time-boolean": (
        "'time: true' prints \"True is not valid under any of the given schemas\" "
        "(Python repr, no hint of what a time looks like)"
    ),
    "value-inf-peak": (
        "a non-finite number gets a second, self-contradictory line "
        "'Infinity is a number, expected number or string'"
    ),
    "value-nan-time": "same fault as value-inf-peak ('NaN is a number, expected number...')",
    "value-nan-plain-number": (
        "'occupancy: .nan' prints 'NaN is a number, expected number (e.g. 0.5)': _message "
        "replaces the finite-number check's own message with the type message"
    ),
    "python-object-tag": (
        "the message shows the expanded tag 'tag:yaml.org,2002:python/object:os.system' "
        "instead of '!!python/object:os.system' as written"
    ),
    "multiple-documents": (
        "a second document prints only the parser's half-sentence "
        "'YAML syntax error: but found another document'"
    ),
    "yaml-unclosed-quote": (
        "the YAML error drops its context: an unclosed quote is reported only as "
        "'found unexpected end of stream' at the last line"
    ),
    "yaml-unclosed-bracket": "the YAML error drops where the unclosed flow mapping starts",
    "yaml-unclosed-flow-list": "the YAML error drops where the unclosed flow sequence starts",
    "nul-byte": "a NUL byte is always reported at column 1",
    "version-quoted-string": (
        'roofgen: "1" prints "spec format version \'1\' is not one this roofgen reads '
        '(it reads version 1)"'
    ),
    "id-kernel-number": (
        "the schemas give every id (kernel, variant, unit...) the example "
        "'a100-40gb-sxm', a machine id"
    ),
    "unit-decimal-comma": (
        "'1,5 TB/s' is accepted as 5 TB/s: the unit text ',5 TB/s' goes to pint, "
        "which reads the digits in it"
    ),
    "energy-per-flop-transcendental": (
        "power.energy_per_flop lists 'transcendental' among its valid keys (x-valid-keys) "
        "but rejects it"
    ),
}

KNOWN_BAD_VALID = {
    "anchors-merge-keys": (
        "YAML merge keys: yamlload allows the merge tag but keeps '<<' as an ordinary "
        "key, so the schema reports \"unknown key '<<'\" and a missing 'time'"
    ),
    "int-sub-ceiling": (
        "a sub-ceiling's value is always a FLOP rate (schema and build), so a "
        "sub-ceiling under an int8 peak cannot be written in TOP/s"
    ),
}


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
    status = main(["check", str(folder)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert "internal error" not in err
    return status, out, err


@pytest.mark.timeout(10)
@pytest.mark.parametrize("folder", _folders("invalid", KNOWN_BAD_INVALID))
def test_invalid(folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    expected = (folder / "expected.txt").read_text(encoding="utf-8").splitlines()
    assert expected, "expected.txt lists no error"
    status, out, err = _check(folder, monkeypatch, capsys)
    lines = err.splitlines()
    summaries = [m for m in map(SUMMARY.match, lines) if m]
    errors = [line for line in lines if not SUMMARY.match(line)]
    assert errors == expected
    assert status == 1
    assert out == ""
    assert len(summaries) == 1
    assert int(summaries[0].group(2)) == len(expected)
    spec_files = [p for p in folder.iterdir() if p.suffix in (".yaml", ".yml")]
    assert int(summaries[0].group(1)) == len(spec_files)


@pytest.mark.timeout(10)
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


def test_at_least_forty_invalid_folders() -> None:
    assert len([p for p in (CASES / "invalid").iterdir() if p.is_dir()]) >= 40


def test_every_invalid_folder_is_complete() -> None:
    for folder in sorted((CASES / "invalid").iterdir()):
        assert (folder / "expected.txt").is_file(), folder.name
        assert any(p.suffix == ".yaml" for p in folder.iterdir()), folder.name
