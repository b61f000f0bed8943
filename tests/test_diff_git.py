"""`roofgen diff git:REV`: revisions read from git's objects, so nothing in a revision
(attributes, links, odd names, missing or huge objects, option-like refs) can hide a
case from the gate, make roofgen read outside the specs, or pass an unreadable revision."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from roofgen.cli import main

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"
TIME = "time: {median: 1.1 ms, q1: 1.09 ms, q3: 1.12 ms, warmup: 10, repeats: 100}"
# 1.1 ms -> 2.2 ms: twice as slow, quartiles far apart: a significant regression.
SLOWER = "time: {median: 2.2 ms, q1: 2.19 ms, q3: 2.21 ms, warmup: 10, repeats: 100}"
IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@t")


def _git(repo: Path, *args: str, stdin: str | None = None) -> str:
    run = subprocess.run(["git", *IDENTITY, *args], cwd=repo, input=stdin, text=True,
                         capture_output=True, check=True)  # fmt: skip
    return run.stdout.strip()


def _repo(tmp_path: Path) -> Path:
    """A repository whose first commit holds the minimal specs."""
    repo = tmp_path / "repo"
    shutil.copytree(MINIMAL, repo / "specs")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "specs")
    return repo


def _slower(repo: Path) -> None:
    case = repo / "specs" / "case.yaml"
    assert TIME in case.read_text()
    case.write_text(case.read_text().replace(TIME, SLOWER))
    _git(repo, "commit", "-qam", "slower")


def _diff(repo: Path, monkeypatch, capsys, *args: str) -> tuple[int, str]:
    monkeypatch.chdir(repo)
    status = main(["diff", *args])
    return status, capsys.readouterr().err


def test_a_regression_fails_the_gate(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path)
    _slower(repo)
    status, err = _diff(repo, monkeypatch, capsys, "git:HEAD~1", "git:HEAD",
                        "--fail-on-regression", "5")  # fmt: skip
    assert status == 3, err


def test_export_ignore_cannot_hide_a_case(tmp_path, monkeypatch, capsys):
    """`git archive` drops export-ignore files; reading objects does not."""
    repo = _repo(tmp_path)
    (repo / ".gitattributes").write_text("specs/case.yaml export-ignore\n")
    _git(repo, "add", ".gitattributes")
    _git(repo, "commit", "-qm", "attributes")
    _slower(repo)
    status, err = _diff(repo, monkeypatch, capsys, "git:HEAD~1", "git:HEAD",
                        "--fail-on-regression", "5")  # fmt: skip
    assert status == 3, err
    assert "pts" in err  # the case, named in the failure


def test_a_missing_object_is_an_error_not_a_removed_case(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path)
    blob = _git(repo, "rev-parse", "HEAD:specs/case.yaml")
    _slower(repo)
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # loose: never packed here
    status, err = _diff(repo, monkeypatch, capsys, "git:HEAD~1", "git:HEAD",
                        "--fail-on-regression", "5")  # fmt: skip
    assert status == 1, err
    assert "specs/case.yaml" in err and "cannot" in err


def test_a_removed_case_fails_the_gate_unless_allowed(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path)
    _git(repo, "rm", "-q", "specs/case.yaml")
    _git(repo, "commit", "-qm", "remove the case")
    status, err = _diff(repo, monkeypatch, capsys, "git:HEAD~1", "git:HEAD",
                        "--fail-on-regression", "5")  # fmt: skip
    assert status == 3 and "the gate fails at git:HEAD: pts: case removed" in err
    assert "--allow-removed pts" in err
    status, err = _diff(repo, monkeypatch, capsys, "git:HEAD~1", "git:HEAD",
                        "--fail-on-regression", "5", "--allow-removed", "pts")  # fmt: skip
    assert status == 0, err
    # The bare flag once allowed every removal: now a usage error saying what to write.
    status, err = _diff(repo, monkeypatch, capsys, "git:HEAD~1", "git:HEAD",
                        "--fail-on-regression", "5", "--allow-removed")  # fmt: skip
    assert status == 2 and "write --allow-removed CASE or CASE/VARIANT" in err, err
    status, err = _diff(repo, monkeypatch, capsys, "git:HEAD~1", "git:HEAD")
    assert status == 0, err  # without the gate a removal is reported, not failed


def test_a_link_in_a_revision_is_refused(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path)
    (repo / "specs" / "passwd.yaml").symlink_to("/etc/passwd")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "link")
    status, err = _diff(repo, monkeypatch, capsys, "git:HEAD", "specs")
    assert status == 1 and "specs/passwd.yaml: a symbolic link" in err


def test_an_oversized_file_is_refused_by_its_size(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path)
    big = repo / "specs" / "big.yaml"
    big.write_bytes(b"# " + b"x" * (9 * 1024 * 1024) + b"\n")  # 9 MiB: over the 8 MiB limit
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "big")
    status, err = _diff(repo, monkeypatch, capsys, "git:HEAD", "specs")
    assert status == 1 and "specs/big.yaml: 9,437,187 bytes" in err and "8 MiB" in err


def test_a_tree_entry_named_dot_dot_is_refused(tmp_path, monkeypatch, capsys):
    """A crafted tree (git mktree accepts it) whose specs folder holds a '..' entry."""
    repo = _repo(tmp_path)
    blob = _git(repo, "hash-object", "-w", "--stdin", stdin="roofgen: 1\n")
    inner = _git(repo, "mktree", stdin=f"100644 blob {blob}\tevil.yaml\n")
    specs = _git(repo, "rev-parse", "HEAD:specs")
    listing = _git(repo, "ls-tree", specs)
    crafted = _git(repo, "mktree", stdin=f"{listing}\n040000 tree {inner}\t..\n")
    root = _git(repo, "mktree", stdin=f"040000 tree {crafted}\tspecs\n")
    commit = _git(repo, "commit-tree", root, "-p", "HEAD", "-m", "crafted")
    status, err = _diff(repo, monkeypatch, capsys, f"git:{commit}", "specs")
    assert status == 1 and "not a plain path" in err


@pytest.mark.parametrize("rev", ["--output=/tmp/x", "HEAD..main", "a b", "x\ny", ""])
def test_a_revision_is_checked_before_git_sees_it(tmp_path, monkeypatch, capsys, rev):
    repo = _repo(tmp_path)
    status, err = _diff(repo, monkeypatch, capsys, f"git:{rev}", "specs")
    assert status == 1 and "not a revision roofgen reads" in err
    assert "\n" not in err.strip()  # one line: a newline in the ref is shown escaped
