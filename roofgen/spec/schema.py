"""JSON Schema validation of spec documents, with errors in the user's words.

The schemas in schemas/ are the only statement of the format's rules. One
validator is built per schema and reused. The custom keyword ``x-quantity``
checks that a quantity has the right dimension and sign, so units are checked
where the schema says a quantity belongs; ``x-finite`` keeps a plain number finite
and within the range quantities keep to (0, or 1e-60 to 1e60 in size).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

from roofgen.problems import Problem
from roofgen.spec import fastpath
from roofgen.spec.quantity import (
    EXAMPLES,
    MAX_COUNT,
    QuantityError,
    out_of_range,
    parse_quantity,
)
from roofgen.spec.schemafiles import ALL_SCHEMAS, load_schema
from roofgen.spec.yamlload import Document, PathKey

if TYPE_CHECKING:
    from jsonschema import ValidationError

KINDS = ("machine", "case")


def _x_quantity(validator: Any, spec: dict[str, Any], instance: Any, schema: Any) -> Iterator:
    from jsonschema import ValidationError  # imported already: jsonschema calls this

    if not isinstance(instance, int | float | str) or isinstance(instance, bool):
        return  # the schema's "type" reports it
    if isinstance(instance, str) and PLACEHOLDER.match(instance):
        yield ValidationError(_placeholder(instance, spec, schema))
        return
    dimensions = spec["dimension"]
    if isinstance(dimensions, str):
        dimensions = [dimensions]
    value = None
    first_error = None
    for dimension in dimensions:  # the first dimension the value has
        try:
            value = parse_quantity(instance, dimension)
            break
        except QuantityError as exc:
            first_error = first_error or exc
    if value is None:
        yield ValidationError(str(first_error))
        return
    minimum = spec.get("minimum", "positive")
    if minimum == "positive" and not value > 0:
        example = EXAMPLES[dimensions[0]]
        yield ValidationError(f"{instance!r} must be greater than zero (e.g. '{example}')")
    elif minimum == "non-negative" and value < 0:
        yield ValidationError(f"{instance!r} must not be negative")


#: What ``roofgen new case`` writes where only a measurement can say the value.
PLACEHOLDER = re.compile(r"^\s*TODO\b", re.IGNORECASE)


def _placeholder(instance: str, spec: dict[str, Any], schema: dict[str, Any]) -> str:
    """'TODO' where a quantity belongs: say what to measure and what to write."""
    what = schema.get("x-measure")
    if not what:
        first = str(schema.get("description", "")).split(". ")[0].rstrip(".")
        what = (first[:1].lower() + first[1:]) if first else "this value"
    dimension = spec["dimension"]
    example = EXAMPLES[dimension if isinstance(dimension, str) else dimension[0]]
    examples = schema.get("examples") or []
    if examples and isinstance(examples[0], str):
        example = examples[0]
    otherwise = schema.get("x-otherwise")
    return f"{instance!r} is a placeholder: measure {what} and write it here (e.g. '{example}')" + (
        f", {otherwise}" if otherwise else ""
    )


def _x_finite(validator: Any, enabled: bool, instance: Any, schema: Any) -> Iterator:
    from jsonschema import ValidationError  # imported already: jsonschema calls this

    if not enabled or not isinstance(instance, int | float) or isinstance(instance, bool):
        return
    if isinstance(instance, float) and not math.isfinite(instance):
        yield ValidationError(f"{_show(instance)} is not a finite number")
    elif why := out_of_range(instance):
        yield ValidationError(
            f"{_show(instance)} is {why}: roofgen computes with numbers from 1e-60 to 1e60 "
            "in size, or 0"
        )


@cache
def validator(kind: str) -> Any:
    """jsonschema's validator of schema ``kind``, with roofgen's keywords. jsonschema is
    imported here, on first use: a check of valid files never needs it (the fast path
    accepts them), and it costs a tenth of a second or more to import."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import extend

    cls = extend(Draft202012Validator, {"x-quantity": _x_quantity, "x-finite": _x_finite})
    return cls(load_schema(kind), format_checker=Draft202012Validator.FORMAT_CHECKER)


def validate(doc: Document, kind: str) -> list[Problem]:
    """Every schema problem of ``doc`` as ``kind`` ('machine', 'case' or 'rules')."""
    if doc.numbers_in_range and fastpath.is_valid(doc.data, kind):
        return []
    problems = []
    for error in validator(kind).iter_errors(doc.data):
        problems.extend(_to_problems(doc, error, kind))
    return _dedupe(problems)


def _to_problems(doc: Document, error: ValidationError, kind: str = "") -> list[Problem]:
    path: PathKey = tuple(error.absolute_path)
    if error.validator in ("oneOf", "anyOf") and error.context:
        best = _best_branch(error)
        if best is not None:
            return [p for e in best for p in _to_problems(doc, e, kind)]
        return [doc.problem(path, _no_branch(error), code="schema.type")]
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        return [_see_reference(p, kind, path) for p in _unknown_keys(doc, error, path)]
    problem = doc.problem(path, _message(error), code=f"schema.{error.validator}")
    if error.validator == "required":
        return [_see_reference(problem, kind, (*path, _missing_key(error)))]
    return [problem]


def _see_reference(problem: Problem, kind: str, path: PathKey) -> Problem:
    """End the message of an unknown or missing key with the anchor of the field's entry
    on the site's reference page (guide/reference): '... (see reference: ANCHOR)'."""
    from dataclasses import replace

    from roofgen.spec.fields import anchor_for

    anchor = anchor_for(kind, path)
    if not anchor:
        return problem
    text = problem.message
    end = "." if text.endswith(".") else ""
    return replace(problem, message=f"{text.removesuffix('.')} (see reference: {anchor}){end}")


def _missing_key(error: ValidationError) -> str:
    return error.message.split("'")[1] if "'" in error.message else error.message


def _best_branch(error: ValidationError) -> list[ValidationError] | None:
    """The errors of the oneOf/anyOf branch the document most likely meant."""
    branches: dict[int, list[ValidationError]] = {}
    for sub in error.context or []:
        branches.setdefault(sub.schema_path[0] if sub.schema_path else 0, []).append(sub)
    # A branch that rejects the value's own type (not something inside it) was not meant.
    meant = {
        k: v
        for k, v in branches.items()
        if not any(e.validator == "type" and not e.relative_path for e in v)
    }
    if len(meant) == 1:
        return next(iter(meant.values()))
    return None


def _unknown_keys(doc: Document, error: ValidationError, path: PathKey) -> list[Problem]:
    schema = error.schema
    known = sorted(schema.get("properties", {}))
    allowed = set(known)
    patterns = schema.get("patternProperties", {})
    extra = [
        k for k in error.instance if k not in allowed and not any(re.search(p, k) for p in patterns)
    ]
    problems = []
    import difflib  # imported here: only a spec with an unknown key needs it

    for key in extra:
        close = difflib.get_close_matches(key, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        if known:
            valid = f"{'' if close else '.'} Valid keys here: {', '.join(known)}."
        elif "x-valid-keys" in schema:
            valid = f"{'' if close else '.'} Valid keys: {schema['x-valid-keys']}."
        elif patterns:
            valid = f"{'' if close else '.'} Valid keys match: " + ", ".join(patterns) + "."
        else:
            valid = ""
        message = f"unknown key {_show(key)}{hint}{valid}"
        problems.append(doc.problem((*path, key), message, key=True, code="schema.unknown-key"))
    return problems


def _message(error: ValidationError) -> str:
    v, inst, schema = error.validator, error.instance, error.schema
    if v in ("not", "required") and "x-message" in schema:  # the schema's own words
        return str(schema["x-message"])
    if v == "required":
        missing = _missing_key(error)
        desc = schema.get("properties", {}).get(missing, {}).get("description", "")
        first = desc.split(". ")[0].rstrip(".")
        return f"missing required key {missing!r}" + (f" ({first})" if first else "")
    if v == "type":
        want = error.validator_value
        want = " or ".join(want) if isinstance(want, list) else want
        return f"{_show(inst)} is {_kind(inst)}, expected {_TYPE_WORDS.get(want, want)}" + _example(
            schema
        )
    if v == "enum":
        words = (json.dumps(v) if isinstance(v, bool) else str(v) for v in error.validator_value)
        return f"{_show(inst)} is not one of: {', '.join(words)}"
    if v == "const":
        return f"{_show(inst)} must be {error.validator_value!r}"
    if v == "pattern" and schema.get("pattern", "").startswith("^[a-z0-9]"):
        return (
            f"{_show(inst)} is not a valid id: use lower-case letters, digits, '.', '_' "
            "and '-', starting with a letter or digit"
        )
    if v == "maximum" and error.validator_value == MAX_COUNT:
        return (
            f"{_show(inst)} is more than {MAX_COUNT:,} (2^53), the largest count roofgen "
            "computes with (the largest integer a float holds exactly)"
        )
    if v in ("minItems", "minProperties"):
        return "must not be empty"
    if v == "format":
        return f"{_show(inst)} is not a valid {error.validator_value} (write YYYY-MM-DD)"
    if v == "not" and set(error.validator_value) == {"required"}:
        keys = " and ".join(repr(k) for k in error.validator_value["required"])
        return f"{keys} exclude each other: keep the one that is true"
    # jsonschema's own message starts with the whole value (a 100,000-item grid made a
    # 300 KB line): show the value as every other message does.
    shown = repr(inst)
    if error.message.startswith(shown) and len(shown) > 60:
        return _show(inst) + error.message[len(shown) :]
    return error.message


_TYPE_WORDS = {"array": "a list", "object": "a mapping", "string": "a string",
               "integer": "an integer", "number": "a number", "boolean": "true or false",
               "number or string": "a number or a string"}  # fmt: skip


def _no_branch(error: ValidationError) -> str:
    """No alternative fits the value's type: say what the alternatives look like."""
    examples = error.schema.get("examples", [])
    shapes = []
    for example in examples:
        if isinstance(example, dict):
            shapes.append(f"a mapping with a {next(iter(example))!r}")
        else:
            shapes.append(repr(example))
    what = error.schema.get("x-expects", "")
    expected = " or ".join(shapes) if shapes else "another type"
    if what:
        expected = f"{what} such as {expected}"
    return f"{_show(error.instance)} is {_kind(error.instance)}, expected {expected}"


def _example(schema: dict[str, Any]) -> str:
    examples = schema.get("examples")
    return f" (e.g. {json.dumps(examples[0])})" if examples else ""


def _show(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(value: Any) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    return "a number"


def _dedupe(problems: list[Problem]) -> list[Problem]:
    seen: set[tuple[int, int, str, str]] = set()
    out = []
    for p in problems:
        key = (p.line, p.column, p.path, p.message)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def check_schemas() -> None:
    """Raise if any shipped schema is not a valid Draft 2020-12 schema."""
    from jsonschema import Draft202012Validator

    for kind in ALL_SCHEMAS:
        Draft202012Validator.check_schema(load_schema(kind))
