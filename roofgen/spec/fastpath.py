"""A compiled fast path for documents that are valid, which most are.

jsonschema walks a document in Python, keyword by keyword; fastjsonschema
compiles the same schema into Python code about ten times faster, but stops at
the first error and speaks of no positions. So a document is first checked
with the compiled schema; only if it fails (or holds a non-finite number) does
:func:`roofgen.spec.schema.validate` run jsonschema for every located message.
The compiled schema is derived from the shipped one, never written by hand:
``x-quantity`` becomes a custom format (and a sign bound on plain numbers).
The schemas use only keywords whose meaning is the same in draft 7, which
fastjsonschema implements, and in draft 2020-12; a test holds the fast path to
rejecting everything the full validator rejects in the invalid-spec corpus.
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import re
from collections.abc import Callable
from functools import cache, partial
from pathlib import Path
from types import CodeType
from typing import Any

from roofgen.files import write_cache_entry
from roofgen.spec.quantity import QuantityError, parse_quantity


def _format_name(spec: dict[str, Any]) -> str:
    dims = spec["dimension"]
    dims = dims if isinstance(dims, list) else [dims]
    return "roofgen:" + "|".join(dims) + ":" + spec.get("minimum", "positive")


def _format_check(name: str) -> Callable[[str], bool]:
    _, dims_text, minimum = name.split(":")
    dims = dims_text.split("|")

    def check(text: str) -> bool:
        for dimension in dims:
            try:
                value = parse_quantity(text, dimension)
            except QuantityError:
                continue
            return value > 0 if minimum == "positive" else value >= 0
        return False

    return check


def derive(schema: Any, formats: dict[str, Callable[[str], bool]]) -> Any:
    """The schema with roofgen's keywords turned into ones fastjsonschema knows."""
    if isinstance(schema, list):
        return [derive(s, formats) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: derive(v, formats) for k, v in schema.items() if not k.startswith("x-")}
    if "x-quantity" in schema:
        spec = schema["x-quantity"]
        name = _format_name(spec)
        formats[name] = _format_check(name)
        out["format"] = name
        if spec.get("minimum", "positive") == "positive":
            out["exclusiveMinimum"] = 0
        else:
            out["minimum"] = 0
    return out


@cache
def compiled(kind: str, cache_dir: Path | None = None) -> Callable[[Any], Any]:
    """The compiled validator of schema ``kind``.

    Compiling the generated code of the case schema costs about 0.2 s, most of a
    one-file check; with ``cache_dir`` the compiled code object is kept in
    ``cache_dir/validators`` (marshal, keyed by the generated code, fastjsonschema's
    and Python's versions) and a later process only loads it.
    """
    import fastjsonschema

    from roofgen.spec.schemafiles import load_schema

    formats: dict[str, Callable[[str], bool]] = {}
    schema = derive(load_schema(kind), formats)
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    formats["date"] = _is_date
    if cache_dir is None:
        return fastjsonschema.compile(schema, formats=formats, use_default=False)
    source = fastjsonschema.compile_to_code(schema, formats=formats, use_default=False)
    name = _ENTRY.search(source)
    if name is None:  # not the code this module knows how to load
        return fastjsonschema.compile(schema, formats=formats, use_default=False)
    namespace: dict[str, Any] = {}
    exec(_code(source, kind, Path(cache_dir) / "validators"), namespace)
    return partial(namespace[name.group(1)], custom_formats=formats)


_ENTRY = re.compile(r"^def (validate_\w+)\(", re.MULTILINE)


def _code(source: str, kind: str, folder: Path) -> CodeType:
    """``source`` compiled, from ``folder`` when an earlier process compiled it."""
    digest = hashlib.sha256(importlib.util.MAGIC_NUMBER + source.encode()).hexdigest()[:32]
    path = folder / f"{kind}-{digest}.marshal"
    try:
        code = marshal.loads(path.read_bytes())
        if isinstance(code, CodeType):
            return code
    except (OSError, ValueError, EOFError, TypeError):
        pass
    code = compile(source, f"<roofgen {kind} schema>", "exec")
    # Replaces the code of an earlier roofgen's or schema's.
    write_cache_entry(path, marshal.dumps(code), replaces=f"{kind}-*.marshal")
    return code


def _is_date(text: str) -> bool:
    import datetime

    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def is_valid(data: Any, kind: str, cache_dir: Path | None = None) -> bool:
    """True if ``data`` certainly satisfies the schema ``kind``."""
    import fastjsonschema

    try:
        compiled(kind, cache_dir)(data)
    except fastjsonschema.JsonSchemaException:
        return False
    return True
