"""The check's findings per case file, so that `roofgen check` analyses only what changed.

What the analysis says of one case (the plausibility and hygiene findings: warnings and
notes located in its file) follows from the case file's bytes and the name it is shown
by, the data of the machines it names, the thresholds and the rules, and roofgen's own
files. An entry is keyed by all of them, and holds that case's findings as problem rows: inert JSON,
taken only in exactly the shape :func:`row` writes (anything else is a miss, and the
case is analysed again). Only the findings of checks without errors are stored; the
checks across files (ids, references, the machine library) always run, an unchanged
case's from :mod:`roofgen.spec.check_index`. Entries the latest check did not use are
removed.

`roofgen check` reads these entries: it reports problems, nothing else, so a case whose
findings are known is neither built nor analysed. So does `roofgen build`, for a case
whose page and listing it has from an earlier build (:mod:`roofgen.site.casecache`).
Every other verb analyses every case, since it shows the results.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from roofgen.files import prune_cache_entries, write_cache_entry
from roofgen.problems import Problem, Severity

__all__ = ["ResultCache", "is_row", "machines_digest", "problem", "row"]

_PREFIX = "case-"
_SUFFIX = ".json"
_FORMAT = 1
_SEVERITIES = {s.value: s for s in Severity}


def row(p: Problem) -> list[Any]:
    """A problem as a JSON row."""
    return [p.file, p.line, p.column, p.path, p.message, p.severity.value, p.code]


def is_row(value: Any) -> bool:
    """Whether ``value`` is a problem row exactly as :func:`row` writes it."""
    return (
        isinstance(value, list)
        and len(value) == 7
        and all(isinstance(value[i], str) for i in (0, 3, 4, 6))
        and all(type(value[i]) is int and value[i] >= 0 for i in (1, 2))
        and value[5] in _SEVERITIES
    )


def problem(value: list[Any]) -> Problem:
    """The problem of a row :func:`is_row` accepted."""
    file, line, column, path, message, severity, code = value
    return Problem(file, line, column, path, message, _SEVERITIES[severity], code)


class ResultCache:
    """Findings per case under ``cache_dir/results``, for the check of ``context`` (a
    digest of the thresholds and the rules)."""

    def __init__(self, cache_dir: Path, context: str) -> None:
        self.dir = Path(cache_dir) / "results"
        self.context = hashlib.sha256(context.encode("utf-8", "surrogateescape")).hexdigest()
        self._used: set[str] = set()
        self._found: dict[str, list[Problem]] = {}

    def known(self, document_key: str, machines: str) -> bool:
        """Whether the findings of this case are stored (they are then kept for
        :meth:`remember`)."""
        key = self.key(document_key, machines)
        found = self.get(key)
        if found is None:
            return False
        self._found[key] = found
        return True

    def remember(
        self,
        case_keys: dict[str, tuple[str, str]],
        skipped: frozenset[str],
        analysed: dict[str, list[Problem]],
    ) -> list[Problem]:
        """Store the findings of the cases ``analysed`` (by case id), remove unused
        entries, and return the stored findings of the cases ``skipped``."""
        out: list[Problem] = []
        for ident, (document_key, machines) in case_keys.items():
            key = self.key(document_key, machines)
            if ident in skipped:
                out += self._found[key]
            elif ident in analysed:
                self.put(key, analysed[ident])
        self.prune()
        return out

    def key(self, document_key: str, machines: str) -> str:
        """The key of a case whose file has ``document_key`` (its bytes, its name and
        roofgen's files: :class:`roofgen.spec.file_cache.DocumentCache`), checked
        against the machines of digest ``machines``."""
        text = f"{_FORMAT}\0{self.context}\0{document_key}\0{machines}"
        digest = hashlib.sha256(text.encode()).hexdigest()
        self._used.add(digest)
        return digest

    def get(self, key: str) -> list[Problem] | None:
        """The findings stored under ``key``, or None."""
        try:
            entry = json.loads((self.dir / f"{_PREFIX}{key}{_SUFFIX}").read_bytes())
        except (OSError, ValueError, RecursionError):
            return None
        if not (isinstance(entry, dict) and entry.keys() == {"roofgen_findings", "problems"}):
            return None
        rows = entry["problems"]
        if type(entry["roofgen_findings"]) is not int or entry["roofgen_findings"] != _FORMAT:
            return None
        if not (isinstance(rows, list) and all(is_row(r) for r in rows)):
            return None
        return [problem(r) for r in rows]

    def put(self, key: str, problems: Iterable[Problem]) -> None:
        entry = {"roofgen_findings": _FORMAT, "problems": [row(p) for p in problems]}
        write_cache_entry(self.dir / f"{_PREFIX}{key}{_SUFFIX}", json.dumps(entry))

    def prune(self) -> None:
        """Remove the entries this check did not use."""
        prune_cache_entries(self.dir, _PREFIX, _SUFFIX, self._used)


def machines_digest(machines: dict[str, Any]) -> str | None:
    """The digest of the machines' data (a case's findings depend on its machines);
    None for data JSON cannot write in one way (then nothing is reused)."""
    try:
        text = json.dumps(machines, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return None
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
