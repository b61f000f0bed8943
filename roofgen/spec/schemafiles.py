"""roofgen's JSON Schemas as files: their names, and each loaded once."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from roofgen.datafiles import schema_path

ALL_SCHEMAS = ("machine", "case", "output", "rules", "config")


@cache
def load_schema(kind: str) -> dict[str, Any]:
    with schema_path(kind).open(encoding="utf-8") as f:
        schema: dict[str, Any] = json.load(f)
    return schema
