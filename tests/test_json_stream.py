"""The analysis JSON written case by case: the streamed text is byte for byte the
whole document's strict encoding, compact or indented, on the example specs and on a
generated set of many cases; compact into files and pipes, indented on a terminal."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from specdata import generated_specs

from roofgen.api import analysis_document, analysis_json_chunks, check
from roofgen.cli import main
from roofgen.pipeline import CheckResult
from roofgen.report.analysis import analysis_fields
from roofgen.report.jsontext import dumps, finite, stream

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CheckResult]:
    generated = generated_specs(tmp_path_factory.mktemp("generated") / "specs", 12)
    out = {"examples": check([ROOT / "specs"]), "generated": check([generated])}
    for result in out.values():
        assert not result.failed(), [p.format() for p in result.problems]
    return out


@pytest.mark.parametrize("which", ["examples", "generated"])
@pytest.mark.parametrize("indent", [None, 2])
def test_streamed_text_is_the_whole_documents_encoding(
    results: dict[str, CheckResult], which: str, indent: int | None
) -> None:
    result = results[which]
    doc = analysis_document(result)
    separators = (",", ":") if indent is None else (",", ": ")
    whole = json.dumps(finite(doc), indent=indent, separators=separators, allow_nan=False)
    chunks = list(analysis_json_chunks(result, indent))
    streamed = "".join(chunks)
    assert json.loads(streamed) == json.loads(whole) == finite(doc)
    assert streamed.encode("utf-8") == whole.encode("utf-8")
    assert len(doc["cases"]) > 1
    # a chunk per field but the cases, one per case, the ends of the cases and the object
    assert len(chunks) == (len(doc) - 1) + len(doc["cases"]) + 2


def test_cases_are_made_one_at_a_time(results: dict[str, CheckResult]) -> None:
    result = results["generated"]
    assert result.analysis is not None
    fields = analysis_fields(result.analysis, result.problems, result.advice)
    made: list[str] = []

    def counted(cases: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for case in cases:
            made.append(case["id"])
            yield case

    fields["cases"] = counted(fields["cases"])
    chunks = stream(fields)
    while len(made) < 2:
        chunk = next(chunks)
    assert json.loads(chunk.lstrip(",")) ["id"] == made[-1]  # fmt: skip
    assert len(made) == 2  # the third case is not made before the second is written


EDGES: list[Any] = [
    {},
    {"a": []},
    {"a": 1.5, "b": [float("inf"), -float("inf"), float("nan")], "c": (1, (2,))},
    {"nested": {"x": {"y": [{"z": float("nan")}, {}]}}, "s": 'é\u2028\n"quoted"'},
]


@pytest.mark.parametrize("doc", EDGES)
@pytest.mark.parametrize("indent", [None, 2, 4])
def test_stream_matches_json_dumps_on_edge_values(doc: dict[str, Any], indent: int | None) -> None:
    separators = (",", ":") if indent is None else (",", ": ")
    expected = json.dumps(finite(doc), indent=indent, separators=separators, allow_nan=False)
    assert dumps(doc, indent) == expected
    assert "".join(stream(doc, indent)) == expected
    lazy = {k: iter(v) if isinstance(v, list) else v for k, v in doc.items()}
    assert "".join(stream(lazy, indent)) == expected


def test_non_finite_numbers_are_null() -> None:
    assert dumps({"a": [math.inf, math.nan, 1.0]}) == '{"a":[null,null,1.0]}'
    assert "".join(stream({"a": iter([-math.inf])})) == '{"a":[null]}'


def test_compact_into_a_file_and_a_pipe_indented_on_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "a.json"
    assert main(["analyze", "--format", "json", "-q", "-o", str(out), "specs"]) == 0
    compact = out.read_text(encoding="utf-8")
    assert compact.startswith('{"roofgen_output":1,') and compact.count("\n") == 1
    assert main(["analyze", "--format", "json", "-q", "specs"]) == 0
    assert capsys.readouterr().out == compact  # a pipe, not a terminal
    assert main(["analyze", "--format", "json", "-q", "--indent", "specs"]) == 0
    indented = capsys.readouterr().out
    assert indented.startswith('{\n  "roofgen_output": 1,\n')
    assert json.loads(indented) == json.loads(compact)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    assert main(["analyze", "--format", "json", "-q", "specs"]) == 0
    assert capsys.readouterr().out == indented  # a terminal
    assert main(["analyze", "--format", "json", "-q", "--no-indent", "specs"]) == 0
    assert capsys.readouterr().out == compact


def test_check_json_is_strict_and_indented(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["check", "--format", "json", "specs"]) == 0
    text = capsys.readouterr().out
    doc = json.loads(text)
    assert text == json.dumps(doc, indent=2, allow_nan=False) + "\n"
