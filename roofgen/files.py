"""Writing files so that a reader sees the old file or the whole new one, never a part."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8, newlines as given) to ``path`` through a temporary
    file beside it and a rename; the temporary file is removed if anything fails."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_cache_entry(path: Path, data: str | bytes, *, replaces: str | None = None) -> None:
    """:func:`write_atomic` for a cache entry, which can only make a later run faster:
    an entry that cannot be written is skipped. ``replaces`` is a pattern of the
    entries in the same folder that this one makes stale (an earlier roofgen's);
    they are removed."""
    with contextlib.suppress(OSError):
        write_atomic(path, data)
        if replaces is not None:
            for old in path.parent.glob(replaces):
                if old.name != path.name:
                    old.unlink(missing_ok=True)
