"""`roofgen build` removes or moves nothing but its own output, however the output is
spelt: ``..`` after a missing folder, links, the project's own folders, a folder beside
the project. The output is judged as it will be (roofgen.site.output.guard), the
settings refuse such paths as they load (roofgen.config.check_paths), and every build,
one that keeps its site too, removes the staging folders of killed builds.

The reproductions run through the real CLI; the property tests compare every file under
a temporary root before and after: one over the guard with the build's own staging and
swap (many examples), one over real builds (a handful: a build of the one-case project
costs about 3 s of CPU here, a refused one a fraction of that).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from specdata import make_settings

from roofgen.analysis.bounds import Thresholds
from roofgen.api import build_site
from roofgen.cli import main
from roofgen.config import Settings
from roofgen.site.build import BuildResult
from roofgen.site.output import (
    MARKER,
    MARKER_TEXT,
    OutputRefused,
    guard,
    remove_stale,
    staging,
    swap,
)

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"
KEPT = "no page changed since the last build: the site was kept as it is"

#: The three reproductions: the victim beside the project, every spec, the repository.
REPRODUCTIONS = ["nope/../../victim", "site/../specs", "nope/../../proj"]


# --------------------------------------------------------------------------- the world


def make_world(base: Path) -> Path:
    """``base/proj``, a git repository (roofgen.toml, specs, uncommitted notes, a
    roofgen marker planted at its root, in specs and in .git, an earlier site in
    ``site``, links to the victim, to ``base`` and to the specs) and ``base/victim``
    beside it; returns the project."""
    proj = base / "proj"
    shutil.copytree(MINIMAL, proj / "specs")
    (proj / "roofgen.toml").write_text('specs = ["specs"]\n')
    (proj / "notes.txt").write_text("uncommitted work\n")
    subprocess.run(["git", "init", "-q"], cwd=proj, check=True)
    subprocess.run(["git", "add", "specs", "roofgen.toml"], cwd=proj, check=True)
    for folder in (proj, proj / "specs", proj / ".git"):
        (folder / MARKER).write_text("planted\n")
    (proj / "site").mkdir()
    (proj / "site" / MARKER).write_text(MARKER_TEXT)
    (proj / "site" / "index.html").write_text("earlier build\n")
    (base / "victim").mkdir()
    (base / "victim" / "thesis.tex").write_text("years of work\n")
    (proj / "lnk_out").symlink_to(base / "victim")
    (proj / "lnk_up").symlink_to(base)
    (proj / "lnk_specs").symlink_to(proj / "specs")
    return proj


def snapshot(root: Path) -> dict[str, tuple[str, bytes | str]]:
    """Every entry under ``root`` (links not followed): a file's bytes, a link's target."""
    out: dict[str, tuple[str, bytes | str]] = {}
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            path = Path(folder, name)
            key = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[key] = ("link", os.readlink(path))
            elif path.is_dir():
                out[key] = ("dir", "")
            else:
                out[key] = ("file", path.read_bytes())
    return out


def assert_only_its_output_changed(
    base: Path, before: dict[str, tuple[str, bytes | str]], output: Path | None
) -> None:
    """Nothing under ``base`` changed but ``output`` (the build's own folder, None when
    the build was refused) and the folders made on the way to it."""
    after = snapshot(base)

    def kept(entries: dict[str, tuple[str, bytes | str]]) -> dict[str, tuple[str, bytes | str]]:
        if output is None:
            return entries
        own = output.relative_to(base).as_posix()
        on_the_way = {
            p.relative_to(base).as_posix()
            for p in output.parents
            if p.is_relative_to(base) and p != base
        }
        return {
            k: v
            for k, v in entries.items()
            if k != own and not k.startswith(own + "/") and not (k in on_the_way and v[0] == "dir")
        }

    assert kept(after) == kept(before)
    if output is None:
        assert after == before


def _settings(proj: Path, output: str, origin: str) -> Settings:
    """The project's settings with ``output`` as written in the settings file (``origin``
    "file", past the settings' own check, so that the build's guard is what is tested)
    or given with -o (``origin`` "command line", relative to the project)."""
    file = proj / "roofgen.toml"
    return Settings(
        root=proj,
        file=file,
        specs=(proj / "specs",),
        output=proj / output,
        rules=None,
        thresholds=Thresholds(),
        site={"name": "Guard"},
        origins={"output": str(file) if origin == "file" else origin},
    )


@contextmanager
def fresh(scratch: Path) -> Iterator[tuple[Path, Path]]:
    """A new world under ``scratch`` for one example, the project the current folder."""
    base = Path(tempfile.mkdtemp(dir=scratch)).resolve()
    old = Path.cwd()
    try:
        proj = make_world(base)
        os.chdir(proj)
        yield base, proj
    finally:
        os.chdir(old)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("guard")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One chart cache for the module's builds (the Vega bundle is written once)."""
    return tmp_path_factory.mktemp("guard-cache")


def _cli(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(list(args))
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return status, err


# --------------------------------------------------------------------------- reproductions


@pytest.mark.parametrize("output", REPRODUCTIONS)
def test_the_reproductions_in_the_settings_are_refused_touching_nothing(
    output: str, scratch: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with fresh(scratch) as (base, proj):
        (proj / "roofgen.toml").write_text(f'specs = ["specs"]\noutput = "{output}"\n')
        before = snapshot(base)
        status, err = _cli("build", "-j", "0", "--cache-dir", str(cache), capsys=capsys)
        assert status == 1, err
        assert f"{proj / 'roofgen.toml'}:2:10: output: " in err, err
        assert f'output = "{output}" has a ".." component' in err, err
        assert 'such as output = "site"' in err, err
        assert_only_its_output_changed(base, before, None)


@pytest.mark.parametrize("output", REPRODUCTIONS)
def test_the_reproductions_given_with_dash_o_are_refused_touching_nothing(
    output: str, scratch: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-o may name a folder outside the project, but never the project, the specs, or
    a folder roofgen did not write."""
    with fresh(scratch) as (base, proj):
        before = snapshot(base)
        status, err = _cli("build", "-j", "0", "--cache-dir", str(cache), "-o", output,
                           capsys=capsys)  # fmt: skip
        assert status == 1, err
        assert f"-o {output} " in err and "such as -o site" in err, err
        assert_only_its_output_changed(base, before, None)


@pytest.mark.parametrize(
    "output, said",
    [
        ("nope/../../victim", "outside the project folder"),
        ("site/../specs", "which is or holds"),
        ("nope/../../proj", "which is or holds the project folder"),
        ("lnk_out", "outside the project folder"),
        ("lnk_out/sub", "outside the project folder"),
        ("lnk_up/proj", "which is or holds the project folder"),
        ("lnk_specs/../../victim", "outside the project folder"),
        ("lnk_specs/../site/../specs", "which is or holds"),
        (".git/site", "inside a git repository's own folder"),
    ],
)
def test_the_guard_refuses_what_the_settings_name_however_spelt(
    output: str, said: str, scratch: Path, cache: Path
) -> None:
    """Settings that reach the build unchecked (the library's callers build their own)
    are refused by the build's guard itself, before the check: nothing is touched."""
    with fresh(scratch) as (base, proj):
        before = snapshot(base)
        settings = _settings(proj, output, "file")
        result = build_site([proj / "specs"], settings, settings.output, cache_dir=cache)
        assert not result.ok
        [problem] = result.problems
        assert problem.file == str(proj / "roofgen.toml") and problem.path == "output"
        assert f'output = "{output}" in {proj / "roofgen.toml"}' in problem.message
        assert said in problem.message, problem.message
        assert 'such as output = "site"' in problem.message
        assert "check" not in result.timings  # refused before anything was read
        assert_only_its_output_changed(base, before, None)


def test_the_default_output_linked_out_of_the_project_is_refused(
    scratch: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with fresh(scratch) as (base, proj):
        shutil.rmtree(proj / "site")
        (proj / "site").symlink_to(base / "victim")
        before = snapshot(base)
        status, err = _cli("build", "-j", "0", "--cache-dir", str(cache), capsys=capsys)
        assert status == 1, err
        assert f"the default output folder {proj / 'site'} resolves to {base / 'victim'}" in err
        assert 'such as output = "public"' in err, err
        assert_only_its_output_changed(base, before, None)


def test_dash_o_may_name_a_new_folder_beside_the_project(
    scratch: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with fresh(scratch) as (base, proj):
        before = snapshot(base)
        status, err = _cli("build", "-j", "0", "--cache-dir", str(cache), "-o", "nope/../../pub",
                           capsys=capsys)  # fmt: skip
        assert status == 0, err
        assert (base / "pub" / MARKER).read_text() == MARKER_TEXT
        assert not (proj / "nope").exists()  # the path was resolved before anything
        assert_only_its_output_changed(base, before, base / "pub")


def test_dash_o_refuses_a_link_as_the_output(
    scratch: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with fresh(scratch) as (base, proj):
        shutil.rmtree(base / "victim")
        (base / "victim").mkdir()  # empty: only the link stands in the way
        before = snapshot(base)
        status, err = _cli("build", "-j", "0", "--cache-dir", str(cache), "-o", "lnk_out",
                           capsys=capsys)  # fmt: skip
        assert status == 1 and "-o lnk_out is a link" in err, err
        assert_only_its_output_changed(base, before, None)


def test_a_link_named_like_the_marker_marks_nothing(
    scratch: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with fresh(scratch) as (base, proj):
        (base / "victim" / MARKER).symlink_to(proj / "site" / MARKER)
        before = snapshot(base)
        status, err = _cli("build", "-j", "0", "--cache-dir", str(cache), "-o", "../victim",
                           capsys=capsys)  # fmt: skip
        assert status == 1 and "holds no marker file" in err, err
        assert_only_its_output_changed(base, before, None)


# --------------------------------------------------------------------------- the swap


def test_a_folder_swapped_in_after_the_guard_is_not_renamed(scratch: Path) -> None:
    """The swap renames only the very folder the guard accepted, still marked."""
    with fresh(scratch) as (base, proj):
        target = guard(_settings(proj, "site", "file"), proj / "site")
        assert target.ours
        (proj / "site").rename(proj / "earlier")
        shutil.copytree(base / "victim", proj / "site")
        (proj / "site" / MARKER).write_text(MARKER_TEXT)  # a marker, but another folder
        before = snapshot(base)
        with staging(target.path) as stage:
            (stage / "tree").mkdir()
            with pytest.raises(OutputRefused, match="changed while the site was built"):
                swap(stage / "tree", target)
        assert snapshot(base) == before


def test_an_empty_folder_of_someone_else_is_replaced_not_renamed(scratch: Path) -> None:
    with fresh(scratch) as (base, proj):
        (proj / "empty").mkdir()
        target = guard(_settings(proj, "empty", "command line"), proj / "empty")
        assert not target.ours
        (proj / "empty" / "arrived.txt").write_text("written meanwhile\n")
        with staging(target.path) as stage:
            (stage / "tree").mkdir()
            (stage / "tree" / "index.html").write_text("new\n")
            with pytest.raises(OSError):  # the system refuses: the folder is not empty
                swap(stage / "tree", target)
        assert (proj / "empty" / "arrived.txt").read_text() == "written meanwhile\n"
        assert [p.name for p in proj.iterdir() if p.name.startswith(".empty.")] == []


# --------------------------------------------------------------------------- killed builds


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_every_build_removes_killed_builds_staging_even_when_nothing_changed(
    tmp_path: Path,
) -> None:
    """A build killed with SIGKILL leaves its staging folder; the next build removes it
    even when nothing changed (it then keeps the site without a check)."""
    shutil.copytree(MINIMAL, tmp_path / "specs")
    settings_ = make_settings(tmp_path)

    def build() -> BuildResult:
        result = build_site([tmp_path / "specs"], settings_, tmp_path / "site",
                            cache_dir=tmp_path / "cache")  # fmt: skip
        assert result.ok, [p.format() for p in result.problems]
        return result

    build()
    dead = tmp_path / f".site.tmp-{_dead_pid()}-x1y2z3"
    live = tmp_path / f".site.tmp-{os.getppid()}-a1b2c3"  # a running process's
    for folder in (dead, live):
        (folder / "docs").mkdir(parents=True)
        (folder / "docs" / "index.md").write_text("# half written\n")
    again = build()
    assert "check" not in again.timings and KEPT in " ".join(again.notes)  # nothing changed
    assert not dead.exists()
    assert (live / "docs" / "index.md").is_file()


def test_remove_stale_keeps_other_names_and_live_builds(tmp_path: Path) -> None:
    stale = tmp_path / f".site.old-{_dead_pid()}-abc"
    other = tmp_path / f".sites.tmp-{_dead_pid()}-abc"
    for folder in (stale, other):
        folder.mkdir()
    remove_stale(tmp_path / "site")
    assert not stale.exists() and other.is_dir()


# --------------------------------------------------------------------------- properties

NAMES = [".", "..", "nope", "nope2", "site", "specs", ".git", "proj", "victim",
         "lnk_out", "lnk_up", "lnk_specs", "notes.txt"]  # fmt: skip


@st.composite
def output_paths(draw: st.DrawFn) -> str:
    """A path built from ``.``, ``..``, missing and existing names, links and the
    project's own folders; relative to the project, or absolute from the world's root
    (``@`` stands for it)."""
    parts = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=5))
    return ("@/" if draw(st.booleans()) else "") + "/".join(parts)


def _in_world(path: str, base: Path) -> str:
    return str(base) + path[1:] if path.startswith("@") else path


def _in_reach(base: Path, proj: Path, given: str) -> bool:
    """Whether the resolved ``given`` lies in the world or above it (else the example
    is passed over: there is nothing to compare there)."""
    real = Path(os.path.realpath(proj / given))
    return real.is_relative_to(base) or base.is_relative_to(real)


def assert_fair(
    base: Path, proj: Path, before: dict[str, tuple[str, bytes | str]], real: Path
) -> None:
    """An accepted output held nothing but an earlier build of ours (the project's
    ``site``), or nothing at all."""
    own = real.relative_to(base).as_posix()
    held = [k for k in before if k == own or k.startswith(own + "/")]
    assert real == proj / "site" or held in ([], [own]), f"accepted over {held}"
    assert before.get(own, ("dir", ""))[0] == "dir", f"accepted over {before[own]}"


GUARD_SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@GUARD_SETTINGS
@given(path=output_paths(), origin=st.sampled_from(["file", "command line"]))
def test_the_guard_with_staging_and_swap_touches_only_its_own_output(
    path: str, origin: str, scratch: Path
) -> None:
    """The build's own steps (guard, staging, swap), with a tree for MkDocs' HTML."""
    with fresh(scratch) as (base, proj):
        given_path = _in_world(path, base)
        if not _in_reach(base, proj, given_path):
            return
        before = snapshot(base)
        settings_ = _settings(proj, given_path, origin)
        try:
            target = guard(settings_, settings_.output, [proj / "specs"])
        except OutputRefused:
            event("refused")
            assert_only_its_output_changed(base, before, None)
            return
        event("accepted")
        assert_fair(base, proj, before, target.path)
        remove_stale(target.path)
        with staging(target.path) as stage:
            (stage / "site").mkdir()
            (stage / "site" / "index.html").write_text("new\n")
            (stage / "site" / MARKER).write_text(MARKER_TEXT)
            swap(stage / "site", target)
        assert (target.path / "index.html").read_text() == "new\n"
        assert_only_its_output_changed(base, before, target.path)


@pytest.mark.slow
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(path=output_paths(), how=st.sampled_from(["settings", "-o"]))
def test_a_real_build_touches_only_its_own_output(
    path: str, how: str, scratch: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`roofgen build` itself, the output named in roofgen.toml or with -o."""
    with fresh(scratch) as (base, proj):
        given_path = _in_world(path, base)
        if not _in_reach(base, proj, given_path):
            return
        args = ["build", "-q", "-j", "0", "--cache-dir", str(cache)]
        if how == "-o":
            args += ["-o", given_path]
        else:
            (proj / "roofgen.toml").write_text(f'specs = ["specs"]\noutput = "{given_path}"\n')
        before = snapshot(base)
        status, err = _cli(*args, capsys=capsys)
        assert status in (0, 1), err
        event(f"{how}: {'built' if status == 0 else 'refused'}")
        if status == 1:
            assert_only_its_output_changed(base, before, None)
            return
        real = Path(os.path.realpath(proj / given_path))
        assert (real / MARKER).read_text() == MARKER_TEXT
        assert_fair(base, proj, before, real)
        assert_only_its_output_changed(base, before, real)
