"""A revision's settings, read from git's objects: where that revision's specs are, and
the files that decide how its times are judged.

``roofgen diff git:BASE git:HEAD`` finds each revision's spec files with that revision's
own settings (``roofgen.toml``, or ``[tool.roofgen]`` in ``pyproject.toml``, found from
the working folder upwards as :func:`roofgen.config.find_settings_file` finds them, but
in the revision's tree), so a pull request that moves its specs folder and its settings
together is still compared case by case. The settings file is copied into a scratch
folder and read by :func:`roofgen.config.load_settings`, so it is validated exactly as
a checkout's would be. Only the base's settings (and its rules file) make the policy;
the head's are compared with the base's as context (:mod:`roofgen.review.gate`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from roofgen.config import Settings, load_settings
from roofgen.files import write_file
from roofgen.problems import SpecError
from roofgen.review.gate import ContextChange
from roofgen.review.gitread import GitReadError, file_at

__all__ = ["Context", "Revision", "context_changes", "read_revision", "working_context"]


@dataclass(frozen=True)
class Context:
    """The files a side's times are judged by: the settings file (its path relative to
    the repository, and its roofgen settings as canonical JSON: a comment or another
    tool's table in ``pyproject.toml`` is no change) and the rules file it names (path
    and bytes); None where absent."""

    settings_file: str | None = None
    settings_data: str | None = None
    rules_file: str | None = None
    rules_data: bytes | None = None


@dataclass(frozen=True)
class Revision:
    """A revision's settings (paths under the scratch folder, the rules file written
    there), its specs folders (relative to the repository) and its context."""

    settings: Settings
    folders: tuple[str, ...]
    context: Context


def _table(rel: str, data: bytes) -> dict[str, Any] | None:
    """The roofgen settings in a settings file's content: all of ``roofgen.toml``,
    ``[tool.roofgen]`` of ``pyproject.toml`` (None where it has none)."""
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise GitReadError(f"{rel}: not valid TOML ({exc})") from None
    if PurePosixPath(rel).name == "roofgen.toml":
        return doc
    tool = doc.get("tool")
    table = tool.get("roofgen") if isinstance(tool, dict) else None
    return table if isinstance(table, dict) else None


def _canonical(rel: str, data: bytes) -> str:
    return json.dumps(_table(rel, data), sort_keys=True, default=str)


def _find(top: Path, commit: str, here: PurePosixPath) -> tuple[str, bytes] | None:
    """The revision's settings file nearest ``here`` (upwards, as a checkout's)."""
    for folder in (here, *here.parents):
        for name in ("roofgen.toml", "pyproject.toml"):
            rel = (folder / name).as_posix()
            data = file_at(top, commit, rel)
            if data is not None and _table(rel, data) is not None:
                return rel, data
    return None


def _inside(path: Path, scratch: Path, what: str) -> str:
    """``path`` (under the scratch copy) as a path relative to the repository."""
    try:
        return Path(os.path.normpath(path)).relative_to(scratch).as_posix()
    except ValueError:
        raise GitReadError(f"the {what} {path} is outside the repository") from None


def read_revision(top: Path, commit: str, here: PurePosixPath, scratch: Path,
                  label: str) -> Revision:  # fmt: skip
    """The settings of ``commit`` as ``roofgen`` run in ``here`` (the working folder,
    relative to ``top``) would read them from a checkout; the settings file and the
    rules file it names are copied under ``scratch``. ``label`` (``git:REV``) names the
    revision in messages."""
    found = _find(top, commit, here)
    rel, data = found if found is not None else ((here / "roofgen.toml").as_posix(), b"")
    write_file(scratch / rel, data, root=scratch)
    try:
        settings = load_settings(scratch / PurePosixPath(rel).parent)
    except SpecError as exc:
        raise SpecError([dataclasses.replace(p, file=f"{label}:{rel}")
                         for p in exc.problems]) from None  # fmt: skip
    folders = tuple(_inside(p, scratch, "specs folder") for p in settings.specs)
    rules_rel = rules = None
    if settings.rules is not None:
        rules_rel = _inside(settings.rules, scratch, "rules file")
        rules = file_at(top, commit, rules_rel)
        if rules is None:
            raise GitReadError(f"{rules_rel}: no such file in this revision, but its "
                               f"settings {rel} name it as the rules file")  # fmt: skip
        write_file(scratch / rules_rel, rules, root=scratch)
    context = Context(rel if found else None, _canonical(rel, data) if found else None,
                      rules_rel, rules)  # fmt: skip
    return Revision(settings, folders, context)


def working_context(settings: Settings, top: Path | None) -> Context:
    """The context of the working tree: its settings file and rules file, by their
    paths relative to the repository (``top``; None outside one)."""

    def rel(path: Path | None) -> str | None:
        if path is None:
            return None
        try:
            return path.resolve().relative_to(top.resolve()).as_posix() if top else str(path)
        except ValueError:
            return str(path)

    def read(path: Path | None) -> bytes | None:
        try:
            return path.read_bytes() if path is not None and path.is_file() else None
        except OSError:
            return None

    name, data = rel(settings.file), read(settings.file)
    table = _canonical(name, data) if name is not None and data is not None else None
    return Context(name, table, rel(settings.rules), read(settings.rules))


def context_changes(base: Context, head: Context,
                    machines: tuple[str, ...] = ()) -> tuple[ContextChange, ...]:  # fmt: skip
    """What changed between the sides' contexts, as ``--allow-context`` names it:
    the settings (file moved, added, removed or its roofgen settings changed), the
    rules file (its path or its bytes), and ``machines`` (ids whose file changed)."""
    out = []
    if (base.settings_file, base.settings_data) != (head.settings_file, head.settings_data):
        out.append(ContextChange("settings", _moved("settings file", base.settings_file,
                                                    head.settings_file)))  # fmt: skip
    if (base.rules_file, base.rules_data) != (head.rules_file, head.rules_data):
        out.append(ContextChange("rules", _moved("rules file", base.rules_file,
                                                 head.rules_file)))  # fmt: skip
    out += [ContextChange(f"machine:{m}", f"the machine file of {m} changed") for m in machines]
    return tuple(out)


def _moved(what: str, base: str | None, head: str | None) -> str:
    if base == head:
        return f"the {what} {base} changed"
    if base is None:
        return f"a {what} {head} was added"
    if head is None:
        return f"the {what} {base} was removed"
    return f"the {what} moved from {base} to {head}"
