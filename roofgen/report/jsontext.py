"""Strict JSON text: whole, or streamed one element of an array at a time.

The JSON of roofgen's reports (``analyze``, ``check``, ``explain``, ``diff``) is
strict: a float that is not a finite number (an overflow from extreme input) is
written as null, never ``NaN`` or ``Infinity``, and ``allow_nan=False`` guards that
nothing slips through. Text is compact (``{"a":1}``) or indented by ``indent``
spaces, exactly as :func:`json.dumps` writes it.

:func:`stream` writes an object whose array-valued fields may be iterators: each
element is made and encoded only when it is reached, so that a document of many large
elements (the analysis JSON's cases) is never held whole as JSON values. Its chunks
joined are byte for byte :func:`dumps` of the object with those iterators as lists.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["dumps", "finite", "stream"]


def finite(value: Any) -> Any:
    """``value`` with every float that is not finite replaced by ``None`` (and tuples
    as lists), in dicts and lists at any depth."""
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, indent: int | None = None) -> str:
    """``value`` as strict JSON text: compact, or indented by ``indent`` spaces."""
    separators = (",", ":") if indent is None else (",", ": ")
    try:  # most documents hold only finite numbers: skip the copy finite() makes
        return json.dumps(value, indent=indent, separators=separators, allow_nan=False)
    except ValueError:
        return json.dumps(finite(value), indent=indent, separators=separators, allow_nan=False)


def stream(fields: Mapping[str, Any], indent: int | None = None) -> Iterator[str]:
    """The object ``fields`` as strict JSON text in chunks: a field whose value is an
    iterator is written as an array, one chunk per element, each element encoded when
    the iterator yields it; every other field is encoded whole."""
    if indent is None:
        yield from _compact(fields)
    elif not fields:
        yield "{}"
    else:
        yield from _indented(fields, indent)


def _compact(fields: Mapping[str, Any]) -> Iterator[str]:
    comma = "{"
    for key, value in fields.items():
        head = comma + json.dumps(key) + ":"
        comma = ","
        if not isinstance(value, Iterator):
            yield head + dumps(value)
            continue
        first = True
        for item in value:
            yield (head + "[" if first else ",") + dumps(item)
            first = False
        yield head + "[]" if first else "]"
    yield "{}" if comma == "{" else "}"


def _indented(fields: Mapping[str, Any], indent: int) -> Iterator[str]:
    # json.dumps writes a value nested at depth d with every line but its first
    # indented by d x indent spaces more than at the top: a JSON string never holds a
    # raw newline, so re-indenting a value's own text is replacing its newlines.
    pad1, pad2 = "\n" + " " * indent, "\n" + " " * (2 * indent)
    comma = "{"
    for key, value in fields.items():
        head = comma + pad1 + json.dumps(key) + ": "
        comma = ","
        if not isinstance(value, Iterator):
            yield head + dumps(value, indent).replace("\n", pad1)
            continue
        first = True
        for item in value:
            yield (head + "[" if first else ",") + pad2 + dumps(item, indent).replace("\n", pad2)
            first = False
        yield head + "[]" if first else pad1 + "]"
    yield "\n}"
