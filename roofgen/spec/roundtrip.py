"""Writing and editing spec files round-trip with ruamel.yaml.

PyYAML's dump drops comments, the ``# yaml-language-server: $schema=`` line and
the author's style; ruamel.yaml keeps them. Editing a file (``import --into``)
must only add lines: :func:`only_added` checks that before anything is written.
An edit (``import --into``, ``migrate``) works on the file's LF text
(:func:`lf_text`) and is written back laid out as the file was (:func:`write_edited`):
its line endings, byte order mark and mode.
"""

from __future__ import annotations

import bisect
import codecs
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
    """Lines of ``before`` that ``after`` removes or changes (empty: only additions):
    ``before``'s lines must be a subsequence of ``after``'s. Found in one pass with
    an index of ``after``'s lines (a general diff costs time quadratic in the lines
    of a large case, whose launches repeat the same lines)."""
    old = before.splitlines()
    matched = _subsequence(old, after.splitlines())
    return [f"{n + 1}: {old[n]}" for n, at in enumerate(matched) if at is None]


def _subsequence(old: list[str], new: list[str]) -> list[int | None]:
    """For each line of ``old``, the line of ``new`` it is taken to be (None: not
    there), matched in order, each to the first equal line of ``new`` after the one
    before it. Exact for ``old`` a subsequence of ``new``; otherwise a line matched
    too far ahead may leave others unmatched, which is harmless where it is used."""
    where: dict[str, list[int]] = {}
    for j, line in enumerate(new):
        where.setdefault(line, []).append(j)
    out: list[int | None] = []
    start = 0
    for line in old:
        found = where.get(line, [])
        k = bisect.bisect_left(found, start)
        if k < len(found):
            out.append(found[k])
            start = found[k] + 1
        else:
            out.append(None)
    return out


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
    unended = bool(old) and not old[-1][1]
    # Which old line each new line is matters only where endings differ: in a file of
    # several kinds, or for the old last line when it has none.
    if len(counts) > 1 or unended:
        kept = _endings_kept(old, [t for t, _ in new])
    else:
        kept = [None] * len(new)
    out = []
    for j, (text, end) in enumerate(new):
        last = j == len(new) - 1
        own = kept[j]
        ending = dominant if own is None else own
        if not end:  # the edit's own last line, unended
            ending = ""
        elif ending == "" and not last:  # the old unended last line, lines added after it
            ending = dominant
        out.append(text + ending)
    bom = codecs.BOM_UTF8 if original.startswith(codecs.BOM_UTF8) else b""
    return bom + "".join(out).encode("utf-8")


def _endings_kept(old: list[tuple[str, str]], new: list[str]) -> list[str | None]:
    """The ending each new line takes from the old line it is (None: a new line),
    for a file whose lines end in more than one way. Lines are matched in order
    (:func:`_subsequence`); between two matched lines, the old lines left over give
    their endings to the new ones there one by one (a line changed in place)."""
    matched = _subsequence([t for t, _ in old], new)
    kept: list[str | None] = [None] * len(new)
    spare: list[str] = []  # endings of unmatched old lines since the last match
    for i, at in enumerate(matched):
        if at is None:
            spare.append(old[i][1])
            continue
        kept[at] = old[i][1]
        _fill_gap(kept, at, spare)
        spare = []
    _fill_gap(kept, len(new), spare)
    return kept


def _fill_gap(kept: list[str | None], end: int, spare: list[str]) -> None:
    """Give ``spare`` endings, in order, to the unmatched new lines just before ``end``."""
    start = end - 1
    while start >= 0 and kept[start] is None:
        start -= 1
    for j, ending in zip(range(start + 1, end), spare, strict=False):
        kept[j] = ending


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
