"""A cache of parsed and schema-validated spec documents, one entry per file.

A change to one case file misses the whole-result cache in
:mod:`roofgen.spec.check_cache`; without this cache every other file would be
parsed and validated again. Each entry is keyed by the file's bytes, the name it
is shown by, and roofgen's own files (a new roofgen never reads old entries).
Only documents that loaded and validated without a problem are stored: the
checks across files (ids, references, the machine library) and the analysis
always run. Entries not used by the latest check are removed. The entries are
pickles written by roofgen itself: keep the cache out of reach of untrusted
input, as with the other caches.
"""

from __future__ import annotations

import hashlib
import pickle
import stat
from functools import cache
from pathlib import Path

from roofgen.files import write_cache_entry
from roofgen.spec.yamlload import MAX_FILE_BYTES, Document
from roofgen.version import __version__

_PREFIX = "doc-"
_PACKAGE = Path(__file__).resolve().parent.parent  # roofgen/


class DocumentCache:
    """Validated documents under ``cache_dir/documents``, read and written by path."""

    def __init__(self, cache_dir: Path) -> None:
        self.dir = Path(cache_dir) / "documents"
        self._keys: dict[Path, str] = {}
        self._used: set[str] = set()

    def get(self, path: Path, display: str) -> tuple[Document, str] | None:
        """The cached document of ``path`` and its kind, or None."""
        key = self._key(path, display)
        if key is None:
            return None
        self._keys[path] = key
        self._used.add(key)
        try:
            with (self.dir / f"{_PREFIX}{key}.pickle").open("rb") as f:
                entry = pickle.load(f)
        except Exception:  # a damaged or foreign entry is a miss, whatever it raises
            return None
        if not (isinstance(entry, tuple) and len(entry) == 2):
            return None
        doc, kind = entry
        return (doc, kind) if isinstance(doc, Document) and isinstance(kind, str) else None

    def put(self, path: Path, doc: Document, kind: str) -> None:
        key = self._keys.get(path)
        if key is None:
            return
        entry = pickle.dumps((doc, kind), protocol=pickle.HIGHEST_PROTOCOL)
        write_cache_entry(self.dir / f"{_PREFIX}{key}.pickle", entry)

    def prune(self) -> None:
        """Remove the entries this check did not use (old versions of files)."""
        try:
            entries = list(self.dir.glob(f"{_PREFIX}*.pickle"))
        except OSError:
            return
        for entry in entries:
            if entry.name[len(_PREFIX) : -len(".pickle")] not in self._used:
                entry.unlink(missing_ok=True)

    def _key(self, path: Path, display: str) -> str | None:
        try:
            info = path.stat()
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
                return None  # the loader reports these
            raw = path.read_bytes()
        except OSError:
            return None
        h = hashlib.sha256(roofgen_digest().encode())
        h.update(display.encode("utf-8", "surrogateescape") + b"\0")
        h.update(raw)
        return h.hexdigest()


@cache
def roofgen_digest() -> str:
    """Digest of roofgen's own code and data, so an edited roofgen never reads stale results."""
    h = hashlib.sha256(__version__.encode())
    roots = [_PACKAGE, _PACKAGE.parent / "schemas"]
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".yaml", ".json", ".txt") and path.is_file():
                st = path.stat()
                h.update(f"{path.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()
