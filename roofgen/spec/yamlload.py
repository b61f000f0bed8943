"""Safe YAML loading that keeps the source position of every value.

PyYAML's C composer builds the node tree; this module turns nodes into plain
Python data with the YAML 1.2 core schema (so ``1e12`` and ``1.0e12`` are
numbers and ``no`` stays a string), refuses duplicate keys, refuses alias
expansion out of proportion to the file, and records ``(line, column)`` for
each path inside the document.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from roofgen.problems import Problem, format_path

try:  # the C composer is several times faster
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 64

PathKey = tuple[str | int, ...]

_TAG = "tag:yaml.org,2002:"
_IMPLICIT = {_TAG + t for t in ("str", "int", "float", "bool", "null", "timestamp", "value")}
_ALLOWED = _IMPLICIT | {_TAG + "seq", _TAG + "map", _TAG + "merge"}
_NULL = {"", "~", "null", "Null", "NULL"}
_TRUE = {"true", "True", "TRUE"}
_FALSE = {"false", "False", "FALSE"}
_INT = re.compile(r"^[-+]?[0-9]+$")
_OCT = re.compile(r"^0o[0-7]+$")
_HEX = re.compile(r"^0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_SPECIAL = {
    ".inf": float("inf"), ".Inf": float("inf"), ".INF": float("inf"),
    "+.inf": float("inf"), "+.Inf": float("inf"), "+.INF": float("inf"),
    "-.inf": float("-inf"), "-.Inf": float("-inf"), "-.INF": float("-inf"),
    ".nan": float("nan"), ".NaN": float("nan"), ".NAN": float("nan"),
}  # fmt: skip


@dataclass
class Document:
    """A loaded YAML document: its data and where each value came from."""

    file: str
    data: Any
    positions: dict[PathKey, tuple[int, int]] = field(default_factory=dict)
    key_positions: dict[PathKey, tuple[int, int]] = field(default_factory=dict)
    finite: bool = True  # False if any number is infinite or NaN

    def where(self, path: PathKey, *, key: bool = False) -> tuple[int, int]:
        """Line and column of ``path``, or of its nearest located parent."""
        table = self.key_positions if key else self.positions
        if path in table:
            return table[path]
        while path:
            path = path[:-1]
            if path in self.positions:
                return self.positions[path]
        return (1, 1)

    def problem(self, path: PathKey, message: str, *, key: bool = False, **kw: Any) -> Problem:
        line, column = self.where(path, key=key)
        return Problem(self.file, line, column, format_path(path), message, **kw)


class _Refused(Exception):
    def __init__(self, node: yaml.Node | None, message: str):
        self.node = node
        self.message = message


def load_file(path: Path, display: str | None = None) -> tuple[Document | None, list[Problem]]:
    """Load one YAML file; return the document, or None and the problems."""
    name = display or str(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            limit = MAX_FILE_BYTES // (1024 * 1024)
            msg = f"file is {size / 1e6:.1f} MB, above the {limit} MiB limit for a spec file"
            return None, [Problem(name, 0, 0, "", msg + "; split it into several files")]
        raw = path.read_bytes()
    except OSError as exc:
        return None, [Problem(name, 0, 0, "", f"cannot read the file: {exc.strerror}")]
    return load_bytes(raw, name)


def load_bytes(raw: bytes, name: str) -> tuple[Document | None, list[Problem]]:
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        msg = f"byte 0x{raw[exc.start]:02x} is not valid UTF-8: save the file as UTF-8"
        return None, [Problem(name, line, column, "", msg)]
    if "\x00" in text:
        at = text.index("\x00")
        line = text.count("\n", 0, at) + 1
        column = at - (text.rfind("\n", 0, at) + 1) + 1
        return None, [
            Problem(name, line, column, "", "the file contains NUL bytes: it is not text")
        ]
    return load_text(text, name)


def load_text(text: str, name: str) -> tuple[Document | None, list[Problem]]:
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        return None, [Problem(name, line, column, "", f"YAML syntax error: {_yaml_message(exc)}")]
    except yaml.YAMLError as exc:
        return None, [Problem(name, 0, 0, "", f"YAML error: {exc}")]
    except RecursionError:
        return None, [Problem(name, 0, 0, "", f"nesting deeper than {MAX_DEPTH} levels")]
    doc = Document(name, None)
    if node is None:
        return None, [Problem(name, 1, 1, "", "the file is empty: a spec starts with 'roofgen: 1'")]
    builder = _Builder(doc, budget=4 * len(text) + 10_000)
    try:
        doc.data = builder.build(node, (), 0)
    except _Refused as exc:
        mark = exc.node.start_mark if exc.node is not None else None
        line, column = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        return None, [Problem(name, line, column, "", exc.message)]
    if builder.problems:
        return None, builder.problems
    return doc, []


def _yaml_message(exc: yaml.MarkedYAMLError) -> str:
    """The parser's problem with its context, as one sentence."""
    problem = exc.problem or "invalid YAML"
    if "tab character" in problem:
        return "a tab character indents this line: YAML indents with spaces only"
    context = exc.context
    if not context:
        return problem
    if context.startswith("while") and exc.context_mark is not None:
        cm = exc.context_mark
        return f"{problem} ({context} that starts at line {cm.line + 1}, column {cm.column + 1})"
    return f"{context}, {problem}"


def _show_tag(tag: str) -> str:
    return "!!" + tag.removeprefix(_TAG) if tag.startswith(_TAG) else tag


class _Builder:
    def __init__(self, doc: Document, budget: int):
        self.doc = doc
        self.budget = budget
        self.problems: list[Problem] = []

    def build(self, node: yaml.Node, path: PathKey, depth: int) -> Any:
        self.budget -= 1
        if self.budget < 0:
            raise _Refused(node, "aliases expand far beyond the file's size (an alias bomb?)")
        if depth > MAX_DEPTH:
            raise _Refused(node, f"nesting deeper than {MAX_DEPTH} levels")
        mark = node.start_mark
        self.doc.positions.setdefault(path, (mark.line + 1, mark.column + 1))
        if node.tag not in _ALLOWED:
            raise _Refused(
                node, f"the tag {_show_tag(node.tag)!r} is not allowed in a spec: remove it"
            )
        if isinstance(node, yaml.ScalarNode):
            value = _scalar(node)
            if isinstance(value, float) and not math.isfinite(value):
                self.doc.finite = False
            return value
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i), depth + 1) for i, item in enumerate(node.value)]
        assert isinstance(node, yaml.MappingNode)
        return self._mapping(node, path, depth)

    def _mapping(self, node: yaml.MappingNode, path: PathKey, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        merges: list[yaml.Node] = []
        for key_node, value_node in node.value:
            if key_node.tag == _TAG + "merge":  # '<<: *base' merges a mapping (or several)
                merges.append(value_node)
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                raise _Refused(key_node, "a key must be a plain word, not a list or a mapping")
            key = _scalar(key_node)
            key = str(key) if key is not None else "null"
            child = (*path, key)
            kmark = key_node.start_mark
            if key in out:
                first = self.doc.key_positions[child]
                self.problems.append(
                    Problem(
                        self.doc.file,
                        kmark.line + 1,
                        kmark.column + 1,
                        format_path(child),
                        f"duplicate key {key!r} (first at line {first[0]}): "
                        "YAML keeps only one of them; remove or rename one",
                    )
                )
                continue
            self.doc.key_positions.setdefault(child, (kmark.line + 1, kmark.column + 1))
            out[key] = self.build(value_node, child, depth + 1)
        # Explicit keys win over merged ones (and keep their positions), earlier merges
        # over later ones.
        for source in (
            m for value_node in merges for m in self._merge_sources(value_node, path, depth)
        ):
            for key, value in source.items():
                out.setdefault(key, value)
        return out

    def _merge_sources(self, node: yaml.Node, path: PathKey, depth: int) -> list[dict[str, Any]]:
        nodes = node.value if isinstance(node, yaml.SequenceNode) else [node]
        sources = []
        for item in nodes:
            if not isinstance(item, yaml.MappingNode):
                raise _Refused(item, "'<<' merges mappings only: alias a mapping ('<<: *name')")
            sources.append(self._mapping(item, path, depth + 1))
        return sources


def _scalar(node: yaml.ScalarNode) -> Any:
    value: str = node.value
    if node.style:  # quoted or block scalars are strings
        return value
    if value in _NULL:
        return None
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if _INT.match(value):
        return int(value)
    if _OCT.match(value):
        return int(value[2:], 8)
    if _HEX.match(value):
        return int(value[2:], 16)
    if _FLOAT.match(value):
        return float(value)
    if value in _SPECIAL:
        return _SPECIAL[value]
    return value
