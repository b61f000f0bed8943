"""The two sides of ``roofgen diff``, found and checked: a folder of specs (read with the
working tree's settings), or ``git:REV`` (the specs folders that revision's own settings
name, read from git's objects by :mod:`roofgen.review.gitread` into a scratch folder: the
working tree is not touched, and ``.gitattributes`` cannot hide a file)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from roofgen.analysis.analyse import Analysis, analyse
from roofgen.config import Settings
from roofgen.model import Specs
from roofgen.pipeline import check
from roofgen.problems import Problem
from roofgen.review.comment import Side
from roofgen.review.gitread import GitReadError, export, resolve, toplevel
from roofgen.review.revision import Context, read_revision, working_context

__all__ = ["Source", "SideError", "check_side", "shown_rev", "source"]

Progress = Callable[[str, int, int], None]


class SideError(Exception):
    """A side that cannot be compared: the message to print, and the problems of its
    specs where they are invalid."""

    def __init__(self, message: str, problems: tuple[Problem, ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems


@dataclass(frozen=True)
class Source:
    """One side before it is checked: as shown, the paths of its specs and where their
    names are shown from, its settings and its context."""

    side: Side
    paths: list[Path]
    display: Path
    settings: Settings
    context: Context


def shown_rev(rev: str) -> str:
    """The revision as given, safe to print (control characters escaped, shortened)."""
    text = rev.encode("unicode_escape").decode("ascii")
    return text if len(text) <= 80 else text[:77] + "..."


def source(spec: str, settings: Settings, scratch: Path) -> Source:
    """A folder (read with the working tree's settings), or git:REV: the specs folders
    that revision's own settings name, read from git's objects into ``scratch``.
    Raises :class:`SideError` for a missing folder or a revision git cannot read."""
    if spec.startswith("git:"):
        return _export(spec, scratch)
    if not Path(spec).exists():
        raise SideError(f"{spec}: no such folder (give a folder of specs or git:REV)")
    try:
        top: Path | None = toplevel(Path.cwd())
    except GitReadError:
        top = None
    return Source(Side(spec), [Path(spec)], Path.cwd(), settings, working_context(settings, top))


def _export(spec: str, scratch: Path) -> Source:
    """git:REV: its settings as committed there (found from the working folder up), and
    the spec files of the folders they name, extracted under ``scratch``."""
    rev = spec[4:]
    try:
        top = toplevel(Path.cwd())
        commit = resolve(top, rev)
        here = PurePosixPath(Path.cwd().resolve().relative_to(top.resolve()).as_posix())
        shown = f"git:{shown_rev(rev)}"
        revision = read_revision(top, commit, here, scratch / "settings", shown)
        paths = export(top, commit, list(revision.folders), scratch / "tree")
    except GitReadError as exc:
        raise SideError(f"git:{shown_rev(rev)}: {exc}") from None
    return Source(Side(spec, commit), paths, scratch / "tree", revision.settings, revision.context)


def check_side(
    src: Source, policy: Settings, progress: Progress | None = None
) -> tuple[Specs, Analysis]:
    """The specs and analysis of one side, judged by ``policy`` (the base's settings:
    thresholds and rules file). Raises :class:`SideError` with the problems of specs
    that do not pass the check."""
    if progress is not None:
        progress(f"checking {shown_rev(src.side.name)}", 0, 0)
    if not src.paths:  # no specs folder at that revision
        return Specs({}, ()), analyse(Specs({}, ()), policy.thresholds)
    result = check(
        src.paths, thresholds=policy.thresholds, rules_file=policy.rules, display_root=src.display
    )
    if result.failed() or result.specs is None or result.analysis is None:
        message = f"{shown_rev(src.side.name)}: the specs are invalid:"
        raise SideError(message, tuple(result.problems))
    return result.specs, result.analysis
