"""Find a machine by id the way cases do: the team's specs first, then the library."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roofgen.problems import Problem
from roofgen.spec import library

_KIND = re.compile(r"^kind:\s*['\"]?machine\b", re.MULTILINE)
_ID = re.compile(r"^id:\s*['\"]?([a-z0-9][a-z0-9._-]*)", re.MULTILINE)


@dataclass(frozen=True)
class FoundMachine:
    """A machine's data and where it came from."""

    id: str
    data: dict[str, Any]
    origin: str  # a file path, or roofgen-library/ID/vN.yaml
    from_library: bool

    @property
    def version(self) -> int | None:
        version = self.data.get("version")
        return version if isinstance(version, int) else None


def team_machine_files(spec_paths: tuple[Path, ...] | list[Path]) -> dict[str, Path]:
    """Machine files in the team's specs by the id they declare (read line by line)."""
    from roofgen.spec.load import discover

    out: dict[str, Path] = {}
    existing = [p for p in spec_paths if p.exists()]
    if not existing:
        return out
    files, _ = discover(existing)
    for path in files:
        try:
            if not path.is_file():  # a pipe or a device would never end
                continue
            with path.open("rb") as f:  # the head only: the file may be huge
                text = f.read(200_000).decode("utf-8", errors="replace")
        except OSError:
            continue
        if not _KIND.search(text):
            continue
        match = _ID.search(text)
        if match:
            out.setdefault(match.group(1), path)
    return out


def find_machine(
    ident: str, spec_paths: tuple[Path, ...] | list[Path]
) -> tuple[FoundMachine | None, list[Problem]]:
    """The machine ``ident``: a machine file in the specs wins over the library."""
    from roofgen.spec import crossrefs, schema
    from roofgen.spec.yamlload import load_file

    team = team_machine_files(spec_paths)
    if ident in team:
        doc, problems = load_file(team[ident])
        if doc is None:
            return None, problems
        problems = schema.validate(doc, "machine")
        if not problems:
            problems = crossrefs.check_machine(doc)
        if problems:
            return None, problems
        return FoundMachine(ident, doc.data, str(team[ident]), False), []
    entry = library.entry(ident)
    if entry is None:
        known = sorted(set(team) | set(library.ids()))
        message = (
            f"no machine {ident!r} in the specs or in roofgen's machine library; "
            f"known: {', '.join(known) or 'none'}"
        )
        return None, [Problem("", 0, 0, "", message)]
    doc = library.document(ident, entry.version)
    if doc is None:  # a broken library file is roofgen's fault: say so plainly
        return None, list(library._load(ident, entry.version)[1])
    return FoundMachine(ident, doc.data, entry.display, True), []
