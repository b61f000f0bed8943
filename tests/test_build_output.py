"""The output folder is judged by identity, not by name: no settings, planted marker or
spelling of a path makes `roofgen build` replace the project, its specs, a repository
or files git tracks; staging folders of killed builds are removed by the next build."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from roofgen.cli import main
from roofgen.commands.site import split_line
from roofgen.site.build import MARKER
from roofgen.site.output import remove_stale

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"


def _project(tmp_path: Path, output: str) -> Path:
    """A git repository holding roofgen.toml (``output`` as given) and the specs."""
    root = tmp_path / "project"
    shutil.copytree(MINIMAL, root / "specs")
    (root / "roofgen.toml").write_text(f'specs = ["specs"]\noutput = "{output}"\n')
    (root / "notes.txt").write_text("uncommitted work\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "specs", "roofgen.toml"], cwd=root, check=True)
    return root


def _build(root: Path, monkeypatch, capsys, *args: str) -> tuple[int, str]:
    monkeypatch.chdir(root)
    status = main(["build", "-j", "0", *args])
    return status, capsys.readouterr().err


def _untouched(root: Path) -> None:
    assert (root / ".git").is_dir()
    assert (root / "specs" / "case.yaml").is_file()
    assert (root / "notes.txt").read_text() == "uncommitted work\n"


def test_output_dot_with_a_planted_marker_does_not_replace_the_project(
    tmp_path, monkeypatch, capsys
):
    root = _project(tmp_path, ".")
    (root / MARKER).write_text("planted\n")
    status, err = _build(root, monkeypatch, capsys)  # refused as the settings load
    assert status == 1 and 'output = "." has a "." component' in err, err
    _untouched(root)
    (root / "roofgen.toml").write_text('specs = ["specs"]\n')
    status, err = _build(root, monkeypatch, capsys, "-o", ".")  # refused by the build
    assert status == 1 and "is or holds the project folder" in err, err
    _untouched(root)


def test_the_specs_folder_is_never_an_output(tmp_path, monkeypatch, capsys):
    root = _project(tmp_path, "specs")
    (root / "specs" / MARKER).write_text("planted\n")
    status, err = _build(root, monkeypatch, capsys)
    assert status == 1 and 'output = "specs" is the specs folder "specs"' in err, err
    _untouched(root)
    (root / "roofgen.toml").write_text('specs = ["specs"]\n')
    status, err = _build(root, monkeypatch, capsys, "-o", "specs")
    assert status == 1 and "is or holds" in err, err
    _untouched(root)


def test_another_spelling_of_the_project_is_refused(tmp_path, monkeypatch, capsys):
    """The project reached through a linked parent folder is the same folder: refused by
    identity, although no name matches."""
    root = _project(tmp_path, "site")
    (tmp_path / "via").symlink_to(tmp_path)
    (root / MARKER).write_text("planted\n")
    status, err = _build(root, monkeypatch, capsys, "-o", str(tmp_path / "via" / "project"))
    assert status == 1 and "is or holds" in err, err
    _untouched(root)


def test_a_folder_of_tracked_files_is_refused_even_with_a_marker(tmp_path, monkeypatch, capsys):
    root = _project(tmp_path, "docs")
    (root / "docs").mkdir()
    (root / "docs" / "design.md").write_text("# committed\n")
    (root / "docs" / MARKER).write_text("planted\n")
    subprocess.run(["git", "add", "docs/design.md"], cwd=root, check=True)
    status, err = _build(root, monkeypatch, capsys)
    assert status == 1 and "files git tracks" in err, err
    assert (root / "docs" / "design.md").read_text() == "# committed\n"


def test_the_default_output_builds(tmp_path, monkeypatch, capsys):
    root = _project(tmp_path, "site")
    status, err = _build(root, monkeypatch, capsys)
    assert status == 0, err
    assert (root / "site" / MARKER).is_file()
    status, err = _build(root, monkeypatch, capsys)  # and replaces its own earlier build
    assert status == 0, err
    _untouched(root)


def _dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


@pytest.mark.parametrize("kind", ["tmp", "old"])
def test_folders_of_killed_builds_are_removed(tmp_path, kind):
    output = tmp_path / "site"
    stale = tmp_path / f".site.{kind}-{_dead_pid()}-abc123"
    live = tmp_path / f".site.{kind}-{os.getppid()}-def456"  # a running process's
    other = tmp_path / ".other.tmp-1-xyz"
    for folder in (stale, live, other):
        folder.mkdir()
    remove_stale(output)
    assert not stale.exists() and live.is_dir() and other.is_dir()


def test_verbose_build_prints_the_roofgen_and_mkdocs_time_split(tmp_path, monkeypatch, capsys):
    root = _project(tmp_path, "site")
    monkeypatch.chdir(root)
    status = main(["build", "-j", "0", "-v", "--clean"])
    out = capsys.readouterr()
    assert status == 0, out.err
    text = out.out + out.err
    split = [line for line in text.splitlines() if line.startswith("time: roofgen ")]
    assert len(split) == 1, text
    assert re.fullmatch(r"time: roofgen \d+\.\d\d s, MkDocs \d+\.\d\d s \(\d+%\)", split[0])
    seconds = [float(x) for x in re.findall(r"(\d+\.\d\d) s", split[0])]
    assert seconds[1] > 0  # --clean: MkDocs ran


def test_the_split_line_gives_mkdocs_share_of_the_time() -> None:
    assert split_line(1.0, 3.0) == "time: roofgen 1.00 s, MkDocs 3.00 s (75%)"
    assert split_line(0.5, 0.0) == "time: roofgen 0.50 s, MkDocs 0.00 s (0%)"
    assert split_line(0.0, 0.0) == "time: roofgen 0.00 s, MkDocs 0.00 s"
