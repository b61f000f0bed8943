"""roofgen.files.write_file, the one writer of every file roofgen writes, and the layout
an edit keeps (roofgen.spec.roundtrip.keep_layout).

The attacks are data (a folder tree with planted links), the refusals are text, pinned
word for word. Every attack runs twice: walking folders by descriptor (Linux, macOS)
and on resolved paths (the fallback where the platform has no ``dir_fd``). The verbs
that write through it are tested in test_file_writer_verbs.py.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from roofgen import files
from roofgen.files import WriteRefused, confinement, write_cache_entry, write_file
from roofgen.spec.roundtrip import keep_layout, lf_text

VICTIM = b"#!/bin/sh\necho the victim script\n"


@pytest.fixture(params=["dir_fd", "paths"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of walking: by descriptor, and the fallback on resolved paths."""
    if request.param == "paths":
        monkeypatch.setattr(files, "DIR_FD", False)
    elif not files.DIR_FD:
        pytest.skip("this platform cannot walk folders by descriptor")
    return str(request.param)


@pytest.fixture
def umask() -> object:
    """Restores the process's umask after a test that sets it."""
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp/project (roofgen.toml, specs/) as the current folder, tmp/outside with a victim."""
    project = tmp_path / "project"
    (project / "specs").mkdir(parents=True)
    (project / "roofgen.toml").write_text('specs = ["specs"]\n')
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "victim.sh").write_bytes(VICTIM)
    monkeypatch.chdir(project)
    return project


def _perm(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _victim_untouched(tmp_path: Path) -> None:
    assert (tmp_path / "outside" / "victim.sh").read_bytes() == VICTIM
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["victim.sh"]


# --------------------------------------------------------------------------- attacks


def test_a_planted_temporary_name_never_receives_data(tree, tmp_path, mode, monkeypatch):
    """Every name the writer may try is planted: the old fixed ``.NAME.tmp`` and the
    first random draw. O_EXCL refuses each (a link is never followed); the next
    draw is used."""
    victim = tmp_path / "outside" / "victim.sh"
    planted = [".out.json.tmp", ".out.json.0badc0ffee00.tmp"]
    for name in planted:
        (tree / "specs" / name).symlink_to(victim)
    draws = iter([*planted, ".out.json.fresh.tmp"])
    monkeypatch.setattr(files, "_temp_name", lambda name: next(draws))
    write_file("specs/out.json", '{"ok": true}\n')
    assert (tree / "specs" / "out.json").read_bytes() == b'{"ok": true}\n'
    _victim_untouched(tmp_path)
    names = sorted(p.name for p in (tree / "specs").iterdir())
    assert names == sorted([*planted, "out.json"])  # the links stay; no temporary left
    assert all(os.readlink(tree / "specs" / n) == str(victim) for n in planted)


def test_a_planted_regular_file_at_the_temporary_name_is_left_alone(tree, mode, monkeypatch):
    (tree / "specs" / ".a.yaml.tmp").write_text("someone's draft\n")
    draws = iter([".a.yaml.tmp", ".a.yaml.second.tmp"])
    monkeypatch.setattr(files, "_temp_name", lambda name: next(draws))
    write_file(tree / "specs" / "a.yaml", "a: 1\n")
    assert (tree / "specs" / ".a.yaml.tmp").read_text() == "someone's draft\n"
    assert (tree / "specs" / "a.yaml").read_text() == "a: 1\n"


def test_a_linked_folder_that_leads_out_of_the_project_is_refused(tree, tmp_path, mode):
    (tree / "specs" / "cases").symlink_to(tmp_path / "outside")
    with pytest.raises(WriteRefused) as caught:
        write_file("specs/cases/victim.sh", "kind: case\n")
    outside, project = (tmp_path / "outside").resolve(), tree.resolve()
    expected = {
        "dir_fd": f"specs/cases/victim.sh: not written: specs/cases is a symbolic link to "
        f"{outside}, outside {project}",
        "paths": f"specs/cases/victim.sh: not written: it leads to {outside}/victim.sh, "
        f"outside {project}",
    }
    assert str(caught.value) == expected[mode]
    _victim_untouched(tmp_path)


def test_a_linked_target_that_leads_out_of_the_project_is_refused(tree, tmp_path, mode):
    (tree / "specs" / "out.json").symlink_to(tmp_path / "outside" / "victim.sh")
    with pytest.raises(WriteRefused) as caught:
        write_file("specs/out.json", "{}\n")
    victim = (tmp_path / "outside" / "victim.sh").resolve()
    expected = {
        "dir_fd": f"specs/out.json: not written: it is a symbolic link to {victim}, "
        f"outside {tree.resolve()}",
        "paths": f"specs/out.json: not written: it leads to {victim}, outside {tree.resolve()}",
    }
    assert str(caught.value) == expected[mode]
    _victim_untouched(tmp_path)


def test_a_dangling_link_out_of_the_project_is_refused(tree, tmp_path, mode):
    (tree / "specs" / "new.json").symlink_to(tmp_path / "outside" / "planted.json")
    with pytest.raises(WriteRefused):
        write_file("specs/new.json", "{}\n")
    _victim_untouched(tmp_path)


def test_links_inside_the_project_are_written_through(tree, mode):
    (tree / "shared").mkdir()
    (tree / "shared" / "gemm.yaml").write_text("old\n")
    (tree / "specs" / "cases").symlink_to("../shared")
    (tree / "specs" / "alias.yaml").symlink_to("cases/gemm.yaml")  # a link to a link
    write_file("specs/alias.yaml", "new\n")
    assert (tree / "shared" / "gemm.yaml").read_text() == "new\n"
    assert os.readlink(tree / "specs" / "alias.yaml") == "cases/gemm.yaml"
    assert os.readlink(tree / "specs" / "cases") == "../shared"
    write_file("specs/cases/fresh/new.yaml", "made\n")  # folders made through the link
    assert (tree / "shared" / "fresh" / "new.yaml").read_text() == "made\n"


def test_a_folder_and_a_fifo_are_not_replaced(tree, mode):
    (tree / "specs" / "site").mkdir()
    with pytest.raises(WriteRefused) as caught:
        write_file("specs/site", "x")
    assert str(caught.value) == "specs/site: not written: it is a folder"
    os.mkfifo(tree / "specs" / "pipe")
    with pytest.raises(WriteRefused) as caught:
        write_file("specs/pipe", "x")
    assert str(caught.value) == "specs/pipe: not written: it is not a regular file"
    assert stat.S_ISFIFO(os.lstat(tree / "specs" / "pipe").st_mode)


def test_a_file_on_the_way_is_not_a_folder(tree):
    (tree / "specs" / "notes").write_text("text\n")
    with pytest.raises(WriteRefused) as caught:
        write_file("specs/notes/a.json", "{}")
    assert str(caught.value) == "specs/notes/a.json: not written: specs/notes is not a folder"


def test_a_link_loop_is_refused(tree, mode):
    (tree / "specs" / "a").symlink_to("b")
    (tree / "specs" / "b").symlink_to("a")
    with pytest.raises(WriteRefused) as caught:
        write_file("specs/a", "x")
    reason = {"dir_fd": "too many symbolic links on its way", "paths": "it is not a regular file"}
    assert str(caught.value) == f"specs/a: not written: {reason[mode]}"
    assert os.readlink(tree / "specs" / "a") == "b"


def test_a_folder_swapped_for_a_link_after_the_check_is_not_followed(tree, tmp_path, monkeypatch):
    """The walk sees a real folder, then an attacker swaps in a link before it is
    opened: O_NOFOLLOW makes the open fail, and nothing reaches the victim."""
    (tree / "specs" / "cases").mkdir()
    real_stat = os.stat(tree / "specs" / "cases")
    looked = files._lstat

    def swap_after_look(name: str, fd: int) -> os.stat_result | None:
        if name == "cases":
            os.rmdir(tree / "specs" / "cases")
            (tree / "specs" / "cases").symlink_to(tmp_path / "outside")
            return real_stat
        return looked(name, fd)

    monkeypatch.setattr(files, "_lstat", swap_after_look)
    with pytest.raises(OSError):
        write_file("specs/cases/victim.sh", "pwned\n")
    _victim_untouched(tmp_path)


def test_an_explicit_root_confines_the_write(tree, tmp_path, mode):
    stage = tmp_path / "stage"
    with pytest.raises(WriteRefused) as caught:
        write_file(stage / ".." / "outside" / "victim.sh", "x", root=stage)
    assert str(caught.value) == f"{stage}/../outside/victim.sh: not written: it is outside {stage}"
    _victim_untouched(tmp_path)
    write_file(stage / "docs" / "index.md", "# Home\n", root=stage)
    assert (stage / "docs" / "index.md").read_text() == "# Home\n"


# --------------------------------------------------------------------------- modes


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600)])
def test_a_new_file_gets_0o666_less_the_umask(tree, mode, umask, mask, expected):
    os.umask(mask)
    write_file("specs/new.yaml", "a: 1\n")
    assert _perm(tree / "specs" / "new.yaml") == expected


def test_a_replaced_file_keeps_its_mode(tree, mode, umask):
    path = tree / "specs" / "case.yaml"
    path.write_text("a: 1\n")
    path.chmod(0o640)
    write_file(path, "a: 2\n")
    assert (path.read_text(), _perm(path)) == ("a: 2\n", 0o640)


def test_cache_entries_are_the_owners_alone(tree, mode, umask):
    """Files 0o600 and the folders made for them 0o700, even under umask 0o022;
    an entry replaced is 0o600 whatever it was."""
    entry = tree / ".roofgen-cache" / "charts" / "svg" / "abc.svg"
    write_cache_entry(entry, "<svg/>")
    assert _perm(entry) == 0o600
    for folder in (entry.parent, entry.parent.parent, tree / ".roofgen-cache"):
        assert _perm(folder) == 0o700, folder
    entry.chmod(0o644)
    write_cache_entry(entry, "<svg></svg>")
    assert (entry.read_text(), _perm(entry)) == ("<svg></svg>", 0o600)


def test_a_cache_entry_that_would_leave_the_project_is_skipped(tree, tmp_path, mode):
    (tree / ".roofgen-cache").symlink_to(tmp_path / "outside")
    write_cache_entry(tree / ".roofgen-cache" / "victim.sh", "cached")  # no error: skipped
    _victim_untouched(tmp_path)


# --------------------------------------------------------------------------- the root


def test_the_root_is_the_settings_folder_else_the_current_one(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "specs" / "cases").mkdir(parents=True)
    monkeypatch.chdir(project / "specs")
    assert confinement("cases/a.yaml") == project / "specs"  # no settings file: here
    (project / "pyproject.toml").write_text("[tool.roofgen]\nspecs = ['specs']\n")
    assert confinement("cases/a.yaml") == project  # the settings file's folder
    assert confinement(project / "x.json") == project
    for other in ("[tool.black]\n", "tool = 1\n", "[tool\n"):  # not roofgen's settings
        (project / "pyproject.toml").write_text(other)
        assert confinement("cases/a.yaml") == project / "specs"
    (project / "roofgen.toml").write_text("")
    assert confinement("cases/a.yaml") == project


def test_a_path_named_outside_the_project_is_confined_to_its_folder(tree, tmp_path):
    assert confinement(tmp_path / "reports" / "x.json") == tmp_path / "reports"
    assert confinement("../reports/x.json") == tmp_path / "reports"


def test_a_nested_project_reached_without_a_link_narrows_the_root(tree, tmp_path):
    clone = tree / "vendor" / "clone"
    (clone / "specs").mkdir(parents=True)
    (clone / "roofgen.toml").write_text("")
    assert confinement("vendor/clone/specs/a.yaml") == clone
    (tree / "linked").symlink_to(clone)  # through a link: no narrowing
    assert confinement("linked/specs/a.yaml") == tree


def test_a_clone_with_settings_cannot_write_through_its_links(tree, tmp_path):
    """A cloned repository inside the project is its own project: its committed link
    to a folder of the outer project is refused as well."""
    clone = tree / "clone"
    (clone / "specs").mkdir(parents=True)
    (clone / "roofgen.toml").write_text("")
    (tree / "private").mkdir()
    (clone / "specs" / "cases").symlink_to(tree / "private")
    with pytest.raises(WriteRefused) as caught:
        write_file("clone/specs/cases/a.yaml", "x")
    assert str(caught.value) == (
        f"clone/specs/cases/a.yaml: not written: specs/cases is a symbolic link to "
        f"{(tree / 'private').resolve()}, outside {clone.resolve()}"
    )


# --------------------------------------------------------------------------- layout


def test_lf_text_reads_every_line_ending_as_yaml_does():
    assert lf_text(b"\xef\xbb\xbfa: 1\r\nb: 2\rc: 3\n") == "a: 1\nb: 2\nc: 3\n"


LAYOUT = [
    # (the file's bytes, the edit's LF text, the bytes written), computed by hand
    pytest.param(
        b"a: 1\r\nb: 2\nc: 3\r\n",
        "a: 9\nb: 2\nc: 3\nd: 4\n",
        b"a: 9\r\nb: 2\nc: 3\r\nd: 4\r\n",
        id="mixed-crlf-dominant",
    ),
    pytest.param(
        b"a: 1\nb: 2\r\nc: 3\n",
        "a: 1\nb: 2\nnew: 0\nc: 3\n",
        b"a: 1\nb: 2\r\nnew: 0\nc: 3\n",
        id="mixed-lf-dominant",
    ),
    pytest.param(
        b"a: 1\nb: 2\r\n", "a: 1\nb: 2\nc: 3\n", b"a: 1\nb: 2\r\nc: 3\n", id="tie-first-wins"
    ),
    pytest.param(b"a: 1\rb: 2\r", "a: 1\nb: 3\nc: 4\n", b"a: 1\rb: 3\rc: 4\r", id="cr-only"),
    pytest.param(b"\xef\xbb\xbfa: 1\r\n", "a: 2\n", b"\xef\xbb\xbfa: 2\r\n", id="bom-kept"),
    pytest.param(b"a: 1\nb: 2", "a: 1\nb: 3\n", b"a: 1\nb: 3", id="no-final-newline"),
    pytest.param(b"a: 1", "a: 1\nb: 2\n", b"a: 1\nb: 2\n", id="lines-after-an-unended-one"),
    pytest.param(b"", "a: 1\n", b"a: 1\n", id="empty"),
]


@pytest.mark.parametrize(("original", "edited", "written"), LAYOUT)
def test_an_edit_keeps_the_files_layout(original, edited, written):
    assert keep_layout(original, edited) == written
    assert lf_text(written).rstrip("\n") == edited.rstrip("\n")


def test_chunks_are_written_in_order_and_a_failing_producer_leaves_the_old_file(
    tmp_path: Path, mode: str
) -> None:
    target = tmp_path / "out.json"
    write_file(target, iter(["[1,", "2,", "3]"]), root=tmp_path)
    assert target.read_bytes() == b"[1,2,3]"

    def failing():
        yield "[4,"
        raise RuntimeError("the analysis failed half-way")

    with pytest.raises(RuntimeError):
        write_file(target, failing(), root=tmp_path)
    assert target.read_bytes() == b"[1,2,3]"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]
