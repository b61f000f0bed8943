"""Fuzzing `roofgen check`, `roofgen migrate` and `roofgen build` in a child process
under CPU-time and memory limits (the runner and the oracle: tests/fuzzcli.py).

Inputs are the example specs (``specs/``) and the valid test cases
(``tests/cases/valid/``) with bytes flipped, cut, repeated, re-encoded (BOMs, UTF-16,
Latin-1, NUL), their line endings changed, numbers made huge or not numbers, words
made huge, YAML tokens (tabs, anchors, tags, flow brackets) inserted, or one value
anywhere replaced by null, a wrong type or a deep nest; for ``migrate``, the same
specs written back in format version 0; for ``build``, a small project whose
``roofgen.toml`` or specs are mutated.

Whatever the input, the command exits 0 or 1, prints no traceback, stays inside
the limits, and says where each problem is. With ``CI=true`` the examples are few
and always the same; locally they are three times as many and new on each run. A
long run: ``HYPOTHESIS_PROFILE=fuzz`` (fifty times the CI count) or
``ROOFGEN_FUZZ_EXAMPLES=500`` (500 examples a test), e.g.

    ROOFGEN_FUZZ_EXAMPLES=500 .venv/bin/python -m pytest tests/test_fuzz_cli_specs.py
"""

from __future__ import annotations

import json
import math
import re
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from fuzzcli import (
    EXAMPLES,
    FUZZ_TIMEOUT_S,
    ODD_FILES,
    RAW,
    RAW_VALUES,
    VALID,
    Blob,
    assert_handled,
    fuzz_settings,
    hostile_value,
    make_odd_file,
    mutated_bytes,
    names_an_input,
    replace_at,
    run_roofgen,
    tree_paths,
    workdir,
)
from hypothesis import assume, given
from hypothesis import strategies as st

from roofgen.cli import main

# Each test runs a child process per example: seconds to minutes, so out of the quick loop.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(FUZZ_TIMEOUT_S)]

YAML_TOKENS = [":", "[", "]", "{", "}", "&a ", "*a", "\t", "- ", "<<: *a\n", "\n  ", "'", '"',
               "#", "!!python/object:os.system ", "!custom ", "!!binary ", "? ", ",", "|", ">",
               "\x00", "\ufeff", "%YAML 1.1\n---\n", "---\n", "...\n", "~", "\\", "\udc80",
               ": &x [*x]\n", "&b [*b, *b, *b, *b]"]  # fmt: skip

# One project per entry: the folder copied into ``specs/`` and its YAML files.
PROJECTS = [EXAMPLES, *sorted(p for p in VALID.iterdir() if p.is_dir())]
FILES = [(project, path.relative_to(project).as_posix())
         for project in PROJECTS for path in sorted(project.rglob("*.yaml"))]  # fmt: skip

SUMMARY = re.compile(r"^\d+ file\(s\) checked: \d+ error\(s\), \d+ warning\(s\), \d+ note\(s\)$")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-cli")


def dump_yaml(data: Any, flow: bool, raw: str) -> Blob:
    text = yaml.safe_dump(data, default_flow_style=flow, allow_unicode=True, width=80)
    return Blob(text.replace(RAW, raw).encode("utf-8", "surrogatepass"))


@st.composite
def restructured(draw: st.DrawFn, data: bytes) -> bytes:
    """The YAML document ``data`` with one value anywhere replaced by a hostile one."""
    tree = yaml.safe_load(data)
    path = draw(st.sampled_from(tree_paths(tree)))
    tree = replace_at(tree, path, draw(hostile_value()))
    raw = draw(st.sampled_from([*RAW_VALUES, ".nan", "*a", "!!float x", "{" * 10_000]))
    return dump_yaml(tree, draw(st.booleans()), raw)


@st.composite
def mutated_project(draw: st.DrawFn) -> tuple[Path, str, bytes, str | None]:
    """(project folder, one of its files, that file's mutated bytes, maybe an odd file
    to put beside it)."""
    project, name = draw(st.sampled_from(FILES))
    original = (project / name).read_bytes()
    how = draw(st.sampled_from(["bytes", "tree", "odd-file"]))
    odd = None
    if how == "bytes":
        data = draw(mutated_bytes(original, YAML_TOKENS))
    elif how == "tree":
        data = draw(restructured(original))
    else:
        data, odd = Blob(original), draw(st.sampled_from(ODD_FILES))
    assume(data != original or odd)
    return project, name, data, odd


def write_project(folder: Path, mutation: tuple[Path, str, bytes, str | None]) -> None:
    project, name, data, odd = mutation
    shutil.copytree(project, folder, dirs_exist_ok=True)
    (folder / name).write_bytes(data)
    if odd:
        make_odd_file(folder / "odd.yaml", odd)


# --------------------------------------------------------------------------- check


def located_or_summary(line: str) -> bool:
    return bool(SUMMARY.match(line)) or names_an_input(line, ["specs"])


@fuzz_settings(ci=30)
@given(mutation=mutated_project(), strict=st.booleans())
def test_check(mutation: tuple[Path, str, bytes, str | None], strict: bool, scratch: Path) -> None:
    with workdir(scratch) as cwd:
        write_project(cwd / "specs", mutation)
        args = ["check", "specs", *(["--strict"] if strict else [])]
        outcome = run_roofgen(args, cwd)
        assert_handled(outcome, ["specs"], every_line=located_or_summary)
        assert outcome.out == ""


# --------------------------------------------------------------------------- migrate


def version_0(data: Any) -> Any:
    """A version-1 spec written back in format version 0 (the pre-release drafts):
    a measurement's ``bytes: {L: V}`` as flat ``bytes_L: V`` keys, a compute unit's
    ``peaks: {P: ROOF}`` as a list of ``{precision: P, value: ROOF}``."""
    if not isinstance(data, dict):
        return data
    data["roofgen"] = 0
    for unit in data.get("compute") or []:
        if isinstance(unit, dict) and isinstance(unit.get("peaks"), dict):
            unit["peaks"] = [{"precision": p, "value": v} for p, v in unit["peaks"].items()]
    for variant in data.get("variants") or []:
        for launch in (variant or {}).get("launches") or []:
            measurement = launch.get("measurement") if isinstance(launch, dict) else None
            if isinstance(measurement, dict) and isinstance(measurement.get("bytes"), dict):
                for level, value in measurement.pop("bytes").items():
                    measurement[f"bytes_{level}"] = value
    return data


@st.composite
def version_0_project(draw: st.DrawFn) -> tuple[dict[str, bytes], str | None]:
    """A project's files in format version 0, one of them mutated or an odd file
    beside them."""
    project = draw(st.sampled_from(PROJECTS))
    files = {}
    for path in sorted(project.rglob("*.yaml")):
        tree = version_0(yaml.safe_load(path.read_bytes()))
        files[path.relative_to(project).as_posix()] = dump_yaml(tree, False, "")
    name = draw(st.sampled_from(sorted(files)))
    how = draw(st.sampled_from(["bytes", "tree", "odd-file"]))
    odd = None
    if how == "bytes":
        files[name] = draw(mutated_bytes(files[name], YAML_TOKENS))
    elif how == "tree":
        files[name] = draw(restructured(files[name]))
    else:
        odd = draw(st.sampled_from(ODD_FILES))
    return files, odd


@fuzz_settings(ci=25)
@given(project=version_0_project(), check_only=st.booleans())
def test_migrate(
    project: tuple[dict[str, bytes], str | None], check_only: bool, scratch: Path
) -> None:
    files, odd = project
    with workdir(scratch) as cwd:
        for name, data in files.items():
            target = cwd / "specs" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        if odd:
            make_odd_file(cwd / "specs" / "odd.yaml", odd)
        args = ["migrate", "specs", *(["--check"] if check_only else [])]
        outcome = run_roofgen(args, cwd)
        assert_handled(outcome, ["specs"])


def test_every_project_migrates_from_version_0(scratch: Path, monkeypatch, capsys) -> None:
    """The unmutated version-0 projects migrate and then check (in this process: it
    tests the generator, so that the mutations start from input migrate reads)."""
    for project in PROJECTS:
        with workdir(scratch) as cwd:
            for path in sorted(project.rglob("*.yaml")):
                target = cwd / "specs" / path.relative_to(project)
                target.parent.mkdir(parents=True, exist_ok=True)
                tree = version_0(yaml.safe_load(path.read_bytes()))
                target.write_bytes(dump_yaml(tree, False, ""))
            monkeypatch.chdir(cwd)
            assert main(["migrate", "-q", "specs"]) == 0, capsys.readouterr().err
            assert main(["check", "-q", "specs"]) == 0, capsys.readouterr().err


# --------------------------------------------------------------------------- build

SETTINGS: dict[str, Any] = {
    "specs": ["specs"],
    "output": "site",
    "thresholds": {"co_bound_margin": 0.15, "below_roofs_efficiency": 0.5},
    "site": {
        "name": "Fuzzed site",
        "url": "https://example.org/cases/",
        "description": "Cases",
        "copyright": "(c) the authors",
        "palette": {"scheme": "slate", "primary": "indigo", "accent": "amber"},
        "features": ["navigation.tabs"],
    },
}
TOML_TOKENS = ["=", "[", "]", "[[x]]\n", '"', "'''", "\\u0000", "\n[site]\n", "#", "\x00",
               "\ufeff", "inf", "nan", "1979-05-27T07:32:00Z", "{", "}", ",", "\t"]  # fmt: skip


def toml_text(settings: dict[str, Any]) -> str:
    """``settings`` as TOML: top-level values first, then one table per mapping (a
    None value is left out)."""
    lines = [f"{key} = {_toml_value(v)}" for key, v in settings.items()
             if v is not None and not isinstance(v, dict)]  # fmt: skip
    for key, value in settings.items():
        if isinstance(value, dict):
            lines += _toml_table(json.dumps(key, ensure_ascii=False), value)
    return "\n".join(lines) + "\n"


def _toml_table(name: str, table: dict[str, Any]) -> list[str]:
    lines = [f"[{name}]"]
    lines += [f"{json.dumps(str(k), ensure_ascii=False)} = {_toml_value(v)}"
              for k, v in table.items() if v is not None and not isinstance(v, dict)]  # fmt: skip
    for key, value in table.items():
        if isinstance(value, dict):
            lines += _toml_table(f"{name}.{json.dumps(str(key), ensure_ascii=False)}", value)
    return lines


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}"
                               for k, v in value.items() if v is not None) + "}"  # fmt: skip
    return json.dumps(str(value), ensure_ascii=False).replace(RAW, "x")


@st.composite
def mutated_build(draw: st.DrawFn) -> tuple[bytes, str, bytes, bool]:
    """(roofgen.toml, the mutated spec's name, its bytes, markdown only?)."""
    import copy

    settings = copy.deepcopy(SETTINGS)
    spec_name = draw(st.sampled_from(["case.yaml", "machine.yaml"]))
    original = (VALID / "minimal" / spec_name).read_bytes()
    spec = Blob(original)
    what = draw(st.sampled_from(["settings", "settings-bytes", "spec", "both"]))
    if what in ("settings", "both"):
        path = draw(st.sampled_from(tree_paths(settings)[1:]))
        settings = replace_at(settings, path, draw(hostile_value(raw_numbers=False)))
    toml = Blob(toml_text(settings).encode("utf-8", "surrogatepass"))
    if what == "settings-bytes":
        toml = draw(mutated_bytes(toml, TOML_TOKENS))
    if what in ("spec", "both"):
        spec = draw(st.one_of(mutated_bytes(original, YAML_TOKENS), restructured(original)))
    return toml, spec_name, spec, draw(st.booleans())


@fuzz_settings(ci=5)
@given(project=mutated_build())
def test_build(project: tuple[bytes, str, bytes, bool], scratch: Path) -> None:
    toml, spec_name, spec, markdown_only = project
    with workdir(scratch) as cwd:
        shutil.copytree(VALID / "minimal", cwd / "specs")
        (cwd / "specs" / spec_name).write_bytes(spec)
        (cwd / "roofgen.toml").write_bytes(toml)
        args = ["build", "-q", "--no-cache", "-j", "0", "-o", "out",
                *(["--markdown-only"] if markdown_only else [])]  # fmt: skip
        outcome = run_roofgen(args, cwd, v8=True)
        assert_handled(outcome, ["specs", "out", str(cwd / "roofgen.toml"), *_configured(toml)])


def _configured(toml: bytes) -> list[str]:
    """The paths ``toml`` configures, as a build names them (a message may be about one)."""
    try:
        settings = tomllib.loads(toml.decode("utf-8"))
    except (ValueError, RecursionError):
        return []
    site = settings.get("site") if isinstance(settings.get("site"), dict) else {}
    values = [settings.get(k) for k in ("output", "rules", "specs")]
    values += [site.get(k) for k in ("logo", "extra_css", "extra_pages")]
    paths = [v for value in values for v in (value if isinstance(value, list) else [value])]
    return [p for p in paths if isinstance(p, str) and p]
