"""The Content-Security-Policy of every page of the site: the second wall against script
that spec text might smuggle into a page (the first is the sanitised Markdown).

Scripts run only from the site's own files (``'self'``: the theme's bundle, the search
worker and index, the chart runtime; Chromium lets ``'self'`` match ``file:`` scripts of a
``file://`` page too) and as the theme's own inline scripts, allowed by their SHA-256
hashes. Those hashes are computed once per theme configuration from what the theme
writes for empty pages (:func:`theme_inline_hashes` over a throwaway MkDocs build, which
:mod:`roofgen.site.mkdocs_run` makes), never from a page that holds content: whatever
inline script a page of the site holds beyond the theme's is refused by the browser.
Material writes inline scripts in its base template (the scope of its local storage,
which names the page's way up to the site root: one script per folder depth), the
content partial, and depending on the settings the palette, announce and outdated
partials.

``object-src 'none'`` (no plugins), ``base-uri 'none'`` (no ``<base>`` that would move
every relative script URL to another host) and ``form-action 'self'`` complete it.
``style-src`` is left open: vega-embed adds a ``<style>`` element. Vega evaluates chart
expressions with its interpreter (``ast: true`` in ``roofgen-charts.js``), so the
policy needs no ``'unsafe-eval'``. A ``<meta>`` policy cannot carry ``frame-ancestors``
or reporting: the Guide lists the headers a host should send.
"""

from __future__ import annotations

import base64
import hashlib
import html.parser
import json
import re
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "CACHE_FORMAT",
    "entry",
    "inline_scripts",
    "parse_entry",
    "policy",
    "theme_inline_hashes",
]

#: Bump when what is hashed or how the entry is written changes.
CACHE_FORMAT = 1
_HASH = re.compile(r"sha256-[A-Za-z0-9+/]{43}=")
#: Script types a browser runs (an empty type is JavaScript); JSON data is never run.
_RUN_TYPES = {"", "text/javascript", "application/javascript", "module"}


def policy(hashes: Iterable[str]) -> str:
    """The policy text of the ``<meta http-equiv="Content-Security-Policy">`` tag."""
    sources = " ".join(["'self'", *(f"'{h}'" for h in sorted(set(hashes)))])
    return f"script-src {sources}; object-src 'none'; base-uri 'none'; form-action 'self'"


class _Scripts(html.parser.HTMLParser):
    """The text of every inline script a browser would run."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.found: list[str] = []
        self._open: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "script":
            return
        values = {name: value or "" for name, value in attrs}
        runs = values.get("type", "").strip().lower() in _RUN_TYPES
        self._open = [] if runs and "src" not in values else None

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._open is not None:
            self.found.append("".join(self._open))
            self._open = None


def inline_scripts(page: str) -> list[str]:
    """The inline scripts of an HTML page that a browser would run, as written."""
    parser = _Scripts()
    parser.feed(page)
    parser.close()
    return parser.found


def _digest(script: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()


def theme_inline_hashes(site: Path) -> list[str]:
    """The hashes of the inline scripts of every page of ``site``: a throwaway site of
    empty pages, so the scripts are the theme's own."""
    found = {
        _digest(script)
        for page in sorted(site.rglob("*.html"))
        for script in inline_scripts(page.read_text(encoding="utf-8"))
    }
    return sorted(found)


def parse_entry(text: str) -> list[str] | None:
    """The hashes of a cache entry, or None unless it has exactly the shape written."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or set(data) != {"format", "hashes"}:
        return None
    hashes = data["hashes"]
    if data["format"] != CACHE_FORMAT or not isinstance(hashes, list):
        return None
    if not all(isinstance(h, str) and _HASH.fullmatch(h) for h in hashes):
        return None
    return list(hashes)


def entry(hashes: list[str]) -> str:
    """The text of a cache entry holding ``hashes``."""
    return json.dumps({"format": CACHE_FORMAT, "hashes": hashes})
