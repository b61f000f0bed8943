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
from hypothesis import event, given
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
        limit = options[options.index("--fail-on-regression") + 1] if len(options) > 2 else "5"
        if limit in ("-1", "nan", "1e999"):  # no limit: a usage error, before any input
            assert_handled(outcome, [], statuses=(2,), whole_input=(_LIMIT_ERROR,))
            assert "write a finite number of percent" in outcome.err, outcome.describe()
        else:
            assert_handled(outcome, ["specs"], statuses=(0, 1, 3), whole_input=("git:",))


_LIMIT_ERROR = "Error: Invalid value for '--fail-on-regression'"
TIME = b"time: {median: 1.1 ms, q1: 1.09 ms, q3: 1.12 ms, warmup: 10, repeats: 100}"
#: Ids a pull request may rename to: valid ones, and some no spec may hold (upper case,
#: a space, empty, a slash), which make the head invalid (exit 1), never a pass.
NEW_IDS = ["baseline2", "b", "base.v2", "x" * 64, "Base", "a b", "", "a/b", "base-"]
FOLDERS = ["perf", "bench/specs", "specs2", ".specs", "s p"]


def _moved(draw: st.DrawFn, head: dict[str, bytes], settings: list[str]) -> dict[str, bytes]:
    folder = draw(st.sampled_from(FOLDERS))
    settings.append(f"specs = [{folder!r}]".replace("'", '"'))
    return {path.replace("specs/", folder + "/", 1): data for path, data in head.items()}


def _renamed(draw: st.DrawFn, head: dict[str, bytes], what: str) -> dict[str, bytes]:
    new = draw(st.sampled_from(NEW_IDS)).encode()
    case = head["specs/case.yaml"]
    if what == "variant":
        case = case.replace(b"  - id: base\n", b"  - id: '" + new + b"'\n")
    else:
        case = case.replace(b"{id: low,", b"{id: '" + new + b"',")
        case = case.replace(b"kernel: low\n", b"kernel: '" + new + b"'\n")
    return {**head, "specs/case.yaml": case}


BYPASSES = ["move", "rename-variant", "rename-kernel", "no-intervals", "widen", "settings",
            "machine"]  # fmt: skip


@st.composite
def bypass_example(draw: st.DrawFn) -> tuple[dict[str, bytes], dict[str, bytes], float, str]:
    """(base files, head files, the gate's limit in percent, the bypasses drawn): the
    head slows the kernel beyond the limit and tries one to three ways around the gate."""
    base = {f"specs/{p.name}": p.read_bytes() for p in sorted(MINIMAL.iterdir())}
    factor = draw(st.sampled_from([1.5, 2.0, 3.87, 10.0]))  # 3.87: 287% slower
    limit = draw(st.sampled_from([0.0, 5.0, 20.0, 40.0]))
    median = 1.1 * factor
    tight = f"time: {{median: {median:.4g} ms, q1: {median * 0.99:.4g} ms, " \
            f"q3: {median * 1.01:.4g} ms, warmup: 10, repeats: 100}}"  # fmt: skip
    chosen = draw(st.lists(st.sampled_from(BYPASSES), min_size=1, max_size=3, unique=True))
    times = {"no-intervals": f"time: {{median: {median:.4g} ms, warmup: 10, repeats: 100}}",
             # head half to one and a half times its median: it overlaps the base (for a
             # factor up to 2) only because it is wide.
             "widen": f"time: {{median: {median:.4g} ms, q1: {median * 0.5:.4g} ms, "
                      f"q3: {median * 1.5:.4g} ms, warmup: 10, repeats: 100}}"}  # fmt: skip
    time = next((times[b] for b in chosen if b in times), tight)
    head = {**base, "specs/case.yaml": base["specs/case.yaml"].replace(TIME, time.encode())}
    settings: list[str] = []
    for bypass in chosen:
        if bypass.startswith("rename-"):
            head = _renamed(draw, head, bypass.removeprefix("rename-"))
        elif bypass == "machine":
            machine = head["specs/machine.yaml"]
            head["specs/machine.yaml"] = machine.replace(b"1.5 TB/s", b"3 TB/s")
        elif bypass == "settings":
            settings.append("[thresholds]\nbelow_roofs_efficiency = 0.9")
    if "move" in chosen:
        head = _moved(draw, head, settings)
    if settings:
        head["roofgen.toml"] = ("\n".join(settings) + "\n").encode()
    return base, head, limit, "+".join(chosen)


def _commit_files(repo: Path, files: dict[str, bytes], message: str) -> None:
    """Make the working tree hold exactly ``files`` (and .git), then commit it."""
    for child in repo.iterdir():
        if child.name != ".git":
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    for path, data in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_bytes(data)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


@fuzz_settings(ci=15)
@given(example=bypass_example())
def test_no_bypass_passes_the_gate(example: tuple[dict[str, bytes], dict[str, bytes],
                                                  float, str], scratch: Path) -> None:  # fmt: skip
    """Whatever way around the gate a pull request takes along with a slowdown beyond
    the limit, the gate fails (3), or the head is invalid (1); never 0 or 4."""
    base, head, limit, chosen = example
    event(f"bypass {chosen}")
    with workdir(scratch) as repo:
        git(repo, "init", "-q")
        _commit_files(repo, base, "base")
        _commit_files(repo, head, "head")
        for fmt in ("markdown", "json"):
            outcome = run_roofgen(["diff", "git:HEAD~1", "git:HEAD", "--fail-on-regression",
                                   f"{limit:g}", "--format", fmt], repo)  # fmt: skip
            assert_handled(outcome, ["specs", "perf", "bench", "specs2", ".specs", "s p"],
                           statuses=(1, 3), whole_input=("git:",))  # fmt: skip
            if outcome.status == 3:
                assert "the gate fails at git:HEAD" in outcome.err, outcome.describe()


def test_the_unmutated_repository_diffs(scratch: Path) -> None:
    """Both revisions of an untouched repository compare (a check on the fuzzer)."""
    with repository(scratch, base_entries(), "specs") as repo:
        outcome = run_roofgen(["diff", "git:HEAD~1", "git:HEAD", "--format", "text"], repo)
        assert outcome.status == 0, outcome.describe()
        assert "No kernel changed" in outcome.err + outcome.out, outcome.describe()
