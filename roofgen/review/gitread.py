"""A revision's spec files read straight from git's object database.

``roofgen diff git:REV`` compares the specs as they were at a revision without
touching the working tree. ``git archive`` is not used: it honours ``.gitattributes``
(an ``export-ignore`` line would hide a case, and its regression with it) and reads
a whole revision before any size is known. Instead the spec files are listed with
``git ls-tree -r -z -l`` (names, modes and sizes) and read with one
``git cat-file --batch``, after every check: only regular files with a spec suffix,
outside dot-folders (as :func:`roofgen.spec.load.discover` reads a folder), no link,
no name that climbs out of the folder, none larger than a spec file may be. A
revision that cannot be read completely is an error with git's own message, never
a smaller set of specs.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from roofgen.files import write_file
from roofgen.spec.load import SPEC_SUFFIXES
from roofgen.spec.yamlload import MAX_FILE_BYTES

__all__ = [
    "MAX_FILES",
    "Change",
    "GitReadError",
    "LogCommit",
    "TreeEntry",
    "commits_since",
    "export",
    "file_at",
    "first_parent_log",
    "is_shallow",
    "read_blobs",
    "resolve",
    "toplevel",
]

MAX_FILES = 20_000  # spec files read from one revision
MAX_REVISION_BYTES = 256 * 1024 * 1024  # all of them together
_REV = re.compile(r"^[A-Za-z0-9._/@{}^~:+-]{1,256}$")
_REGULAR = ("100644", "100755")
_LINK = "120000"


class GitReadError(Exception):
    """A revision or its spec files cannot be read; the message says why."""


@dataclass(frozen=True)
class TreeEntry:
    """One file of a revision's tree: mode, object name, size in bytes, path."""

    mode: str
    object: str
    size: int
    path: str


def _git(root: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", "-C", str(root), *args], input=stdin, capture_output=True, check=False
        )
    except OSError as exc:  # no git on the PATH
        raise GitReadError(f"cannot run git: {exc.strerror or exc}") from None


def _said(run: subprocess.CompletedProcess[bytes]) -> str:
    text = run.stderr.decode("utf-8", "replace").strip() or f"git exited with {run.returncode}"
    return " ".join(text.split())[:500]


def toplevel(root: Path) -> Path:
    """The work tree of the git repository holding ``root``."""
    top = _git(root, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise GitReadError(f"{root} is not inside a git repository")
    return Path(top.stdout.decode().strip())


def resolve(top: Path, rev: str) -> str:
    """The commit ``rev`` names, as a full object name.

    ``rev`` is checked before git sees it (a revision, not an option or a command);
    an unknown one says how to fetch it without echoing it as a command to paste."""
    if not _REV.match(rev) or rev.startswith("-") or ".." in rev:
        raise GitReadError(
            "not a revision roofgen reads: write a commit, branch or tag name "
            "(letters, digits and ._/@{}^~:+-, not starting with '-', no '..')"
        )
    found = _git(top, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    if found.returncode == 0:
        return found.stdout.decode().strip()
    hint = SHALLOW_HINT if is_shallow(top) else _hint(top, rev)
    raise GitReadError(f"no such revision in this repository; {hint}")


def _names(top: Path, *args: str) -> list[str]:
    """Names git lists one a line, only those a revision may be (printed safely)."""
    run = _git(top, *args)
    if run.returncode != 0:
        return []
    names = run.stdout.decode("utf-8", "replace").split()
    return [n for n in names if _REV.match(n) and not n.startswith("-")]


def _listed(names: list[str], most: int = 5) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def _hint(top: Path, rev: str) -> str:
    """What to do about an unknown revision, from the repository as it is: its remotes,
    its branches, the other usual default branch name (``main`` or ``master``)."""
    remotes = _names(top, "remote")
    branches = _names(top, "for-each-ref", "--format=%(refname:short)", "refs/heads/")
    tracked = _names(top, "for-each-ref", "--format=%(refname:short)", "refs/remotes/")
    remote, slash, rest = rev.partition("/")
    branch = rest if slash and remote == "origin" else rev
    hints = []
    other = {"main": "master", "master": "main"}.get(branch)
    found = [t for t in tracked if t.endswith("/" + other)] if other else []
    if other is not None and other in branches:
        hints.append(f"this repository's branch is {other}: write git:{other}")
    elif found:
        hints.append(f"this repository's branch is {found[0]}: write git:{found[0]}")
    if not remotes:
        if remote == "origin" and slash:
            hints.append("there is no remote named origin")
        hints.append("this repository has no remote to fetch it from"
                     + (f" (its branches: {_listed(branches)})" if branches else ""))  # fmt: skip
        return "; ".join(hints)
    if "origin" not in remotes:
        hints.append(f"there is no remote named origin (remotes here: {_listed(remotes)})")
    hints.append("to fetch it, `git fetch REMOTE BRANCH` from the remote that has it")
    return "; ".join(hints)


def _entries(top: Path, commit: str, folder: str) -> list[TreeEntry]:
    listed = _git(top, "ls-tree", "-r", "-z", "-l", "--full-tree", commit, "--", folder)
    if listed.returncode != 0:
        raise GitReadError(f"cannot list {folder}: {_said(listed)}")
    out = []
    for record in listed.stdout.split(b"\0"):
        if not record:
            continue
        meta, _, raw = record.partition(b"\t")
        mode, kind, obj, size = meta.decode("ascii", "replace").split()
        path = raw.decode("utf-8", "surrogateescape")
        out.append(TreeEntry(mode, obj, int(size) if size.isdigit() else -1, path))
        if kind not in ("blob", "commit"):
            raise GitReadError(f"{path}: unexpected {kind} object in the tree")
    return out


def _wanted(entry: TreeEntry, folder: str) -> bool:
    """Whether the loader would read this file from a checkout of the folder: a spec
    suffix, outside folders whose names start with a dot. Refuses what it must not
    read: links, submodules, unsafe or oversized names and files."""
    rel = PurePosixPath(entry.path).relative_to(folder) if folder != "." else None
    parts = PurePosixPath(entry.path).parts
    if any(p in ("", ".", "..") or "\\" in p for p in parts) or entry.path.startswith("/"):
        raise GitReadError(f"{entry.path!r}: a name that is not a plain path; refusing the tree")
    inside = (rel or PurePosixPath(entry.path)).parts
    if any(p.startswith(".") for p in inside[:-1]) or not entry.path.endswith(SPEC_SUFFIXES):
        return False
    if entry.mode == _LINK:
        raise GitReadError(f"{entry.path}: a symbolic link; roofgen reads spec files, not links")
    if entry.mode not in _REGULAR:
        raise GitReadError(f"{entry.path}: not a regular file (mode {entry.mode})")
    if entry.size > MAX_FILE_BYTES:
        raise GitReadError(
            f"{entry.path}: {entry.size:,} bytes; a spec file holds at most "
            f"{MAX_FILE_BYTES // (1024 * 1024)} MiB"
        )
    return True


def _read(top: Path, entries: list[TreeEntry]) -> list[bytes]:
    """The contents of ``entries``' blobs, through one ``git cat-file --batch``."""
    blobs = read_blobs(top, [e.object for e in entries], [e.path for e in entries])
    return [blobs[e.object] for e in entries]


def read_blobs(top: Path, objects: list[str], names: list[str] | None = None) -> dict[str, bytes]:
    """The contents of blobs ``objects`` (full object names) by name, through one
    ``git cat-file --batch``; ``names`` say which file each is, for messages."""
    if not objects:
        return {}
    asked = "".join(f"{o}\n" for o in objects).encode()
    batch = _git(top, "cat-file", "--batch", stdin=asked)
    if batch.returncode != 0:
        raise GitReadError(f"cannot read the spec files: {_said(batch)}")
    data, at, out = batch.stdout, 0, {}
    for i, obj in enumerate(objects):
        end = data.find(b"\n", at)
        header = data[at:end].decode("ascii", "replace").split()
        if len(header) != 3 or header[1] != "blob" or end < 0:
            name = names[i] if names is not None else obj
            raise GitReadError(
                f"{name}: object {obj} cannot be read "
                f"(git says: {' '.join(header[1:]) or 'nothing'})"
            )
        size = int(header[2])
        out[obj] = data[end + 1 : end + 1 + size]
        at = end + 1 + size + 1
    return out


def is_shallow(top: Path) -> bool:
    """Whether the repository is a shallow clone (its history cut short)."""
    return _git(top, "rev-parse", "--is-shallow-repository").stdout.strip() == b"true"


SHALLOW_HINT = (
    "this is a shallow clone: fetch the history with `git fetch --unshallow` "
    "(in CI, check out with fetch-depth: 0)"
)


@dataclass(frozen=True)
class Change:
    """One file a commit changed: its path and its new blob and mode (None: deleted)."""

    path: str
    object: str | None
    mode: str


@dataclass(frozen=True)
class LogCommit:
    """One commit of ``git log --first-parent``: full name, committer time (seconds
    since the epoch, UTC), subject as git stores it, and the files it changed."""

    sha: str
    time: int
    subject: str
    changes: tuple[Change, ...]


_NULL = "0" * 40


def first_parent_log(top: Path, folders: list[str]) -> list[LogCommit]:
    """Every commit on HEAD's first-parent line that changed a file under ``folders``
    (paths relative to ``top``), oldest first, with the files it changed: one
    ``git log --first-parent --raw -z --no-abbrev``. Merges are compared with their
    first parent, renames are a deletion and an addition."""
    run = _git(
        top, "log", "--first-parent", "--raw", "-z", "--no-abbrev", "--no-renames",
        "--diff-merges=first-parent", "--reverse", "--no-color", "--format=%x01%H %ct %s",
        "HEAD", "--", *folders,
    )  # fmt: skip
    if run.returncode != 0:
        raise GitReadError(f"cannot read the history: {_said(run)}")
    commits: list[LogCommit] = []
    tokens = iter(run.stdout.split(b"\0"))
    head: list[str] | None = None
    changes: list[Change] = []
    for raw in tokens:
        token = raw.lstrip(b"\n")
        if token.startswith(b"\x01"):
            if head is not None:
                commits.append(_commit(head, changes))
            head = token[1:].decode("utf-8", "replace").split(" ", 2)
            changes = []
        elif token.startswith(b":") and head is not None:
            meta = token[1:].decode("ascii", "replace").split()
            path = next(tokens, b"").decode("utf-8", "surrogateescape")
            if len(meta) != 5 or not path:
                raise GitReadError("cannot read the history: unexpected output from git log")
            obj = None if meta[4] == "D" or meta[3] == _NULL else meta[3]
            changes.append(Change(path, obj, meta[1]))
        elif token:
            raise GitReadError("cannot read the history: unexpected output from git log")
    if head is not None:
        commits.append(_commit(head, changes))
    return commits


def _commit(head: list[str], changes: list[Change]) -> LogCommit:
    if len(head) < 2 or not head[1].isdigit():
        raise GitReadError("cannot read the history: unexpected output from git log")
    return LogCommit(head[0], int(head[1]), head[2] if len(head) > 2 else "", tuple(changes))


def commits_since(top: Path, rev: str, folders: list[str]) -> set[str]:
    """The commits after ``rev`` on HEAD's first-parent line that changed ``folders``."""
    base = resolve(top, rev)
    run = _git(top, "rev-list", "--first-parent", f"{base}..HEAD", "--", *folders)
    if run.returncode != 0:
        raise GitReadError(f"cannot read the history: {_said(run)}")
    return set(run.stdout.decode().split())


def export(top: Path, commit: str, folders: list[str], dest: Path) -> list[Path]:
    """Write the spec files of ``folders`` (paths relative to ``top``) as of ``commit``
    into ``dest``; the folders that exist at that commit, under ``dest``."""
    found: list[Path] = []
    for folder in folders:
        exists = _git(top, "cat-file", "-e", f"{commit}:{folder}" if folder != "." else commit)
        if exists.returncode != 0:
            continue  # not there at that revision: that side has no such specs
        entries = [e for e in _entries(top, commit, folder) if _wanted(e, folder)]
        if len(entries) > MAX_FILES or sum(e.size for e in entries) > MAX_REVISION_BYTES:
            raise GitReadError(
                f"{folder}: {len(entries):,} spec files, {sum(e.size for e in entries):,} "
                f"bytes; roofgen reads at most {MAX_FILES:,} files and "
                f"{MAX_REVISION_BYTES // (1024 * 1024)} MiB from a revision"
            )
        for entry, data in zip(entries, _read(top, entries), strict=True):
            write_file(dest / entry.path, data, root=dest)
        (dest / folder).mkdir(parents=True, exist_ok=True)
        found.append(dest / folder)
    return found


MAX_SETTINGS_BYTES = 1024 * 1024  # a settings or rules file read from a revision


def file_at(top: Path, commit: str, path: str) -> bytes | None:
    """The content of the regular file ``path`` (relative to ``top``) as of ``commit``;
    None when there is no such file. A link or an oversized file there is an error:
    the gate's policy must not be read from where a pull request points it."""
    listed = _git(top, "ls-tree", "-z", "-l", "--full-tree", commit, "--", path)
    if listed.returncode != 0:
        raise GitReadError(f"cannot list {path}: {_said(listed)}")
    for record in listed.stdout.split(b"\0"):
        meta, _, raw = record.partition(b"\t")
        if raw.decode("utf-8", "surrogateescape") != path:
            continue
        mode, kind, obj, size = meta.decode("ascii", "replace").split()
        if kind == "tree":
            return None
        if mode == _LINK or mode not in _REGULAR:
            raise GitReadError(f"{path}: not a regular file (mode {mode}); refusing to read it")
        if not size.isdigit() or int(size) > MAX_SETTINGS_BYTES:
            raise GitReadError(f"{path}: {size} bytes; roofgen reads at most 1 MiB from it")
        return read_blobs(top, [obj], [path])[obj]
    return None
