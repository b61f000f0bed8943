"""Safe YAML loading that keeps the source position of every value.

PyYAML's C composer builds the node tree; this module turns nodes into plain
Python data with the YAML 1.2 core schema (so ``1e12`` and ``1.0e12`` are
numbers and ``no`` stays a string), refuses duplicate keys, refuses alias
expansion out of proportion to the file, and records ``(line, column)`` for
each path inside the document.

Untrusted input is bounded before it costs anything: files over MAX_FILE_BYTES
are refused unread, files with more than MAX_NODES values after a streaming
count, nesting beyond MAX_DEPTH, aliases that expand beyond a budget
proportional to the file, and numbers beyond a float's range. A UTF-8 byte order
mark is accepted (YAML allows it); UTF-16, UTF-32 and binary files are refused
with a message that says what they are. Escapes for control characters are
refused, and U+2028/U+2029 become line feeds.
"""

from __future__ import annotations

import math
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from roofgen.problems import Problem, format_path
from roofgen.spec.quantity import out_of_range
from roofgen.spec.yamlscalar import (
    PLAIN,
    SCALAR_TAGS,
    TAG,
    BadScalar,
    printable,
    scalar,
    show_tag,
)

try:  # the C composer is several times faster
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 64
# PyYAML's node tree costs about 500 bytes and 4 us per value: 500,000 values (ten
# times the largest real spec) take about 250 MB and 2 s. A file with more is refused
# after a streaming count (O(1) memory), before the tree is built.
MAX_NODES = 500_000

PathKey = tuple[str | int, ...]

_ALLOWED = {PLAIN, TAG + "seq", TAG + "map", TAG + "merge"} | SCALAR_TAGS


class _Loader(_BaseLoader):
    """The C composer; plain scalars are resolved by :func:`yamlscalar.scalar` (YAML 1.2)."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode and implicit[0]:
            return TAG + "merge" if value == "<<" else PLAIN
        return str(yaml.resolver.BaseResolver.resolve(self, kind, value, implicit))


@dataclass
class Document:
    """A loaded YAML document: its data and where each value came from."""

    file: str
    data: Any
    positions: dict[PathKey, tuple[int, int]] = field(default_factory=dict)
    key_positions: dict[PathKey, tuple[int, int]] = field(default_factory=dict)
    # False if any number is infinite, NaN or beyond the range quantities keep to
    # (quantity.out_of_range): the schema's compiled fast path cannot vouch for those.
    numbers_in_range: bool = True

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


def _check_tag(node: yaml.Node, expected: set[str]) -> None:
    """Refuse a node (a value or a key) whose tag is not allowed, or not ``expected``."""
    if node.tag not in _ALLOWED:
        raise _Refused(node, f"the tag {show_tag(node.tag)!r} is not allowed in a spec: remove it")
    if node.tag not in expected:
        raise _Refused(node, f"the tag {show_tag(node.tag)!r} does not fit this value: remove it")


def load_file(path: Path, display: str | None = None) -> tuple[Document | None, list[Problem]]:
    """Load one YAML file; return the document, or None and the problems."""
    name = display or str(path)
    raw, problems = read_file(path, name)
    return (None, problems) if raw is None else load_bytes(raw, name)


def read_file(path: Path, name: str) -> tuple[bytes | None, list[Problem]]:
    """The bytes of a spec file (shown as ``name``), or None and why not: a folder, a
    pipe or a device (never ending), over MAX_FILE_BYTES, or unreadable."""
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            return None, [Problem(name, 0, 0, "", "is a folder, not a spec file")]
        if not stat.S_ISREG(info.st_mode):  # a pipe or a device would never end
            return None, [Problem(name, 0, 0, "", "is not a regular file: a spec is a text file")]
        if info.st_size > MAX_FILE_BYTES:
            return None, [_too_big(name, info.st_size)]
        with path.open("rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)  # the file may have grown since stat()
        if len(raw) > MAX_FILE_BYTES:
            return None, [_too_big(name, len(raw))]
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return None, [Problem(name, 0, 0, "", f"cannot read the file: {reason}")]
    return raw, []


def _too_big(name: str, size: int) -> Problem:
    limit = MAX_FILE_BYTES // (1024 * 1024)
    message = f"file is {size / 1e6:.1f} MB, above the {limit} MiB limit for a spec file"
    return Problem(name, 0, 0, "", message + "; split it into several files")


def load_bytes(raw: bytes, name: str) -> tuple[Document | None, list[Problem]]:
    """Decode ``raw`` as UTF-8 and load it.

    A UTF-8 byte order mark is accepted and skipped: YAML allows one, and some
    Windows editors write it. UTF-16 and UTF-32 text and binary files (images,
    archives) are refused with a message that says what the file is.
    """
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    other = _not_utf8(raw)
    if other:
        return None, [Problem(name, 0, 0, "", other)]
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
    # Every value takes at least one character, so only longer texts can hold too many.
    crowded = _count_nodes(text, name) if len(text) > MAX_NODES else None
    if crowded is not None:
        return None, [crowded]
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        message = _yaml_message(exc, _char_at(text, exc.problem_mark))
        return None, [Problem(name, line, column, "", f"YAML syntax error: {message}")]
    except yaml.reader.ReaderError as exc:
        return None, [_reader_problem(text, name, exc)]
    except yaml.YAMLError as exc:
        return None, [Problem(name, 0, 0, "", "YAML error: " + " ".join(str(exc).split()))]
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
    except RecursionError:  # pragma: no cover - MAX_DEPTH stops nesting long before
        return None, [Problem(name, 0, 0, "", f"nesting deeper than {MAX_DEPTH} levels")]
    if builder.problems:
        return None, builder.problems
    return doc, []


def _count_nodes(text: str, name: str) -> Problem | None:
    """A problem if ``text`` holds more than MAX_NODES values; parse events are
    streamed and dropped, so counting costs no memory. Syntax errors are left to
    the full parse, which locates them."""
    loader = _Loader(text)
    count = 0
    try:
        while loader.check_event():
            event = loader.get_event()
            count += 1
            if count > MAX_NODES:
                mark: Any = getattr(event, "start_mark", None)
                line, column = (mark.line + 1, mark.column + 1) if mark else (0, 0)
                message = f"more than {MAX_NODES:,} values in one file: split it into several"
                return Problem(name, line, column, "", message)
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()
    return None


# Binary formats a spec folder may hold by mistake, by their first bytes.
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"GIF8", "a GIF image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"%PDF-", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (or an Office document)"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"\x7fELF", "an executable"),
)


def _not_utf8(raw: bytes) -> str:
    """Why ``raw`` is not UTF-8 text at all, or ''."""
    for magic, what in _MAGIC:
        if raw.startswith(magic):
            return f"the file is {what}, not text: a spec is a YAML text file"
    head = raw[:4]
    # A UTF-16 or UTF-32 byte order mark, or ASCII text with every other byte NUL.
    marked = head.startswith((b"\xff\xfe", b"\xfe\xff", b"\0\0\xfe\xff"))
    wide = len(head) == 4 and b"\0\0" in (head[0::2], head[1::2]) and head != b"\0\0\0\0"
    if marked or wide:
        return "the file is UTF-16 or UTF-32 text: save it as UTF-8"
    return ""


def _reader_problem(text: str, name: str, exc: yaml.reader.ReaderError) -> Problem:
    """A character YAML does not allow (a control character), located."""
    at = exc.position
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    char = exc.character if isinstance(exc.character, str) else chr(exc.character)
    return Problem(
        name, line, column, "",
        f"the control character U+{ord(char):04X} is not allowed in YAML: remove it",
    )  # fmt: skip


def _char_at(text: str, mark: Any) -> str:
    index = getattr(mark, "index", -1)
    return text[index] if 0 <= index < len(text) else ""


def _yaml_message(exc: yaml.MarkedYAMLError, char: str = "") -> str:
    """The parser's problem with its context, as one sentence."""
    problem = exc.problem or "invalid YAML"
    if "tab character" in problem or (char == "\t" and "cannot start any token" in problem):
        return "a tab character indents this line: YAML indents with spaces only"
    if "maximum nesting depth" in problem:  # libyaml stops at 1,000 levels
        return f"nesting deeper than {MAX_DEPTH} levels"
    context = exc.context
    if not context:
        return problem
    if context.startswith("while") and exc.context_mark is not None:
        cm = exc.context_mark
        return f"{problem} ({context} that starts at line {cm.line + 1}, column {cm.column + 1})"
    return f"{context}, {problem}"


class _Builder:
    def __init__(self, doc: Document, budget: int):
        self.doc = doc
        self.budget = budget
        self.problems: list[Problem] = []
        self.open: set[int] = set()  # ids of the collection nodes being built

    def _spend(self, node: yaml.Node, depth: int) -> None:
        """Count one node visited; refuse alias bombs and deep (or self-) nesting."""
        self.budget -= 1
        if self.budget < 0:
            raise _Refused(node, "aliases expand far beyond the file's size (an alias bomb?)")
        if depth > MAX_DEPTH:
            raise _Refused(node, f"nesting deeper than {MAX_DEPTH} levels")

    def build(self, node: yaml.Node, path: PathKey, depth: int) -> Any:
        self._spend(node, depth)
        mark = node.start_mark
        self.doc.positions.setdefault(path, (mark.line + 1, mark.column + 1))
        _check_tag(node, _KIND_TAGS.get(type(node), SCALAR_TAGS | {PLAIN, TAG + "merge"}))
        if isinstance(node, yaml.ScalarNode):
            try:
                value = scalar(node)
            except BadScalar as exc:
                self.problems.append(self.doc.problem(path, str(exc)))
                return None
            if isinstance(value, int | float) and not isinstance(value, bool):
                if isinstance(value, float) and not math.isfinite(value) or out_of_range(value):
                    self.doc.numbers_in_range = False
            elif isinstance(value, str) and ("\u2028" in value or "\u2029" in value):
                # Line and paragraph separators are line breaks: written as '\n', since
                # JSON (and so Vega-Lite's generated expressions) leaves them raw,
                # where a JavaScript string may not hold them.
                value = value.replace("\u2028", "\n").replace("\u2029", "\n")
            return value
        if id(node) in self.open:  # 'a: &a [*a]': the value holds itself
            raise _Refused(node, "this value contains itself through an alias: remove the alias")
        self.open.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                return [
                    self.build(item, (*path, i), depth + 1) for i, item in enumerate(node.value)
                ]
            assert isinstance(node, yaml.MappingNode)
            return self._mapping(node, path, depth)
        finally:
            self.open.discard(id(node))

    def _mapping(self, node: yaml.MappingNode, path: PathKey, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        merges: list[tuple[yaml.Node, yaml.Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag == TAG + "merge":  # '<<: *base' merges a mapping (or several)
                merges.append((key_node, value_node))
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                raise _Refused(key_node, "a key must be a plain word, not a list or a mapping")
            _check_tag(key_node, SCALAR_TAGS | {PLAIN})
            if key_node.style == '"':
                try:
                    printable(key_node.value)
                except BadScalar as exc:
                    raise _Refused(key_node, str(exc)) from None
            try:
                key = scalar(key_node)
            except BadScalar:  # a key like 1e999 is only a name
                key = key_node.value
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
        for key_node, value_node in merges:
            for source in self._merge_sources(key_node, value_node, path, depth):
                for key, value in source.items():
                    out.setdefault(key, value)
        return out

    def _merge_sources(
        self, key: yaml.Node, node: yaml.Node, path: PathKey, depth: int
    ) -> list[dict[str, Any]]:
        nodes = node.value if isinstance(node, yaml.SequenceNode) else [node]
        sources = []
        for item in nodes:
            self._spend(item, depth + 1)  # merging costs, even of empty mappings
            if not isinstance(item, yaml.MappingNode):
                raise _Refused(key, "'<<' merges mappings only: alias a mapping ('<<: *name')")
            if id(item) in self.open:
                raise _Refused(key, "'<<' merges a mapping into itself: remove it")
            self.open.add(id(item))
            try:
                sources.append(self._mapping(item, path, depth + 1))
            finally:
                self.open.discard(id(item))
        return sources


_KIND_TAGS: dict[type[yaml.Node], set[str]] = {
    yaml.SequenceNode: {TAG + "seq"},
    yaml.MappingNode: {TAG + "map"},
}
