"""MkDocs' own build of the generated project, run quietly and reproducibly: the one
module that knows which site generator turns the pages into HTML.

:func:`run_mkdocs` collects MkDocs' warnings instead of printing them, and sets
``SOURCE_DATE_EPOCH`` (from :func:`source_date_epoch`) for the build only, so that
the same specs give the same HTML.

The search index holds, of each page, only what is outside the regions the pages mark
with ``<!-- roofgen:search-off -->`` ... ``<!-- roofgen:search-on -->`` (charts and
tables; their headings stay): a case's entry is its title, headings, verdict and
narrative, so the index grows by a bounded amount per case, and the search plugin
parses a fraction of each page. Material writes the index once, as
``search/search_index.json`` (fetched over HTTP); the build adds the same index as a
script, ``search/search_index.js``, which is what the search loads on ``file://``
pages, where nothing can be fetched.
"""

from __future__ import annotations

import calendar
import contextlib
import datetime as dt
import hashlib
import json
import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from roofgen.datafiles import data_dir
from roofgen.files import write_cache_entry, write_file
from roofgen.site import csp
from roofgen.site.errors import BuildError

__all__ = ["SEARCH_OFF", "SEARCH_ON", "run_mkdocs", "search_text", "source_date_epoch"]

SEARCH_OFF = "<!-- roofgen:search-off -->"
SEARCH_ON = "<!-- roofgen:search-on -->"
_UNSEARCHED = re.compile(re.escape(SEARCH_OFF) + r"(.*?)(?:" + re.escape(SEARCH_ON) + "|$)", re.S)
_HEADING = re.compile(r"<h([1-6])\b[^>]*>.*?</h\1>", re.S)


def search_text(html: str) -> str:
    """The HTML of a page that search indexes: its marked regions left out but for
    their headings (the sections search links to)."""
    if SEARCH_OFF not in html:
        return html
    return _UNSEARCHED.sub(lambda m: "".join(h.group(0) for h in _HEADING.finditer(m[1])), html)


def _excerpt_plugins() -> tuple[Any, Any]:
    """Two plugins around the search plugin's ``on_page_context``: the first (before it)
    hands it the page's :func:`search_text`, the second (after it) puts the page back."""
    from mkdocs.plugins import BasePlugin, event_priority

    from roofgen.site.searchtoc import index_headings

    kept: dict[int, str] = {}

    class Before(BasePlugin):
        @event_priority(100)
        def on_page_context(self, context: Any, *, page: Any, config: Any, nav: Any) -> Any:
            kept[id(page)] = page.content
            page.content = search_text(page.content or "")
            index_headings(config.plugins.get("material/search"))  # linear in the headings
            return context

    class After(BasePlugin):
        @event_priority(-100)
        def on_page_context(self, context: Any, *, page: Any, config: Any, nav: Any) -> Any:
            page.content = kept.pop(id(page), page.content)
            return context

    return Before(), After()


def _anchor_plugin(raw: Any) -> Any:
    """A plugin giving each page, right after its Markdown is converted, the anchor ids
    of the raw HTML blocks :class:`RawHtmlExtension` stored unparsed (MkDocs validates
    links to anchors against them)."""
    from mkdocs.plugins import BasePlugin, event_priority

    class Anchors(BasePlugin):
        @event_priority(100)
        def on_page_content(self, html: str, *, page: Any, config: Any, files: Any) -> str:
            page.present_anchor_ids = page.present_anchor_ids | raw.take_anchor_ids()
            return html

    return Anchors()


def source_date_epoch(newest_date: str) -> int:
    """SOURCE_DATE_EPOCH for MkDocs: midnight (UTC) of ``newest_date`` (the newest case
    date, ISO 8601), else 0."""
    try:
        day = dt.date.fromisoformat(newest_date)
    except ValueError:
        return 0
    return calendar.timegm(day.timetuple())


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def _quiet_mkdocs() -> Iterator[_Collect]:
    """MkDocs' loggers at WARNING and above, collected instead of printed."""
    collect = _Collect()
    top = logging.getLogger("mkdocs")
    saved = {"mkdocs": (top.level, top.propagate)}
    children = [
        name
        for name in list(logging.root.manager.loggerDict)
        if name.startswith("mkdocs.")
        and isinstance(logging.root.manager.loggerDict[name], logging.Logger)
    ]
    for name in children:
        logger = logging.getLogger(name)
        saved[name] = (logger.level, logger.propagate)
        if logger.level and logger.level < logging.WARNING:
            logger.setLevel(logging.WARNING)
    top.setLevel(logging.WARNING)
    top.propagate = False
    top.addHandler(collect)
    try:
        yield collect
    finally:
        top.removeHandler(collect)
        for name, (level, propagate) in saved.items():
            logger = logging.getLogger(name)
            logger.setLevel(level)
            logger.propagate = propagate


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """Set ``values`` in os.environ; afterwards restore the caller's environment."""
    before = dict(os.environ)
    os.environ.update(values)
    try:
        yield
    finally:
        for key in [k for k in os.environ if k not in before]:
            del os.environ[key]
        for key, value in before.items():
            if os.environ.get(key) != value:
                os.environ[key] = value


def run_mkdocs(
    config_file: Path, site_dir: Path, *, strict: bool, epoch: int, use_cache: bool = True
) -> list[str]:
    """Build ``config_file`` into ``site_dir`` quietly; return MkDocs' warnings.

    When MkDocs stops (an abort, a configuration error), ``strict`` builds get its
    messages back, as errors; other builds get a :class:`BuildError`.
    ``SOURCE_DATE_EPOCH`` is set to ``epoch`` for the build only (sitemap dates,
    gzip headers), and Material's end-of-life banner is switched off. Every page carries
    the Content-Security-Policy of :mod:`roofgen.site.csp`, whose theme hashes come from
    the user's cache folder unless ``use_cache`` is false (``build --no-cache``).
    """
    env = {"SOURCE_DATE_EPOCH": str(epoch), "NO_MKDOCS_2_WARNING": "true"}
    with _environment(env), _quiet_mkdocs() as collect:
        return _build(config_file, site_dir, strict, collect, theme_only=False, use_cache=use_cache)


def _build(
    config_file: Path,
    site_dir: Path,
    strict: bool,
    collect: _Collect,
    *,
    theme_only: bool,
    use_cache: bool = True,
) -> list[str]:
    """One MkDocs build with roofgen's plugins and theme override; ``theme_only``: the
    throwaway build of empty pages whose inline scripts the policy allows."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, ConfigurationError

    from roofgen.site.rawhtml import RawHtmlExtension

    try:
        config = load_config(config_file=str(config_file), site_dir=str(site_dir), strict=strict)
        policy = "" if theme_only else csp.policy(_theme_hashes(config_file, config, use_cache))
        # roofgen's main.html (the policy's <meta> tag) before the theme's own templates
        config.theme.dirs.insert(0, str(data_dir("templates") / "overrides"))
        config.plugins["roofgen/csp"] = _policy_plugin(policy)
        before, after = _excerpt_plugins()
        config.plugins["roofgen/search-excerpt"] = before
        config.plugins["roofgen/search-excerpt-end"] = after
        raw = RawHtmlExtension()
        config.markdown_extensions.append(raw)
        config.plugins["roofgen/raw-html-anchors"] = _anchor_plugin(raw)
        build(config)
    except (Abort, ConfigurationError) as exc:
        message = exc.format_message().strip()
        messages = [*collect.messages, message] if message else collect.messages or ["failed"]
        if strict:  # every message is an error: the caller stops
            return messages
        # Not a warning: MkDocs stopped, and its site folder is partial.
        raise BuildError("MkDocs failed: " + "; ".join(messages)) from None
    return collect.messages


def _policy_plugin(policy: str) -> Any:
    """A plugin giving the templates the page policy (``roofgen_csp``)."""
    from mkdocs.plugins import BasePlugin

    class Policy(BasePlugin):
        def on_env(self, env: Any, *, config: Any, files: Any) -> Any:
            env.globals["roofgen_csp"] = policy
            return env

    return Policy()


# --------------------------------------------------------------------------- policy

#: Settings of the generated mkdocs.yml that the throwaway build leaves out: they name
#: the pages and files of the real site, and decide nothing the theme writes inline.
_SITE_ONLY = ("docs_dir", "nav", "not_in_nav", "validation", "extra_css", "extra_javascript")


def _depths(docs: Path) -> list[int]:
    """The folder depths of the site's pages (``use_directory_urls`` is off: a page's
    depth is its Markdown file's), the root's always among them (the 404 page)."""
    found = {len(p.relative_to(docs).parts) - 1 for p in docs.rglob("*.md")}
    return sorted(found | {0})


def _theme_hashes(config_file: Path, config: Any, use_cache: bool) -> list[str]:
    """The hashes of the theme's inline scripts for this configuration, from the cache
    (keyed by the MkDocs and Material versions, the settings and the page depths) or from
    a throwaway build of empty pages at every depth the site's pages have."""
    import yaml

    from roofgen.version import versions

    settings = yaml.safe_load(config_file.read_text(encoding="utf-8"))  # roofgen's own file
    theme = {k: v for k, v in settings.items() if k not in _SITE_ONLY}
    depths = _depths(Path(config.docs_dir))
    override = (data_dir("templates") / "overrides" / "main.html").read_text(encoding="utf-8")
    key = json.dumps(
        [csp.CACHE_FORMAT, versions("mkdocs", "mkdocs-material"), theme, depths, override],
        sort_keys=True,
        default=str,
    )
    cache = _policy_cache(hashlib.sha256(key.encode()).hexdigest()[:32]) if use_cache else None
    if cache is not None:
        with contextlib.suppress(OSError, ValueError):
            hashes = csp.parse_entry(cache.read_text(encoding="utf-8"))
            if hashes is not None:
                return hashes
    hashes = _empty_site_hashes(theme, depths)
    if cache is not None:
        write_cache_entry(cache, csp.entry(hashes))
    return hashes


def _policy_cache(key: str) -> Path | None:
    """The cache entry of the policy ``key`` in the user's cache folder; None when that
    folder cannot be used safely."""
    from roofgen.site.cachedir import secure_folder, user_cache_root

    try:
        folder = user_cache_root() / "csp"
    except (OSError, RuntimeError):  # no home folder
        return None
    return None if secure_folder(folder) else folder / f"theme-{key}.json"


def _empty_site_hashes(theme: dict[str, Any], depths: list[int]) -> list[str]:
    """Build a site of empty pages, one at each depth, with ``theme`` (the site's settings
    but its pages), and hash the inline scripts the theme wrote into them."""
    import tempfile

    import yaml

    with tempfile.TemporaryDirectory(prefix="roofgen-theme-") as tmp:
        root = Path(tmp)
        pages = ["/".join([*(f"d{i}" for i in range(depth)), "index.md"]) for depth in depths]
        for page in pages:
            write_file(root / "docs" / page, "", root=root)
        settings = {**theme, "docs_dir": "docs"}
        write_file(root / "mkdocs.yml", yaml.safe_dump(settings, allow_unicode=True), root=root)
        collect = _Collect()
        _build(root / "mkdocs.yml", root / "site", False, collect, theme_only=True)
        return csp.theme_inline_hashes(root / "site")
