"""Analysis results as flat rows: one rule for `Results.to_dataframe()` and
`roofgen analyze --format csv`.

The rule: one row per variant and one per launch of each variant, in the order of
the analysis JSON. A row holds that object's fields from the JSON output
(:func:`roofgen.report.analysis.variant_json`, :func:`roofgen.report.analysis.launch_json`, a
variant's ``launches`` left out) plus ``row`` (``"variant"`` or ``"launch"``). The
roofline kinds (``rooflines``: precision options, collectives, instruction points...)
are left out too: they are lists of records, not columns; read them from the JSON.
Nested objects are flattened by joining keys with ``/``:
``{"bound_s": {"memory.hbm": 0.002}}`` becomes the column ``bound_s/memory.hbm``.
Resource names hold dots (``compute.tensor``, ``memory.hbm``), never ``/``; a key
that does hold ``/`` or ``%`` has them written ``%2F`` and ``%25``, so
:func:`split_column` always recovers the keys. Units are in the names
(``time_s``, ``achieved_flop_per_s``, ``intensity_flop_per_byte``).
Lists (``facts``, ``coverage/covered``) stay lists in a DataFrame and are written
as JSON text in CSV. A null and an empty object yield no column (``speedup`` is
null for a baseline and an object for the other variants, so a null column would
collide with ``speedup/value``); a value a row lacks is NaN in a DataFrame and
empty in CSV. Every column is a leaf: no column name is a prefix of another.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "LEADING_COLUMNS",
    "SEPARATOR",
    "analysis_rows",
    "column_name",
    "flatten",
    "rows_csv",
    "rows_dataframe",
    "split_column",
    "unflatten",
]

SEPARATOR = "/"
#: Fields of the JSON that are no columns: a variant's launches (rows of their own) and
#: the roofline kinds' results (lists of records).
_NOT_COLUMNS = frozenset({"launches", "rooflines"})
#: Columns that come first, in this order, in every table.
LEADING_COLUMNS = ("row", "case", "variant", "kernel", "index", "machine")


def _escape(key: str) -> str:
    return key.replace("%", "%25").replace(SEPARATOR, "%2F")


def _unescape(part: str) -> str:
    return part.replace("%2F", SEPARATOR).replace("%25", "%")


def column_name(keys: Sequence[str]) -> str:
    """``("bound_s", "memory.hbm")`` -> ``"bound_s/memory.hbm"``."""
    return SEPARATOR.join(_escape(str(k)) for k in keys)


def split_column(name: str) -> tuple[str, ...]:
    """The inverse of :func:`column_name`."""
    return tuple(_unescape(p) for p in name.split(SEPARATOR))


def flatten(doc: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> dict[str, Any]:
    """Nested mappings -> one level, keys joined by :func:`column_name`."""
    out: dict[str, Any] = {}
    for key, value in doc.items():
        keys = (*prefix, str(key))
        if isinstance(value, Mapping):
            out |= flatten(value, keys)
        elif value is None:
            continue  # null: no column (an object in another row may use the key)
        else:
            out[column_name(keys)] = value
    return out


def unflatten(row: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`flatten` (nulls and empty objects excepted: they had no
    column)."""
    out: dict[str, Any] = {}
    for name, value in row.items():
        *parents, last = split_column(name)
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return out


def analysis_rows(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows of the analysis JSON (:func:`roofgen.report.analysis.analysis_json`)."""
    rows: list[dict[str, Any]] = []
    for case in doc.get("cases", []):
        for variant in case.get("variants", []):
            fields = {k: v for k, v in variant.items() if k not in _NOT_COLUMNS}
            rows.append({"row": "variant", **flatten(fields)})
            for launch in variant.get("launches", []):
                fields = {k: v for k, v in launch.items() if k not in _NOT_COLUMNS}
                rows.append({"row": "launch", **flatten(fields)})
    return rows


def _columns(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        seen |= dict.fromkeys(row)
    lead = [c for c in LEADING_COLUMNS if c in seen]
    return lead + [c for c in seen if c not in LEADING_COLUMNS]


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def rows_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """CSV text (RFC 4180, ``\\n`` line ends): a header, then one line per row."""
    columns = _columns(rows)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in columns])
    return buffer.getvalue()


def rows_dataframe(rows: Sequence[Mapping[str, Any]]) -> Any:
    """A pandas DataFrame of the rows (pandas is imported here, not before)."""
    import pandas as pd

    columns = _columns(rows)
    return pd.DataFrame([[row.get(c) for c in columns] for row in rows], columns=columns)
