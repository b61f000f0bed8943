"""What the checks across files need of each case file, so that `roofgen check` reads
only the case files that changed.

A case file unchanged since an earlier check is taken here as a small partial
document: its id, its ``machines`` list, and the lines and columns of those values
(what the duplicate-id check and the machine library's pins read, exactly as the
whole document holds them). Its own checks against the machines
(:func:`roofgen.spec.crossrefs.check_case`) are stored with it, keyed by the digest
of every machine's data and of the ids of the machines with errors of their own:
a machine file that changes, vanishes or breaks changes that digest, and the case is
read whole and checked again. So are the cases whose findings are not stored
(:mod:`roofgen.spec.result_cache`), since they are built and analysed.

Every entry is keyed by the file's document key (its bytes, the name it is shown by,
and roofgen's own files: :class:`roofgen.spec.file_cache.DocumentCache`). The index
is one inert JSON file, taken only entry by entry in exactly the shape
:func:`_entry` writes (anything else is a miss); it keeps the entries of the latest
check only. Only `roofgen check` reads it (``known`` of :func:`roofgen.spec.load.load`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from roofgen.files import write_cache_entry
from roofgen.problems import Problem
from roofgen.spec import crossrefs, schema
from roofgen.spec.file_cache import DocumentCache, position_table, read_positions
from roofgen.spec.result_cache import is_row, machines_digest, problem, row
from roofgen.spec.yamlload import Document, PathKey, load_file

__all__ = ["CheckIndex", "PartialDocument"]

_NAME = "check-index.json"
_FORMAT = 1
_KEYS = {"id", "machines", "positions", "key_positions", "context", "problems"}
_HEX = frozenset("0123456789abcdef")


class PartialDocument(Document):
    """A case file's id and ``machines`` and their positions, taken from the index."""


class CheckIndex:
    """The partial documents and cross-file problems of case files, under
    ``cache_dir``, by the keys of ``documents``."""

    def __init__(self, cache_dir: Path, documents: DocumentCache) -> None:
        self.path = Path(cache_dir) / _NAME
        self._documents = documents
        self._entries = _read(self.path)
        self._keep: dict[str, dict[str, Any]] = {}
        self._files: dict[str, Path] = {}  # display -> path, of the partial documents
        self._changed = False

    def stub(self, path: Path, display: str) -> PartialDocument | None:
        """The partial document of the case file ``path``, or None."""
        key = self._documents.key(path, display)
        entry = self._entries.get(key) if key is not None else None
        if entry is None or key is None:
            return None
        doc = _stub(entry, display)
        if doc is None:
            return None
        self._keep[key] = entry
        self._files[display] = path
        return doc

    def cross_check(
        self,
        case_docs: dict[str, Document],
        machines: dict[str, dict[str, Any]],
        broken: set[str],
    ) -> list[Problem]:
        """:func:`roofgen.spec.crossrefs.check_case` of every case, stored or
        computed; a partial document whose problems are not stored is replaced in
        ``case_docs`` by the whole one (a case whose file cannot be read again is
        left out, with its problem)."""
        context = _context(machines, broken)
        problems: list[Problem] = []
        for ident, doc in list(case_docs.items()):
            key = self._documents.key_of(doc.file)
            entry = self._keep.get(key) if key is not None else None
            stored = entry is not None and context is not None and entry["context"] == context
            if isinstance(doc, PartialDocument) and stored:
                assert entry is not None
                problems += [problem(r) for r in entry["problems"]]
                continue
            if isinstance(doc, PartialDocument):
                whole = self.whole(doc)
                if whole is None:
                    problems.append(_changed(doc.file))
                    del case_docs[ident]
                    continue
                case_docs[ident] = doc = whole
            found = crossrefs.check_case(doc, machines, broken)
            problems += found
            if key is not None and context is not None:
                self._put(key, doc, context, found)
        return problems

    def complete(self, case_docs: dict[str, Document], skipped: frozenset[str]) -> list[Problem]:
        """Replace in ``case_docs`` the partial documents of the cases not ``skipped``
        (they are built) by the whole ones."""
        problems = []
        for ident, doc in case_docs.items():
            if ident in skipped or not isinstance(doc, PartialDocument):
                continue
            whole = self.whole(doc)
            if whole is None:
                problems.append(_changed(doc.file))
            else:
                case_docs[ident] = whole
        return problems

    def whole(self, doc: Document) -> Document | None:
        """The whole document of a partial one (``doc`` itself if it is whole): from
        the document cache, else parsed and validated again; None if the file no
        longer has the bytes it had (it changed during the check)."""
        if not isinstance(doc, PartialDocument):
            return doc
        path, key = self._files[doc.file], self._documents.key_of(doc.file)
        whole = self._documents.document(key, doc.file) if key is not None else None
        if whole is not None:
            return whole[0] if whole[1] == "case" else None
        loaded, found = load_file(path, doc.file)
        if loaded is None or found or self._documents.key(path, doc.file) != key:
            return None
        if schema.validate(loaded, "case"):
            return None
        return loaded

    def save(self) -> None:
        """Write the entries of this check (if they differ from those read)."""
        if not self._changed and self._keep.keys() == self._entries.keys():
            return
        data = {"roofgen_check_index": _FORMAT, "entries": self._keep}
        write_cache_entry(self.path, json.dumps(data, ensure_ascii=False, separators=(",", ":")))

    def _put(self, key: str, doc: Document, context: str, found: list[Problem]) -> None:
        data = doc.data
        entry = {
            "id": data["id"],
            "machines": data["machines"],
            "positions": _table(doc.positions),
            "key_positions": _table(doc.key_positions),
            "context": context,
            "problems": [row(p) for p in found],
        }
        try:  # kept only if it reads back as written
            entry = json.loads(json.dumps(entry, ensure_ascii=False))
        except (TypeError, ValueError, RecursionError):
            return
        if _stub(entry, doc.file) is None or not all(p.file == doc.file for p in found):
            return
        self._keep[key] = entry
        self._changed = True


def _changed(display: str) -> Problem:
    return Problem(display, 0, 0, "", "the file changed during the check: check again")


def _context(machines: dict[str, dict[str, Any]], broken: set[str]) -> str | None:
    """The digest of what a case's checks across files read besides the case."""
    digest = machines_digest(machines)
    if digest is None:
        return None
    text = json.dumps([digest, sorted(broken)], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _wanted(path: PathKey) -> bool:
    """Whether the checks across files may locate a problem of a case at ``path`` (or
    under it), so that a partial document keeps its position."""
    return not path or path[0] in ("id", "machines")


def _table(positions: dict[PathKey, tuple[int, int]]) -> dict[str, list[Any]]:
    return position_table({p: at for p, at in positions.items() if _wanted(p)})


def _positions(table: Any) -> dict[PathKey, tuple[int, int]] | None:
    positions = read_positions(table)
    if positions is None or not all(_wanted(p) for p in positions):
        return None
    return positions


def _ref(value: Any) -> bool:
    """A machine reference in the shape the case schema allows: an id, or a mapping of
    an id, an optional version number and an optional sha256 pin."""
    if isinstance(value, str):
        return True
    if not (isinstance(value, dict) and value.keys() <= {"id", "version", "sha256"}):
        return False
    version = value.get("version", 1)
    return (
        isinstance(value.get("id"), str)
        and type(version) is int
        and version >= 1
        and isinstance(value.get("sha256", ""), str)
    )


def _stub(entry: Any, display: str) -> PartialDocument | None:
    """The partial document of an entry exactly as :meth:`CheckIndex._put` writes it."""
    if not (isinstance(entry, dict) and entry.keys() == _KEYS):
        return None
    ident, machines, context, rows = (entry[k] for k in ("id", "machines", "context", "problems"))
    if not (isinstance(ident, str) and isinstance(machines, list) and machines):
        return None
    if not all(_ref(m) for m in machines):
        return None
    if not (isinstance(context, str) and len(context) == 64 and set(context) <= _HEX):
        return None
    if not (isinstance(rows, list) and all(is_row(r) and r[0] == display for r in rows)):
        return None
    positions = _positions(entry["positions"])
    key_positions = _positions(entry["key_positions"])
    if positions is None or key_positions is None or () not in positions:
        return None
    data = {"kind": "case", "id": ident, "machines": machines}
    return PartialDocument(display, data, positions, key_positions)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    if not (isinstance(data, dict) and data.keys() == {"roofgen_check_index", "entries"}):
        return {}
    version, entries = data["roofgen_check_index"], data["entries"]
    if type(version) is not int or version != _FORMAT or not isinstance(entries, dict):
        return {}
    return {k: v for k, v in entries.items() if len(k) == 64 and set(k) <= _HEX}
