"""A case's launches over the commits that changed it: ``roofgen history``.

The commits come from one ``git log --first-parent --raw -z`` over the specs
folders (:func:`roofgen.review.gitread.first_parent_log`), replayed oldest first to
know, at every commit, which spec files the tree held. A commit *changes* a case
when it changes the case's file or a machine file the case names. Every blob read
(cases and machines, at any commit) comes from one ``git cat-file --batch``.

Each changed case is checked and analysed as it stood at that commit, with the
machines the tree held then (roofgen's library for the others): files of an older
spec format are migrated in memory first. A case that does not pass the check at
a commit is reported for that commit with its errors; the history goes on. The
outcome of each (case blob, machine blobs, roofgen, thresholds) is kept as inert
JSON in the cache folder, so a second run analyses nothing that did not change.

Commit subjects are whatever their authors wrote: they are data, never markup or
terminal input; :mod:`roofgen.review.history_report` neutralises them for text.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from roofgen.analysis.bounds import Thresholds
from roofgen.review import gitread, history_cache
from roofgen.review.gitread import GitReadError
from roofgen.review.history_cache import CaseAt, Point

__all__ = ["CaseAt", "CommitAt", "GitReadError", "History", "Point", "history"]

_SUFFIXES = (".yaml", ".yml")
_REGULAR = ("100644", "100755")


@dataclass(frozen=True)
class CommitAt:
    """A commit that changed at least one selected case, and those cases."""

    sha: str
    time: int  # committer time, seconds since the epoch
    subject: str  # as the author wrote it: untrusted text
    cases: tuple[CaseAt, ...]

    @property
    def date(self) -> str:
        """The committer time in UTC, ISO 8601 (``2026-03-01T09:30:00Z``)."""
        when = _dt.datetime.fromtimestamp(self.time, _dt.UTC)
        return when.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class History:
    """The commits that changed the selected cases, oldest first."""

    commits: tuple[CommitAt, ...]
    shallow: bool = False  # the clone's history is cut short
    notes: tuple[str, ...] = ()
    analysed: int = 0  # cases analysed in this run (the others came from the cache)
    folders: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class _Info:
    """What a blob is, read without checking it: kind, id, the machines a case names."""

    kind: str | None
    ident: str | None
    machines: tuple[str, ...] = ()


def history(
    root: Path,
    folders: Sequence[Path],
    *,
    case: str | None = None,
    kernel: str | None = None,
    variant: str | None = None,
    since: str | None = None,
    last: int | None = None,
    thresholds: Thresholds | None = None,
    cache_dir: Path | None = None,
) -> History:
    """The history of the cases under ``folders`` in the git repository holding ``root``.

    ``case``, ``kernel``, ``variant`` select; ``since`` keeps the commits after that
    revision, ``last`` the last N commits that changed a selected case. Raises
    :class:`GitReadError` when the repository or its history cannot be read."""
    top = gitread.toplevel(root)
    rel = [_relative(top, f) for f in folders]
    log = gitread.first_parent_log(top, rel)
    shallow = gitread.is_shallow(top)
    notes = [f"the history starts at a cut: {gitread.SHALLOW_HINT}"] if shallow else []
    keep = gitread.commits_since(top, since, rel) if since is not None else None
    wanted: list[str] = []
    for commit in log:
        wanted += [c.object for c in commit.changes if c.object is not None]
    blobs = gitread.read_blobs(top, list(dict.fromkeys(wanted)))
    infos = {oid: _info(raw) for oid, raw in blobs.items()}
    plan = _replay(log, rel, infos, case, keep)
    if last is not None:
        plan = plan[-last:] if last > 0 else []
    thresholds = thresholds or Thresholds()
    cache = history_cache.Cache(cache_dir, thresholds)
    commits = []
    for commit, jobs in plan:
        cases = []
        for job in jobs:
            found = job if isinstance(job, CaseAt) else cache.outcome(job, blobs)
            found = _select(found, kernel, variant)
            if found.points or found.status != "analysed":
                cases.append(found)
        if cases:
            commits.append(CommitAt(commit.sha, commit.time, commit.subject, tuple(cases)))
    cache.save()
    return History(tuple(commits), shallow, tuple(notes), cache.analysed, tuple(rel))


def _relative(top: Path, folder: Path) -> str:
    try:
        rel = Path(folder).resolve().relative_to(top.resolve())
    except ValueError:
        raise GitReadError(f"{folder}: not inside the git repository at {top}") from None
    return rel.as_posix() if rel.parts else "."


def _replay(
    log: list[gitread.LogCommit],
    folders: list[str],
    infos: dict[str, _Info],
    case: str | None,
    keep: set[str] | None,
) -> list[tuple[gitread.LogCommit, list[history_cache.Job | CaseAt]]]:
    """Every commit with the cases it changed: a job to analyse each, or a removal."""
    tree: dict[str, str] = {}  # path -> blob, spec files only
    plan = []
    for commit in log:
        before = dict(tree)
        for change in commit.changes:
            regular = change.object is not None and change.mode in _REGULAR
            if regular and change.object is not None and _spec(change.path, folders):
                tree[change.path] = change.object
            else:
                tree.pop(change.path, None)
        jobs = _jobs(before, tree, infos, case)
        if jobs and (keep is None or commit.sha in keep):
            plan.append((commit, jobs))
    return plan


def _jobs(
    before: dict[str, str], tree: dict[str, str], infos: dict[str, _Info], case: str | None
) -> list[history_cache.Job | CaseAt]:
    """The cases a commit changed (its own file, or a machine file it names), from the
    tree before and after it."""
    changed = {p for p in before.keys() | tree.keys() if before.get(p) != tree.get(p)}
    machines: dict[str, list[tuple[str, str]]] = {}
    for path, oid in sorted(tree.items()):
        if infos[oid].kind == "machine" and infos[oid].ident is not None:
            machines.setdefault(str(infos[oid].ident), []).append((path, oid))
    touched = {
        infos[side[p]].ident
        for p in changed
        for side in (before, tree)
        if p in side and infos[side[p]].kind == "machine"
    }
    jobs: list[history_cache.Job | CaseAt] = []
    for path in sorted(changed | set(tree)):
        blob = tree.get(path)
        found = infos[blob] if blob is not None else infos.get(before.get(path, ""))
        if found is None or found.kind == "machine":
            continue
        info = found
        ident = info.ident or PurePosixPath(path).stem
        if case is not None and ident != case:
            continue
        if blob is None:
            if info.kind == "case":
                jobs.append(CaseAt(ident, path, "removed"))
        elif path in changed or touched & set(info.machines):
            named = tuple(m for ref in info.machines for m in machines.get(ref, []))
            jobs.append(history_cache.Job(ident, path, blob, named))
    return jobs


def _spec(path: str, folders: list[str]) -> bool:
    """Whether the loader reads ``path`` from a checkout: a spec suffix, under a
    folder, no dot-folder on the way (as :func:`roofgen.spec.load.discover`)."""
    if not path.endswith(_SUFFIXES):
        return False
    for folder in folders:
        if folder == "." or path.startswith(folder.rstrip("/") + "/"):
            inside = path if folder == "." else path[len(folder.rstrip("/")) + 1 :]
            return not any(p.startswith(".") for p in inside.split("/")[:-1])
    return False


_KIND = re.compile(rb"^kind:[ \t]*['\"]?(machine|case)\b", re.MULTILINE)
_ID = re.compile(rb"^id:[ \t]*['\"]?([a-z0-9][a-z0-9._-]*)['\"]?[ \t]*(?:#.*)?$", re.MULTILINE)
_MACHINES = re.compile(rb"^machines:.*\n?(?:(?:[ \t#-].*)?\n?)*", re.MULTILINE)


def _info(raw: bytes) -> _Info:
    """Kind, id and named machines of a spec blob, read leniently (the check proper
    comes later, for the cases analysed); unknown where the file does not say. The
    top-level ``id:`` line and ``machines:`` block are read alone where they can be
    (a whole file costs ten times as much to load), else the whole file."""
    from roofgen.spec.yamlload import MAX_FILE_BYTES

    found = _KIND.search(raw, 0, 200_000)
    if found is None:
        return _Info(None, None)
    kind = found.group(1).decode()
    if len(raw) > MAX_FILE_BYTES:  # the check says so, for a case; never parsed here
        return _Info(kind, None)
    ident = _ID.findall(raw)
    block = _MACHINES.findall(raw)
    if len(ident) == 1 and len(block) <= 1:
        data = _yaml(block[0]) if block else {}
        if isinstance(data, dict):
            return _Info(kind, ident[0].decode(), _named(data.get("machines")))
    data = _yaml(raw)
    if not isinstance(data, dict):
        return _Info(kind, None)
    ident_value = data["id"] if isinstance(data.get("id"), str) else None
    return _Info(kind, ident_value, _named(data.get("machines")))


def _yaml(raw: bytes) -> Any:
    import yaml

    try:
        return yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (yaml.YAMLError, ValueError, RecursionError, UnicodeDecodeError):
        return None


def _named(refs: Any) -> tuple[str, ...]:
    """The machine ids of a case's ``machines`` (ids, or mappings with an ``id``)."""
    named = []
    for ref in refs if isinstance(refs, list) else []:
        name = ref.get("id") if isinstance(ref, dict) else ref
        if isinstance(name, str):
            named.append(name)
    return tuple(dict.fromkeys(named))


def _select(found: CaseAt, kernel: str | None, variant: str | None) -> CaseAt:
    if kernel is None and variant is None:
        return found
    points = tuple(
        p
        for p in found.points
        if (kernel is None or p.kernel == kernel) and (variant is None or p.variant == variant)
    )
    return CaseAt(found.case, found.file, found.status, points, found.problems)
