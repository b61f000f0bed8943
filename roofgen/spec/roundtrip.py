"""Writing and editing spec files round-trip with ruamel.yaml.

PyYAML's dump drops comments, the ``# yaml-language-server: $schema=`` line and
the author's style; ruamel.yaml keeps them. Editing a file (``import --into``)
must only add lines: :func:`only_added` checks that before anything is written.
"""

from __future__ import annotations

import difflib
import io
import os
from pathlib import Path
from typing import Any

# Indentation styles tried, in order, to find the one a file is written in:
# (mapping, sequence, offset): "key:\n  - item" is (2, 4, 2), "key:\n- item" (2, 2, 0).
_STYLES = ((2, 4, 2), (2, 2, 0), (4, 6, 4), (4, 4, 0), (4, 4, 2))
_WIDTH = 4096  # never re-wrap a long line


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


def write_text(text: str, target: Path) -> None:
    """Write atomically (a temporary file beside ``target``, then a rename)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    with tmp.open("w", encoding="utf-8", newline="") as f:
        f.write(text)
    tmp.replace(target)
