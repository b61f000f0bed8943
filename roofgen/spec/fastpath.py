"""A compiled fast path for documents that are valid, which most are.

jsonschema walks a document in Python, keyword by keyword; fastjsonschema
compiles the same schema into Python code about ten times faster, but stops at
the first error and speaks of no positions. So a document is first checked
with the compiled schema; only if it fails (or holds a non-finite number) does
:func:`roofgen.spec.schema.validate` run jsonschema for every located message.

The compiled schemas are modules of this package (``roofgen/spec/validators/``),
generated from the shipped schemas by :mod:`roofgen.spec.validatorgen`: importing
one is all a process does, and nothing is compiled, executed or loaded from a
cache. Their custom formats (``x-quantity`` and ``date``) are passed at call time.
The schemas use only keywords whose meaning is the same in draft 7, which
fastjsonschema implements, and in draft 2020-12; a test holds the fast path to
rejecting everything the full validator rejects in the invalid-spec corpus.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import cache, partial
from typing import Any

from roofgen.spec.quantity import QuantityError, parse_quantity

#: Schemas with a generated validator (``roofgen.spec.validatorgen.KINDS``).
KINDS = ("machine", "case", "rules", "config")


def format_check(name: str) -> Callable[[str], bool]:
    """The check of custom format ``roofgen:<dimension>[|<dimension>...]:<minimum>``:
    a quantity of one of the dimensions, positive or non-negative."""
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


@cache
def compiled(kind: str) -> Callable[[Any], Any] | None:
    """The generated validator of schema ``kind``, or None without one (a kind with no
    module, or modules generated for a fastjsonschema this one cannot import from)."""
    if kind not in KINDS:
        return None
    try:
        module = importlib.import_module(f"roofgen.spec.validators.{kind}")
    except ImportError:
        return None
    formats: dict[str, Callable[[str], bool]] = {n: format_check(n) for n in module.FORMATS}
    formats["date"] = _is_date
    return partial(module.validate, custom_formats=formats)


def _is_date(text: str) -> bool:
    import datetime

    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def is_valid(data: Any, kind: str) -> bool:
    """True if ``data`` certainly satisfies the schema ``kind`` (False: it may not)."""
    import fastjsonschema

    validate = compiled(kind)
    if validate is None:
        return False
    try:
        validate(data)
    except fastjsonschema.JsonSchemaException:
        return False
    return True
