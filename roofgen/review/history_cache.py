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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roofgen.analysis.analyse import analyse
from roofgen.analysis.bounds import Thresholds
from roofgen.files import write_cache_entry
from roofgen.problems import Problem, Severity

__all__ = ["Cache", "CaseAt", "Job", "Point", "analyse_blobs"]

_FORMAT = 1
_FOLDER = "history"


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
    run, and in ``folder``'s ``history/`` entries across runs (None: no cache)."""

    def __init__(self, folder: Path | None, thresholds: Thresholds):
        from roofgen.spec.file_cache import roofgen_digest

        self.folder = Path(folder) / _FOLDER if folder is not None else None
        self.thresholds = thresholds
        self._salt = f"{roofgen_digest()}\n{thresholds!r}\n"
        self._held: dict[str, CaseAt] = {}
        self.analysed = 0

    def outcome(self, job: Job, blobs: dict[str, bytes]) -> CaseAt:
        key = self._key(job)
        held = self._held.get(key)
        if held is None:
            held = self._read(key, job)
        if held is None:
            machines = [(path, blobs[oid]) for path, oid in job.machines]
            held = analyse_blobs(job, blobs[job.blob], machines, self.thresholds)
            self.analysed += 1
            self._write(key, held)
        self._held[key] = held
        return held

    def _key(self, job: Job) -> str:
        h = hashlib.sha256(self._salt.encode())
        h.update(f"{job.file}\n{job.blob}\n".encode("utf-8", "surrogateescape"))
        for path, oid in job.machines:
            h.update(f"{path}\n{oid}\n".encode("utf-8", "surrogateescape"))
        return h.hexdigest()

    def _read(self, key: str, job: Job) -> CaseAt | None:
        if self.folder is None:
            return None
        try:
            data = json.loads((self.folder / f"{key}.json").read_bytes())
        except (OSError, ValueError, RecursionError):
            return None
        return _from_json(data, job)

    def _write(self, key: str, found: CaseAt) -> None:
        if self.folder is not None:
            write_cache_entry(self.folder / f"{key}.json", json.dumps(_to_json(found)))


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


def analyse_blobs(
    job: Job, case: bytes, machines: list[tuple[str, bytes]], thresholds: Thresholds
) -> CaseAt:
    """The case of ``job`` checked and analysed from its bytes and its machines'."""
    from roofgen.spec.load import load_documents, parse_bytes

    docs = []
    problems: list[Problem] = []
    for shown, raw in [(job.file, case), *machines]:
        current, found = _current(raw, shown)
        problems += found
        if current is None:
            continue
        parsed, found = parse_bytes(current, shown)
        problems += found
        if parsed is not None:
            docs.append(parsed)
    if not _errors(problems):
        loaded = load_documents(docs, problems, set(), (job.file, *(p for p, _ in machines)))
        problems = loaded.problems
        if loaded.specs is not None and not _errors(problems):
            return CaseAt(
                job.case, job.file, "analysed", _points(analyse(loaded.specs, thresholds))
            )
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
