"""The history section of a case page: the case's launches over the commits that
changed it, when the site is built from specs in a git repository.

The history is read once for the whole site (:func:`roofgen.review.history.history`,
with the build's cache folder, so a rebuild analyses only the commits it has not
seen) and each case page gets its own chart: a point per commit that changed the case
and launch, labelled with the commit's subject (escaped: written as text, control
characters as their escapes). ``[site] history = false`` turns it off; outside a git
repository (or without git) there is no history and no section.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from roofgen.config import Settings
from roofgen.review.history import GitReadError, History, history
from roofgen.review.history_report import history_chart_input
from roofgen.site.pagetypes import SiteContext
from roofgen.site.sections.base import Section, slot

__all__ = ["add_history", "history_section", "site_history", "with_history"]

INTRO = (
    "The time of one call of each launch at every commit that changed this case (its "
    "file, or a machine file it names), oldest first, following the repository's first "
    "parents. The tooltips give each commit's date, subject, efficiency and binding "
    "resource; `roofgen history CASE` prints them."
)


def site_history(settings: Settings, cache_folder: Path | None) -> History | None:
    """The history of the specs folders, or None: turned off, or not in git."""
    if settings.site.get("history", True) is False or not settings.specs:
        return None
    try:
        return history(
            Path(settings.specs[0]),
            list(settings.specs),
            thresholds=settings.thresholds,
            cache_dir=cache_folder,
        )
    except GitReadError:
        return None


def history_section(case_id: str, title: str, found: History) -> Section | None:
    """The section of one case, or None where no commit gave it a point."""
    inp = history_chart_input(found, f"History of {title}", case_id)
    if not inp.points:
        return None
    notes = ("The history starts at a shallow clone's cut.",) if found.shallow else ()
    chart = slot(
        f"case:{case_id}:history", "history-1", f"{title} over the commits that changed it", inp
    )
    return Section("history", "History", INTRO, (chart,), (), notes)


def add_history(ctx: SiteContext, settings: Settings, cache_folder: Path | None) -> SiteContext:
    """``ctx`` with a history section on every case page that has a history."""
    return with_history(ctx, site_history(settings, cache_folder))


def with_history(ctx: SiteContext, found: History | None) -> SiteContext:
    """``ctx`` with the history ``found`` (None: none) on the case pages it holds."""
    if found is None:
        return ctx
    pages = []
    for page in ctx.cases:
        section = history_section(page.id, page.title, found)
        pages.append(page if section is None else replace(page, sections=(*page.sections, section)))
    return replace(ctx, cases=tuple(pages))
