"""Fuzzing `roofgen diff` in a child process under CPU-time and memory limits (the
runner and the oracle: tests/fuzzcli.py).

Each example is a small git repository whose first commit holds valid specs
(tests/cases/valid/minimal) and whose second commit's ``specs`` tree is built with
git's plumbing, so that it can hold what no checkout could: spec files with flipped,
cut or re-encoded bytes, links (to files outside, to a huge target), a 9 MiB blob,
blobs missing from the object database, submodule entries, names with line breaks,
control characters, 300 characters, '..' or a repeated name, an executable mode, a
folder named like a spec file, or no specs folder at all. ``diff`` then compares
the two revisions, a revision and the working tree, or a revision that is no
commit at all, in every report format, with and without the regression gate.

Whatever the repository, ``diff`` exits 0, 1 or 3 (a regression), prints no
traceback, stays inside the limits, and a failure names the revision or the spec
file it is about. With ``CI=true`` the examples are few and always the same;
locally they are three times as many and new on each run. A long run:
``HYPOTHESIS_PROFILE=fuzz`` (fifty times the CI count) or ``ROOFGEN_FUZZ_EXAMPLES=200``
(200 examples), e.g.

    ROOFGEN_FUZZ_EXAMPLES=200 .venv/bin/python -m pytest tests/test_fuzz_cli_diff.py
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from fuzzcli import (
    FUZZ_TIMEOUT_S,
    VALID,
    Blob,
    assert_handled,
    fuzz_settings,
    mutated_bytes,
    run_roofgen,
    workdir,
)
from hypothesis import given
from hypothesis import strategies as st

# Each test runs a child process per example: seconds to minutes, so out of the quick loop.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(FUZZ_TIMEOUT_S)]

MINIMAL = VALID / "minimal"
IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false")
MISSING = "1234567890abcdef1234567890abcdef12345678"  # an object no repository holds
YAML_TOKENS = [":", "[", "]", "{", "}", "&a ", "*a", "\t", "- ", "'", '"', "#", "\x00", "~"]
ODD_NAMES = [
    "a\nb.yaml", "-rf.yaml", "\u00e9.yaml", "e\u0301.yaml", "..", ".", "x" * 300 + ".yaml",
    "CON.yaml", "a\\b.yaml", " .yaml", ".yaml", "X.YAML", "x.yml", "\u202egnp.yaml",
    "x:y.yaml", "\x1b[31m.yaml", "*.yaml", "case.yaml",
]  # fmt: skip
LINK_TARGETS = ["/etc/passwd", "../../.git/config", "case.yaml", "x" * 4000, ".", "/dev/zero"]
REVISIONS = [
    "HEAD", "HEAD~1", "HEAD~99", "HEAD^{tree}", "HEAD:specs", "HEAD:specs/case.yaml",
    MISSING, "@{-1}", "refs/heads/../../x", "--help", "a" * 300, "\x1b[31m", "",
    "HEAD@{0}", "main", "v1",
]  # fmt: skip


@dataclass
class Entry:
    """One entry of a tree built with ``git mktree``: mode, object type, object, name;
    or, for a folder, its entries (``children``)."""

    mode: str
    kind: str
    name: str
    data: bytes = b""
    object: str = ""
    children: list[Entry] = field(default_factory=list)


def git(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    run = subprocess.run(["git", *IDENTITY, *args], cwd=repo, input=stdin,
                         capture_output=True, check=True)  # fmt: skip
    return run.stdout.decode().strip()


def write_tree(repo: Path, entries: list[Entry]) -> str:
    """The tree object of ``entries`` (nested folders too); blobs are written first."""
    records = []
    for entry in entries:
        if entry.kind == "tree":
            entry.object = write_tree(repo, entry.children)
        elif entry.kind == "blob" and not entry.object:
            entry.object = git(repo, "hash-object", "-w", "--stdin", stdin=entry.data)
        records.append(f"{entry.mode} {entry.kind} {entry.object}\t".encode() +
                       entry.name.encode("utf-8", "surrogateescape") + b"\0")  # fmt: skip
    return git(repo, "mktree", "-z", "--missing", stdin=b"".join(records))


def base_entries() -> list[Entry]:
    return [
        Entry("100644", "blob", p.name, Blob(p.read_bytes())) for p in sorted(MINIMAL.iterdir())
    ]


def _mutate(draw: st.DrawFn, entries: list[Entry]) -> None:
    blobs = [e for e in entries if e.kind == "blob" and e.data]
    if blobs:
        entry = draw(st.sampled_from(blobs))
        entry.data, entry.object = draw(mutated_bytes(entry.data, YAML_TOKENS)), ""


def _link(draw: st.DrawFn, entries: list[Entry]) -> None:
    target = draw(st.sampled_from(LINK_TARGETS)).encode()
    entries.append(Entry("120000", "blob", draw(st.sampled_from(["l.yaml", "l"])), target))


def _odd_name(draw: st.DrawFn, entries: list[Entry]) -> None:
    name = draw(st.sampled_from(ODD_NAMES))
    entries.append(Entry("100644", "blob", name, Blob((MINIMAL / "case.yaml").read_bytes())))


def _remove(draw: st.DrawFn, entries: list[Entry]) -> None:
    if entries:
        entries.remove(draw(st.sampled_from(entries)))


def _folder(draw: st.DrawFn, entries: list[Entry]) -> None:
    inner = [Entry("100644", "blob", "k.yaml", draw(st.binary(max_size=64)))]
    name = draw(st.sampled_from(["x.yaml", ".hidden", "sub"]))
    entries.append(Entry("040000", "tree", name, children=inner))


def _duplicate(draw: st.DrawFn, entries: list[Entry]) -> None:
    if entries:
        first = entries[0]
        entries.append(Entry(first.mode, first.kind, first.name, Blob(first.data + b"\n# again\n"),
                             children=first.children))  # fmt: skip


def _executable(draw: st.DrawFn, entries: list[Entry]) -> None:
    if entries and entries[0].kind == "blob":
        entries[0].mode = "100755"


CHANGES = {
    "mutate": _mutate,
    "link": _link,
    "odd-name": _odd_name,
    "missing": lambda draw, entries: entries.append(
        Entry("100644", "blob", "gone.yaml", object=MISSING)
    ),
    "remove": _remove,
    "submodule": lambda draw, entries: entries.append(
        Entry("160000", "commit", "sub.yaml", object=MISSING)
    ),
    "folder": _folder,
    "executable": _executable,
    "duplicate": _duplicate,
    "huge": lambda draw, entries: entries.append(
        Entry("100644", "blob", "big.yaml", Blob(b"# " + b"x" * (9 << 20) + b"\n"))
    ),
}


@st.composite
def hostile_specs(draw: st.DrawFn) -> list[Entry]:
    """The minimal specs with one to three hostile changes (:data:`CHANGES`)."""
    entries = base_entries()
    for _ in range(draw(st.integers(1, 3))):
        CHANGES[draw(st.sampled_from(sorted(CHANGES)))](draw, entries)
    return entries


@st.composite
def diff_example(draw: st.DrawFn) -> tuple[list[Entry], str, list[str], list[str]]:
    """(the hostile specs tree, where it goes, BASE and HEAD, options)."""
    entries = draw(hostile_specs())
    where = draw(st.sampled_from(["specs", "root-blob", "no-specs"]))
    sides = draw(st.sampled_from([
        ["git:HEAD~1", "git:HEAD"], ["git:HEAD", "git:HEAD~1"], ["git:HEAD", "specs"],
        ["specs", "git:HEAD"], None,
    ]))  # fmt: skip
    if sides is None:
        sides = ["git:" + draw(st.sampled_from(REVISIONS)), "git:HEAD"]
    options = ["--format", draw(st.sampled_from(["markdown", "json", "text"]))]
    if draw(st.booleans()):
        options += ["--fail-on-regression", draw(st.sampled_from(["5", "0", "-1", "nan", "1e999"]))]
    return entries, where, sides, options


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-diff")


@contextmanager
def repository(scratch: Path, entries: list[Entry], where: str) -> Iterator[Path]:
    """A repository: the minimal specs committed, then ``entries`` as the specs tree
    (``where``: in ``specs``, or ``specs`` a file, or no specs folder); the working
    tree keeps the minimal specs."""
    with workdir(scratch) as repo:
        shutil.copytree(MINIMAL, repo / "specs")
        git(repo, "init", "-q")
        git(repo, "add", "specs")
        git(repo, "commit", "-qm", "base")
        git(repo, "tag", "v1")
        if where == "specs":
            root = [Entry("040000", "tree", "specs", children=entries)]
        elif where == "root-blob":
            root = [Entry("100644", "blob", "specs", b"roofgen: 1\n")]
        else:
            root = [Entry("100644", "blob", "README", b"no specs here\n")]
        commit = git(repo, "commit-tree", write_tree(repo, root), "-p", "HEAD", "-m", "hostile")
        git(repo, "update-ref", "HEAD", commit)
        yield repo


@fuzz_settings(ci=20)
@given(example=diff_example())
def test_diff(example: tuple[list[Entry], str, list[str], list[str]], scratch: Path) -> None:
    entries, where, sides, options = example
    with repository(scratch, entries, where) as repo:
        outcome = run_roofgen(["diff", *sides, *options], repo)
        assert_handled(outcome, ["specs"], statuses=(0, 1, 3), whole_input=("git:",))


def test_the_unmutated_repository_diffs(scratch: Path) -> None:
    """Both revisions of an untouched repository compare (a check on the fuzzer)."""
    with repository(scratch, base_entries(), "specs") as repo:
        outcome = run_roofgen(["diff", "git:HEAD~1", "git:HEAD", "--format", "text"], repo)
        assert outcome.status == 0, outcome.describe()
        assert "No kernel changed" in outcome.err + outcome.out, outcome.describe()
