"""Links roofgen writes into raw HTML (tables, the verdict card, chart marks), which
MkDocs does not rewrite as it rewrites Markdown links: each is written relative to its
page, to the URL MkDocs gives the target page."""

from __future__ import annotations

import posixpath
from urllib.parse import quote

__all__ = ["USE_DIRECTORY_URLS", "html_link", "page_url"]

#: MkDocs' ``use_directory_urls``, as the generated mkdocs.yml sets it.
USE_DIRECTORY_URLS = False


def page_url(path: str, directory_urls: bool = USE_DIRECTORY_URLS) -> str:
    """The URL (relative to the site root) MkDocs gives the docs page ``path``."""
    stem = path.removesuffix(".md")
    if not directory_urls:
        return stem + ".html"
    if stem == "index" or stem.endswith("/index"):
        return stem.removesuffix("index")
    return stem + "/"


def html_link(page: str, target: str, directory_urls: bool = USE_DIRECTORY_URLS) -> str:
    """The relative URL, as MkDocs would write it, from the page ``page`` to the docs
    path ``target`` (a page ``.md``, or any other file; ``#anchor`` kept)."""
    path, _, fragment = str(target).partition("#")
    url = page_url(path, directory_urls) if path.endswith(".md") else path
    here = page_url(page, directory_urls)
    here = here.rstrip("/") if here.endswith("/") or not here else posixpath.dirname(here)
    relative = posixpath.relpath(url or ".", here or ".")
    if url.endswith("/") or not url:
        relative = "./" if relative == "." else relative + "/"
    out = quote(relative, safe="/.-_~")
    return out + ("#" + quote(fragment, safe="-_.") if fragment else "")
