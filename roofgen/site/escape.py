"""Escaping filters for user strings placed in generated Markdown, HTML and YAML.

Spec strings (titles, names, summaries, narratives, links) are data, never markup:

* :func:`md_escape` - plain text inline in Markdown (table cells, headings, lists):
  every character Markdown or HTML would act on is written as an entity or a
  backslash escape, newlines become spaces.
* :func:`md_text` - roofgen's own Markdown prose (the Guide's field descriptions),
  with raw HTML, entities, attribute lists and links other than http(s) neutralised.
  A spec's Markdown fields are not escaped but rendered and sanitised on their own
  (:mod:`roofgen.site.narrative`): escaping cannot know how Markdown will pair them.
* :func:`html_escape` - plain text inside the HTML roofgen writes itself (tables,
  the verdict card): characters HTML acts on become entities, newlines spaces.
* :func:`safe_url` - a URL for a link target, only when it starts with http:// or
  https://; anything else is not linked.
* :func:`plain_text` - text for the MkDocs configuration (site name, nav titles),
  which the theme prints unescaped, inside attributes and through ``striptags``
  (which undoes entities): the characters that matter there are replaced by
  look-alikes.
"""

from __future__ import annotations

import re
from urllib.parse import quote

__all__ = ["html_escape", "markdown_source", "md_escape", "md_text", "plain_text", "safe_url"]

_MD_ENTITIES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    "|": "&#124;",
    "`": "&#96;",
    "[": "&#91;",
    "]": "&#93;",
    "{": "&#123;",
    "}": "&#125;",
    "\\": "\\\\",
    "*": "\\*",
    "_": "\\_",
    "#": "\\#",
    "!": "\\!",
}
_NEWLINES = re.compile(r"\s*[\r\n\u2028\u2029]+\s*")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_CONTROL_CHARS = {c: None for c in [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F]}
_SPACES = {c: " " for c in "\t\n\r\u2028\u2029"}
_MD_TABLE = str.maketrans({**_MD_ENTITIES, **_CONTROL_CHARS, **_SPACES})


def md_escape(value: object) -> str:
    """Plain text for one line of Markdown: a table cell, a heading, a list item."""
    text = str(value)
    if "\n" in text or "\r" in text:
        text = _NEWLINES.sub(" ", text)
    return text.strip().translate(_MD_TABLE)


_HTML = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        '"': "&quot;",
        "'": "&#39;",
        **_CONTROL_CHARS,
        **_SPACES,
    }
)


def html_escape(value: object) -> str:
    """Plain text for one line of raw HTML (a table cell, an attribute value).

    Markdown leaves a raw HTML block as it is, so backslash escapes are not needed
    there (they would show); HTML's own characters become entities."""
    text = str(value)
    if "\n" in text or "\r" in text:
        text = _NEWLINES.sub(" ", text)
    return text.strip().translate(_HTML)


# One pass over the text, left to right. Single-line code spans are left alone
# (Markdown escapes their content itself); everything else that could become live
# markup is neutralised:
#   a backtick outside them    `  ->  &#96;    (Markdown pairs backticks across lines:
#                                              a stray one would shift the pairing)
#   raw HTML and autolinks     <  ->  &lt;     (and > outside blockquote markers)
#   entities (java&#115;cript) &  ->  &amp;
#   attribute lists {: on...}  {} ->  &#123; &#125;
#   images (remote loads)      ![ ->  &#33;[   (the link stays a link, see below)
#   links to non-http(s) URLs  ](  ->  ]&#40;   and reference definitions ]: -> ]&#58;
_NARRATIVE = re.compile(
    r"""
    (?P<code>(?<![\\`])(?P<ticks>`+)[^\n]+?(?<!`)(?P=ticks)(?!`))
    | (?P<quote>^[ ]{0,3}(?:>[ ]?)+)
    | (?P<link>\]\((?![ \t]*https?://))
    | (?P<ref>\]:(?![ \t]*(?:\r?\n[ \t]*)?https?://))
    | (?P<image>!\[)
    | (?P<char>[&<>{}`])
    """,
    re.MULTILINE | re.VERBOSE | re.IGNORECASE,
)
_NARRATIVE_CHARS = {
    "&": "&amp;", "<": "&lt;", ">": "&gt;", "{": "&#123;", "}": "&#125;", "`": "&#96;",
}  # fmt: skip


def _narrative_token(match: re.Match[str]) -> str:
    kind = match.lastgroup
    text = match.group(0)
    if kind == "char":
        return _NARRATIVE_CHARS[text]
    if kind == "link":
        return "]&#40;"
    if kind == "ref":
        return "]&#58;"
    if kind == "image":
        return "&#33;["
    return text  # code span, blockquote marker


def markdown_source(value: object) -> str:
    """A Markdown field's text as it is rendered: control characters dropped, CRLF line
    endings made LF, blank lines at either end removed."""
    return _CONTROL.sub("", str(value)).replace("\r\n", "\n").strip("\n")


def md_text(value: object) -> str:
    """roofgen's own Markdown prose, rendered as Markdown, with raw HTML neutralised
    (a spec's Markdown goes through :func:`roofgen.site.narrative.narrative_html`).

    Links stay links only when their target starts with http:// or https://; other
    targets (``javascript:``, relative paths, anchors) are shown as text. Images
    become plain links, so a page never loads anything from another host.
    """
    text = markdown_source(value)
    return _NARRATIVE.sub(_narrative_token, text)


_URL_SAFE = ":/?#@!$&'*+,;=%~-._"


def safe_url(value: object) -> str | None:
    """``value`` as a link target if it is an http(s) URL, else None.

    Characters that would end a Markdown link or break an attribute (spaces,
    parentheses, quotes, angle brackets) are percent-encoded.
    """
    if not isinstance(value, str):
        return None
    url = value.strip()
    if not re.match(r"https?://[^\s/?#]", url, re.IGNORECASE):
        return None
    if _CONTROL.search(url) or any(c in url for c in "\r\n"):
        return None
    return quote(url, safe=_URL_SAFE.replace("'", ""))


_PLAIN = str.maketrans(
    {
        "<": "\u2039",  # single left-pointing angle quotation mark
        ">": "\u203a",
        "&": "\uff06",  # fullwidth ampersand
        '"': "\u201d",
        "'": "\u2019",
        "`": "\u2018",
        "\\": "\u29f5",  # reverse solidus operator
        "{": "\u2774",  # medium left curly bracket ornament
        "}": "\u2775",
    }
)


def plain_text(value: object) -> str:
    """Text the theme may print raw, in an attribute or after ``striptags``.

    Markup characters are replaced by look-alikes (``<`` by ``‹``, ``&`` by ``＆``,
    quotes by typographic quotes), so the text is inert in every one of those places.
    """
    text = _CONTROL.sub("", _NEWLINES.sub(" ", str(value))).strip()
    return text.translate(_PLAIN)
