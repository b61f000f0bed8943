"""roofgen's machine library as spec documents: the files shipped in the package, pinned by version.

Each machine lives in ``roofgen/machines/<id>/v<N>.yaml``. A released version is
never edited: a changed roof is a new version file, so a case pinned to a version
keeps its roofs however roofgen is upgraded.

A case names a library machine by id (``machines: [{id: a100-40gb-sxm, version: 1}]``).
A machine file with the same id in the team's specs takes precedence. A pin is the
version number, optionally with ``sha256:``, the content hash of the machine's data
(:func:`content_hash`): comments and line endings do not change it, a changed roof
does. An unpinned reference is a warning that names the pin to add; a pinned
version this roofgen does not ship is an error that names
``roofgen machines vendor ID --version N``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from roofgen.problems import Problem, Severity
from roofgen.spec import schema
from roofgen.spec.yamlload import Document, load_text

DISPLAY_ROOT = "roofgen-library"
_VERSION_FILE = re.compile(r"^v([1-9][0-9]*)\.yaml$")
_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


@dataclass(frozen=True)
class LibraryMachine:
    """One version of one library machine."""

    id: str
    version: int
    path: Traversable

    @property
    def display(self) -> str:
        """How messages name the file: ``roofgen-library/ID/vN.yaml``."""
        return f"{DISPLAY_ROOT}/{self.id}/v{self.version}.yaml"

    def text(self) -> str:
        return self.path.read_text(encoding="utf-8")

    def raw(self) -> bytes:
        return self.path.read_bytes()


@cache
def index() -> dict[str, dict[int, LibraryMachine]]:
    """Every library machine by id, then version."""
    root = resources.files("roofgen") / "machines"
    out: dict[str, dict[int, LibraryMachine]] = {}
    for folder in sorted(root.iterdir(), key=lambda t: t.name):
        if not folder.is_dir() or not _ID.match(folder.name):
            continue
        found: dict[int, LibraryMachine] = {}
        for item in folder.iterdir():
            match = _VERSION_FILE.match(item.name)
            if match and item.is_file():
                version = int(match.group(1))
                found[version] = LibraryMachine(folder.name, version, item)
        if found:
            out[folder.name] = dict(sorted(found.items()))
    return out


def ids() -> list[str]:
    return sorted(index())


def versions(machine_id: str) -> list[int]:
    return sorted(index().get(machine_id, {}))


def latest(machine_id: str) -> int | None:
    found = versions(machine_id)
    return found[-1] if found else None


def entry(machine_id: str, version: int | None = None) -> LibraryMachine | None:
    """The library file of a machine at ``version`` (default: the latest), or None."""
    by_version = index().get(machine_id)
    if not by_version:
        return None
    if version is None:
        version = max(by_version)
    return by_version.get(version)


@cache
def _load(machine_id: str, version: int) -> tuple[Document | None, tuple[Problem, ...]]:
    """A library machine's document, schema-checked (problems name the library file)."""
    found = entry(machine_id, version)
    if found is None:
        return None, ()
    doc, problems = load_text(found.text(), found.display)
    if doc is None:
        return None, tuple(problems)
    problems = schema.validate(doc, "machine")
    return (None if problems else doc), tuple(problems)


def document(machine_id: str, version: int | None = None) -> Document | None:
    """The loaded document of a library machine (None if absent or invalid)."""
    found = entry(machine_id, version)
    return None if found is None else _load(found.id, found.version)[0]


def content_hash(data: Any) -> str:
    """The sha256 pin of a machine: of its data as canonical JSON, so comments,
    key order, quoting and line endings do not change it; a changed value does."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pin_text(machine_id: str, version: int, sha256: str | None = None) -> str:
    """The flow-style pin a case writes under ``machines:``."""
    extra = f', sha256: "{sha256}"' if sha256 else ""  # quoted: all-digit hex is a number
    return f"{{id: {machine_id}, version: {version}{extra}}}"


@dataclass
class Resolution:
    """Library machines the cases need, and what the pins say about them."""

    documents: dict[str, Document]
    problems: list[Problem]
    broken: set[str]  # ids not to check cases against (the problem is already reported)


def resolve(
    case_docs: Iterable[Document], team_machines: Iterable[str], broken: set[str]
) -> Resolution:
    """Load the library machines that cases name and the team's specs do not hold.

    A team machine with the same id always wins (it is not looked up here). Each
    library machine is loaded at the version the cases pin, or at the latest
    version where no case pins one (a warning names the pin to add). A pinned
    version this roofgen does not ship, or two cases pinning different versions,
    is an error.
    """
    team = set(team_machines)
    out = Resolution({}, [], set())
    chosen: dict[str, tuple[int, Document, int]] = {}  # id -> (version, case doc, ref index)
    unpinned: list[tuple[Document, int, str]] = []
    for doc in case_docs:
        for i, ref in enumerate(doc.data["machines"]):
            ident = ref if isinstance(ref, str) else ref["id"]
            if ident in team or ident in broken or ident not in index():
                continue
            pinned = ref.get("version") if isinstance(ref, dict) else None
            if pinned is None:
                unpinned.append((doc, i, ident))
                continue
            _pin(out, chosen, doc, i, ident, pinned)
    for doc, i, ident in unpinned:
        version = chosen[ident][0] if ident in chosen else latest(ident)
        assert version is not None
        if ident not in chosen and ident not in out.broken:
            chosen[ident] = (version, doc, i)
        out.problems.append(_unpinned(doc, i, ident, version))
    for ident, (version, _, _) in chosen.items():
        if ident in out.broken:
            continue
        loaded, problems = _load(ident, version)
        out.problems += problems
        if loaded is None:
            out.broken.add(ident)
        else:
            out.documents[ident] = loaded
    return out


def _pin(
    out: Resolution,
    chosen: dict[str, tuple[int, Document, int]],
    doc: Document,
    i: int,
    ident: str,
    pinned: int,
) -> None:
    shipped = versions(ident)
    if pinned not in shipped:
        out.problems.append(
            doc.problem(
                ("machines", i, "version"),
                f"the case is pinned to version {pinned} of library machine {ident!r}, which "
                f"this roofgen does not ship (it ships {_listing(shipped)}): copy the "
                f"pinned version into the specs with `roofgen machines vendor {ident} "
                f"--version {pinned}`, run with a roofgen release that ships it, or re-check "
                f"the case against version {shipped[-1]} and pin that",
                code="ref.machine-version",
            )
        )
        out.broken.add(ident)
        return
    if pinned < shipped[-1]:
        out.problems.append(_newer(doc, i, ident, pinned, shipped))
    if ident not in chosen:
        chosen[ident] = (pinned, doc, i)
        return
    first_version, first_doc, first_i = chosen[ident]
    if first_version != pinned:
        line, _ = first_doc.where(("machines", first_i))
        out.problems.append(
            doc.problem(
                ("machines", i, "version"),
                f"library machine {ident!r} is pinned to version {pinned} here and to version "
                f"{first_version} at {first_doc.file}:{line}: one analysis holds one version "
                "per machine id; pin both cases alike, or vendor one version into the specs "
                "under another id",
                code="ref.machine-version",
            )
        )


def _newer(doc: Document, i: int, ident: str, pinned: int, shipped: list[int]) -> Problem:
    """A note that a newer version corrects the pinned one's roofs, with what it corrects."""
    newer = [v for v in shipped if v > pinned]
    said = []
    for version in newer:
        loaded = document(ident, version)
        changes = loaded.data.get("changes", "") if loaded is not None else ""
        if changes:
            said.append(f"version {version}: {' '.join(changes.split()).rstrip('.')}")
    what = f" ({'; '.join(said)})" if said else ""
    return doc.problem(
        ("machines", i, "version"),
        f"the case is pinned to version {pinned} of library machine {ident!r}; {_listing(newer)} "
        f"correct{'s' if len(newer) == 1 else ''} it{what}: re-check the case against "
        f"version {newer[-1]} and pin `- {pin_text(ident, newer[-1])}`",
        severity=Severity.WARNING,
        code="ref.machine-newer",
    )


def _unpinned(doc: Document, i: int, ident: str, version: int) -> Problem:
    return doc.problem(
        ("machines", i),
        f"machine {ident!r} comes from roofgen's machine library and is not pinned, so a "
        f"later roofgen could move its roofs: write `- {pin_text(ident, version)}` "
        f"(`roofgen machines show {ident}` prints the sha256 for an optional content pin)",
        severity=Severity.WARNING,
        code="ref.machine-unpinned",
    )


def _listing(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"version {numbers[0]}"
    return "versions " + ", ".join(map(str, numbers[:-1])) + f" and {numbers[-1]}"
