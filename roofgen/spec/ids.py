"""Ids that can name a file on every system a site is built or read on, and titles,
tags and dates a site can show.

Case and machine ids name folders of the site, kernel and variant ids name charts and
anchors. The schema's pattern (``[a-z0-9][a-z0-9._-]*``) keeps them to safe
characters; this adds what a pattern cannot say clearly: a length a file name can
hold, no Windows device name (``con``, ``nul``, ``com1``, also before a suffix:
``con.x``), and no trailing dot (Windows drops it, so two ids would name one file).
A case's date dates the site (sitemap.xml and the gzip header of sitemap.xml.gz, which
counts seconds from 1970 in 32 bits), so it lies between :data:`FIRST_DATE` and
:data:`LAST_DATE`. No text of a spec is longer than :data:`MAX_TEXT` characters: the
Markdown renderer takes time that grows with the square of the characters it escapes
in one line, and a 120,000-character kernel name kept a build busy for over ten
minutes.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from roofgen.problems import Problem
from roofgen.spec.yamlload import Document, PathKey

__all__ = [
    "FIRST_DATE",
    "LAST_DATE",
    "MAX_ID_LENGTH",
    "MAX_TAGS",
    "MAX_TEXT",
    "MAX_TITLE_LENGTH",
    "check_date",
    "check_ids",
    "check_texts",
    "check_titles",
    "id_problem",
]

MAX_ID_LENGTH = 64
MAX_TITLE_LENGTH = 1000  # a title is a line of a page, a chart and a pull-request comment
MAX_TAGS = 50
MAX_TEXT = 20_000  # characters of any text of a spec (a kernel's name, a narrative)
FIRST_DATE = dt.date(1970, 1, 1)
LAST_DATE = dt.date(2106, 2, 7)  # its midnight is the last before 2**32 s after 1970
# Bidirectional controls reorder what a reader sees (a title can show one thing and be
# another): refused where people read names.
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$")


def id_problem(ident: str) -> str | None:
    """Why ``ident`` cannot be an id (None when it can)."""
    if len(ident) > MAX_ID_LENGTH:
        return f"is {len(ident)} characters long: an id has at most {MAX_ID_LENGTH}"
    if _RESERVED.match(ident):
        return "is a device name on Windows, where no file can have it: choose another id"
    if ident.endswith("."):
        return "ends with '.', which Windows drops from file names: remove it"
    return None


def check_ids(doc: Document, lists: tuple[str, ...]) -> list[Problem]:
    """Problems of the document's own ``id`` and of the ids of the items in ``lists``."""
    data: dict[str, Any] = doc.data
    found: list[tuple[PathKey, Any]] = [(("id",), data.get("id"))]
    for key in lists:
        found += [((key, i, "id"), item.get("id")) for i, item in enumerate(data.get(key, []))]
    problems = []
    for path, ident in found:
        why = id_problem(ident) if isinstance(ident, str) else None
        if why is not None:
            shown = ident if len(ident) <= 40 else ident[:37] + "..."
            problems.append(doc.problem(path, f"id {shown!r} {why}", code="ref.id"))
    return problems


def check_titles(doc: Document) -> list[Problem]:
    """A case's title within :data:`MAX_TITLE_LENGTH` characters and free of bidirectional
    controls, and at most :data:`MAX_TAGS` tags (a 700 KB title or 100,000 tags stalled
    the chart renderer)."""
    data: dict[str, Any] = doc.data
    problems = []
    title = data.get("title")
    if isinstance(title, str) and len(title) > MAX_TITLE_LENGTH:
        problems.append(doc.problem(
            ("title",),
            f"the title is {len(title):,} characters long: at most {MAX_TITLE_LENGTH:,} "
            "(put the rest in context or the summary)",
            code="ref.title",
        ))  # fmt: skip
    if isinstance(title, str) and _BIDI.search(title):
        problems.append(doc.problem(
            ("title",),
            "the title holds a bidirectional control character, which makes it read "
            "differently from what it is: remove it",
            code="ref.title",
        ))  # fmt: skip
    tags = data.get("tags")
    if isinstance(tags, list) and len(tags) > MAX_TAGS:
        problems.append(doc.problem(
            ("tags",), f"{len(tags):,} tags: at most {MAX_TAGS}", code="ref.tags"
        ))  # fmt: skip
    return problems


def check_date(doc: Document) -> list[Problem]:
    """A case's date within :data:`FIRST_DATE` and :data:`LAST_DATE` (a case dated 2200
    or only cases dated 1960 passed check and then stopped the build of the sitemap)."""
    text = doc.data.get("date")
    try:
        day = dt.date.fromisoformat(text) if isinstance(text, str) else None
    except ValueError:
        return []  # not a date: the schema says so
    if day is None or FIRST_DATE <= day <= LAST_DATE:
        return []
    return [
        doc.problem(
            ("date",),
            f"{text} is outside the dates a site can carry ({FIRST_DATE} to {LAST_DATE}, "
            "the range of the sitemap's gzip timestamp): write the day of the study",
            code="ref.date",
        )
    ]


def check_texts(doc: Document) -> list[Problem]:
    """Every text of the document within :data:`MAX_TEXT` characters (a case's title
    within its own, shorter bound: :func:`check_titles`)."""
    problems = []
    stack: list[tuple[PathKey, Any]] = [((), doc.data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack += [((*path, k), v) for k, v in value.items()]
        elif isinstance(value, list):
            stack += [((*path, i), v) for i, v in enumerate(value)]
        elif isinstance(value, str) and len(value) > MAX_TEXT and path != ("title",):
            problems.append(doc.problem(
                path,
                f"this text is {len(value):,} characters long: a text of a spec holds at "
                f"most {MAX_TEXT:,} (link a longer document instead)",
                code="ref.text",
            ))  # fmt: skip
    return sorted(problems, key=lambda p: (p.line, p.column))
