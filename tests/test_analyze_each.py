"""`roofgen analyze --format json` one case at a time (:func:`roofgen.api.check_each`):
the same bytes and the same problems as the whole-project path (:func:`roofgen.api.check`
then :func:`roofgen.api.analysis_json_chunks`, which stays the path of every other
verb), nothing written when the check fails, and memory that does not grow with the
number of cases the way the whole-project path's does."""

from __future__ import annotations

import gc
import shutil
import tracemalloc
from pathlib import Path

import pytest
from specdata import generated_specs

from roofgen.advice import Advice
from roofgen.analysis.analyse import CaseResult
from roofgen.api import analysis_json_chunks, analysis_json_spool, check, check_each
from roofgen.cli import main
from roofgen.pipeline import CheckResult
from roofgen.spec.load import survey

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "cases"


def _each(paths: list[Path], indent: int | None, **options: object) -> tuple[CheckResult, str]:
    spool = analysis_json_spool(indent)
    result = check_each(paths, spool.add, **options)  # type: ignore[arg-type]
    if result.failed():
        return result, ""
    assert result.analysis is not None
    return result, "".join(spool.chunks(result.analysis, result.problems))


def _whole(paths: list[Path], indent: int | None, **options: object) -> tuple[CheckResult, str]:
    result = check(paths, **options)  # type: ignore[arg-type]
    if result.failed():
        return result, ""
    return result, "".join(analysis_json_chunks(result, indent))


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generated_specs(tmp_path_factory.mktemp("generated") / "specs", 12)


@pytest.mark.parametrize("indent", [None, 2])
def test_one_case_at_a_time_writes_the_whole_paths_bytes(
    generated: Path, indent: int | None
) -> None:
    for paths in ([ROOT / "specs"], [generated]):
        whole, expected = _whole(paths, indent)
        each, text = _each(paths, indent)
        assert not whole.failed() and expected.count('"variants"') > 1
        assert text.encode("utf-8") == expected.encode("utf-8")
        assert each.problems == whole.problems
        assert each.files == whole.files


def test_the_document_cache_gives_the_same_bytes(generated: Path, tmp_path: Path) -> None:
    _, expected = _whole([generated], None)
    for _ in range(2):  # a cold cache, then a warm one
        _, text = _each([generated], None, cache_dir=tmp_path / "cache")
        assert text == expected


def _folders() -> list[Path]:
    return sorted(
        p for kind in ("valid", "invalid") for p in (CASES / kind).iterdir() if p.is_dir()
    )


@pytest.mark.parametrize("folder", _folders(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_spec_set_gets_the_same_problems_and_bytes(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Errors of every kind (per file, across files, the machine library's versions,
    # duplicate ids) and findings: the same problems, located the same.
    monkeypatch.chdir(folder)
    whole, expected = _whole([folder], None, display_root=folder)
    each, text = _each([folder], None, display_root=folder)
    assert [p.format() for p in each.problems] == [p.format() for p in whole.problems]
    assert each.problems == whole.problems
    assert each.failed() == whole.failed()
    assert text == expected


def _copy_with(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """The example specs with one text of one case file replaced."""
    specs = tmp_path / "specs"
    shutil.copytree(ROOT / "specs", specs)
    path = next(specs.rglob(name))
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return specs


def test_an_error_in_a_later_case_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The last case by id names a machine that does not exist: every case before it
    # was analysed by then, and still nothing is written.
    cases = sorted((ROOT / "specs").rglob("*.yaml"))
    last = max(
        (p for p in cases if "kind: case" in p.read_text(encoding="utf-8")),
        key=lambda p: _case_id(p),
    )
    specs = _copy_with(tmp_path, last.name, "machines:\n", "machines:\n  - no-such-machine\n")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "a.json"
    assert main(["analyze", "--format", "json", "-o", str(out), str(specs)]) == 1
    assert not out.exists()
    err = capsys.readouterr().err
    assert "no-such-machine" in err and "Traceback" not in err
    assert main(["analyze", "--format", "json", str(specs)]) == 1
    assert capsys.readouterr().out == ""


def _case_id(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("id:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"{path}: no id")


def test_strict_fails_on_a_finding_and_writes_nothing(
    generated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = check([generated])
    assert any(p.severity.value == "warning" for p in whole.problems)  # findings exist
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "a.json"
    assert (
        main(["analyze", "--format", "json", "-q", "--strict", "-o", str(out), str(generated)]) == 1
    )
    assert not out.exists()
    assert main(["analyze", "--format", "json", "-q", "-o", str(out), str(generated)]) == 0
    assert out.read_text(encoding="utf-8") == "".join(analysis_json_chunks(whole)) + "\n"


def _held_whole(paths: list[Path]) -> int:
    """Bytes held while the whole-project path's result is ready to be written."""
    gc.collect()
    tracemalloc.start()
    try:
        result = check(paths)
        held = tracemalloc.get_traced_memory()[0]
        assert not result.failed()
        return held
    finally:
        tracemalloc.stop()


def _held_each(paths: list[Path]) -> list[int]:
    """Bytes held as each case is handed over, one case at a time."""
    spool = analysis_json_spool()
    held: list[int] = []

    def add(case: CaseResult, advice: Advice) -> None:
        spool.add(case, advice)
        held.append(tracemalloc.get_traced_memory()[0])

    gc.collect()
    tracemalloc.start()
    try:
        assert not check_each(paths, add).failed()
    finally:
        tracemalloc.stop()
    return held


def test_memory_held_does_not_grow_with_the_cases_as_the_whole_paths_does(
    tmp_path: Path,
) -> None:
    # The whole-project path holds every case's document, model and results until the
    # JSON is written; one case at a time holds, besides the case being analysed, each
    # earlier case's JSON compressed. Measured as bytes held (not peaks, which one
    # case's transient work decides), per case.
    few, many = generated_specs(tmp_path / "few", 2), generated_specs(tmp_path / "many", 8)
    _held_each([few])  # imports and first-use tables, outside the measurement
    per_case_whole = (_held_whole([many]) - _held_whole([few])) / 6
    held = _held_each([many])
    per_case_each = (held[-1] - held[1]) / (len(held) - 2)
    assert per_case_whole > 100_000  # what the old path holds: the test can fail
    assert per_case_each < per_case_whole / 3, (per_case_each, per_case_whole)


def test_a_case_file_changed_after_the_survey_is_an_error(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    shutil.copytree(ROOT / "specs", specs)
    surveyed = survey([specs], display_root=tmp_path)
    assert surveyed.ok
    ident, (path, shown) = sorted(surveyed.cases.items())[0]
    doc, problems = surveyed.case_document(ident)
    assert doc is not None and doc.data["id"] == ident and problems == []
    text = path.read_text(encoding="utf-8")
    assert f"\nid: {ident}\n" in text
    path.write_text(text.replace(f"\nid: {ident}\n", "\nid: another-case\n"), encoding="utf-8")
    doc, problems = surveyed.case_document(ident)
    assert doc is None
    assert [(p.file, p.message) for p in problems] == [
        (shown, "the file changed while it was being checked: check again")
    ]
    path.unlink()
    doc, problems = surveyed.case_document(ident)
    assert doc is None and problems[0].file == shown
    assert problems[0].message.startswith("cannot read the file")
