"""What a check's result depends on, and whether those exact inputs passed before.

The key hashes the bytes of every spec file and of the rules file, the thresholds,
the display root, and roofgen's own files (their paths, sizes and modification
times). A build that finds its key among the keys of recent passing checks knows
that nothing changed and starts no chart renderer early. The file holds those keys
and nothing else: no result is ever read back from it, so an entry can only make a
build start its renderers later (or earlier) than it could have. Results are never
cached whole; the check runs every time, from the per-file document cache
(:mod:`roofgen.spec.file_cache`).
"""

from __future__ import annotations

import hashlib
import json
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from roofgen.files import write_cache_entry
from roofgen.spec.file_cache import roofgen_digest
from roofgen.spec.load import discover
from roofgen.spec.yamlload import MAX_FILE_BYTES

_KEEP = 4  # keys of recent passing checks kept
_NAME = "passed-checks.json"
_KEY = re.compile(r"[0-9a-f]{64}")


def key(
    paths: Sequence[Path], thresholds: Any, rules_file: Path | None, display_root: Path | None
) -> str:
    h = hashlib.sha256(roofgen_digest().encode())
    h.update(repr((thresholds, str(display_root), [str(p) for p in paths])).encode())
    files, _ = discover(paths, display_root)
    if rules_file is not None:
        files = [*files, rules_file]
    for path in files:
        h.update(str(path).encode("utf-8", "surrogateescape") + b"\0")
        h.update(_content_digest(path))
    return h.hexdigest()


def _content_digest(path: Path) -> bytes:
    """The digest of a spec file's bytes; a pipe, a device or a file too large to
    load is not read (it could never end), only named: the check refuses it anyway."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return f"not loadable:{info.st_mode}:{info.st_size}:{info.st_mtime_ns}".encode()
        return hashlib.sha256(path.read_bytes()).digest()
    except OSError:
        return b"unreadable"


def _passed(cache_dir: Path) -> list[str]:
    """The keys of recent passing checks; [] for a missing or malformed file."""
    try:
        data = json.loads((cache_dir / _NAME).read_bytes())
    except (OSError, ValueError, RecursionError):
        return []
    keys = data.get("passed") if isinstance(data, dict) and len(data) == 1 else None
    if not isinstance(keys, list) or len(keys) > _KEEP:
        return []
    if not all(isinstance(k, str) and _KEY.fullmatch(k) for k in keys):
        return []
    return keys


def passed_before(cache_dir: Path, digest: str) -> bool:
    """Whether a check of the inputs of ``digest`` passed recently."""
    return digest in _passed(cache_dir)


def remember(cache_dir: Path, digest: str) -> None:
    """Note that the check of ``digest`` passed (skipped where the cache cannot be written)."""
    keys = _passed(cache_dir)
    if keys[-1:] == [digest]:
        return  # a rebuild of what was built last: nothing to write
    keys = [*(k for k in keys if k != digest), digest][-_KEEP:]
    write_cache_entry(cache_dir / _NAME, json.dumps({"passed": keys}))
