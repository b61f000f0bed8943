"""What the import verbs share (`roofgen import ncu|ert|nsys|torch-trace`): failing with
messages, the machine a profile ran on, the team's other machines, a new case's id."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from roofgen.commands.common import (
    EXIT_INVALID,
    Failure,
    current_settings,
    say,
    shown,
    write_output,
)

__all__ = ["fail", "machine_named", "new_case_id", "team_machines", "write_imported"]


def fail(messages: list[str]) -> None:
    for message in messages:
        say(message, fg="red")
    raise Failure(EXIT_INVALID)


def machine_named(ident: str) -> Any:
    """The machine ``ident`` (the team's specs first, then roofgen's library)."""
    from roofgen.machines.lookup import find_machine

    machine, problems = find_machine(ident, list(current_settings().specs))
    if machine is None:
        fail([p.format() if p.file else p.message for p in problems])
    return machine


def team_machines() -> dict[str, dict[str, Any]]:
    """Machine data of the team's specs, so a case naming several machines checks."""
    from roofgen.api import load_file
    from roofgen.machines.lookup import team_machine_files

    out: dict[str, dict[str, Any]] = {}
    try:
        files = team_machine_files(list(current_settings().specs))
    except Exception:
        return out
    for ident, path in files.items():
        doc, _ = load_file(path)
        if doc is not None and isinstance(doc.data, dict):
            out[ident] = doc.data
    return out


def new_case_id(output: str | None, given: str | None) -> str:
    """A new case's id: the one given, else from the output file's name."""
    if given:
        return given
    stem = Path(output).stem if output and output != "-" else "imported"
    ident = re.sub(r"[^a-z0-9._-]+", "-", stem.lower()).strip("-._")
    return ident or "imported"


def write_imported(text: str, output: str | None, into: str | None, force: bool) -> str:
    """Write an import: edit ``into`` in place (its layout kept), else write ``output``
    ('-': stdout); returns where it went, for the message."""
    from roofgen.api import write_edited

    if into is not None:
        write_edited(Path(into), text)
        return shown(Path(into))
    write_output(text, str(output), force)
    return "stdout" if output == "-" else shown(Path(str(output)))
