"""Strict JSON for the reports: a float that is not finite is written as null, and
the text is exactly what json.dumps writes."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from roofgen.cli import main
from roofgen.report.jsontext import dumps, finite

ROOT = Path(__file__).resolve().parents[1]

EDGES: list[Any] = [
    {},
    {"a": []},
    {"a": 1.5, "b": [float("inf"), -float("inf"), float("nan")], "c": (1, (2,))},
    {"nested": {"x": {"y": [{"z": float("nan")}, {}]}}, "s": 'é\u2028\n"quoted"'},
]


@pytest.mark.parametrize("doc", EDGES)
@pytest.mark.parametrize("indent", [None, 2, 4])
def test_dumps_matches_json_dumps_on_edge_values(doc: dict[str, Any], indent: int | None) -> None:
    separators = (",", ":") if indent is None else (",", ": ")
    expected = json.dumps(finite(doc), indent=indent, separators=separators, allow_nan=False)
    assert dumps(doc, indent) == expected


def test_non_finite_numbers_are_null() -> None:
    assert dumps({"a": [math.inf, math.nan, 1.0]}) == '{"a":[null,null,1.0]}'


def test_check_json_is_strict_and_indented(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["check", "--format", "json", "specs"]) == 0
    text = capsys.readouterr().out
    doc = json.loads(text)
    assert text == json.dumps(doc, indent=2, allow_nan=False) + "\n"
