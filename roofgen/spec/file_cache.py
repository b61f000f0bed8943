"""A cache of parsed and schema-validated spec documents, one entry per file.

Without it every file would be parsed and validated again by each check; with it,
after a change to one case file only that file is. Each entry is keyed by the
file's bytes, the name it is shown by, and roofgen's own files (a new roofgen
never reads old entries). Only documents that loaded and validated without a
problem are stored: the checks across files (ids, references, the machine library)
and the analysis always run. Entries not used by the latest check are removed.

An entry is inert JSON (the document's data, the line and column of every path,
whether every number is in range, its kind), never code or a pickle, and is taken
only if it has exactly the shape :func:`_document` expects: anything else is a
miss, and the entry is written again.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import stat
from functools import cache
from pathlib import Path
from typing import Any

from roofgen.files import prune_cache_entries, write_cache_entry
from roofgen.spec.yamlload import MAX_FILE_BYTES, Document, PathKey
from roofgen.version import __version__

_PREFIX = "doc-"
_SUFFIX = ".json"
_FORMAT = 1  # the entry's layout; bump when it changes
_KINDS = ("machine", "case")
_PACKAGE = Path(__file__).resolve().parent.parent  # roofgen/


class DocumentCache:
    """Validated documents under ``cache_dir/documents``, read and written by path."""

    def __init__(self, cache_dir: Path) -> None:
        self.dir = Path(cache_dir) / "documents"
        self._keys: dict[Path, str] = {}
        self._by_name: dict[str, str] = {}
        self._used: set[str] = set()

    def get(self, path: Path, display: str) -> tuple[Document, str] | None:
        """The cached document of ``path`` and its kind, or None."""
        key = self.key(path, display)
        return None if key is None else self.document(key, display)

    def key(self, path: Path, display: str) -> str | None:
        """The key of ``path`` shown as ``display`` (None for a file the loader refuses);
        its entry is kept."""
        key = self._key(path, display)
        if key is None:
            return None
        self._keys[path] = key
        self._by_name[display] = key
        self._used.add(key)
        return key

    def document(self, key: str, display: str) -> tuple[Document, str] | None:
        """The document and kind stored under ``key``, or None."""
        try:
            entry = json.loads((self.dir / f"{_PREFIX}{key}{_SUFFIX}").read_bytes())
        except (OSError, ValueError, RecursionError):  # missing, damaged, not JSON
            return None
        return _document(entry, display)

    def key_of(self, display: str) -> str | None:
        """The key of the file shown as ``display`` (its bytes, its name and roofgen's
        files), if this check read it."""
        return self._by_name.get(display)

    def put(self, path: Path, doc: Document, kind: str) -> None:
        key = self._keys.get(path)
        if key is None:
            return
        try:
            data = _entry(doc, kind)
        except (ValueError, TypeError, RecursionError):  # a value JSON cannot hold exactly
            return
        write_cache_entry(self.dir / f"{_PREFIX}{key}{_SUFFIX}", data)

    def prune(self) -> None:
        """Remove the entries this check did not use (old versions of files, and the
        pickles of an older roofgen)."""
        prune_cache_entries(self.dir, _PREFIX, _SUFFIX, self._used)

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


def _entry(doc: Document, kind: str) -> bytes:
    entry = {
        "roofgen_document": _FORMAT,
        "kind": kind,
        "numbers_in_range": doc.numbers_in_range,
        "data": doc.data,
        "positions": position_table(doc.positions),
        "key_positions": position_table(doc.key_positions),
    }
    # Every value a document holds is a JSON value: str, int, float (NaN and infinities
    # too, as Python's json writes and reads them), bool, None, lists and str-keyed
    # mappings. A value that aliases share is written out at each place.
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


_KEYS = {"roofgen_document", "kind", "numbers_in_range", "data", "positions", "key_positions"}


def _document(entry: Any, display: str) -> tuple[Document, str] | None:
    """The document and kind an entry holds, or None unless it has exactly the shape
    :func:`_entry` writes."""
    if not isinstance(entry, dict) or entry.keys() != _KEYS:
        return None
    kind, data, in_range = entry["kind"], entry["data"], entry["numbers_in_range"]
    if type(entry["roofgen_document"]) is not int or entry["roofgen_document"] != _FORMAT:
        return None
    if kind not in _KINDS or not isinstance(in_range, bool):
        return None
    if not isinstance(data, dict) or data.get("kind") != kind:
        return None
    positions = read_positions(entry["positions"])
    key_positions = read_positions(entry["key_positions"])
    if positions is None or key_positions is None or () not in positions:
        return None
    return Document(display, data, positions, key_positions, in_range), kind


def position_table(positions: dict[PathKey, tuple[int, int]]) -> dict[str, list[Any]]:
    """Positions as three columns, which load several times faster than rows."""
    return {
        "paths": [list(p) for p in positions],
        "lines": [line for line, _ in positions.values()],
        "columns": [column for _, column in positions.values()],
    }


def read_positions(table: Any) -> dict[PathKey, tuple[int, int]] | None:
    """The positions of a table :func:`position_table` wrote, or None. The checks run in C
    (``map``, ``set``, ``min``): a spec of 10,000 values has 20,000 positions."""
    if not isinstance(table, dict) or table.keys() != {"paths", "lines", "columns"}:
        return None
    paths, lines, columns = table["paths"], table["lines"], table["columns"]
    if not (isinstance(paths, list) and isinstance(lines, list) and isinstance(columns, list)):
        return None
    if not len(paths) == len(lines) == len(columns):
        return None
    if not (set(map(type, lines)) <= {int} and set(map(type, columns)) <= {int}):
        return None  # bool is not int here
    if min(lines, default=1) < 1 or min(columns, default=1) < 1:
        return None
    if not set(map(type, paths)) <= {list}:
        return None
    if not set(map(type, itertools.chain.from_iterable(paths))) <= {str, int}:
        return None
    # JSON gives every occurrence of a key its own string ('variants', 'measurement'...
    # in each of thousands of paths): one string per distinct key instead, as a parsed
    # document has, or a check of 1,000 cases holds some 180 MB more.
    names: dict[str, str] = {}
    keep = names.setdefault
    keys = (tuple([keep(k, k) if k.__class__ is str else k for k in path]) for path in paths)
    return dict(zip(keys, zip(lines, columns, strict=True), strict=True))


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
