"""Where a build keeps its caches: in the user's cache folder, out of a repository's reach.

A cache entry decides what a build shows (a parsed spec, a chart, the chart script),
so whoever can write the cache folder decides the site. A folder beside the settings
file can be committed, or restored by a CI cache that another branch wrote, on a
fresh clone. So the caches live in the user's cache folder
(``platformdirs.user_cache_dir("roofgen")``: ``$XDG_CACHE_HOME/roofgen``, else
``~/.cache/roofgen``, on Linux), created owner-only:

``projects/<name>-<digest>/``
    one folder per project, keyed by a digest of the project folder's real path (the
    settings file's folder, else the output's parent): the documents, the unit table,
    the charts (:func:`project_folder`).
``vega/``
    the chart script bundled by vl-convert, per vl-convert version (:func:`vega_folder`).

A cache in the repository is only ever opt-in (``roofgen build --cache-dir DIR``),
and a folder any file of which git tracks is not used at all (with a note): git
would hand its entries to every clone. A cache that cannot be created or written
costs time, never the build.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from roofgen.config import Settings

__all__ = ["Cache", "choose", "project_folder", "secure_folder", "tracked", "user_cache_root"]

#: Subfolders of a project's cache, created owner-only with it.
SUBFOLDERS = ("documents", "charts")


@dataclass(frozen=True)
class Cache:
    """The caches of one build: the project's folder (None: no project cache), whether
    the chart script may come from the user's cache, and notes for the user."""

    folder: Path | None
    vega: bool = True
    notes: tuple[str, ...] = ()


def user_cache_root() -> Path:
    """roofgen's folder in the user's cache folder (``$XDG_CACHE_HOME/roofgen`` on Linux)."""
    import platformdirs

    root = Path(platformdirs.user_cache_dir("roofgen", appauthor=False))
    if not root.is_absolute():  # a relative XDG_CACHE_HOME, which the XDG spec says to ignore
        root = Path.home() / ".cache" / "roofgen"
    return root


def project_folder(project: Path) -> Path:
    """The cache folder of the project in folder ``project``."""
    real = os.path.realpath(project)
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", os.path.basename(real))[:40].strip("._") or "root"
    return user_cache_root() / "projects" / f"{name}-{digest}"


def vega_folder() -> Path:
    return user_cache_root() / "vega"


def choose(settings: Settings, output: Path, cache_dir: Path | None, use_cache: bool) -> Cache:
    """The caches of a build of ``settings`` into ``output``: ``cache_dir`` if given and
    usable, else the project's folder in the user's cache; none with ``use_cache=False``."""
    if not use_cache:
        return Cache(None, vega=False)
    notes: list[str] = []
    try:
        root = user_cache_root()
    except (OSError, RuntimeError) as exc:  # no home folder to find it in
        root = None
        notes.append(f"no user cache folder ({exc}): building without it")
    user_ok = root is not None and not tracked(root)  # not one inside a repository
    if root is not None and not user_ok:
        notes.append(f"the cache folder {root} holds files git tracks: not used")
    if cache_dir is not None:
        if not tracked(cache_dir):
            folder = _usable(Path(cache_dir).absolute(), notes)
            return Cache(folder, vega=user_ok, notes=tuple(notes))
        notes.append(
            f"the cache folder {cache_dir} holds files git tracks, which every clone shares: "
            "not used" + ("; the user's cache folder is used instead" if user_ok else "")
        )
    if not user_ok:
        return Cache(None, vega=False, notes=tuple(notes))
    project = settings.file.parent if settings.file is not None else Path(output).parent
    return Cache(_usable(project_folder(project), notes), notes=tuple(notes))


def _usable(folder: Path, notes: list[str]) -> Path | None:
    """``folder``, made owner-only, or None (with a note) if it cannot be ours."""
    problem = secure_folder(folder)
    if problem:
        notes.append(f"cannot use the cache folder {folder} ({problem}): building without one")
        return None
    for name in SUBFOLDERS:  # owner-only too; a read-only cache is still read
        secure_folder(folder / name)
    return folder


def secure_folder(folder: Path) -> str:
    """Create ``folder`` owner-only (and roofgen's folders above it in the user's cache),
    or take others' access away from an existing one of ours. Returns why it cannot be
    used, or '' when it can: it is not a folder, it is another user's, or it cannot be
    created."""
    folder = Path(folder).absolute()
    try:
        root: Path | None = user_cache_root()
    except (OSError, RuntimeError):
        root = None
    ours = [p for p in reversed((folder, *folder.parents)) if root in (p, *p.parents)]
    try:
        (ours[0] if ours else folder).parent.mkdir(parents=True, exist_ok=True)
        for path in ours or [folder]:
            path.mkdir(mode=0o700, exist_ok=True)
            problem = _owned(path)
            if problem:
                return problem
    except OSError as exc:
        return exc.strerror or str(exc)
    return ""


def _owned(folder: Path) -> str:
    info = folder.stat()
    if not stat.S_ISDIR(info.st_mode):
        return "not a folder"
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        return "another user's folder"
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        with contextlib.suppress(OSError):  # only ever takes permissions away
            folder.chmod(mode & 0o700)
    return ""


def tracked(folder: Path) -> bool:
    """Whether git tracks any file under ``folder`` (False where there is no git, no
    repository, or no such folder in one)."""
    folder = Path(folder).absolute()
    start = next((p for p in (folder, *folder.parents) if p.is_dir()), None)
    if start is None:
        return False
    try:
        run = subprocess.run(
            ["git", "-C", str(start), "ls-files", "-z", "--", str(folder)],
            capture_output=True, check=False, timeout=60, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return False
    return run.returncode == 0 and bool(run.stdout)
