"""A Markdown field of a spec (a narrative section, a description) made into HTML the
page can hold: rendered on its own, sanitised, and placed as one raw HTML block.

Escaping Markdown text cannot know how Python-Markdown will pair what it leaves
alone: a stray backtick on one line pairs with one on the next, and what looked like
a code span is live HTML. So a field is rendered here, on its own (backticks and link
references pair within the field only, never with another field or the template's
text), by a Python-Markdown that leaves raw HTML as text (its HTML block and inline
patterns are removed) and has no ``md_in_html`` or ``attr_list``. The HTML it makes
is then cleaned by nh3 (the Ammonia sanitiser) against a narrow allow-list: text
formatting, lists, code, tables and links; no ``id``, ``class``, ``style``, images,
``template`` (the charts script draws any ``template[id]``), frames or forms. Links
keep only ``http``, ``https`` and ``mailto`` targets; relative ones (``//host``,
``\\\\host``, paths, anchors) are not links.

Before nh3, a tree pass shapes what the page shows: an image becomes a link to it
(a page loads nothing from another host), a link whose target will not survive is
shown as its text, and a heading becomes a bold paragraph (the page's outline, its
table of contents and the search sections stay the template's own).

:func:`narrative_html` returns a single line, ``<div class="roofgen-narrative">...``,
which :mod:`roofgen.site.rawhtml` stores in Python-Markdown's stash unparsed, so the
page's own Markdown never runs over it.
"""

from __future__ import annotations

import html
import re
import threading
import xml.etree.ElementTree as etree

import markdown
import nh3
from markdown.treeprocessors import Treeprocessor

from roofgen.site.escape import html_escape, markdown_source
from roofgen.site.rawhtml import NARRATIVE_OPEN

__all__ = ["TAGS", "URL_SCHEMES", "narrative_html", "render", "sanitise"]

#: The elements a narrative may hold.
TAGS = frozenset(
    {
        *("p", "br", "em", "strong", "code", "pre", "blockquote", "hr", "del", "sub", "sup"),
        *("ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td", "a"),
    }
)
#: The only link targets kept (nh3's own default list is wider).
URL_SCHEMES = frozenset({"http", "https", "mailto"})
_ALIGN = {"align": {"left", "right", "center"}}
_LINKABLE = re.compile(r"(?:https?://[^/\\\s]|mailto:\S)", re.IGNORECASE)
_HEADINGS = frozenset(f"h{n}" for n in range(1, 7))


def _attribute_filter(tag: str, attribute: str, value: str) -> str | None:
    """A second look at what nh3 keeps: a link only to an absolute http(s) URL with a
    host, or to a mailto address; a list's start only as a number."""
    if attribute == "href":
        return value if _LINKABLE.match(value) else None
    if attribute == "start":
        return value if value.isdigit() else None
    return value


_CLEANER = nh3.Cleaner(
    tags=set(TAGS),
    clean_content_tags={"script", "style"},
    attributes={"a": {"href"}, "ol": {"start"}},
    tag_attribute_values={"th": _ALIGN, "td": _ALIGN},
    attribute_filter=_attribute_filter,
    strip_comments=True,
    link_rel="noopener noreferrer",
    generic_attribute_prefixes=set(),
    url_schemes=set(URL_SCHEMES),
    url_relative="deny",
)


def sanitise(fragment: str) -> str:
    """``fragment`` (HTML) with every element, attribute and link target outside the
    allow-list removed (the text of a removed element stays, as text)."""
    return _CLEANER.clean(fragment)


def _target(href: str) -> str:
    """A link's target as the browser will read it (Python-Markdown writes a mailto
    autolink's address as character references, with a placeholder for each '&')."""
    return html.unescape(href.replace(markdown.util.AMP_SUBSTITUTE, "&")).strip()


class _Shape(Treeprocessor):
    """Images become links, links nh3 would strip become text, headings bold text."""

    def run(self, root: etree.Element) -> None:
        for element in list(root.iter()):
            if element.tag == "img":
                src = element.get("src", "")
                alt = element.get("alt", "") or src
                element.attrib.clear()
                element.tag, element.text = "a", alt
                element.set("href", src)
            if element.tag == "a" and not _LINKABLE.match(_target(element.get("href", ""))):
                element.tag = "span"  # nh3 removes the element and keeps its text
                element.attrib.clear()
            elif element.tag in _HEADINGS:
                strong = etree.Element("strong")
                strong.text, element.text = element.text, None
                strong.extend(list(element))
                for child in list(element):
                    element.remove(child)
                element.tag = "p"
                element.attrib.clear()
                element.append(strong)


class _NarrativeExtension(markdown.Extension):
    def extendMarkdown(self, md: markdown.Markdown) -> None:  # noqa: N802 (Python-Markdown's name)
        # Raw HTML is text: without these two, '<b>' is escaped like any '<'.
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        md.treeprocessors.register(_Shape(md), "roofgen_shape", 5)  # after 'inline' (20)


_LOCAL = threading.local()


def _markdown() -> markdown.Markdown:
    """This thread's Markdown instance (one instance is not safe across threads)."""
    md: markdown.Markdown | None = getattr(_LOCAL, "md", None)
    if md is None:
        md = markdown.Markdown(
            extensions=[
                "tables",
                "fenced_code",
                "sane_lists",
                "admonition",
                _NarrativeExtension(),
            ],
            extension_configs={"tables": {"use_align_attribute": True}},
            output_format="html",
        )
        _LOCAL.md = md
    return md


def render(text: str) -> str:
    """``text`` (Markdown) as sanitised HTML, rendered on its own."""
    return sanitise(_markdown().reset().convert(markdown_source(text))).strip("\n")


def narrative_html(value: object, lead: object = "") -> str:
    """A Markdown field as one line of raw HTML for a page: ``lead`` (plain text, such
    as a kernel's id), when given, opens its first paragraph, followed by a colon.

    Line feeds and tabs become character references, which mean the same in HTML (a
    whitespace character, a line in ``pre``), so the block is one line: nothing the
    page's Markdown does to lines (blank lines, tabs, indentation) reaches it."""
    html = render(str(value))
    if lead != "":
        prefix = f"{html_escape(lead)}: "
        html = f"<p>{prefix}{html[3:]}" if html.startswith("<p>") else f"<p>{prefix}</p>{html}"
    html = html.replace("\n", "&#10;").replace("\t", "&#9;")
    return f"{NARRATIVE_OPEN}{html}</div>"
