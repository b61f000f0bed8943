"""One case at one commit, checked and analysed from git's blobs, and the cache of
those outcomes.

A case is analysed with the machine files the tree held at that commit (and
roofgen's library for the machines it does not hold); files of an older spec
format are migrated in memory (:mod:`roofgen.spec.migrate`), never written. The
outcome depends only on the case's blob, the machines' blobs, roofgen itself and
the thresholds: its cache entry is named by a digest of exactly those, and holds
inert JSON (the points, or the errors), read back only in the exact shape written.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roofgen.analysis.analyse import analyse
from roofgen.analysis.bounds import Thresholds
from roofgen.files import write_cache_entry
from roofgen.problems import Problem, Severity
from roofgen.spec import quantity

__all__ = ["Cache", "CaseAt", "Job", "Point", "analyse_blobs"]

_FORMAT = 1


@dataclass(frozen=True)
class Point:
    """One launch of a case at one commit: time of one call (s), efficiency (the
    lower bound over the measured time, None where unknown) and binding resource."""

    kernel: str
    variant: str
    index: int  # position of the launch in its variant
    time_s: float
    efficiency: float | None
    binding: str | None


@dataclass(frozen=True)
class CaseAt:
    """A case as one commit left it: ``analysed`` (its points), ``invalid`` (the
    check's errors) or ``removed``."""

    case: str  # the case's id (its file's name where the file has none)
    file: str  # path in the repository
    status: str
    points: tuple[Point, ...] = ()
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class Job:
    """A case to analyse at a commit: its id, path and blob, and the (path, blob) of
    every machine file of the tree that it names."""

    case: str
    file: str
    blob: str
    machines: tuple[tuple[str, str], ...]


class Cache:
    """Outcomes by (case blob, machine blobs, roofgen, thresholds): in memory for one
    run, and across runs in one file of ``folder`` (None: no cache), read once and
    written once (:meth:`save`). The file's name holds a digest of roofgen and the
    thresholds; an entry's key, of the case's path and blob and its machines'."""

    def __init__(self, folder: Path | None, thresholds: Thresholds):
        from roofgen.spec.file_cache import roofgen_digest

        self.thresholds = thresholds
        salt = hashlib.sha256(f"{roofgen_digest()}\n{thresholds!r}\n".encode()).hexdigest()
        self.file = Path(folder) / f"history-{salt[:16]}.json" if folder is not None else None
        # The units parsed by earlier runs and checks (the same table as a build's).
        self.units = Path(folder) / f"units-{roofgen_digest()[:16]}.json" if folder else None
        self._units_held = quantity.read_unit_table(self.units) if self.units else frozenset()
        self._stored = _read_entries(self.file) if self.file is not None else {}
        self._new: dict[str, Any] = {}
        self._held: dict[str, CaseAt] = {}
        self._machines: dict[tuple[str, str], tuple[Any, list[Problem]]] = {}
        self.analysed = 0

    def outcome(self, job: Job, blobs: dict[str, bytes]) -> CaseAt:
        key = self._key(job)
        held = self._held.get(key)
        if held is None and key in self._stored:
            held = _from_json(self._stored[key], job)
        if held is None:
            held = self._analyse(job, blobs)
            self.analysed += 1
            self._new[key] = _to_json(held)
        self._held[key] = held
        return held

    def _analyse(self, job: Job, blobs: dict[str, bytes]) -> CaseAt:
        machines = []
        for path, oid in job.machines:  # each machine blob parsed once a run
            if (path, oid) not in self._machines:
                self._machines[(path, oid)] = _parsed(blobs[oid], path)
            machines.append(self._machines[(path, oid)])
        return analyse_blobs(job, blobs[job.blob], machines, self.thresholds)

    def _key(self, job: Job) -> str:
        h = hashlib.sha256(f"{job.file}\n{job.blob}\n".encode("utf-8", "surrogateescape"))
        for path, oid in job.machines:
            h.update(f"{path}\n{oid}\n".encode("utf-8", "surrogateescape"))
        return h.hexdigest()

    def save(self) -> None:
        """Write the entries of this run's new outcomes (with the earlier ones, up to
        :data:`MAX_ENTRIES`, the oldest dropped first); nothing when nothing is new."""
        if self.units is not None:
            quantity.write_unit_table(self.units, self._units_held)
        if self.file is None or not self._new:
            return
        entries = {**self._stored, **self._new}
        kept = dict(list(entries.items())[-MAX_ENTRIES:])
        text = json.dumps({"format": _FORMAT, "entries": kept}, allow_nan=False)
        write_cache_entry(self.file, text, replaces="history-*.json")


MAX_ENTRIES = 50_000  # outcomes kept in a project's history cache (~300 bytes each)
_KEY = re.compile(r"[0-9a-f]{64}")


def _read_entries(path: Path) -> dict[str, Any]:
    """The entries of a cache file of exactly the shape :meth:`Cache.save` writes, else
    none (each entry is checked again when it is used)."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or set(data) != {"format", "entries"}:
        return {}
    entries = data["entries"]
    if data["format"] != _FORMAT or not isinstance(entries, dict):
        return {}
    return {k: v for k, v in entries.items() if isinstance(k, str) and _KEY.fullmatch(k)}


def _to_json(found: CaseAt) -> dict[str, Any]:
    return {
        "format": _FORMAT,
        "status": found.status,
        "points": [
            [p.kernel, p.variant, p.index, p.time_s, p.efficiency, p.binding] for p in found.points
        ],
        "problems": list(found.problems),
    }


def _from_json(data: Any, job: Job) -> CaseAt | None:
    """The outcome in an entry of exactly the shape :func:`_to_json` writes, else None."""
    if not isinstance(data, dict) or set(data) != {"format", "status", "points", "problems"}:
        return None
    if data["format"] != _FORMAT or data["status"] not in ("analysed", "invalid"):
        return None
    points, problems = data["points"], data["problems"]
    if not isinstance(points, list) or not isinstance(problems, list):
        return None
    if not all(isinstance(p, str) for p in problems):
        return None
    out = []
    for p in points:
        if not (isinstance(p, list) and len(p) == 6):
            return None
        kernel, variant, index, time_s, efficiency, binding = p
        if not (isinstance(kernel, str) and isinstance(variant, str)):
            return None
        if not (isinstance(index, int) and _number(time_s)):
            return None
        if not (efficiency is None or _number(efficiency)):
            return None
        if not (binding is None or isinstance(binding, str)):
            return None
        out.append(Point(kernel, variant, index, float(time_s), efficiency, binding))
    return CaseAt(job.case, job.file, data["status"], tuple(out), tuple(problems))


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _parsed(raw: bytes, shown: str) -> tuple[Any, list[Problem]]:
    """A spec blob migrated and parsed: its (document, kind) or None, and the problems."""
    from roofgen.spec.load import parse_bytes

    current, problems = _current(raw, shown)
    if current is None:
        return None, problems
    parsed, found = parse_bytes(current, shown)
    return parsed, problems + found


def analyse_blobs(
    job: Job,
    case: bytes,
    machines: list[tuple[Any, list[Problem]]],
    thresholds: Thresholds,
) -> CaseAt:
    """The case of ``job`` checked and analysed from its bytes, with its machines as
    :func:`_parsed` gives them."""
    from roofgen.spec.load import load_documents

    docs = []
    problems: list[Problem] = []
    for parsed, found in [_parsed(case, job.file), *machines]:
        problems += found
        if parsed is not None:
            docs.append(parsed)
    if not _errors(problems):
        names = (job.file, *(path for path, _ in job.machines))
        loaded = load_documents(docs, problems, set(), names)
        problems = loaded.problems
        if loaded.specs is not None and not _errors(problems):
            analysis = analyse(loaded.specs, thresholds)
            return CaseAt(job.case, job.file, "analysed", _points(analysis))
    return CaseAt(job.case, job.file, "invalid", problems=tuple(_errors(problems)))


def _errors(problems: list[Problem]) -> list[str]:
    return [p.format() for p in problems if p.severity is Severity.ERROR]


def _current(raw: bytes, shown: str) -> tuple[bytes | None, list[Problem]]:
    """``raw`` in the current spec format: migrated in memory when older."""
    from roofgen.spec.migrate import MigrationError, can_migrate, migrate_text, read_version
    from roofgen.spec.yamlload import MAX_FILE_BYTES

    if len(raw) > MAX_FILE_BYTES:
        limit = MAX_FILE_BYTES // (1024 * 1024)
        return None, [Problem(shown, 0, 0, "", f"above the {limit} MiB limit for a spec file")]
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw, []  # the loader says where and why
    if not can_migrate(read_version(text)):
        return raw, []
    try:
        return migrate_text(text).text.encode("utf-8"), []
    except MigrationError as exc:
        return None, [Problem(shown, 0, 0, "roofgen", f"cannot migrate it: {exc}")]


def _points(analysis: Any) -> tuple[Point, ...]:
    out = []
    for case in analysis.cases:
        for v in case.variants:
            for launch in v.launches:
                out.append(
                    Point(
                        launch.kernel,
                        launch.variant,
                        launch.index,
                        launch.time_s,
                        launch.efficiency,
                        launch.binding,
                    )
                )
    return tuple(out)
