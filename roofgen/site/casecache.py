"""The pages of an earlier build, so that a rebuild analyses and makes only the changed cases.

A case page (its Markdown, the Vega-Lite specs of its charts inside) and the case's
listing (what the pages of every case show of it, :mod:`roofgen.site.listing`) follow
from:

- the case file's bytes and the name it is shown by (its document key,
  :class:`roofgen.spec.file_cache.DocumentCache`), and the data of the machines it
  names (their digest, :func:`roofgen.spec.result_cache.machines_digest`);
- the check's findings on the case and the recommendations, which follow from those,
  the thresholds, the shipped rules and the team's rules file (its bytes);
- the case's history section, where the site has one;
- the settings, roofgen's own code and data, its templates (their bytes), and the
  versions of what renders the pages (Python, Jinja, PyYAML).

An entry is keyed by a digest of all of them but the history section, and holds the
page and the listing as inert text: a line of JSON (the page's docs path, its number of
charts, the length of its text in bytes, the digest of the history section it was made
with, the listing as :func:`roofgen.site.listing.to_data` writes it), then the page's
Markdown, read back only in exactly that shape (anything else is a miss; the text is not
parsed: a page of large chart specs reads back in a fraction of a millisecond). The
check asks :meth:`Reuse.known` of each case before building it: a case whose entry is
stored, with the history section the case has now, is neither built nor analysed
(its findings come from :mod:`roofgen.spec.result_cache`), and the pages of every case
read its stored listing. A site with static charts makes every page (its SVGs are
written from the chart cache, not from here). Entries the latest build did not use are
removed.

The home page, the machine pages and the index pages (all cases, by machine, by class,
by tag, ...) list every case: one is kept when its context, every row and chart input
of it as it prints, is that of an earlier build, so that a change that alters none of
its rows does not render it again. The page types' dataclasses print every field (none
is left out of its ``repr``); a test holds them to that.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from roofgen.advice import Advice, RuleSet, advise
from roofgen.analysis.analyse import Analysis
from roofgen.config import Settings
from roofgen.datafiles import data_dir
from roofgen.files import prune_cache_entries, write_cache_entry
from roofgen.review.history import History
from roofgen.site.listing import CaseListing, from_data, listing, to_data
from roofgen.site.pagetypes import CasePage, HomePage, IndexPage, MachinePage
from roofgen.site.sections.history import history_section
from roofgen.spec.file_cache import roofgen_digest
from roofgen.version import versions

if TYPE_CHECKING:
    from roofgen.pipeline import CheckResult

__all__ = ["CachedCase", "CachedPage", "CasePageCache", "Reuse", "open_cache"]

_FOLDER = "pages"
_PREFIX = "case-"
_LISTS = "list-"
_SUFFIX = ".md"
_FORMAT = 2
_FIELDS = ("roofgen_case_page", "path", "charts", "bytes")
_CASE_FIELDS = (*_FIELDS, "history", "listing")
#: The pages that list every case (the home page, the machine pages, the index pages).
SitePage = HomePage | MachinePage | IndexPage
#: Distributions whose version decides a case page's Markdown.
_RENDERING = ("jinja2", "pyyaml", "markupsafe", "markdown", "nh3")  # nh3: narratives


class CachedPage:
    """A page from the cache: its docs path, its Markdown and its number of charts."""

    __slots__ = ("charts", "path", "text")

    def __init__(self, path: str, text: str, charts: int) -> None:
        self.path = path
        self.text = text
        self.charts = charts


class CachedCase(CachedPage):
    """A case page from the cache, with the case's listing and the digest of the
    history section the page was made with."""

    __slots__ = ("history", "listing")

    def __init__(self, path: str, text: str, charts: int, history: str, listing: CaseListing):
        super().__init__(path, text, charts)
        self.history = history
        self.listing = listing


class CasePageCache:
    """Case pages under ``folder/pages`` for the build of ``context`` (the digest of
    everything every page depends on: settings, rules, roofgen, templates)."""

    def __init__(self, folder: Path, context: str, *, fresh: bool = False) -> None:
        self.dir = Path(folder) / _FOLDER
        self.context = context
        self.fresh = fresh  # make every page (and store it): nothing is read
        self._used: set[str] = set()

    def key(self, document_key: str, machines: str) -> str:
        """The key of the page of the case whose file has ``document_key``, checked
        against the machines of digest ``machines``, in this build's context."""
        text = f"{_FORMAT}\0{self.context}\0{document_key}\0{machines}"
        digest = hashlib.sha256(text.encode()).hexdigest()
        self._used.add(digest)
        return digest

    def page_key(self, page: SitePage) -> str:
        """The key of a page of every case (the home page, a machine page, an index
        page): its context as it prints, every row and chart input of it."""
        text = f"{_FORMAT}\0{self.context}\0{type(page).__name__}\0{page!r}"
        digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
        self._used.add(digest)
        return digest

    def get(self, key: str) -> CachedPage | None:
        """The page of every case stored under ``key``, or None."""
        found = self._read(_LISTS, key, _FIELDS)
        return None if found is None else CachedPage(*found[:3])

    def get_case(self, key: str) -> CachedCase | None:
        """The case page and listing stored under ``key``, or None."""
        found = self._read(_PREFIX, key, _CASE_FIELDS)
        if found is None:
            return None
        path, text, charts, history, data = found
        read = from_data(data)
        if not isinstance(history, str) or read is None:
            return None
        return CachedCase(path, text, charts, history, read)

    def put(self, key: str, page: CachedPage) -> None:
        self._write(_LISTS, key, page, _FIELDS)

    def put_case(self, key: str, page: CachedCase) -> None:
        self._write(_PREFIX, key, page, _CASE_FIELDS, page.history, to_data(page.listing))

    def prune(self) -> None:
        """Remove the entries this build did not use."""
        for prefix in (_PREFIX, _LISTS):
            prune_cache_entries(self.dir, prefix, _SUFFIX, self._used)

    def _read(self, prefix: str, key: str, fields: tuple[str, ...]) -> list[Any] | None:
        """The path, text and charts of an entry, and its other fields' values."""
        if self.fresh:
            return None
        try:
            raw = (self.dir / f"{prefix}{key}{_SUFFIX}").read_bytes()
            head, _, body = raw.partition(b"\n")
            entry = json.loads(head)
            text = body.decode("utf-8")
        except (OSError, ValueError, RecursionError):
            return None
        if not (isinstance(entry, dict) and list(entry) == list(fields)):
            return None
        version, path, charts, size, *rest = (entry[k] for k in fields)
        if type(version) is not int or version != _FORMAT or not isinstance(path, str):
            return None
        if type(charts) is not int or charts < 0 or type(size) is not int or size != len(body):
            return None
        return [path, text, charts, *rest]

    def _write(
        self, prefix: str, key: str, page: CachedPage, fields: tuple[str, ...], *extra: Any
    ) -> None:
        body = page.text.encode("utf-8")
        values = [_FORMAT, page.path, page.charts, len(body), *extra]
        head = dict(zip(fields, values, strict=True))
        data = json.dumps(head, ensure_ascii=True, separators=(",", ":")).encode() + b"\n" + body
        write_cache_entry(self.dir / f"{prefix}{key}{_SUFFIX}", data)


def open_cache(
    folder: Path | None, settings: Settings, *, static: bool, fresh: bool = False
) -> CasePageCache | None:
    """The case page cache of a build, or None: no cache folder, static charts, or a
    rules file or template that cannot be read (then every page is made). ``fresh``
    (``--clean``): every page is made, and stored for the next build."""
    if folder is None or static:
        return None
    try:
        context = _context(settings)
    except OSError:
        return None
    return CasePageCache(folder, context, fresh=fresh)


def _context(settings: Settings) -> str:
    """The digest of what every case page depends on."""
    h = hashlib.sha256()
    about: list[Any] = [roofgen_digest(), repr(settings), sys.version, versions(*_RENDERING)]
    h.update(json.dumps(about, default=str).encode("utf-8", "surrogateescape"))
    files: list[tuple[str, Path]] = []
    if settings.rules is not None:
        files.append(("rules", Path(settings.rules)))
    templates = data_dir("templates")
    files += [
        (f"templates/{p.relative_to(templates).as_posix()}", p)
        for p in sorted(templates.rglob("*"))
        if p.is_file()
    ]
    for name, path in files:
        data = path.read_bytes()
        h.update(f"\0{name}\0{len(data)}\0".encode("utf-8", "surrogateescape") + data)
    return h.hexdigest()


class Reuse:
    """The case pages and listings a build takes from the cache (``hits``, by case id)
    and the keys of the others, stored once made (:meth:`store`). ``history``: the
    site's history (None: none), whose section of each case its page holds."""

    def __init__(self, cache: CasePageCache | None = None, history: History | None = None):
        self.cache = cache
        self.history = history
        self.keys: dict[str, str] = {}  # case id -> key of its entry
        self.hits: dict[str, CachedCase] = {}
        self.page_hits: dict[str, str] = {}  # docs path -> Markdown
        self._page_keys: dict[str, str] = {}
        self._known: dict[tuple[str, str], tuple[str, CachedCase]] = {}
        self._histories: dict[tuple[str, str], str] = {}

    def known(self, document_key: str, machines: str) -> bool:
        """Whether the page and listing of the case whose file has ``document_key``,
        checked against the machines of digest ``machines``, are stored, with the
        history section the case has now: the check then neither builds nor analyses
        the case (:func:`roofgen.pipeline.check`'s ``reuse``)."""
        if self.cache is None:
            return False
        key = self.cache.key(document_key, machines)
        found = self.cache.get_case(key)
        if found is None or not self._same_history(found.listing.id, found):
            return False
        self._known[document_key, machines] = (key, found)
        return True

    def settle(self, checked: CheckResult) -> None:
        """After the check: the cases it did not analyse (``checked.reused``) have their
        entries; the page of a case it analysed comes from the cache where stored."""
        if self.cache is None:
            return
        for ident, keys in checked.case_keys.items():
            found: CachedCase | None
            if ident in checked.reused:
                key, found = self._known[keys]
            else:
                key = self.cache.key(*keys)
                stored = self.cache.get_case(key)
                found = stored if stored and self._same_history(ident, stored) else None
            self.keys[ident] = key
            if found is not None:
                self.hits[ident] = found

    def listings(self, checked: CheckResult) -> list[CaseListing]:
        """Every case's listing, in the order of their ids: those the check did not
        analyse (after :meth:`settle`) from their entries, the others from the analysis."""
        assert checked.analysis is not None and checked.specs is not None
        made = [listing(c, checked.specs.machines) for c in checked.analysis.cases]
        kept = [self.hits[ident].listing for ident in checked.reused]
        return sorted([*made, *kept], key=lambda c: c.id)

    def advice(self, analysis: Analysis, ruleset: RuleSet | None) -> Advice | None:
        """The recommendations of the cases whose pages are made (not those reused)."""
        if ruleset is None:
            return None
        rest = tuple(c for c in analysis.cases if c.case.id not in self.hits)
        return advise(replace(analysis, cases=rest), ruleset)

    def kept(self, pages: Sequence[SitePage]) -> dict[str, str]:
        """Those of ``pages`` in the cache, by docs path (the others are made and stored)."""
        if self.cache is not None:
            for page in pages:
                key = self._page_keys[page.path] = self.cache.page_key(page)
                found = self.cache.get(key)
                if found is not None and found.path == page.path and found.charts == 0:
                    self.page_hits[page.path] = found.text
        return self.page_hits

    @property
    def pages(self) -> dict[str, str]:
        """The reused pages: docs path -> Markdown."""
        return {page.path: page.text for page in self.hits.values()}

    @property
    def charts(self) -> int:
        """The number of charts on the reused pages."""
        return sum(page.charts for page in self.hits.values())

    def store(
        self, made: Sequence[CasePage], pages: Mapping[str, str], listings: Sequence[CaseListing]
    ) -> None:
        """Store the case pages ``made`` (their Markdown in ``pages``) with their
        ``listings``; remove the entries this build did not use."""
        if self.cache is None:
            return
        by_id = {c.id: c for c in listings}
        for page in made:
            key = self.keys.get(page.id)
            if key is None or page.path not in pages:
                continue
            charts = len({slot.key for slot in (*page.charts, *page.section_charts)})
            history = self._history(page.id, page.title)
            entry = CachedCase(page.path, pages[page.path], charts, history, by_id[page.id])
            self.cache.put_case(key, entry)
        for path, key in self._page_keys.items():
            if path not in self.page_hits and path in pages:
                self.cache.put(key, CachedPage(path, pages[path], 0))
        self.cache.prune()

    def _same_history(self, ident: str, found: CachedCase) -> bool:
        return found.history == self._history(ident, found.listing.row.title)

    def _history(self, ident: str, title: str) -> str:
        """The digest of the history section of case ``ident`` (titled ``title``)."""
        held = self._histories.get((ident, title))
        if held is None:
            section = history_section(ident, title, self.history) if self.history else None
            held = hashlib.sha256(repr(section).encode("utf-8", "surrogateescape")).hexdigest()
            self._histories[ident, title] = held
        return held
