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
    fast = doc.numbers_in_range and fastpath.is_valid(doc.data, kind)
    assert fast == full


@pytest.fixture(scope="module")
def validator_cache(tmp_path_factory):
    """A cache folder whose compiled validators were written by an earlier compile."""
    folder = tmp_path_factory.mktemp("cache")
    for kind in ("machine", "case"):
        fastpath.compiled(kind, folder)
    fastpath.compiled.cache_clear()  # what follows loads them from the folder
    return folder


@pytest.mark.parametrize(("doc", "kind"), documents(ROOT / "tests" / "cases", ROOT / "specs"))
def test_validators_loaded_from_the_cache_agree_with_jsonschema(doc, kind, validator_cache):
    full = not any(True for _ in validator(kind).iter_errors(doc.data))
    assert (doc.numbers_in_range and fastpath.is_valid(doc.data, kind, validator_cache)) == full


def test_the_compiled_validator_is_written_once_and_damage_is_ignored(tmp_path) -> None:
    doc, _ = load_file(ROOT / "tests" / "cases" / "valid" / "h100-attention" / "h100-sxm.yaml")
    assert doc is not None
    fastpath.compiled("machine", tmp_path)
    (entry,) = (tmp_path / "validators").glob("machine-*.marshal")
    entry.write_bytes(b"\x00 not marshal data")
    fastpath.compiled.cache_clear()
    assert fastpath.is_valid(doc.data, "machine", tmp_path)
    bad = {**doc.data, "id": "Not A Valid Id"}
    assert not fastpath.is_valid(bad, "machine", tmp_path)
    (again,) = (tmp_path / "validators").glob("machine-*.marshal")
    assert again.read_bytes() != b"\x00 not marshal data"  # compiled and written again
