"""Raw HTML blocks handed to Python-Markdown's stash without parsing them.

roofgen writes a page's heavy parts (tables, the verdict card, definition lists,
chart blocks with their specs) as raw HTML blocks: each starts at column 0 with a
block-level tag, holds no blank line, and closes that tag on its last line.
Python-Markdown passes such a block through untouched, but only after two HTML
parsers have walked it tag by tag (its raw-block extractor, and MkDocs' scan for
anchor ids): most of a case page's Markdown time.

:class:`RawHtmlExtension` stores each such block in the stash before those parsers
run, exactly as the extractor would have stored it, so the HTML a page gets is the
same, byte for byte; it keeps the ids of the blocks it stored (MkDocs validates links
against them) for :func:`take_anchor_ids`. A block it is not sure of (a comment, a
``markdown`` attribute, a script, anything whose first element does not close on
its last line) is left to Python-Markdown.

A narrative block (:data:`NARRATIVE_OPEN`, one line, written by
:mod:`roofgen.site.narrative` from HTML nh3 has cleaned) is always stored: its text may
read like what makes a block unsure (``markdown="1"``, ``<pre>``) but holds no
comment, script or element id, and no id is collected from it (text such as
``id="verdict"`` is not an anchor).
"""

from __future__ import annotations

import html
import re
from typing import Any

from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor

__all__ = ["NARRATIVE_OPEN", "RawHtmlExtension", "raw_blocks"]

#: The opening tag of a narrative block: sanitised HTML, on one line.
NARRATIVE_OPEN = '<div class="roofgen-narrative">'

_OPEN = re.compile(r"<(table|div|dl|ol|ul)(?=[\s>])")
_UNSURE = re.compile(r"<!--|<!\[|<\?|\smarkdown\s*=|<(?:script|style|pre|textarea)\b", re.I)
_ID = re.compile(r"""\sid="([^"]*)\"""")
_NAME = re.compile(r"""<a\s[^>]*?\bname="([^"]*)\"""")


def _closes_at_end(text: str, tag: str) -> bool:
    """Whether the element ``text`` opens with closes at its very end, and not before."""
    if not text.endswith(f"</{tag}>"):
        return False
    depth = 0
    for m in re.finditer(rf"<(/?){tag}(?=[\s>])", text):
        depth += -1 if m[1] else 1
        if depth == 0:
            return m.end() + 1 == len(text)
    return False


def _narrative(lines: list[str], start: int, end: int) -> bool:
    """Whether ``lines[start:end]`` is a narrative block: one line, opened and closed."""
    line = lines[start]
    return end == start + 1 and line.startswith(NARRATIVE_OPEN) and line.endswith("</div>")


def raw_blocks(lines: list[str]) -> list[tuple[int, int]]:
    """The ``(start, end)`` line ranges of the blocks that can be stored as they are:
    preceded and followed by a blank line, opening with one of roofgen's block tags at
    column 0, whose first element closes on the last line, with nothing unsure in it
    (or a narrative block)."""
    found: list[tuple[int, int]] = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        m = _OPEN.match(line)
        if m is None or (i and lines[i - 1] != ""):
            i += 1
            continue
        j = i
        while j < n and lines[j] != "":
            j += 1
        if j == n:  # Python-Markdown's own check wants a blank line after the block
            break
        text = "\n".join(lines[i:j])
        if _narrative(lines, i, j) or (not _UNSURE.search(text) and _closes_at_end(text, m[1])):
            found.append((i, j))
        i = j
    return found


class _StoreRaw(Preprocessor):
    def __init__(self, md: Markdown, extension: RawHtmlExtension) -> None:
        super().__init__(md)
        self.extension = extension

    def run(self, lines: list[str]) -> list[str]:
        blocks = raw_blocks(lines)
        if not blocks:
            return lines
        out: list[str] = []
        done = 0
        for start, end in blocks:
            text = "\n".join(lines[start:end])
            out.extend(lines[done:start])
            # The extractor stores a block followed by a blank line with one newline.
            out.append(self.md.htmlStash.store(text + "\n"))
            done = end
            if _narrative(lines, start, end):
                continue
            self.extension.anchor_ids.update(html.unescape(v) for v in _ID.findall(text))
            self.extension.anchor_ids.update(html.unescape(v) for v in _NAME.findall(text))
        out.extend(lines[done:])
        return out


class RawHtmlExtension(Extension):
    """Store roofgen's raw HTML blocks before Python-Markdown's HTML parsers run.

    One instance serves every page of a build, in turn: :meth:`take_anchor_ids`
    hands over (and forgets) the ids of the blocks stored since it was last called.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.anchor_ids: set[str] = set()

    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 (Python-Markdown's name)
        # After whitespace is normalised (30) and fenced code is taken out (25), before
        # MkDocs' id scan (21) and the raw-block extractor (20).
        md.preprocessors.register(_StoreRaw(md, self), "roofgen_raw_html", 22)

    def take_anchor_ids(self) -> set[str]:
        ids, self.anchor_ids = self.anchor_ids, set()
        return ids
