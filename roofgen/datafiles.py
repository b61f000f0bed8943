"""Find roofgen's data folders (schemas/, templates/) wherever roofgen runs.

In a built wheel they are force-included under ``roofgen/_data/``; in a
checkout and under an editable install (where a force-included folder is not
where importlib.resources looks) they are the top-level folders beside the
package.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@cache
def data_dir(name: str) -> Path:
    """The folder ``name`` ('schemas' or 'templates') of this roofgen."""
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"roofgen's {name}/ folder is missing from this installation")


def schema_path(kind: str) -> Path:
    return data_dir("schemas") / f"{kind}.schema.json"
