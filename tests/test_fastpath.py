"""The compiled fast path never accepts what the full JSON Schema validator rejects."""

from __future__ import annotations

from pathlib import Path

import pytest

from roofgen.spec import fastpath, validatorgen
from roofgen.spec.schema import validator
from roofgen.spec.yamlload import load_file

ROOT = Path(__file__).resolve().parent.parent


# The loader's refusal of an alias bomb, as the invalid corpus's expected.txt words it.
ALIAS_BOMB = "aliases expand far beyond the file's size (an alias bomb?)"


def documents(*folders: Path) -> list:
    return list(_documents(*folders))


def _documents(*folders: Path):
    """Every machine or case document (format 1) the loader reads from ``folders``.

    The loader decides, file by file, as ``check`` does; only the files that the invalid
    corpus declares alias bombs are left out unread. Refusing one costs the loader a
    whole expansion budget (about 0.7 s of CPU for the six, most of this module's
    collection), and they never reach a validator: tests/test_check_cases.py holds
    ``check`` to each folder's expected.txt word for word, so a bomb the loader stopped
    refusing fails there."""
    for folder in folders:
        bombs = _declared_alias_bombs(folder)
        for path in sorted(folder.rglob("*.yaml")):
            if path in bombs:
                continue
            doc, _ = load_file(path)
            if doc is None or not isinstance(doc.data, dict):
                continue
            kind = doc.data.get("kind")
            if kind in ("machine", "case") and doc.data.get("roofgen") == 1:
                yield pytest.param(doc, kind, id=str(path.relative_to(ROOT)))


def _declared_alias_bombs(folder: Path) -> set[Path]:
    """The spec files under ``folder`` whose expected.txt says the loader refuses them as
    alias bombs (``machine.yaml:4:5: aliases expand ...``)."""
    bombs = set()
    for expected in folder.rglob("expected.txt"):
        for line in expected.read_text(encoding="utf-8").splitlines():
            name, _, rest = line.partition(":")
            if rest.endswith(": " + ALIAS_BOMB):
                bombs.add(expected.parent / name)
    return bombs


@pytest.mark.parametrize(("doc", "kind"), documents(ROOT / "tests" / "cases", ROOT / "specs"))
def test_fast_path_agrees_with_jsonschema(doc, kind):
    full = not any(True for _ in validator(kind).iter_errors(doc.data))
    fast = doc.numbers_in_range and fastpath.is_valid(doc.data, kind)
    assert fast == full


def test_every_valid_example_takes_the_fast_path():
    """The generated validators accept the valid corpus and the example specs: the
    fast path is taken, not only correct."""
    params = documents(ROOT / "tests" / "cases" / "valid", ROOT / "specs")
    assert params
    for param in params:
        doc, kind = param.values
        assert fastpath.is_valid(doc.data, kind), param.id


def test_the_rules_files_take_the_fast_path():
    for path in (ROOT / "roofgen" / "rules").glob("*.yaml"):
        doc, problems = load_file(path)
        assert doc is not None, problems
        assert fastpath.is_valid(doc.data, "rules"), path.name


@pytest.mark.parametrize("kind", validatorgen.KINDS)
def test_generated_validators_match_the_schemas(kind):
    """The committed module is what the generator writes from today's schema, byte for
    byte: a schema edited without regenerating fails here."""
    import fastjsonschema

    committed = (validatorgen.FOLDER / f"{kind}.py").read_text("utf-8")
    made_with = committed.splitlines()[1].split()[2]  # '# fastjsonschema X.Y.Z: ...'
    assert made_with.rstrip(":") == fastjsonschema.VERSION, (
        f"roofgen/spec/validators/{kind}.py was generated with fastjsonschema {made_with} "
        f"and {fastjsonschema.VERSION} is installed: install the version in "
        f"constraints.txt, or regenerate with `{validatorgen.COMMAND}`"
    )
    assert committed == validatorgen.source(kind), (
        f"roofgen/spec/validators/{kind}.py is stale: run `{validatorgen.COMMAND}`"
    )


def test_the_fast_path_lists_every_generated_kind():
    assert fastpath.KINDS == validatorgen.KINDS
    shipped = {p.stem for p in validatorgen.FOLDER.glob("*.py")} - {"__init__"}
    assert shipped == set(validatorgen.KINDS)


def test_a_kind_without_a_module_takes_the_full_validator():
    assert fastpath.compiled("output") is None
    assert fastpath.is_valid({}, "output") is False


def test_the_fast_path_compiles_nothing_at_run_time(monkeypatch):
    """Validating imports a generated module of the package; fastjsonschema never
    compiles a schema at run time."""
    import sys

    import fastjsonschema

    def refuse(*args, **kwargs):
        raise AssertionError("a schema compiled at run time")

    monkeypatch.setattr(fastjsonschema, "compile", refuse)
    monkeypatch.setattr(fastjsonschema, "compile_to_code", refuse)
    monkeypatch.delitem(sys.modules, "roofgen.spec.validators.machine", raising=False)
    fastpath.compiled.cache_clear()
    try:
        doc, _ = load_file(ROOT / "tests" / "cases" / "valid" / "h100-attention" / "h100-sxm.yaml")
        assert doc is not None
        assert fastpath.is_valid(doc.data, "machine")
        assert not fastpath.is_valid({**doc.data, "id": "Not A Valid Id"}, "machine")
        module = sys.modules["roofgen.spec.validators.machine"]
        assert module.__file__ == str(validatorgen.FOLDER / "machine.py")
    finally:
        fastpath.compiled.cache_clear()
