"""``roofgen history``'s library entry point: the history of the specs in git, with
the project's cache (see :mod:`roofgen.review.history`)."""

from __future__ import annotations

from pathlib import Path

from roofgen.config import Settings
from roofgen.review.history import GitReadError, History
from roofgen.review.history import history as _history

__all__ = ["GitReadError", "History", "history", "history_cache_folder"]


def history_cache_folder(settings: Settings, root: Path) -> Path | None:
    """The project's cache folder (None where it cannot be used): the same as a build's."""
    from roofgen.site.cachedir import choose

    return choose(settings, root / "site", None, True).folder


def history(
    settings: Settings,
    *,
    selector: str | None = None,
    since: str | None = None,
    last: int | None = None,
    paths: list[Path] | None = None,
    use_cache: bool = True,
    root: Path | None = None,
) -> History:
    """The history over commits of the cases in the specs folders (or ``paths``), of
    one case, kernel or launch by ``selector`` (``CASE[/KERNEL[/VARIANT]]``). Raises
    ValueError for a malformed selector, :class:`GitReadError` when git cannot tell."""
    case = kernel = variant = None
    if selector:
        case, kernel, variant = parse_selector(selector)
    root = root or Path.cwd()
    cache = history_cache_folder(settings, root) if use_cache else None
    return _history(
        root,
        paths or list(settings.specs),
        case=case,
        kernel=kernel,
        variant=variant,
        since=since,
        last=last,
        thresholds=settings.thresholds,
        cache_dir=cache,
    )


def parse_selector(text: str) -> tuple[str, str | None, str | None]:
    """``CASE[/KERNEL[/VARIANT]]`` -> its parts; ValueError when malformed."""
    parts = text.split("/")
    if len(parts) > 3 or not all(parts):
        raise ValueError(f"{text!r}: write CASE, CASE/KERNEL or CASE/KERNEL/VARIANT")
    return parts[0], (parts[1] if len(parts) > 1 else None), (parts[2] if len(parts) > 2 else None)
