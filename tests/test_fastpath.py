"""The compiled fast path never accepts what the full JSON Schema validator rejects."""

from __future__ import annotations

from pathlib import Path

import pytest

from roofgen.spec import fastpath
from roofgen.spec.schema import validator
from roofgen.spec.yamlload import load_file

ROOT = Path(__file__).resolve().parent.parent


def documents(*folders: Path) -> list:
    return list(_documents(*folders))


def _documents(*folders: Path):
    for folder in folders:
        for path in sorted(folder.rglob("*.yaml")):
            doc, _ = load_file(path)
            if doc is None or not isinstance(doc.data, dict):
                continue
            kind = doc.data.get("kind")
            if kind in ("machine", "case") and doc.data.get("roofgen") == 1:
                yield pytest.param(doc, kind, id=str(path.relative_to(ROOT)))


@pytest.mark.parametrize(("doc", "kind"), documents(ROOT / "tests" / "cases", ROOT / "specs"))
def test_fast_path_agrees_with_jsonschema(doc, kind):
    full = not any(True for _ in validator(kind).iter_errors(doc.data))
    fast = doc.finite and fastpath.is_valid(doc.data, kind)
    assert fast == full
