"""Caches a repository can reach: each attack as data, and what roofgen does instead.

Before, a build kept its caches in ``.roofgen-cache/`` beside the settings file, under
predictable names: compiled validators (marshal, executed), check results and parsed
documents (pickles), the chart script. A repository that commits that folder, or a
CI cache another branch wrote, chose code every build ran and what the site showed.
Now nothing is ever loaded from a cache as code, the caches live in the user's cache
folder, and a cache folder inside the repository is only used when asked for and when
git tracks nothing in it. Expected values are written out by hand.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import marshal
import os
import pickle
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from roofgen.cli import main
from roofgen.site.cachedir import project_folder, user_cache_root
from roofgen.spec import file_cache
from roofgen.spec.yamlload import load_file

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"
INVALID_TIME = "1.1 parsecs"  # not a time: the check reports it


class _RunsCode:
    """A pickle that runs ``code`` when loaded."""

    def __init__(self, code: str) -> None:
        self.code = code

    def __reduce__(self):
        return (exec, (self.code,))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder (specs/, no settings file) as the current folder, with its own
    user cache folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    root = tmp_path / "project"
    shutil.copytree(MINIMAL, root / "specs")
    monkeypatch.chdir(root)
    return root


def _marker_code(marker: Path) -> str:
    return f"open({str(marker)!r}, 'w').write('ran')\n"


def _old_validator_name(kind: str) -> str:
    """The name under which roofgen used to load the compiled validator of ``kind``
    (a digest of fastjsonschema's code for the schema): predictable by anyone."""
    import fastjsonschema

    from roofgen.spec.schemafiles import load_schema

    def derive(schema):
        if isinstance(schema, list):
            return [derive(s) for s in schema]
        if not isinstance(schema, dict):
            return schema
        out = {k: derive(v) for k, v in schema.items() if not k.startswith("x-")}
        if "x-quantity" in schema:
            spec = schema["x-quantity"]
            dims = spec["dimension"] if isinstance(spec["dimension"], list) else [spec["dimension"]]
            out["format"] = "roofgen:" + "|".join(dims) + ":" + spec.get("minimum", "positive")
            formats[out["format"]] = str
            out[
                "exclusiveMinimum" if spec.get("minimum", "positive") == "positive" else "minimum"
            ] = 0
        return out

    formats: dict = {"date": str}
    schema = derive(load_schema(kind))
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    source = fastjsonschema.compile_to_code(schema, formats=formats, use_default=False)
    digest = hashlib.sha256(importlib.util.MAGIC_NUMBER + source.encode()).hexdigest()[:32]
    return f"{kind}-{digest}.marshal"


def _plant_code(cache: Path, marker: Path) -> None:
    """Code that writes ``marker`` wherever roofgen used to load code from a cache."""
    code = compile(_marker_code(marker), "<planted>", "exec")
    for kind in ("case", "machine"):
        for name in (_old_validator_name(kind), f"{kind}-0123456789abcdef0123456789abcdef.marshal"):
            (cache / "validators").mkdir(parents=True, exist_ok=True)
            (cache / "validators" / name).write_bytes(marshal.dumps(code))
    payload = pickle.dumps(_RunsCode(_marker_code(marker)))
    (cache / "documents").mkdir(parents=True, exist_ok=True)
    for name in ("check-" + "0" * 64 + ".pickle", "documents/doc-" + "0" * 64 + ".pickle"):
        (cache / name).write_bytes(payload)


# -- code planted in a cache never runs ------------------------------------------------


@pytest.mark.slow  # two builds: ~10 s
@pytest.mark.parametrize(
    "where", [[], ["--cache-dir", ".roofgen-cache"]], ids=["default", "opt-in"]
)
def test_planted_code_never_runs(project, where, capsys) -> None:
    marker = project.parent / "ran"
    _plant_code(project / ".roofgen-cache", marker)
    assert main(["check", "specs"]) == 0, capsys.readouterr().err
    assert main(["build", "specs", "-q", "-j", "0", *where]) == 0, capsys.readouterr().err
    assert main(["build", "specs", "-q", "-j", "0", *where]) == 0, capsys.readouterr().err
    assert not marker.exists()
    assert (project / "site" / "index.html").is_file()


@pytest.mark.parametrize("where", ["default", "tracked-opt-in"])
def test_a_planted_check_result_or_document_never_passes_an_invalid_spec(
    project, capsys, where
) -> None:
    """A pickle and a JSON document entry, each under the exact name the check of the
    invalid file would look for, saying the file is the valid one."""
    valid, _ = load_file(project / "specs" / "case.yaml", "specs/case.yaml")
    assert valid is not None
    case = project / "specs" / "case.yaml"
    case.write_text(case.read_text("utf-8").replace("median: 1.1 ms", f"median: {INVALID_TIME}"))
    cache = project / ".roofgen-cache"
    marker = project.parent / "ran"
    _plant_code(cache, marker)
    keyer = file_cache.DocumentCache(cache)
    for display in ("specs/case.yaml", "case.yaml", str(case)):
        key = keyer._key(case, display)
        (cache / "documents" / f"doc-{key}.json").write_bytes(file_cache._entry(valid, "case"))
    argv = ["build", "specs", "-q", "-j", "0"]
    if where == "tracked-opt-in":
        _git(project, "init", "-q")
        _git(project, "add", "-f", ".roofgen-cache")
        argv += ["--cache-dir", ".roofgen-cache"]
    problem = (
        "specs/case.yaml:13:26: variants[0].launches[0].measurement.time.median: "
        "'1.1 parsecs': unknown unit 'parsecs'; a time is written like '1.42 ms'\n"
    )
    assert main(["check", "specs"]) == 1
    assert capsys.readouterr().err == problem + (
        "2 file(s) checked: 1 error(s), 0 warning(s), 0 note(s)\n"
    )
    assert main(argv) == 1
    assert capsys.readouterr().err.startswith(problem)
    assert not marker.exists() and not (project / "site").exists()


# -- the chart script comes from vl-convert --------------------------------------------


@pytest.mark.slow  # a build and a fresh bundle: ~8 s
def test_a_planted_chart_script_is_never_shipped(project, capsys) -> None:
    from roofgen.site import assets

    vl_version = assets.vega_lite_version()
    planted = "/* planted */ window.vegaEmbed = function () { document.title = 'owned' };"
    planted += assets._BUNDLE_EPILOGUE  # it looks whole to the old check
    for folder in (project / ".roofgen-cache" / "vega", project / ".roofgen-cache"):
        name = assets._cache_file(folder, assets._vl_convert_version(), vl_version)
        name.parent.mkdir(parents=True, exist_ok=True)
        name.write_text(planted, encoding="utf-8")
    argv = ["build", "specs", "-q", "-j", "0", "--cache-dir", ".roofgen-cache"]
    assert main(argv) == 0, capsys.readouterr().err
    shipped = (project / "site" / assets.VEGA_BUNDLE_PATH).read_text("utf-8")
    assert "planted" not in shipped
    assert shipped == assets._build_bundle(vl_version)  # vl-convert's own bundle


# -- a cache folder git tracks is not used ---------------------------------------------


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                   check=True, capture_output=True)  # fmt: skip


@pytest.mark.slow  # a build: ~5 s
def test_an_opt_in_cache_that_git_tracks_is_ignored(project, capsys) -> None:
    cache = project / ".roofgen-cache"
    _plant_code(cache, project.parent / "ran")
    _git(project, "init", "-q")
    _git(project, "add", "-f", "specs", ".roofgen-cache")
    _git(project, "commit", "-qm", "a repository that commits its cache")
    before = sorted(p.relative_to(cache) for p in cache.rglob("*"))
    assert main(["build", "specs", "-j", "0", "--cache-dir", ".roofgen-cache"]) == 0
    err = capsys.readouterr().err
    assert (
        "note: the cache folder .roofgen-cache holds files git tracks, which every clone "
        "shares: not used; the user's cache folder is used instead\n"
    ) in err
    assert sorted(p.relative_to(cache) for p in cache.rglob("*")) == before  # untouched
    assert not (project.parent / "ran").exists()
    ours = project_folder(project)
    assert ours.is_relative_to(project.parent / "user-cache" / "roofgen" / "projects")
    assert list((ours / "documents").glob("doc-*.json"))  # the user's cache was used


def test_an_untracked_folder_in_a_repository_is_not_tracked(project) -> None:
    from roofgen.site.cachedir import tracked

    _git(project, "init", "-q")
    (project / ".roofgen-cache").mkdir()
    (project / ".roofgen-cache" / "entry").write_text("x")
    assert not tracked(project / ".roofgen-cache")
    assert not tracked(project / "no-such-folder")
    _git(project, "add", "-f", ".roofgen-cache/entry")
    assert tracked(project / ".roofgen-cache")
    assert not tracked(project.parent)  # not a repository


# -- where the caches are, and who may read them ---------------------------------------


def test_the_caches_live_in_the_user_cache_folder(project, tmp_path) -> None:
    assert user_cache_root() == tmp_path / "user-cache" / "roofgen"
    folder = project_folder(project)
    expected = hashlib.sha256(os.path.realpath(project).encode()).hexdigest()[:16]
    assert folder == tmp_path / "user-cache" / "roofgen" / "projects" / f"project-{expected}"
    link = tmp_path / "link"
    link.symlink_to(project)
    assert project_folder(link) == folder  # keyed by the real path


def test_a_relative_xdg_cache_home_is_ignored(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert user_cache_root() == tmp_path / ".cache" / "roofgen"


@pytest.mark.slow  # a build: ~5 s
def test_cache_files_are_owner_only(project, capsys) -> None:
    os.umask(old := os.umask(0o022))
    try:
        assert main(["build", "specs", "-q", "-j", "0"]) == 0, capsys.readouterr().err
    finally:
        os.umask(old)
    root = user_cache_root()
    entries = [root, *root.rglob("*")]
    assert len(entries) > 10
    for path in entries:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))


def test_an_existing_cache_folder_loses_others_access(project) -> None:
    from roofgen.site.cachedir import secure_folder

    folder = project_folder(project)
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    folder.parent.chmod(0o775)
    assert secure_folder(folder) == ""
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(folder.parent.stat().st_mode) == 0o700
    folder.chmod(0o500)  # never given a permission it lacks
    assert secure_folder(folder) == ""
    assert stat.S_IMODE(folder.stat().st_mode) == 0o500
    folder.chmod(0o700)


@pytest.mark.slow  # two builds: ~8 s
def test_an_unwritable_user_cache_only_costs_time(project, capsys) -> None:
    root = user_cache_root()
    assert main(["build", "specs", "-q", "-j", "0", "-o", "first"]) == 0
    for folder in [root, *root.rglob("*")]:
        if folder.is_dir():
            folder.chmod(0o500)
    try:
        assert main(["build", "specs", "-q", "-j", "0", "-o", "second"]) == 0, (
            capsys.readouterr().err
        )
    finally:
        for folder in [root, *root.rglob("*")]:
            if folder.is_dir():
                folder.chmod(0o700)
    assert (project / "second" / "index.html").is_file()


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}


def test_check_keeps_its_cache_in_the_users_cache_folder_only(project, capsys) -> None:
    """`roofgen check` reuses what an earlier check learnt, from the project's folder in
    the user's cache (owner-only), and writes nothing into the project."""
    before = _files(project)
    assert main(["check", "specs"]) == 0
    assert _files(project) == before
    entries = [p for p in user_cache_root().rglob("*") if p.is_file()]
    assert entries and all(stat.S_IMODE(p.stat().st_mode) & 0o077 == 0 for p in entries)
    folder = project_folder(project)  # no settings file: the output's folder, the project
    assert {p.parent.name for p in entries} >= {"documents", "results"}
    assert all(p.is_relative_to(folder) for p in entries)


def test_check_without_the_cache_keeps_none(project, capsys, monkeypatch) -> None:
    monkeypatch.setenv("ROOFGEN_NO_CACHE", "1")
    assert main(["check", "specs"]) == 0
    assert not user_cache_root().exists()


@pytest.mark.slow  # a build with a fresh bundle: ~8 s
def test_a_build_without_a_cache_writes_none(project, capsys) -> None:
    assert main(["build", "specs", "-q", "-j", "0", "--no-cache"]) == 0, capsys.readouterr().err
    assert not user_cache_root().exists()
    assert not (project / ".roofgen-cache").exists()


def test_the_check_result_of_a_json_entry_is_the_fresh_one(project) -> None:
    """A document served from the user's cache gives the same check as a fresh parse."""
    from roofgen.api import analysis_document, check

    folder = project_folder(project)
    first = check([project / "specs"], cache_dir=folder)
    second = check([project / "specs"], cache_dir=folder)
    assert not first.failed()
    assert json.dumps(analysis_document(second)) == json.dumps(analysis_document(first))


def test_without_a_user_cache_folder_a_build_keeps_no_cache(monkeypatch, tmp_path, make_settings):
    from roofgen.site import cachedir

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(cachedir, "user_cache_root", no_home)
    chosen = cachedir.choose(make_settings(tmp_path), tmp_path / "site", None, True)
    note = "no user cache folder (Could not determine home directory.): building without it"
    assert chosen == cachedir.Cache(None, vega=False, notes=(note,))
    chosen = cachedir.choose(make_settings(tmp_path), tmp_path / "site", tmp_path / "c", True)
    assert chosen == cachedir.Cache(tmp_path / "c", vega=False, notes=(note,))
    assert stat.S_IMODE((tmp_path / "c").stat().st_mode) == 0o700
