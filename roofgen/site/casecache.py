"""The pages of an earlier build, so that a rebuild makes only the pages of changed cases.

A case page (its Markdown, the Vega-Lite specs of its charts inside) follows from:

- the case as the check built it (the model of its file: every field, the name its file
  is shown by included), and the machines it names;
- the check's findings on the case (written into the key as they are), the
  recommendations (from the case, its machines, the shipped rules and the team's rules
  file: its bytes), and the thresholds;
- the case's history section, where the site has one (written into the key as it is);
- the settings, roofgen's own code and data, its templates (their bytes), and the
  versions of what renders the pages (Python, Jinja, PyYAML).

An entry is keyed by a digest of all of them and holds the page as inert text: a line of
JSON (its docs path, its number of charts, the length of its text in bytes), then the
page's Markdown, read back only in exactly that shape (anything else is a miss, and
the page is made again; the text is not parsed: a page of large chart specs reads back
in a fraction of a millisecond). A site with static charts makes every
page (its SVGs are written from the chart cache, not from here). Entries the latest
build did not use are removed.

The home page, the machine pages and the index pages (all cases, by machine, by class,
by tag, ...) list every case: one is kept when its context, every row and chart input
of it as it prints, is that of an earlier build, so that a change that alters none of
its rows does not render it again.

The model's dataclasses print every field (none is left out of its ``repr``), so two
cases with the same key were built from the same data; a test holds the model to that.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from roofgen.advice import Advice, RuleSet, advise
from roofgen.analysis.analyse import Analysis, CaseResult
from roofgen.analysis.findings import Finding
from roofgen.config import Settings
from roofgen.datafiles import data_dir
from roofgen.files import prune_cache_entries, write_cache_entry
from roofgen.model import Machine
from roofgen.review.history import History
from roofgen.site.pagetypes import CasePage, HomePage, IndexPage, MachinePage
from roofgen.site.sections.history import history_section
from roofgen.spec.file_cache import roofgen_digest
from roofgen.version import versions

__all__ = ["CachedPage", "CasePageCache", "Reuse", "open_cache"]

_FOLDER = "pages"
_PREFIX = "case-"
_LISTS = "list-"
_SUFFIX = ".md"
_FORMAT = 1
_FIELDS = ("roofgen_case_page", "path", "charts", "bytes")
_SHAPE = set(_FIELDS)
#: The pages that list every case (the home page, the machine pages, the index pages).
SitePage = HomePage | MachinePage | IndexPage
#: Distributions whose version decides a case page's Markdown.
_RENDERING = ("jinja2", "pyyaml", "markupsafe")


class CachedPage:
    """A case page from the cache: its docs path, its Markdown and its number of charts."""

    __slots__ = ("charts", "path", "text")

    def __init__(self, path: str, text: str, charts: int) -> None:
        self.path = path
        self.text = text
        self.charts = charts


class CasePageCache:
    """Case pages under ``folder/pages`` for the build of ``context`` (the digest of
    everything every page depends on: settings, rules, roofgen, templates)."""

    def __init__(self, folder: Path, context: str, *, fresh: bool = False) -> None:
        self.dir = Path(folder) / _FOLDER
        self.context = context
        self.fresh = fresh  # make every page (and store it): nothing is read
        self._used: set[str] = set()

    def key(
        self,
        case: CaseResult,
        machines: Mapping[str, Machine],
        findings: Sequence[Finding],
        extra: object = None,
    ) -> str:
        """The key of ``case``'s page: the case, the machines it names, its findings
        and ``extra`` (its history section), in this build's context."""
        named = dict.fromkeys(
            [*(m.id for m in case.case.machines), *(v.machine for v in case.variants)]
        )
        h = hashlib.sha256(f"{_FORMAT}\0{self.context}\0".encode())
        h.update(repr(case.case).encode("utf-8", "surrogateescape"))
        for ident in named:
            h.update(
                f"\0machine\0{ident}\0{machines.get(ident)!r}".encode("utf-8", "surrogateescape")
            )
        h.update(
            f"\0findings\0{tuple(findings)!r}\0extra\0{extra!r}".encode("utf-8", "surrogateescape")
        )
        digest = h.hexdigest()
        self._used.add(digest)
        return digest

    def page_key(self, page: SitePage) -> str:
        """The key of a page of every case (the home page, a machine page, an index
        page): its context as it prints, every row and chart input of it."""
        text = f"{_FORMAT}\0{self.context}\0{type(page).__name__}\0{page!r}"
        digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
        self._used.add(digest)
        return digest

    def get(self, key: str, prefix: str = _PREFIX) -> CachedPage | None:
        """The page stored under ``key``, or None."""
        if self.fresh:
            return None
        try:
            raw = (self.dir / f"{prefix}{key}{_SUFFIX}").read_bytes()
            head, _, body = raw.partition(b"\n")
            entry = json.loads(head)
            text = body.decode("utf-8")
        except (OSError, ValueError, RecursionError):
            return None
        if not (isinstance(entry, dict) and entry.keys() == _SHAPE):
            return None
        version, path, charts, size = (entry[k] for k in _FIELDS)
        if type(version) is not int or version != _FORMAT or not isinstance(path, str):
            return None
        if type(charts) is not int or charts < 0 or type(size) is not int or size != len(body):
            return None
        return CachedPage(path, text, charts)

    def put(self, key: str, page: CachedPage, prefix: str = _PREFIX) -> None:
        body = page.text.encode("utf-8")
        head = dict(zip(_FIELDS, (_FORMAT, page.path, page.charts, len(body)), strict=True))
        data = json.dumps(head, ensure_ascii=True, separators=(",", ":")).encode() + b"\n" + body
        write_cache_entry(self.dir / f"{prefix}{key}{_SUFFIX}", data)

    def prune(self) -> None:
        """Remove the entries this build did not use."""
        for prefix in (_PREFIX, _LISTS):
            prune_cache_entries(self.dir, prefix, _SUFFIX, self._used)


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
    """The case pages a build takes from the cache (``hits``, by case id) and the keys
    of the others, stored once made (:meth:`store`)."""

    def __init__(self, cache: CasePageCache | None = None) -> None:
        self.cache = cache
        self.keys: dict[str, str] = {}
        self.hits: dict[str, CachedPage] = {}
        self.page_hits: dict[str, str] = {}  # docs path -> Markdown
        self._page_keys: dict[str, str] = {}

    @classmethod
    def find(
        cls,
        cache: CasePageCache | None,
        cases: Sequence[CaseResult],
        machines: Mapping[str, Machine],
        findings: Sequence[Finding],
        history: History | None,
    ) -> Reuse:
        """The pages of ``cases`` in ``cache`` (none without a cache)."""
        out = cls(cache)
        if cache is None:
            return out
        by_case: dict[str, list[Finding]] = {}
        for finding in findings:
            by_case.setdefault(finding.case, []).append(finding)
        for case in cases:
            ident = case.case.id
            section = history_section(ident, case.case.title, history) if history else None
            key = cache.key(case, machines, by_case.get(ident, ()), section)
            out.keys[ident] = key
            page = cache.get(key)
            if page is not None:
                out.hits[ident] = page
        return out

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
                found = self.cache.get(key, _LISTS)
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

    def store(self, made: Sequence[CasePage], pages: Mapping[str, str]) -> None:
        """Store the case pages ``made`` (their Markdown in ``pages``); remove the
        entries this build did not use."""
        if self.cache is None:
            return
        for page in made:
            key = self.keys.get(page.id)
            if key is None or page.path not in pages:
                continue
            charts = len({slot.key for slot in (*page.charts, *page.section_charts)})
            self.cache.put(key, CachedPage(page.path, pages[page.path], charts))
        for path, key in self._page_keys.items():
            if path not in self.page_hits and path in pages:
                self.cache.put(key, CachedPage(path, pages[path], 0), _LISTS)
        self.cache.prune()
