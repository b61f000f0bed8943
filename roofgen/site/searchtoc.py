"""The search index's look-up of a section's heading, in time that does not grow with
the page.

Material's search plugin splits a page into sections at its headings and, for each
section, finds the heading's table-of-contents entry by walking the page's whole
table of contents (``SearchIndex._find_toc_by_id``). A page of H headings costs H²/2
steps: a case of 3,200 variants has about 10,000 headings, 5·10^7 steps. The walk is
replaced, on the one search index of a build, by a dictionary of the page's entries
made once per page: the same entry (the first, depth first, with that id), found in
one step.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["index_headings"]


def index_headings(search_plugin: Any) -> None:
    """Give ``search_plugin``'s index (Material's ``SearchIndex``, made in its
    ``on_config``) a look-up of table-of-contents entries by id. Does nothing where
    the plugin has no such index or the index no such walk (another version)."""
    index = getattr(search_plugin, "search_index", None)
    if index is None or not callable(getattr(index, "_find_toc_by_id", None)):
        return
    if isinstance(index.__dict__.get("_find_toc_by_id"), _ByIdLookup):
        return
    index._find_toc_by_id = _ByIdLookup()


class _ByIdLookup:
    """``_find_toc_by_id(toc, id)``: the entry of ``toc`` with ``id``, or None, from a
    dictionary of the last table of contents asked about (a page's sections are
    indexed one page at a time)."""

    def __init__(self) -> None:
        self._toc: Any = None
        self._by_id: dict[str, Any] = {}

    def __call__(self, toc: Any, ident: str | None) -> Any:
        if toc is not self._toc:
            self._toc, self._by_id = toc, {}
            _collect(toc, self._by_id)
        return self._by_id.get(ident) if ident is not None else _first(toc, ident)


def _collect(items: Iterable[Any], into: dict[str, Any]) -> None:
    """Every entry's id, depth first as the walk visits them; the first entry kept."""
    for item in items:
        ident = getattr(item, "id", None)
        if ident is not None:
            into.setdefault(ident, item)
        _collect(getattr(item, "children", ()), into)


def _first(items: Iterable[Any], ident: None) -> Any:
    """The walk's answer for a section without an id: the first entry without one."""
    for item in items:
        if getattr(item, "id", None) == ident:
            return item
        found = _first(getattr(item, "children", ()), ident)
        if found is not None:
            return found
    return None
