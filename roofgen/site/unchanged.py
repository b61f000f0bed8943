"""A build in which nothing changed: the site kept without a check, an analysis or a page.

Everything a build makes follows from its inputs: the spec files and the team's rules
file (their bytes), the settings, the team's extra files (logo, CSS, pages), roofgen's
own code, data and templates, and the versions of what renders the site. A build
digests them (:func:`sources_digest`, a few milliseconds per hundred spec files) before
anything else; the record of the last build into the same output
(:mod:`roofgen.site.lastbuild`, in the project's owner-only cache folder) holds the
digest of that build's inputs, what it reported, and the digest of every file it
wrote. When the digests agree and the output holds exactly those files, the build is
answered from the record: the same problems, the same MkDocs warnings, the same
counts, and the site as it is.

Anything uncertain builds: no cache folder, ``--clean``, a Markdown-only build, a
team file that cannot be read, a record of another shape, an output edited since.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from roofgen.config import Settings
from roofgen.datafiles import data_dir
from roofgen.site import lastbuild
from roofgen.site.build import BuildResult, _built, _mkdocs_problems
from roofgen.site.extras import site_extras
from roofgen.spec import check_cache
from roofgen.version import versions

__all__ = ["KEPT_NOTE", "kept_build", "sources_digest"]

#: The note of a build answered from the record (the same as a build that ran no MkDocs).
KEPT_NOTE = (
    "no page changed since the last build: the site was kept as it is (--clean builds it afresh)"
)
#: Distributions whose version decides the site's bytes.
_RENDERING = (
    "mkdocs", "mkdocs-material", "vl-convert-python", "jinja2", "markdown",
    "pymdown-extensions", "pygments", "pyyaml", "pint", "nh3",
)  # fmt: skip


def sources_digest(paths: Sequence[Path], settings: Settings, output: Path, *, strict: bool) -> str:
    """The digest of everything a build of ``paths`` into ``output`` depends on.

    Raises OSError or :class:`roofgen.site.errors.BuildError` when a team file cannot
    be read (then the build runs, and reports it)."""
    h = hashlib.sha256()
    # The specs, the rules file, the thresholds and roofgen's own files, as the check's key.
    key = check_cache.key(paths, settings.thresholds, settings.rules, settings.root)
    about = [key, repr(settings), str(output), strict, sys.version, versions(*_RENDERING)]
    h.update(json.dumps(about, default=str).encode("utf-8", "surrogateescape"))
    for folder in (data_dir("templates"),):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            _file(h, path.relative_to(folder).as_posix(), path)
    for name, source in sorted(site_extras(settings).files.items()):
        _file(h, name, source)
    return h.hexdigest()


def _file(h: Any, name: str, path: Path) -> None:
    data = path.read_bytes()
    h.update(f"\0{name}\0{len(data)}\0".encode("utf-8", "surrogateescape") + data)


def kept_build(
    folder: Path | None,
    output: Path,
    sources: str,
    settings: Settings,
    *,
    quiet: bool,
    strict: bool,
) -> BuildResult | None:
    """The result of the last build into ``output`` if it was made from ``sources``
    and the output holds exactly what it wrote (the site is then kept); else None."""
    if folder is None:
        return None
    kept = lastbuild.Record(folder, output).unchanged(sources)
    if kept is None:
        return None
    result = BuildResult(ok=False, output=output, pages=kept.pages, charts=kept.charts)
    result.problems = [*kept.problems, *_mkdocs_problems(kept.warnings, strict)]
    result.notes.append(KEPT_NOTE)
    return _built(result, settings.site, False, quiet)
