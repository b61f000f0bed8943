"""Writing files: whole or not at all, and only inside the folder they belong in.

Every file roofgen writes goes through :func:`write_file`:

* **Confined.** The file and every folder on its way must really lie inside a root
  folder: the ``root`` a caller names, else :func:`confinement`'s. A symbolic link
  on the way that stays inside the root is followed (a linked case file is written
  through and stays a link); one that leads out of it is refused with
  :class:`WriteRefused`, and nothing is written.
* **Nothing swapped between the check and the write.** The folders are walked from
  the root with file descriptors, each opened ``O_DIRECTORY | O_NOFOLLOW`` relative to
  the one before; the temporary file is created ``O_CREAT | O_EXCL | O_NOFOLLOW`` under
  a random name in the target's folder (a name that exists, a planted link
  included, is never opened: another is drawn) and renamed over the target relative
  to the same folder descriptor. Where the platform lacks ``dir_fd`` or
  ``O_NOFOLLOW``, the same checks are made on resolved paths instead.
* **Whole.** A reader sees the old file or the whole new one, never a part.
* **Modes.** A new file gets ``0o666 & ~umask``, as an editor would give it; a file
  that is replaced keeps its permission bits; cache entries are the owner's alone
  (files 0o600, the folders made for them 0o700).

**The root** (:func:`confinement`). The project folder is the folder of the settings
file (``roofgen.toml``, or ``pyproject.toml`` with ``[tool.roofgen]``) that governs
the current folder, else the current folder; below it, the deepest folder on the
file's way that holds a settings file of its own, reached without a link, narrows
it (a cloned repository inside it is its own project). A file named lexically
outside the project (``-o /tmp/x.json``) was chosen by the user: it is confined to
its own folder, as written. A file under the project whose real path leaves it (a
committed ``specs/cases -> ~/.ssh``) is refused.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tomllib
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "WriteRefused", "confinement", "refusal", "write_atomic", "write_cache_entry", "write_file",
]  # fmt: skip

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | _BINARY
#: Whether folders can be walked by descriptor (Linux, macOS, the BSDs).
DIR_FD = bool(_NOFOLLOW and _DIRECTORY) and {os.open, os.stat, os.mkdir, os.rename, os.unlink} <= (
    os.supports_dir_fd
)
_MAX_LINKS = 40  # links followed on one file's way, as the kernel's own limit
_MAX_TRIES = 100  # temporary names drawn before giving up


class WriteRefused(OSError):
    """A file roofgen will not write: it, or a folder on its way, is a link that leads
    outside the folder it must stay in, or it is not a regular file. ``str()`` is the
    message for people, the file first."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(errno.EPERM, reason, str(path))
        self.path = str(path)
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: not written: {self.reason}"


def write_file(
    path: Path | str,
    data: str | bytes | Iterable[str],
    *,
    root: Path | str | None = None,
    private: bool = False,
) -> None:
    """Write ``data`` (text as UTF-8, newlines as given; or text chunks, written as they
    come, so that a long document is never whole in memory) to ``path``, whole, inside
    ``root`` (default: :func:`confinement`); raises :class:`WriteRefused`. ``private``:
    a cache entry, the owner's alone."""
    target = Path(os.path.abspath(path))
    base = Path(os.path.abspath(root)) if root is not None else confinement(target)
    if target == base or not target.is_relative_to(base):
        raise WriteRefused(path, f"it is outside {base}")
    payload: Iterable[bytes]
    if isinstance(data, str):
        payload = [data.encode("utf-8")]
    elif isinstance(data, bytes):
        payload = [data]
    else:
        payload = (chunk.encode("utf-8") for chunk in data)
    try:
        _make_folders(base, 0o700 if private else 0o777)  # the root itself is trusted
        parts = list(target.relative_to(base).parts)
        if DIR_FD:
            _write_by_fd(str(path), base, parts, payload, private)
        else:
            _write_by_path(str(path), base, target, payload, private)
    except WriteRefused:
        raise
    except OSError as exc:
        reason = refusal(exc)
        if reason is None:
            raise
        raise WriteRefused(path, reason) from exc


#: What the file system's answers mean to a person, and what to do about each.
_REASONS = {
    errno.ENOSPC: "the disk is full: free some space and run again",
    errno.EDQUOT: "the disk quota is used up: free some space and run again",
    errno.EFBIG: "the file is too large for its file system",
    errno.EROFS: "the file system is read-only: write it to another folder",
    errno.EACCES: "permission denied: write it to a folder you may write to",
    errno.EPERM: "the operation is not permitted: write it to a folder you may write to",
}


def refusal(exc: OSError) -> str | None:
    """Why a file could not be written, for people (None: an error that is not about the
    disk or the permissions, which stays an error of roofgen's)."""
    return _REASONS.get(exc.errno) if exc.errno is not None else None


def write_atomic(path: Path, data: str | bytes) -> None:
    """:func:`write_file` with the default root (kept for its callers)."""
    write_file(path, data)


def write_cache_entry(path: Path, data: str | bytes, *, replaces: str | None = None) -> None:
    """:func:`write_file` for a cache entry, which can only make a later run faster:
    an entry that cannot be written is skipped. The entry and the folders made for it
    are the owner's alone. ``replaces`` is a pattern of the entries in the same folder
    that this one makes stale (an earlier roofgen's); they are removed."""
    with contextlib.suppress(OSError):
        write_file(path, data, private=True)
        if replaces is not None:
            for old in path.parent.glob(replaces):
                if old.name != path.name:
                    old.unlink(missing_ok=True)


def prune_cache_entries(folder: Path, prefix: str, suffix: str, keep: set[str]) -> None:
    """Remove the entries ``PREFIX<key>SUFFIX`` of ``folder`` whose key is not in ``keep``
    (and any other file starting with ``prefix``). A cache that cannot be pruned only
    keeps more entries."""
    try:
        entries = list(folder.glob(f"{prefix}*"))
    except OSError:
        return
    for entry in entries:
        key = entry.name[len(prefix) : -len(suffix)]
        if not (entry.name.endswith(suffix) and key in keep):
            with contextlib.suppress(OSError):
                entry.unlink(missing_ok=True)


# --------------------------------------------------------------------------- the root


def confinement(path: Path | str) -> Path:
    """The folder a write to ``path`` must stay inside (see the module's text)."""
    here = Path.cwd()
    project = next((f for f in (here, *here.parents) if _holds_settings(f)), here)
    target = Path(os.path.abspath(path))
    if target == project or not target.is_relative_to(project):
        return target.parent  # named outside the project: the user chose its folder
    root = folder = project
    for part in target.relative_to(project).parts[:-1]:
        folder = folder / part
        if folder.is_symlink() or not folder.is_dir():
            break
        if _holds_settings(folder):
            root = folder
    return root


def _holds_settings(folder: Path) -> bool:
    if (folder / "roofgen.toml").is_file():
        return True
    pyproject = folder / "pyproject.toml"
    try:
        st = pyproject.stat()
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    # A build writes hundreds of files: each pyproject.toml is read once for as long as
    # it stays the same file with the same size and modification time.
    key = (str(pyproject), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    known = _PYPROJECT_SEEN.get(key)
    if known is None:
        known = _PYPROJECT_SEEN[key] = _names_roofgen(pyproject)
    return known


_PYPROJECT_SEEN: dict[tuple[str, int, int, int, int], bool] = {}


def _names_roofgen(pyproject: Path) -> bool:
    try:
        with pyproject.open("rb") as f:
            tool = tomllib.load(f).get("tool")
    except (OSError, ValueError):  # unreadable, not UTF-8, not TOML
        return False
    return isinstance(tool, dict) and "roofgen" in tool


def _make_folders(folder: Path, mode: int) -> None:
    missing = []
    while not os.path.lexists(folder) and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(made, mode)


def _kind(shown: str, st: os.stat_result | None) -> int | None:
    """The permission bits a file replacing one with ``st`` keeps (None: a new file)."""
    if st is None:
        return None
    if stat.S_ISDIR(st.st_mode):
        raise WriteRefused(shown, "it is a folder")
    if not stat.S_ISREG(st.st_mode):
        raise WriteRefused(shown, "it is not a regular file")
    return stat.S_IMODE(st.st_mode) & 0o777


def _temp_name(name: str) -> str:
    return f".{name[:200]}.{os.urandom(6).hex()}.tmp"


# --------------------------------------------------------------------------- by descriptor


def _write_by_fd(
    shown: str, base: Path, parts: list[str], payload: Iterable[bytes], private: bool
) -> None:
    root_fd = os.open(base, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        fd, name, mode = _locate(shown, root_fd, base, parts, 0o700 if private else 0o777)
    finally:
        os.close(root_fd)
    try:
        _replace(fd, name, payload, *_modes(private, mode))
    finally:
        os.close(fd)


def _modes(private: bool, kept: int | None) -> tuple[int, int | None]:
    """The mode a temporary file is created with (the umask applies) and the one it is
    given afterwards (None: as created)."""
    if private:
        return 0o600, 0o600
    return (0o666, None) if kept is None else (0o600, kept)


def _locate(
    shown: str, root_fd: int, base: Path, parts: list[str], folder_mode: int
) -> tuple[int, str, int | None]:
    """The descriptor of the target's folder, its name there and the permission bits
    it keeps. Links are resolved and checked, and the walk starts again from the
    root on the real path, so every folder the descriptors pass is a real one."""
    real_base = os.path.realpath(base)
    for _ in range(_MAX_LINKS):
        fd = os.dup(root_fd)
        try:
            for i, part in enumerate(parts):
                st = _lstat(part, fd)
                if st is not None and stat.S_ISLNK(st.st_mode):
                    parts = _through(shown, base, real_base, parts, i)
                    break
                if i == len(parts) - 1:
                    return fd, part, _kind(shown, st)
                inner = _enter(shown, fd, part, st, "/".join(parts[: i + 1]), folder_mode)
                os.close(fd)
                fd = inner
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    raise WriteRefused(shown, "too many symbolic links on its way")


def _lstat(name: str, fd: int) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _enter(shown: str, fd: int, part: str, st: os.stat_result | None, where: str, mode: int) -> int:
    """The descriptor of folder ``part`` in folder ``fd``, made if missing. A link
    swapped in since ``st`` was taken is not followed: the open fails."""
    if st is None:
        with contextlib.suppress(FileExistsError):
            os.mkdir(part, mode, dir_fd=fd)
    elif not stat.S_ISDIR(st.st_mode):
        raise WriteRefused(shown, f"{where} is not a folder")
    return os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)


def _through(shown: str, base: Path, real_base: str, parts: list[str], i: int) -> list[str]:
    """The path, relative to the root, that the link at ``parts[i]`` leads to, with
    the rest of the way; refused when it leads outside the root."""
    real = os.path.realpath(os.path.join(real_base, *parts[: i + 1]))
    what = "it" if i == len(parts) - 1 else "/".join(parts[: i + 1])
    if not Path(real).is_relative_to(real_base):
        raise WriteRefused(shown, f"{what} is a symbolic link to {real}, outside {base}")
    rest = [*Path(real).relative_to(real_base).parts, *parts[i + 1 :]]
    if not rest:
        raise WriteRefused(shown, f"{what} is a symbolic link to the folder {base}")
    return rest


def _replace(fd: int, name: str, payload: Iterable[bytes], create: int, mode: int | None) -> None:
    """A temporary file in folder ``fd``, then a rename over ``name``."""
    out, tmp = -1, ""
    for _ in range(_MAX_TRIES):
        tmp = _temp_name(name)
        try:
            out = os.open(tmp, _CREATE, create, dir_fd=fd)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, "no free temporary name beside it", name)
    try:
        with os.fdopen(out, "wb") as handle:
            for chunk in payload:
                handle.write(chunk)
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
        os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=fd)
        raise


# --------------------------------------------------------------------------- by path


def _write_by_path(
    shown: str, base: Path, target: Path, payload: Iterable[bytes], private: bool
) -> None:
    """The same checks on resolved paths, where folders cannot be walked by descriptor."""
    real_base = os.path.realpath(base)
    real = os.path.realpath(target)
    if not Path(real).is_relative_to(real_base) or real == real_base:
        raise WriteRefused(shown, f"it leads to {real}, outside {base}")
    folder = Path(real).parent
    _make_folders(folder, 0o700 if private else 0o777)
    st = os.lstat(real) if os.path.lexists(real) else None
    create, mode = _modes(private, _kind(shown, st))
    for _ in range(_MAX_TRIES):
        tmp = folder / _temp_name(Path(real).name)
        try:
            out = os.open(tmp, _CREATE, create)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, "no free temporary name beside it", shown)
    try:
        with os.fdopen(out, "wb") as handle:
            for chunk in payload:
                handle.write(chunk)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
