"""Load a set of spec files: discover, parse, validate, cross-check, build."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roofgen.model import Case, Machine, Specs
from roofgen.problems import Problem, Severity
from roofgen.spec import build, crossrefs, schema
from roofgen.spec import library as machine_library
from roofgen.spec.check_index import CheckIndex
from roofgen.spec.file_cache import DocumentCache
from roofgen.spec.quantity import parsed_once
from roofgen.spec.result_cache import machines_digest
from roofgen.spec.yamlload import Document, PathKey, load_bytes, load_file

SPEC_SUFFIXES = (".yaml", ".yml")
FORMAT_VERSION = 1


@dataclass(frozen=True)
class LoadResult:
    specs: Specs | None  # None when any error was found
    problems: list[Problem]
    files: tuple[str, ...]
    case_documents: dict[str, Document] = field(default_factory=dict)
    # With ``known``: each case's (document key, digest of the machines it names), and
    # the ids of the cases ``known`` said not to build.
    case_keys: dict[str, tuple[str, str]] = field(default_factory=dict)
    skipped: frozenset[str] = frozenset()

    @property
    def ok(self) -> bool:
        return not any(p.severity is Severity.ERROR for p in self.problems)


def discover(
    paths: Sequence[Path], display_root: Path | None = None
) -> tuple[list[Path], list[Problem]]:
    """Spec files under ``paths`` (files as given, folders searched), sorted."""
    found: list[Path] = []
    problems: list[Problem] = []
    for path in paths:
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                found += [Path(root) / f for f in sorted(files) if f.endswith(SPEC_SUFFIXES)]
        elif path.is_file():
            found.append(path)
        else:
            problems.append(
                Problem(_display(path, display_root), 0, 0, "", "no such file or folder")
            )
    unique = sorted(dict.fromkeys(found))
    if not unique and not problems:
        where = ", ".join(_display(p, display_root) for p in paths) or "(nothing given)"
        problems.append(
            Problem(where, 0, 0, "", "no spec files (*.yaml, *.yml) found: nothing to check")
        )
    return unique, problems


def load(
    paths: Sequence[Path],
    *,
    display_root: Path | None = None,
    cache_dir: Path | None = None,
    known: Callable[[str, str], bool] | None = None,
) -> LoadResult:
    """Load and check every spec under ``paths``; collect every problem.

    With ``cache_dir``, files unchanged since an earlier check are not parsed and
    validated again (see :mod:`roofgen.spec.file_cache`); the checks across files
    always run. With it and ``known(document_key, machines_digest)``, a case for which
    ``known`` is true is checked across files but not built: it is left out of the
    specs (`roofgen check` knows its findings, :mod:`roofgen.spec.result_cache`).
    Each quantity text is parsed once (:func:`roofgen.spec.quantity.parsed_once`).
    """
    with parsed_once():
        return _load(paths, display_root, cache_dir, known)


def _load(
    paths: Sequence[Path],
    display_root: Path | None,
    cache_dir: Path | None,
    known: Callable[[str, str], bool] | None,
) -> LoadResult:
    files, problems = discover(paths, display_root)
    docs: list[tuple[Document, str]] = []
    broken_machines: set[str] = set()  # ids of machine files with errors of their own
    cache = DocumentCache(cache_dir) if cache_dir is not None else None
    # `roofgen check` takes unchanged case files from its index (spec/check_index.py).
    index = CheckIndex(cache_dir, cache) if cache_dir and cache and known else None
    for path in files:
        shown = _display(path, display_root)
        stub = index.stub(path, shown) if index is not None else None
        if stub is not None:
            docs.append((stub, "case"))
            continue
        read = _read(path, shown, cache, problems, broken_machines)
        if read is not None:
            docs.append(read)
    if cache is not None:
        cache.prune()
    names = tuple(_display(p, display_root) for p in files)
    result = load_documents(docs, problems, broken_machines, names, cache=cache, known=known,
                            index=index)  # fmt: skip
    if index is not None:
        index.save()
    return result


def _by_id(
    docs: list[tuple[Document, str]], problems: list[Problem], broken: set[str]
) -> tuple[dict[str, Document], dict[str, Document]]:
    """The machine and case documents by id (duplicates reported into ``problems``).
    Machines the cases name that the specs do not hold come from roofgen's machine
    library (roofgen/machines); a machine file in the specs with the same id wins. Every
    machine is checked; machines with errors of their own are added to ``broken``."""
    machines = _index(docs, "machine", problems)
    cases = _index(docs, "case", problems)
    library = machine_library.resolve(cases.values(), machines, broken)
    problems += library.problems
    broken |= library.broken
    machines = {**machines, **library.documents}
    for doc in machines.values():
        problems += crossrefs.check_machine(doc)
    return machines, cases


def _read(
    path: Path,
    shown: str,
    cache: DocumentCache | None,
    problems: list[Problem],
    broken_machines: set[str],
) -> tuple[Document, str] | None:
    """One spec file parsed and validated (or from ``cache``): its document and kind, or
    None with its problems added to ``problems`` (and, for a machine file, its id to
    ``broken_machines``)."""
    cached = cache.get(path, shown) if cache is not None else None
    if cached is not None:
        return cached
    doc, found = load_file(path, shown)
    problems += found
    kind = _kind(doc, problems) if doc is not None else None
    if doc is None or kind is None:
        broken_machines |= _sniff_machine_id(path)
        return None
    found = schema.validate(doc, kind)
    problems += found
    if not found:
        if cache is not None:
            cache.put(path, doc, kind)
        return doc, kind
    if kind == "machine" and isinstance(doc.data.get("id"), str):
        broken_machines.add(doc.data["id"])
    return None


def parse_bytes(raw: bytes, shown: str) -> tuple[tuple[Document, str] | None, list[Problem]]:
    """One spec file's bytes parsed and validated: its document and kind, or None and
    the problems (read from git's objects by ``roofgen history``)."""
    doc, problems = load_bytes(raw, shown)
    if doc is None:
        return None, problems
    kind = _kind(doc, problems)
    if kind is None:
        return None, problems
    problems = schema.validate(doc, kind)
    return (None if problems else (doc, kind)), problems


def load_documents(
    docs: list[tuple[Document, str]],
    problems: list[Problem],
    broken_machines: set[str],
    names: tuple[str, ...],
    *,
    cache: DocumentCache | None = None,
    known: Callable[[str, str], bool] | None = None,
    index: CheckIndex | None = None,
) -> LoadResult:
    """Parsed, schema-valid documents checked across files and built into ``Specs``
    (``cache`` and ``known``: see :func:`load`; ``index``: the partial documents of
    unchanged case files and their stored checks, :mod:`roofgen.spec.check_index`)."""
    problems = list(problems)
    machines_docs, case_docs = _by_id(docs, problems, broken_machines)
    machine_data = {ident: doc.data for ident, doc in machines_docs.items()}
    if index is not None:
        problems += index.cross_check(case_docs, machine_data, broken_machines)
    else:
        for doc in case_docs.values():
            problems += crossrefs.check_case(doc, machine_data, broken_machines)
    if any(p.severity is Severity.ERROR for p in problems):
        return LoadResult(None, problems, names, case_docs)
    machines: dict[str, Machine] = {
        i: build.machine(d.data, d.file) for i, d in machines_docs.items()
    }
    keys = _case_keys(cache, case_docs, machine_data) if known is not None else {}
    skipped = frozenset(i for i, k in keys.items() if known is not None and known(*k))
    if index is not None:
        problems += index.complete(case_docs, skipped)
        if any(p.severity is Severity.ERROR for p in problems):
            return LoadResult(None, problems, names, case_docs)
    cases: tuple[Case, ...] = tuple(
        build.case(d.data, d.file) for i, d in case_docs.items() if i not in skipped
    )
    return LoadResult(Specs(machines, cases), problems, names, case_docs, keys, skipped)


def _case_keys(
    cache: DocumentCache | None, case_docs: dict[str, Document], machines: dict[str, Any]
) -> dict[str, tuple[str, str]]:
    """Each case's document key and the digest of the data of the machines it names
    (none without a cache, or for machines JSON cannot write in one way)."""
    if cache is None:
        return {}
    out = {}
    digests: dict[tuple[str, ...], str | None] = {}
    for ident, doc in case_docs.items():
        key = cache.key_of(doc.file)
        named = tuple(r if isinstance(r, str) else r["id"] for r in doc.data["machines"])
        if named not in digests:
            digests[named] = machines_digest({m: machines.get(m) for m in named})
        digest = digests[named]
        if key is not None and digest is not None:
            out[ident] = (key, digest)
    return out


_SNIFF_KIND = re.compile(r"^kind:\s*['\"]?machine\b", re.MULTILINE)
_SNIFF_ID = re.compile(r"^id:\s*['\"]?([a-z0-9][a-z0-9._-]*)", re.MULTILINE)


def _sniff_machine_id(path: Path) -> set[str]:
    """The id a machine file that could not be loaded declares, read line by line, so
    that cases naming it do not also report an unknown machine."""
    try:
        if not path.is_file():  # a pipe or a device would never end
            return set()
        with path.open("rb") as f:  # the head only: the file may be huge
            text = f.read(200_000).decode("utf-8", errors="replace")
    except OSError:
        return set()
    if not _SNIFF_KIND.search(text):
        return set()
    match = _SNIFF_ID.search(text)
    return {match.group(1)} if match else set()


def _display(path: Path, root: Path | None) -> str:
    if root is not None:
        # The path as given (a symbolic link keeps its own name), else with links
        # resolved (the root may be reached through one).
        for resolve in (os.path.abspath, os.path.realpath):
            try:
                return str(Path(resolve(path)).relative_to(resolve(root)))
            except (ValueError, OSError):
                continue
    return str(path)


def _kind(doc: Document, problems: list[Problem]) -> str | None:
    data = doc.data
    if not isinstance(data, dict):
        problems.append(
            doc.problem((), "a spec file is a mapping that starts with 'roofgen: 1' and 'kind:'")
        )
        return None
    version = data.get("roofgen")
    if version is None:
        problems.append(doc.problem((), "missing 'roofgen: 1' (the spec format version)"))
        return None
    if isinstance(version, str) and version.strip() == str(FORMAT_VERSION):
        problems.append(
            doc.problem(
                ("roofgen",),
                f"{version!r} is a string, expected {FORMAT_VERSION} "
                f"(write roofgen: {FORMAT_VERSION} without quotes)",
            )
        )
        return None
    if version != FORMAT_VERSION:
        from roofgen.spec.migrate import can_migrate

        problems.append(
            doc.problem(
                ("roofgen",),
                f"spec format version {version!r} is older than the one this roofgen reads "
                f"({FORMAT_VERSION}): update the file with `roofgen migrate {doc.file}`"
                if can_migrate(version)
                else f"spec format version {version!r} is not one this roofgen reads "
                f"(it reads version {FORMAT_VERSION})",
                code="spec.old-version" if can_migrate(version) else "",
            )
        )
        return None
    kind = data.get("kind")
    if kind not in schema.KINDS:
        where = ("kind",) if "kind" in data else ()
        problems.append(
            doc.problem(where, f"'kind' must be 'machine' or 'case', not {kind!r}")
            if kind is not None
            else doc.problem(where, "missing 'kind': write 'kind: machine' or 'kind: case'")
        )
        return None
    return str(kind)


def _index(
    docs: Iterable[tuple[Document, str]], kind: str, problems: list[Problem]
) -> dict[str, Document]:
    out: dict[str, Document] = {}
    for doc, k in docs:
        if k != kind:
            continue
        ident = doc.data["id"]
        if ident in out:
            first = out[ident]
            line, _ = first.where(("id",))
            problems.append(
                doc.problem(
                    ("id",),
                    f"{kind} id {ident!r} is already used by "
                    f"{first.file}:{line}: ids must be unique across the specs",
                    code="ref.duplicate-id",
                )
            )
            continue
        out[ident] = doc
    return out


# -- One case at a time -------------------------------------------------------------


@dataclass
class Survey:
    """What a first pass over the specs keeps so that the cases can then be loaded,
    checked and built one at a time (`roofgen analyze`): the machines whole, and of
    each case file only its id, the machines it names and their positions. The checks
    across files that need every case (unique ids, the machine library's versions) and
    the machines' own checks are done; each case's own checks are
    :meth:`case_document`'s."""

    problems: list[Problem]
    files: tuple[str, ...]
    machines: dict[str, Document]  # the specs' and the library's, by id
    broken_machines: set[str]
    cases: dict[str, tuple[Path, str]]  # id -> the file and the name it is shown by
    cache: DocumentCache | None = None

    @property
    def ok(self) -> bool:
        return not any(p.severity is Severity.ERROR for p in self.problems)

    def build_machines(self) -> dict[str, Machine]:
        """The machines as model objects (only when :attr:`ok`)."""
        return {i: build.machine(d.data, d.file) for i, d in self.machines.items()}

    def case_document(self, ident: str) -> tuple[Document | None, list[Problem]]:
        """Case ``ident`` read again (from the cache where the survey put it), with the
        problems of its checks against the machines; None if it cannot be read as the
        case it was (the file changed since the survey)."""
        path, shown = self.cases[ident]
        problems: list[Problem] = []
        read = _read(path, shown, self.cache, problems, set())
        if read is None or read[1] != "case" or read[0].data.get("id") != ident:
            message = "the file changed while it was being checked: check again"
            return None, problems or [Problem(shown, 0, 0, "", message)]
        data = {i: d.data for i, d in self.machines.items()}
        return read[0], crossrefs.check_case(read[0], data, self.broken_machines)


def survey(
    paths: Sequence[Path], *, display_root: Path | None = None, cache_dir: Path | None = None
) -> Survey:
    """The first pass of loading one case at a time (:class:`Survey`): every file parsed
    and validated once (and cached with ``cache_dir``), each case document let go after
    its small record is taken."""
    files, problems = discover(paths, display_root)
    docs: list[tuple[Document, str]] = []
    broken: set[str] = set()
    cache = DocumentCache(cache_dir) if cache_dir is not None else None
    where: dict[str, Path] = {}
    for path in files:
        shown = _display(path, display_root)
        read = _read(path, shown, cache, problems, broken)
        if read is not None:
            doc, kind = read
            docs.append((doc, kind) if kind == "machine" else (_case_record(doc), kind))
            where[shown] = path
    if cache is not None:
        cache.prune()
    machines, cases = _by_id(docs, problems, broken)
    names = tuple(_display(p, display_root) for p in files)
    found = {i: (where[d.file], d.file) for i, d in cases.items()}
    return Survey(problems, names, machines, broken, found, cache)


_RECORD_KEYS = ("id", "machines")


def _case_record(doc: Document) -> Document:
    """A case document cut to what the checks across cases read (its id and the
    machines it names), with their positions: the rest is read again case by case."""
    data = {k: doc.data[k] for k in _RECORD_KEYS if k in doc.data}

    def kept(table: dict[PathKey, tuple[int, int]]) -> dict[PathKey, tuple[int, int]]:
        return {p: at for p, at in table.items() if not p or p[0] in _RECORD_KEYS}

    return Document(doc.file, data, kept(doc.positions), kept(doc.key_positions))
