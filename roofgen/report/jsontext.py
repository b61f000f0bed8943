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
An element may come already encoded (:class:`Encoded`, as a :class:`Spool` gives them
back): one case's text can then be made long before the document is written.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["Encoded", "Spool", "dumps", "finite", "stream"]


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


class Encoded(str):
    """A value's JSON text, as :func:`dumps` wrote it with the indent of the stream it is
    an element of: :func:`stream` writes it as it is."""


class Spool:
    """JSON values encoded as they come (compact, or indented by ``indent``) and held
    compressed, in order: the text of many values in a few bytes each of theirs
    (zlib's fastest level: JSON of numbers and repeated keys shrinks about sixfold),
    given back one at a time as :class:`Encoded` elements for :func:`stream`."""

    def __init__(self, indent: int | None = None) -> None:
        self.indent = indent
        self._held: list[bytes] = []

    def add(self, value: Any) -> None:
        self._held.append(zlib.compress(dumps(value, self.indent).encode("utf-8"), 1))

    def __len__(self) -> int:
        return len(self._held)

    def __iter__(self) -> Iterator[Encoded]:
        for held in self._held:
            yield Encoded(zlib.decompress(held).decode("utf-8"))


def _encoded(item: Any, indent: int | None) -> str:
    return item if isinstance(item, Encoded) else dumps(item, indent)


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
            yield (head + "[" if first else ",") + _encoded(item, None)
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
            text = _encoded(item, indent).replace("\n", pad2)
            yield (head + "[" if first else ",") + pad2 + text
            first = False
        yield head + "[]" if first else pad1 + "]"
    yield "\n}"
