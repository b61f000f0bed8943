"""The spec format's fields, walked from the JSON Schemas.

One :class:`Field` per key a machine or case file can hold, in the schema's order,
each with the anchor of its entry on the site's reference page
(``case-variants-launches-measurement-time``). The reference page is generated from
these entries, schema error messages name the anchor of the field they concern, and
``roofgen new case`` writes every field with its description; so none of them can
drift from the schemas.

Anchors are the file kind followed by the property names from the top of the file
(list indices left out). A key the file chooses (a memory level id, a variant id)
is a placeholder named after what it is (``bytes-level``); a key that matches a
pattern (the precisions of a peak) is named by the pattern's first word
(``peaks-fp64``). A ``$ref`` is not expanded: the field points at the entry it reuses.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from roofgen.spec.quantity import BASE_UNIT, EXAMPLES, LABELS

__all__ = [
    "SPEC_KINDS",
    "Field",
    "anchor_for",
    "branches",
    "fields",
    "resolve",
    "type_text",
    "unit_text",
]

SPEC_KINDS = ("machine", "case")

#: What the keys of a mapping whose keys the file chooses are, by the mapping's key.
MAP_KEYS: dict[str, str] = {
    "end_to_end": "variant",
    "shape": "param",
    "dtypes": "tensor",
    "flops": "unit",
    "model_flops": "unit",
    "bytes": "level",
    "transactions": "level",
    "link_bytes": "link",
    "energy_per_byte": "level",
    "energy_per_flop": "precision",
    "peaks": "precision",
    "accepted": "rule",
    "<unit>": "precision",
}

_SLUG = re.compile(r"[^A-Za-z0-9_-]+")
_WORD = re.compile(r"[a-z][a-z0-9]*")


@dataclass(frozen=True)
class Field:
    """One key of a spec file, as the schema describes it."""

    kind: str  # "machine" or "case"
    segments: tuple[str, ...]  # anchor segments after the kind
    display: str  # the path as people read it: variants[].launches[].measurement.time
    key: str  # the key as written, or <placeholder>, or the pattern keys match
    schema: Mapping[str, Any]  # the field's schema ($ref resolved, siblings merged)
    required: bool
    pointer: str  # JSON pointer of the field's schema in the schema file
    ref: str | None = None  # anchor of the field whose schema this one reuses ($ref)
    pattern: str | None = None  # the regular expression keys match (patternProperties)

    @property
    def anchor(self) -> str:
        return "-".join((self.kind, *self.segments))

    @property
    def depth(self) -> int:
        return len(self.segments)

    @property
    def description(self) -> str:
        return str(self.schema.get("description", ""))


def _root(kind: str) -> dict[str, Any]:
    from roofgen.spec.schemafiles import load_schema

    return load_schema(kind)


def _pointer_get(root: Mapping[str, Any], pointer: str) -> Any:
    node: Any = root
    for part in pointer.lstrip("#").strip("/").split("/"):
        if not part:
            continue
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def resolve(root: Mapping[str, Any], node: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``node`` with a local ``$ref`` followed (its own keys win); and the pointer."""
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#"):
        return dict(node), None
    target = _pointer_get(root, ref)
    merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return merged, ref.lstrip("#") or "/"


def branches(root: Mapping[str, Any], node: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``node`` and the alternatives it allows (anyOf, oneOf, allOf), flattened."""
    node, _ = resolve(root, node)
    out = [node]
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in node.get(key, []):
            if isinstance(sub, Mapping):
                out += branches(root, sub)
    return out


def _slug(key: str) -> str:
    return _SLUG.sub("", key) or "key"


def _pattern_word(pattern: str) -> str:
    match = _WORD.search(pattern)
    return match.group(0) if match else "key"


def pattern_shown(pattern: str) -> str:
    """``^(fp64|fp32)(-sparse)?$`` -> ``fp64|fp32[-sparse]``."""
    text = pattern.removeprefix("^").removesuffix("$")
    text = re.sub(r"\(([^()]*)\)\?", r"[\1]", text)
    return text.replace("(", "").replace(")", "")


@dataclass(frozen=True)
class _Key:
    key: str
    segment: str
    node: Mapping[str, Any]
    required: bool
    pointer: str
    suffix: str  # "[]" per list level between the parent and this key
    pattern: str | None = None


def _branches_at(
    root: Mapping[str, Any], node: Mapping[str, Any], pointer: str
) -> list[tuple[dict[str, Any], str]]:
    """``node`` and its alternatives, each with its JSON pointer ($ref followed)."""
    node, ref = resolve(root, node)
    pointer = ref or pointer
    out = [(node, pointer)]
    for key in ("anyOf", "oneOf", "allOf"):
        for i, sub in enumerate(node.get(key, [])):
            if isinstance(sub, Mapping):
                out += _branches_at(root, sub, f"{pointer}/{key}/{i}")
    return out


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _keys(
    root: Mapping[str, Any], node: Mapping[str, Any], pointer: str, parent: str, suffix: str = ""
) -> Iterator[_Key]:
    """The keys an object node (or a list of them, or its alternatives) allows."""
    seen: set[str] = set()
    for branch, where in _branches_at(root, node, pointer):
        found: list[_Key] = []
        items = branch.get("items")
        if isinstance(items, Mapping):
            found += _keys(root, items, f"{where}/items", parent, suffix + "[]")
        required = set(branch.get("required", []))
        for key, sub in branch.get("properties", {}).items():
            found.append(
                _Key(
                    key,
                    _slug(key),
                    sub,
                    key in required,
                    f"{where}/properties/{_escape(key)}",
                    suffix,
                )  # fmt: skip
            )
        name = MAP_KEYS.get(parent, "key")
        for pattern, sub in branch.get("patternProperties", {}).items():
            found.append(
                _Key(
                    pattern_shown(pattern),
                    f"{name}-{_pattern_word(pattern)}",
                    sub,
                    False,
                    f"{where}/patternProperties/{_escape(pattern)}",
                    suffix,
                    pattern,
                )  # fmt: skip
            )
        extra = branch.get("additionalProperties")
        if isinstance(extra, Mapping):
            found.append(_Key(f"<{name}>", name, extra, False, f"{where}/additionalProperties",
                              suffix))  # fmt: skip
        for k in found:
            if k.segment not in seen:
                seen.add(k.segment)
                yield k


@cache
def fields(kind: str) -> tuple[Field, ...]:
    """Every field of a ``kind`` ('machine' or 'case') file, depth first, in schema order."""
    root = _root(kind)
    out: list[Field] = []
    by_pointer: dict[str, tuple[str, ...]] = {}

    def visit(node: Mapping[str, Any], pointer: str, segments: tuple[str, ...], display: str,
              parent: str) -> None:  # fmt: skip
        for k in _keys(root, node, pointer, parent):
            resolved, ref = resolve(root, k.node)
            shown = f"{display}{k.suffix}.{k.key}" if display else f"{k.suffix}{k.key}"
            field = Field(
                kind=kind,
                segments=(*segments, k.segment),
                display=shown,
                key=k.key,
                schema=resolved,
                required=k.required,
                pointer=k.pointer,
                ref=ref,
                pattern=k.pattern,
            )
            out.append(field)
            by_pointer[k.pointer] = field.segments
            if ref is None:
                visit(resolved, k.pointer, field.segments, shown, k.key)

    visit(root, "", (), "", "")
    # A $ref names the field it reuses by that field's anchor.
    return tuple(f if f.ref is None else _with_ref(f, by_pointer.get(f.ref), kind) for f in out)


def _with_ref(f: Field, target: tuple[str, ...] | None, kind: str) -> Field:
    from dataclasses import replace

    return replace(f, ref="-".join((kind, *target)) if target else None)


def field(kind: str, anchor: str) -> Field | None:
    return next((f for f in fields(kind) if f.anchor == anchor), None)


@cache
def _by_anchor(kind: str) -> dict[str, Field]:
    return {f.anchor: f for f in fields(kind)}


def anchor_for(kind: str, path: Sequence[str | int]) -> str | None:
    """The reference anchor of the field at ``path`` in a ``kind`` file (the nearest
    documented field above it when the path leaves the schema); None for other kinds."""
    if kind not in SPEC_KINDS:
        return None
    known = _by_anchor(kind)
    root = _root(kind)
    node: Mapping[str, Any] = root
    pointer = ""
    segments: tuple[str, ...] = ()
    parent = ""
    for part in path:
        if isinstance(part, int):
            continue  # lists: the keys below come from the items
        match = next(
            (k for k in _keys(root, node, pointer, parent) if _matches(k, part)),
            None,
        )
        if match is None:
            break
        segments = (*segments, match.segment)
        resolved, ref = resolve(root, match.node)
        anchor = "-".join((kind, *segments))
        target = known.get(anchor)
        if target is not None and target.ref is not None:  # continue in the reused entry
            segments = tuple(target.ref.split("-")[1:])
        node, pointer, parent = resolved, ref or match.pointer, match.key
    while segments and "-".join((kind, *segments)) not in known:
        segments = segments[:-1]
    return "-".join((kind, *segments))


def _matches(k: _Key, part: str) -> bool:
    if k.pattern is not None:
        return re.search(k.pattern, part) is not None
    if k.key.startswith("<"):
        return True
    return k.key == part


# --------------------------------------------------------------------------- words


def _quantity(node: Mapping[str, Any]) -> list[str]:
    spec = node.get("x-quantity")
    if not isinstance(spec, Mapping):
        return []
    dims = spec.get("dimension", [])
    return [dims] if isinstance(dims, str) else list(dims)


def _label(dimension: str) -> str:
    label = LABELS.get(dimension, dimension).split(" (")[0]
    for article in ("a ", "an "):
        label = label.removeprefix(article)
    return label


def type_text(root: Mapping[str, Any], node: Mapping[str, Any]) -> str:
    """What a value of ``node`` is, in words: 'a time', 'a list of ids', 'one of: ...'."""
    words: list[str] = []
    for branch in branches(root, node):
        word = _one_type(root, branch)
        if word and word not in words:
            words.append(word)
    return " or ".join(words) or "any value"


def _one_type(root: Mapping[str, Any], node: Mapping[str, Any]) -> str:
    dims = _quantity(node)
    if dims:
        return " or ".join(f"quantity ({_label(d)})" for d in dims)
    if "const" in node:
        return (
            f"always {node['const']!r}"
            if isinstance(node["const"], str)
            else (f"always {node['const']}")
        )
    if "enum" in node:
        return "one of: " + ", ".join(
            str(v).lower() if isinstance(v, bool) else str(v) for v in node["enum"]
        )
    kind = node.get("type")
    if isinstance(kind, list):
        return " or ".join(_plain_type(k, node) for k in kind)
    if kind == "array":
        items = node.get("items")
        inner = type_text(root, items) if isinstance(items, Mapping) else "values"
        return f"list of ({inner})" if inner.startswith("one of") else f"list of {inner}"
    if kind == "object":
        return "mapping"
    if isinstance(kind, str):
        return _plain_type(kind, node)
    return ""


def _plain_type(kind: str, node: Mapping[str, Any]) -> str:
    if kind == "string":
        if str(node.get("pattern", "")).startswith("^[a-z0-9]"):
            return "id"
        if node.get("format") == "date":
            return "date (YYYY-MM-DD)"
        return "text"
    if kind == "integer":
        low = node.get("minimum")
        return f"integer >= {low}" if low is not None else "integer"
    if kind == "number":
        low, high = node.get("minimum"), node.get("maximum")
        if low is not None and high is not None:
            return f"number from {low} to {high}"
        if node.get("exclusiveMinimum") is not None:
            return f"number > {node['exclusiveMinimum']}"
        return "number"
    return {"boolean": "true or false", "object": "mapping", "array": "list"}.get(kind, kind)


def dimensions(root: Mapping[str, Any], node: Mapping[str, Any]) -> list[str]:
    """The x-quantity dimensions a value of ``node`` may have."""
    dims: list[str] = []
    for branch in branches(root, node):
        dims += [d for d in _quantity(branch) if d not in dims]
    return dims


def unit_text(root: Mapping[str, Any], node: Mapping[str, Any]) -> str:
    """The SI base unit of a quantity field ('s', 'FLOP/s or OP/s'); empty for others."""
    return " or ".join(BASE_UNIT.get(d, d) for d in dimensions(root, node))


def quantity_example(root: Mapping[str, Any], node: Mapping[str, Any]) -> str:
    """How a person writes a value of a quantity field: '1.42 ms'; empty for others."""
    return " or ".join(EXAMPLES.get(d, "") for d in dimensions(root, node))


def example(field: Field) -> Any:
    """The schema's first example of ``field``, else None."""
    examples = field.schema.get("examples")
    if isinstance(examples, list) and examples:
        return examples[0]
    for branch in branches(_root(field.kind), field.schema):
        examples = branch.get("examples")
        if isinstance(examples, list) and examples:
            return examples[0]
    return None
