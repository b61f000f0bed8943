"""Untrusted text made inert in Markdown that GitHub or GitLab renders (a pull-request
comment, a job summary).

A pull request can change every text such a report quotes (file names, ids, titles,
settings), so each is neutralised: table cells escape Markdown and HTML, code spans are
fenced with more backticks than they hold, URLs are percent-encoded, and an ``@name`` or
``#number`` outside code gets a word joiner after its sign, so the text pings no one and
links no issue.
"""

from __future__ import annotations

import re
from urllib.parse import quote

__all__ = ["cell", "code", "neutral", "url"]

_MENTION = re.compile(r"([@#])(?=[\w-])")
_WORD_JOINER = "\u2060"


def neutral(text: str) -> str:
    """``text`` with its mentions (``@team``) and issue references (``#12``) broken by
    an invisible word joiner: GitHub and GitLab link neither."""
    return _MENTION.sub(lambda m: m.group(1) + _WORD_JOINER, text)


def cell(text: str) -> str:
    """``text`` as plain text in a Markdown table cell or line: no markup, no HTML, no
    mention; one line."""
    text = " ".join(text.split())
    for char in "\\`*_[]|~":
        text = text.replace(char, "\\" + char)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return neutral(text)


def code(text: str, in_table: bool = False) -> str:
    """``text`` as one inline code span (inert: GitHub neither links nor mentions in
    code), fenced with one backtick more than the longest run it holds. ``in_table``: a
    ``|`` is escaped, as GFM splits table cells on it even inside code."""
    text = " ".join(text.split())
    if in_table:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def url(address: str) -> str:
    """A URL as a Markdown link target: characters that could end the link or start
    markup percent-encoded."""
    return quote(address.strip(), safe=":/?&=%+,;~.-_!$'")
