"""Strict JSON text.

The JSON of roofgen's reports (``analyze``, ``check``, ``explain``, ``diff``) is
strict: a float that is not a finite number (an overflow from extreme input) is
written as null, never ``NaN`` or ``Infinity``, and ``allow_nan=False`` guards that
nothing slips through. Text is compact (``{"a":1}``) or indented by ``indent``
spaces, exactly as :func:`json.dumps` writes it.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps", "finite"]


def finite(value: Any) -> Any:
    """``value`` with every float that is not finite replaced by ``None`` (and tuples
    as lists), in dicts and lists at any depth."""
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, indent: int | None = None) -> str:
    """``value`` as strict JSON text: compact, or indented by ``indent`` spaces."""
    separators = (",", ":") if indent is None else (",", ": ")
    try:  # most documents hold only finite numbers: skip the copy finite() makes
        return json.dumps(value, indent=indent, separators=separators, allow_nan=False)
    except ValueError:
        return json.dumps(finite(value), indent=indent, separators=separators, allow_nan=False)
