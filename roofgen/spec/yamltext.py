"""Small, exact YAML text for generated files: scalars, flow collections, comments.

Generated spec files are written line by line (a comment block above each key,
commented-out optional fields in place), which ruamel.yaml's comment API cannot
lay out; every value goes through :func:`flow`, which quotes whatever a YAML
1.1 or 1.2 reader could take for anything but the string it is.
"""

from __future__ import annotations

import json
import math
import re
import textwrap
from typing import Any

_PLAIN = re.compile(r"^[A-Za-z0-9_./][A-Za-z0-9 _./+*=<>()'-]*$")
_NUMBER = re.compile(r"^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$")
_RESERVED = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", ".inf", ".nan"}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_BASED = re.compile(r"^[-+]?0[xXoObB]")


def scalar(value: Any) -> str:
    """One YAML scalar that reads back as ``value``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not a finite number: {value}")
        return repr(value)
    text = str(value)
    plain = (
        _PLAIN.match(text) is not None
        and not text.endswith(" ")
        and text.lower() not in _RESERVED
        and not _NUMBER.match(text)
        and not _DATE.match(text)
        and not _BASED.match(text)
        and " #" not in text
    )
    return text if plain else json.dumps(text, ensure_ascii=False)


def flow(value: Any) -> str:
    """``value`` in YAML flow style on one line: ``{m: 8192, n: 8192}``, ``[a, b]``."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{scalar(k)}: {flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    return scalar(value)


def comment_lines(text: str, indent: int, width: int = 88) -> list[str]:
    """``text`` as ``# `` comment lines at ``indent``, wrapped to ``width`` columns."""
    room = max(width - indent - 2, 40)
    out = []
    for paragraph in text.splitlines() or [""]:
        wrapped = textwrap.wrap(" ".join(paragraph.split()), room, break_on_hyphens=False)
        out += [" " * indent + ("# " + line).rstrip() for line in wrapped or [""]]
    return out


def first_sentence(text: str, limit: int = 80) -> str:
    """The first sentence of ``text`` (at most ``limit`` characters, no open bracket)."""
    text = " ".join(text.split())
    cut = re.search(r"(?<!e\.g)(?<!i\.e)\.(\s|$)", text)
    if cut:
        text = text[: cut.start()]
    if text.count("(") > text.count(")"):
        text = text[: text.rindex("(")].rstrip()
    if len(text) > limit:
        text = text[: limit - 3].rsplit(" ", 1)[0] + "..."
    return text
