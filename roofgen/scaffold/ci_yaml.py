"""CI files written from data: a YAML dumper lays out every value, so no value can
become a new key, step or script line, whatever characters it holds.

A file is built from :func:`block` (a mapping) and :func:`seq` (a list) with the
comments a reader needs (:class:`Note` before an entry, a third tuple member for one
at the end of its line), then written by :func:`dump` through ruamel.yaml, which
keeps comments. Text with a line break is written as a literal block (``|``), the
form a script is read in.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString

__all__ = ["SITE_DIR", "Block", "Note", "Seq", "block", "dump", "seq"]

#: The folder CI builds the site into and publishes: a constant, never the settings'
#: ``output`` (a settings value in a CI file would be code the pull request wrote).
SITE_DIR = "_site"

#: Indentation of the written files: keys two spaces in, a list's dash two spaces in
#: under its key and its entries four (as GitHub's and GitLab's documentation write).
MAP_INDENT, SEQ_DASH = 2, 2
#: What a literal block holds as it is: printable ASCII lines (a control character, a
#: carriage return or a Unicode line separator would be changed or refused there).
_BLOCK_TEXT = re.compile(r"[\t\n\x20-\x7e]*")
_LINE_TEXT = re.compile(r"[\x20-\x7e]*")
_YAML_1_1 = VersionedResolver(version=(1, 1))


@dataclass(frozen=True)
class Note:
    """Comment lines before the entry that follows."""

    text: str


@dataclass(frozen=True)
class Block:
    """A mapping: (key, value) or (key, value, end-of-line comment), with notes."""

    entries: tuple[Note | tuple[Any, ...], ...]


@dataclass(frozen=True)
class Seq:
    """A list, with notes before items; ``flow`` writes it on one line (``[a, b]``)."""

    items: tuple[Any, ...]
    flow: bool = False


def block(*entries: Note | tuple[Any, ...]) -> Block:
    return Block(entries)


def seq(*items: Any, flow: bool = False) -> Seq:
    return Seq(items, flow)


def dump(doc: Block, header: str = "") -> str:
    """The YAML text of ``doc``, ``header`` (lines, without ``#``) as its first comment."""
    data = _node(doc, 0)
    if header:
        data.yaml_set_start_comment(header.rstrip("\n"))
    yaml = YAML()
    yaml.indent(mapping=MAP_INDENT, sequence=SEQ_DASH + 2, offset=SEQ_DASH)
    yaml.width = 4096  # a long line stays one line: no folding inside a command
    yaml.allow_unicode = False  # in a quoted value, anything but ASCII as an escape
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def _node(value: Any, column: int) -> Any:
    """``value`` as ruamel's data; ``column``: where its keys start if it is a mapping
    (a list's dashes go ``SEQ_DASH - MAP_INDENT`` further in)."""
    if isinstance(value, Block):
        return _mapping(value, column)
    if isinstance(value, Seq):
        return _sequence(value, column)
    if isinstance(value, str):
        return _string(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"not a value of a CI file: {value!r}")


def _string(value: str) -> str:
    """A script (printable ASCII lines) as a literal block; other text with anything
    but printable ASCII double-quoted with escapes (YAML 1.1 readers such as GitLab's
    take U+0085 or U+2028 for a line break); plain text quoted where YAML 1.1 would take
    it for something else than text (``yes``, ``0o17``, ``1:20``)."""
    if "\n" in value and _BLOCK_TEXT.fullmatch(value):
        return LiteralScalarString(value)
    if not _LINE_TEXT.fullmatch(value):
        return DoubleQuotedScalarString(value)
    resolved = _YAML_1_1.resolve(ScalarNode, value, (True, False))
    return value if resolved == "tag:yaml.org,2002:str" else DoubleQuotedScalarString(value)


def _mapping(value: Block, column: int) -> CommentedMap:
    result = CommentedMap()
    before: list[str] = []
    for entry in value.entries:
        if isinstance(entry, Note):
            before.append(entry.text)
            continue
        key, item, *eol = entry
        if key in result:
            raise ValueError(f"key written twice: {key!r}")
        result[key] = _node(item, column + MAP_INDENT)
        if before:
            result.yaml_set_comment_before_after_key(key, before="\n".join(before), indent=column)
            before = []
        if eol:
            result.yaml_add_eol_comment(eol[0], key, column=0)
    if before:
        raise ValueError(f"a note with no entry after it: {before}")
    return result


def _sequence(value: Seq, column: int) -> CommentedSeq:
    result = CommentedSeq()
    dash = column - MAP_INDENT + SEQ_DASH
    before: list[str] = []
    for item in value.items:
        if isinstance(item, Note):
            before.append(item.text)
            continue
        result.append(_node(item, dash + 2))
        if before:
            index = len(result) - 1
            result.yaml_set_comment_before_after_key(index, before="\n".join(before), indent=dash)
            before = []
    if before:
        raise ValueError(f"a note with no item after it: {before}")
    if value.flow:
        result.fa.set_flow_style()
    return result
