"""A cache of check results keyed by everything they depend on.

A rebuild of an unchanged site should cost almost nothing; checking and
analysing every spec is most of a warm rebuild. The key hashes the bytes of
every spec file and of the rules file, the thresholds, the display root, and
roofgen's own files (their paths, sizes and modification times), so any
change to an input or to roofgen itself misses the cache. The cache holds
pickles written by roofgen itself: keep it out of reach of untrusted input,
as with the chart cache.
"""

from __future__ import annotations

import hashlib
import pickle
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from roofgen.files import write_cache_entry
from roofgen.spec.file_cache import roofgen_digest
from roofgen.spec.load import discover
from roofgen.spec.yamlload import MAX_FILE_BYTES

_KEEP = 4  # newest results kept per cache folder
_PACKAGE = Path(__file__).resolve().parent.parent


def key(
    paths: Sequence[Path], thresholds: Any, rules_file: Path | None, display_root: Path | None
) -> str:
    h = hashlib.sha256(roofgen_digest().encode())
    h.update(repr((thresholds, str(display_root), [str(p) for p in paths])).encode())
    files, _ = discover(paths, display_root)
    if rules_file is not None:
        files = [*files, rules_file]
    for path in files:
        h.update(str(path).encode() + b"\0")
        h.update(_content_digest(path))
    return h.hexdigest()


def _content_digest(path: Path) -> bytes:
    """The digest of a spec file's bytes; a pipe, a device or a file too large to
    load is not read (it could never end), only named: the check refuses it anyway."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return f"not loadable:{info.st_mode}:{info.st_size}:{info.st_mtime_ns}".encode()
        return hashlib.sha256(path.read_bytes()).digest()
    except OSError:
        return b"unreadable"


def read(cache_dir: Path, digest: str) -> Any:
    path = cache_dir / f"check-{digest}.pickle"
    try:
        with path.open("rb") as f:
            return pickle.load(f)
    except Exception:  # a damaged or foreign entry is a miss, whatever it raises
        return None


def write(cache_dir: Path, digest: str, result: Any) -> None:
    data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    write_cache_entry(cache_dir / f"check-{digest}.pickle", data)
    try:
        old = sorted(cache_dir.glob("check-*.pickle"), key=lambda p: p.stat().st_mtime_ns)
        for stale in old[:-_KEEP]:
            stale.unlink(missing_ok=True)
    except OSError:
        pass  # a cache that cannot be pruned only keeps more entries
