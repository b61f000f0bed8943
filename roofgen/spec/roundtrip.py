"""Writing and editing spec files round-trip with ruamel.yaml.

PyYAML's dump drops comments, the ``# yaml-language-server: $schema=`` line and
the author's style; ruamel.yaml keeps them. Editing a file (``import --into``)
must only add lines: :func:`only_added` checks that before anything is written.
An edit (``import --into``, ``migrate``) works on the file's LF text
(:func:`lf_text`) and is written back laid out as the file was (:func:`write_edited`):
its line endings, byte order mark and mode.
"""

from __future__ import annotations

import codecs
import difflib
import io
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from roofgen.files import write_file

# Indentation styles tried, in order, to find the one a file is written in:
# (mapping, sequence, offset): "key:\n  - item" is (2, 4, 2), "key:\n- item" (2, 2, 0).
_STYLES = ((2, 4, 2), (2, 2, 0), (4, 6, 4), (4, 4, 0), (4, 4, 2))
_WIDTH = 4096  # never re-wrap a long line
_ENDINGS = re.compile(r"\r\n?")
_LINE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|\Z)")


def make_yaml(style: tuple[int, int, int] = _STYLES[0]) -> Any:
    from ruamel.yaml import YAML

    yaml = YAML()  # round-trip
    yaml.preserve_quotes = True
    yaml.width = _WIDTH
    mapping, sequence, offset = style
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    return yaml


def eol(mapping: Any, key: str, text: str) -> None:
    """An end-of-line comment on ``key``, one space after the value."""
    mapping.yaml_add_eol_comment(" ".join(text.split()), key, column=0)


def dump(yaml: Any, data: Any) -> str:
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def load_round_trip(text: str) -> tuple[Any, Any]:
    """``(yaml, data)`` for ``text``, with the indentation style that reproduces it
    (the first style tried when none does exactly)."""
    first = None
    for style in _STYLES:
        yaml = make_yaml(style)
        data = yaml.load(text)
        if first is None:
            first = (yaml, data)
        if dump(yaml, data) == text:
            return yaml, data
    assert first is not None
    return first


def only_added(before: str, after: str) -> list[str]:
    """Lines of ``before`` that ``after`` removes or changes (empty: only additions)."""
    changed = []
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), False)
    old = before.splitlines()
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            changed += [f"{n + 1}: {old[n]}" for n in range(i1, i2)]
    return changed


def schema_comment(target: Path, kind: str) -> str:
    """The editor line for a spec written at ``target``: a relative path to the nearest
    ``schemas/KIND.schema.json`` above it, else the schema's published ``$id``."""
    from roofgen.spec.schema import load_schema

    name = f"{kind}.schema.json"
    folder = target.resolve().parent
    for parent in (folder, *folder.parents):
        candidate = parent / "schemas" / name
        if candidate.is_file():
            relative = os.path.relpath(candidate, folder).replace(os.sep, "/")
            return f"# yaml-language-server: $schema={relative}"
    return f"# yaml-language-server: $schema={load_schema(kind)['$id']}"


def lf_text(raw: bytes) -> str:
    """A file's bytes as the text an edit works on: UTF-8 without its byte order
    mark, every line ending (CRLF, CR, LF) as LF, as YAML reads them. Raises
    UnicodeDecodeError."""
    return _ENDINGS.sub("\n", raw.decode("utf-8-sig"))


def keep_layout(original: bytes, edited: str) -> bytes:
    """``edited`` (the LF text of an edit of ``original``, see :func:`lf_text`) encoded
    as ``original`` was: its byte order mark, if any, kept; each line that is still
    there (or changed in place) ends as it did; a new line ends with the file's most
    common ending (the first of the most common, on a tie; LF in a file without one);
    no final line ending added where the file had none."""
    old = _lines(original.decode("utf-8-sig"))
    new = _lines(edited)
    counts = Counter(end for _, end in old if end)
    dominant = max(counts, key=counts.__getitem__) if counts else "\n"  # first on a tie
    kept: list[str | None] = [None] * len(new)
    matcher = difflib.SequenceMatcher(None, [t for t, _ in old], [t for t, _ in new], False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("equal", "replace"):
            for k in range(min(i2 - i1, j2 - j1)):
                kept[j1 + k] = old[i1 + k][1]
    out = []
    for j, (text, end) in enumerate(new):
        ending = kept[j]
        if not end or (ending == "" and j == len(new) - 1):
            ending = ""
        elif not ending:
            ending = dominant
        out.append(text + ending)
    bom = codecs.BOM_UTF8 if original.startswith(codecs.BOM_UTF8) else b""
    return bom + "".join(out).encode("utf-8")


def _lines(text: str) -> list[tuple[str, str]]:
    """``text``'s lines, each as (text, line ending); the last one's ending may be ''."""
    return [(m.group(1), m.group(2)) for m in _LINE.finditer(text) if m.group(0)]


def write_edited(target: Path, edited: str, original: bytes | None = None) -> None:
    """Write an edit of ``target`` (``edited``: LF text) through
    :func:`roofgen.files.write_file`, laid out as the file was (:func:`keep_layout`;
    ``original``: the bytes the edit was made from, else the file's own): a file
    that changed only where the edit changed it, its mode kept, a link inside the
    project written through."""
    raw = target.read_bytes() if original is None else original
    write_file(target, keep_layout(raw, edited))
