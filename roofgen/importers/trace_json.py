"""A JSON trace file (gzipped or not) read with bounds, for ``roofgen import torch-trace``.

A trace is read whole (Chrome trace JSON has no streaming form torch.profiler writes),
so what it may cost is bounded before it is read:

- its size: at most ``max_size`` bytes of JSON text, counted as it is read and, for a
  gzip file, as it is decompressed, in chunks, so a small file that inflates to
  gigabytes (a decompression bomb) stops at the limit. The default, 1 GiB, lies above
  the largest real traces (hundreds of MB: a few thousand steps of a large model);
  parsed, such a text takes several times its size in memory. ``--max-size`` raises it;
- its nesting: Python's JSON parser stops at the interpreter's recursion limit (about
  a thousand levels; a trace has five), which is reported as too deep;
- its numbers: ``NaN`` and ``Infinity`` (which JSON does not have, and Python's
  parser accepts) are refused, and so is an integer of more than
  :data:`MAX_DIGITS` digits (no clock, duration or shape needs more; Python refuses
  to convert 4,300), each with the file named. Fractions are read exactly, as
  decimals.
"""

from __future__ import annotations

import gzip
import json
import zlib
from decimal import Decimal
from pathlib import Path
from typing import Any, BinaryIO

from roofgen.importers import ImportFailure

__all__ = ["DEFAULT_MAX_SIZE", "MAX_DIGITS", "read_json", "size_text"]

DEFAULT_MAX_SIZE = 1 << 30
MAX_DIGITS = 40  # 10**40 ns outlasts the universe; shapes and ids need 20 at most
_CHUNK = 1 << 20


class _BadNumber(ValueError):
    """A number the trace may not hold (raised from the parser's hooks)."""


def size_text(size: int) -> str:
    """A size in bytes as people write it: ``1 GiB``, ``300 MiB``, ``1,000 bytes``."""
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if size >= 1 << shift and size % (1 << (shift - 10)) == 0:
            return f"{size / (1 << shift):g} {unit}"
    return f"{size:,} bytes"


def _too_large(path: Path, max_size: int, what: str) -> ImportFailure:
    return ImportFailure(
        f"{path}: {what} more than {size_text(max_size)} of JSON, the limit: a torch.profiler "
        "trace is at most some hundreds of MB; if this one is real, raise the limit with "
        f"--max-size (e.g. --max-size {size_text(max_size * 4).replace(' ', '')})"
    )


def _read_capped(stream: BinaryIO | gzip.GzipFile, path: Path, max_size: int, what: str) -> bytes:
    """At most ``max_size`` bytes of ``stream``, read in chunks; more is refused."""
    parts: list[bytes] = []
    total = 0
    while True:
        chunk = stream.read(min(_CHUNK, max_size + 1 - total))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        total += len(chunk)
        if total > max_size:
            raise _too_large(path, max_size, what)


def _raw_text(path: Path, max_size: int) -> bytes:
    with path.open("rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
        f.seek(0)
        if not gzipped:
            return _read_capped(f, path, max_size, "a file of")
        with gzip.GzipFile(fileobj=f, mode="rb") as inflated:
            return _read_capped(inflated, path, max_size, "a gzip file that holds")


def _constant(name: str) -> Any:
    raise _BadNumber(f"{name} is not a number JSON has: write a number (or null)")


def _integer(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise _BadNumber(
            f"an integer of {digits:,} digits ({text[:12]}...): no trace field holds more "
            f"than {MAX_DIGITS}"
        )
    return int(text)


def _decimal(text: str) -> Decimal:
    if len(text) > 1000:
        raise _BadNumber(f"a number of {len(text):,} characters ({text[:12]}...): not a time")
    return Decimal(text)


def read_json(path: Path, max_size: int = DEFAULT_MAX_SIZE) -> Any:
    """The JSON document in ``path`` (gzip or plain text), read within the bounds above;
    anything else is an :class:`ImportFailure` that names the file."""
    try:
        raw = _raw_text(path, max_size)
        text = raw.decode("utf-8-sig")
        del raw
        return json.loads(text, parse_float=_decimal, parse_int=_integer, parse_constant=_constant)
    except OSError as exc:
        if isinstance(exc, gzip.BadGzipFile):
            raise ImportFailure(f"{path}: a damaged gzip file") from None
        raise ImportFailure(f"{path}: cannot read the file: {exc.strerror or exc}") from None
    except (EOFError, zlib.error):
        raise ImportFailure(f"{path}: a damaged gzip file (it ends early or is corrupt)") from None
    except UnicodeDecodeError as exc:
        raise ImportFailure(f"{path}: not UTF-8 text (byte {exc.start}): not a trace") from None
    except json.JSONDecodeError as exc:
        raise ImportFailure(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    except _BadNumber as exc:
        raise ImportFailure(f"{path}: {exc}") from None
    except ValueError as exc:  # a number Python's parser refuses to convert
        raise ImportFailure(f"{path}: not JSON roofgen reads: {exc}") from None
    except RecursionError:
        raise ImportFailure(f"{path}: nested too deeply to be a trace") from None
    except MemoryError:
        raise ImportFailure(
            f"{path}: not enough memory to read the trace ({size_text(max_size)} allowed): "
            "lower --max-size or free memory"
        ) from None
