"""The record of the last build, so that a build whose MkDocs input is unchanged runs no
MkDocs.

MkDocs turns the docs folder and ``mkdocs.yml`` into the HTML site, and it is most of a
build's time. roofgen writes that input anyway (it is cheap), so a build digests it,
with the versions of roofgen, MkDocs and its theme, the build's strictness and date, and
compares the digest with the record of the last build into the same output folder. The
record lives in the project's cache folder (the user's, out of a repository's reach, see
:mod:`roofgen.site.cachedir`) and also holds the digest of every file of the site that
build wrote: the output is kept as it is only if its files are exactly those, so a site
folder edited or force-added since is built again, never published as if built. The
record is inert JSON, read back only if it has exactly the shape written; anything else
is a miss. With no cache, or ``--clean``, MkDocs always runs.

The record also holds the digest of roofgen's own inputs to that build (``sources``,
see :mod:`roofgen.site.unchanged`), the check's problems and the counts of pages and
charts, so that a build whose inputs are all unchanged is answered from it without
checking, analysing or writing a page.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roofgen.files import write_cache_entry
from roofgen.problems import Problem
from roofgen.spec.result_cache import is_row, problem, row
from roofgen.version import versions

__all__ = ["Kept", "Record", "inputs_digest", "keep", "remember"]

_FORMAT = 2
_FIELDS = {"roofgen_build", "inputs", "warnings", "files", "sources", "problems", "counts"}


@dataclass(frozen=True)
class Kept:
    """What the record says of the build that made the site in the output."""

    problems: list[Problem]  # the check's
    warnings: list[str]  # MkDocs'
    pages: int
    charts: int


def inputs_digest(stage: Path, *, strict: bool, epoch: int) -> str:
    """Digest of what MkDocs would read in ``stage`` (``mkdocs.yml`` and ``docs/``) and of
    what else decides its output."""
    h = hashlib.sha256()
    h.update(json.dumps([_FORMAT, versions("mkdocs", "mkdocs-material"), strict, epoch]).encode())
    h.update(_own_files())
    h.update(b"\0mkdocs.yml\0" + (stage / "mkdocs.yml").read_bytes())
    for name, digest in sorted((_tree(stage / "docs") or {}).items()):
        h.update(f"\0{name}\0{digest}".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


#: roofgen's code and templates that act inside MkDocs' run (its plugins, the page policy,
#: the theme override): a change to any of them changes the HTML of unchanged docs.
_MKDOCS_SIDE = ("mkdocs_run.py", "rawhtml.py", "csp.py", "searchtoc.py")


@functools.cache
def _own_files() -> bytes:
    from roofgen.datafiles import data_dir

    h = hashlib.sha256()
    here = Path(__file__).parent
    for path in [*(here / name for name in _MKDOCS_SIDE), *_overrides(data_dir("templates"))]:
        h.update(f"\0{path.name}\0".encode() + path.read_bytes())
    return h.digest()


def _overrides(templates: Path) -> list[Path]:
    return sorted(p for p in (templates / "overrides").rglob("*") if p.is_file())


class Record:
    """The record of the last build into ``output``, in cache folder ``folder``."""

    def __init__(self, folder: Path, output: Path) -> None:
        key = hashlib.sha256(os.fsencode(os.path.abspath(output))).hexdigest()[:16]
        self.path = folder / "builds" / f"site-{key}.json"
        self.output = output

    def keep(self, inputs: str) -> list[str] | None:
        """The MkDocs warnings of the last build if it had the same ``inputs`` and the
        output still holds exactly the files it wrote; else None (build it)."""
        entry = self._read()
        if entry is None or entry["inputs"] != inputs:
            return None
        if _tree(self.output) != entry["files"]:
            return None
        return list(entry["warnings"])

    def unchanged(self, sources: str) -> Kept | None:
        """What the last build reported if it was made from the same ``sources`` (see
        :mod:`roofgen.site.unchanged`) and the output still holds exactly the files it
        wrote; else None (build it)."""
        entry = self._read()
        if entry is None or entry["sources"] != sources:
            return None
        if _tree(self.output) != entry["files"]:
            return None
        problems = [problem(r) for r in entry["problems"]]
        pages, charts = entry["counts"]
        return Kept(problems, list(entry["warnings"]), pages, charts)

    def remember(
        self,
        inputs: str,
        warnings: list[str],
        sources: str | None = None,
        kept: Kept | None = None,
    ) -> None:
        """Record the site now in the output, built from ``inputs`` (and, with
        ``sources``, what the build reported: ``kept``)."""
        files = _tree(self.output)
        if files is None:
            return
        problems = [row(p) for p in kept.problems] if kept is not None else []
        counts = [kept.pages, kept.charts] if kept is not None else [0, 0]
        entry = {
            "roofgen_build": _FORMAT,
            "inputs": inputs,
            "warnings": warnings,
            "files": files,
            "sources": sources if kept is not None else None,
            "problems": problems,
            "counts": counts,
        }
        write_cache_entry(self.path, json.dumps(entry, sort_keys=True))

    def _read(self) -> dict[str, Any] | None:
        try:
            entry = json.loads(self.path.read_bytes())
        except (OSError, ValueError, RecursionError):
            return None
        ok = (
            isinstance(entry, dict)
            and set(entry) == _FIELDS
            and type(entry["roofgen_build"]) is int
            and entry["roofgen_build"] == _FORMAT
            and isinstance(entry["inputs"], str)
            and isinstance(entry["warnings"], list)
            and all(isinstance(w, str) for w in entry["warnings"])
            and isinstance(entry["files"], dict)
            and all(isinstance(v, str) for v in entry["files"].values())
            and (entry["sources"] is None or isinstance(entry["sources"], str))
            and isinstance(entry["problems"], list)
            and all(is_row(r) for r in entry["problems"])
            and isinstance(entry["counts"], list)
            and len(entry["counts"]) == 2
            and all(type(n) is int and n >= 0 for n in entry["counts"])
        )
        return entry if ok else None


def keep(folder: Path | None, output: Path, inputs: str) -> list[str] | None:
    """:meth:`Record.keep`, None without a cache folder."""
    return None if folder is None else Record(folder, output).keep(inputs)


def remember(
    folder: Path | None,
    output: Path,
    inputs: str | None,
    warnings: list[str],
    sources: str | None = None,
    kept: Kept | None = None,
) -> None:
    """:meth:`Record.remember`; nothing without a cache folder or ``inputs`` (a build
    that wrote no HTML)."""
    if folder is not None and inputs is not None:
        Record(folder, output).remember(inputs, warnings, sources, kept)


def _tree(root: Path) -> dict[str, str] | None:
    """The SHA-256 of every file under ``root`` by its relative path; None when ``root``
    is missing or holds anything but folders and regular files (a link: not ours)."""
    out: dict[str, str] = {}
    try:
        if not root.is_dir() or root.is_symlink():
            return None
        for folder, dirs, names in os.walk(root):
            for name in [*dirs, *names]:
                path = os.path.join(folder, name)
                mode = os.lstat(path).st_mode
                if stat.S_ISDIR(mode):
                    continue
                if not stat.S_ISREG(mode):
                    return None
                with open(path, "rb") as f:
                    digest = hashlib.file_digest(f, "sha256").hexdigest()
                out[os.path.relpath(path, root).replace(os.sep, "/")] = digest
    except OSError:
        return None
    return out
