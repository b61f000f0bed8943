"""Scalars read by the YAML 1.2 core schema, as :mod:`roofgen.spec.yamlload` needs them.

``1e12`` is a number and ``no`` a string; an explicit tag (``!!str 12``) wins over
the guess; numbers beyond a float's range, values that do not fit their tag and
escapes for control characters are refused with a message (:class:`BadScalar`).
"""

from __future__ import annotations

import math
import re
import sys
from typing import Any, cast

import yaml

TAG = "tag:yaml.org,2002:"
# Plain (unquoted, untagged) scalars get this tag, so that an explicit tag is never
# mistaken for the parser's guess: '!!str 12' is a string, '12' a number.
PLAIN = "tag:roofgen,2024:plain"
SCALAR_TAGS = {TAG + t for t in ("str", "int", "float", "bool", "null", "timestamp")}

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


def show_tag(tag: str) -> str:
    return "!!" + tag.removeprefix(TAG) if tag.startswith(TAG) else tag


class BadScalar(ValueError):
    """A scalar that cannot be read: a number beyond a float's range, or a value that
    does not fit its explicit tag."""


# The most digits an integer below a float's maximum (about 1.8e308) can have.
_MAX_INT_DIGITS = 309


def _int(text: str, base: int = 10) -> int:
    """``text`` ('12', '-3', '0x1f', '0o17') as an int no larger than a float holds."""
    digits = text[2:] if base != 10 else text.lstrip("+-")
    too_large = f"the number {_shorten(text)} is too large: numbers go up to about 1.8e308"
    if base == 10 and len(digits) > _MAX_INT_DIGITS:  # int() refuses over 4,300 digits
        raise BadScalar(too_large)
    value = int(digits, base) * (-1 if text.startswith("-") else 1)
    if abs(value) > _FLOAT_MAX:
        raise BadScalar(too_large)
    return value


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # '1e309': overflows, unlike '.inf' which says so
        raise BadScalar(f"the number {_shorten(text)} is too large: numbers go up to about 1.8e308")
    return value


_FLOAT_MAX = int(sys.float_info.max)


def _shorten(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:12]}... ({len(text)} characters)"


# Characters YAML refuses in a file but a double-quoted escape ("\0", "\x01",
# "\uFFFF") still produces. None is text a person means, and several are not XML:
# one in a name would abort the SVG renderer.
UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")


def printable(value: str) -> None:
    """Raise BadScalar if an escape in ``value`` produced a control character."""
    bad = UNPRINTABLE.search(value)
    if bad:
        raise BadScalar(
            f"the escape for U+{ord(bad.group()):04X}, a control character, is not "
            "allowed in a spec: remove it"
        )


def scalar(node: yaml.ScalarNode) -> Any:
    """The value of a scalar node: str, int, float, bool or None. Raises BadScalar."""
    value: str = node.value
    tag = node.tag
    if node.style == '"':
        printable(value)
    if tag == PLAIN:
        return _core(value, _SPECIAL.get(value, value))
    if tag in (TAG + "str", TAG + "timestamp", TAG + "merge"):
        return value
    expected = _TAGGED_TYPES[tag]
    result: Any = _core(value, _SPECIAL.get(value, _NOT_SPECIAL))
    if not isinstance(result, expected) or (isinstance(result, bool) and bool not in expected):
        raise BadScalar(f"{_shorten(value)!r} does not fit the tag {show_tag(tag)!r}: remove it")
    return float(cast(float, result)) if tag == TAG + "float" else result


_NOT_SPECIAL = object()
_TAGGED_TYPES: dict[str, tuple[type, ...]] = {
    TAG + "null": (type(None),),
    TAG + "bool": (bool,),
    TAG + "int": (int,),
    TAG + "float": (float, int),
}


def _core(value: str, otherwise: Any) -> Any:
    """``value`` read by the YAML 1.2 core schema; ``otherwise`` if not null, bool or a number."""
    if value in _NULL:
        return None
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if _INT.match(value):
        return _int(value)
    if _OCT.match(value):
        return _int(value, 8)
    if _HEX.match(value):
        return _int(value, 16)
    if _FLOAT.match(value):
        return _float(value)
    return otherwise
