"""Read Nsight Compute CSV exports into profiled launches with their metrics.

Three layouts are read, found from the header:

- the long form (``ncu --csv``): one row per launch and metric, with the columns
  "ID", ..., "Kernel Name", ..., "Metric Name", "Metric Unit", "Metric Value";
- the raw page (``ncu --csv --page raw``): one row per launch, one column per
  metric, and a second header row of units;
- the per-kernel summary (``ncu --csv --print-summary per-kernel``): one row per
  kernel shape and metric with "Invocations", "Minimum", "Maximum", "Average".

Program output and ``==PROF==``/``==WARNING==``/``==ERROR==`` lines before (or
between) the CSV rows are skipped; CRLF line endings, a BOM and thousands
separators ("5,323,503,232.00") are handled. Units are read as ncu spells them
(``byte``, ``Kbyte``, ``Mbyte``, ``nsecond``, ``usecond``, ``msecond``, ``ns``,
``cycle/nsecond``, ``Ghz``, ...) and every value is kept as an exact decimal.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

from roofgen.importers import ImportFailure
from roofgen.importers.kernel_names import clean_name

IDENTITY = (
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Kernel Time",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
    "Invocations",
    "Section Name",
)

# Unit prefixes: decimal and binary for counts, sub-unit ones for time.
_UP = {
    "": 1,
    "K": 10**3,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
}
_DOWN = {
    "": Decimal(1),
    "m": Decimal("1e-3"),
    "u": Decimal("1e-6"),
    "µ": Decimal("1e-6"),
    "n": Decimal("1e-9"),
    "p": Decimal("1e-12"),
}
# Base unit spellings -> kind; longest first so that "sectors" wins over "s".
_BASES = {
    "bytes": "byte",
    "byte": "byte",
    "B": "byte",
    "seconds": "second",
    "second": "second",
    "sec": "second",
    "s": "second",
    "cycles": "cycle",
    "cycle": "cycle",
    "instructions": "inst",
    "instruction": "inst",
    "inst": "inst",
    "sectors": "sector",
    "sector": "sector",
    "requests": "request",
    "request": "request",
    "warps": "warp",
    "warp": "warp",
    "Hz": "hz",
    "hz": "hz",
}
_ORDERED_BASES = sorted(_BASES, key=len, reverse=True)


@dataclass(frozen=True)
class Unit:
    kind: str  # "byte", "second", "cycle/second", "hz", "%", "" (a count), ...
    factor: Decimal  # value x factor = value in the base unit of ``kind``


@dataclass(frozen=True)
class Metric:
    value: Decimal  # in the base unit of ``unit.kind``
    unit: Unit
    text: str  # the value as the file printed it, with its unit
    minimum: Decimal | None = None  # per-kernel summary only
    maximum: Decimal | None = None


@dataclass
class Launch:
    """One profiled launch (or, from a summary, one kernel shape over its invocations)."""

    key: tuple[str, ...]
    name: str
    source: str
    grid: tuple[int, ...] | None = None
    block: tuple[int, ...] | None = None
    cc: str = ""
    invocations: int = 1
    metrics: dict[str, Metric] = field(default_factory=dict)


@dataclass
class Profile:
    """Launches read from one or more files of one run, in the order first seen."""

    launches: list[Launch]
    tool_messages: list[str]  # ==ERROR== / ==WARNING== lines
    layouts: dict[str, str]  # file -> "long", "raw" or "summary"
    conflicts: list[str] = field(default_factory=list)


def parse_unit(text: str) -> Unit:
    """``"nsecond"`` -> (second, 1e-9); ``"cycle/nsecond"`` -> (cycle/second, 1e9)."""
    text = text.strip()
    if "/" in text:
        top, _, bottom = text.partition("/")
        a, b = parse_unit(top), parse_unit(bottom)
        return Unit(f"{a.kind}/{b.kind}", a.factor / b.factor)
    if text in ("", "%"):
        return Unit(text, Decimal(1))
    for base in _ORDERED_BASES:
        if text.endswith(base):
            prefix = text[: -len(base)]
            kind = _BASES[base]
            if prefix in _UP:
                return Unit(kind, Decimal(_UP[prefix]))
            if prefix in _DOWN and kind == "second":  # no milli-byte or micro-instruction
                return Unit(kind, _DOWN[prefix])
    return Unit(text, Decimal(1))  # an unknown unit: kept, never converted


def parse_number(text: str) -> Decimal | None:
    """``"5,323,503,232.00"`` -> Decimal; ``"n/a"`` or text -> None."""
    cleaned = text.strip().replace(",", "").replace("\u202f", "").replace(" ", "")
    if not cleaned:
        return None
    if len(cleaned) > 64:  # no counter has more digits; Decimal would take any
        return None
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        return None
    # Beyond a float's range no counter, time or rate is real (1e999999999): unreadable.
    if not value.is_finite() or (value and not -300 <= value.adjusted() <= 300):
        return None
    return value


# One to three sizes, as CUDA has; 13 digits or more is no grid (10^12 blocks).
_DIMS = re.compile(r"\(?\s*(\d{1,12})(?:\s*,\s*(\d{1,12}))?(?:\s*,\s*(\d{1,12}))?\s*\)?")


def parse_dims(text: str) -> tuple[int, ...] | None:
    """``"(640, 1280, 1)"`` -> (640, 1280, 1); None (unknown) for anything but one to
    three sizes of at least 1: no sign, no fourth size, no zero."""
    found = _DIMS.fullmatch((text or "").strip())
    dims = tuple(int(n) for n in found.groups() if n is not None) if found else ()
    return dims if dims and all(dims) else None


def read_profiles(paths: Iterable[Path]) -> Profile:
    """Read and merge the files of one profiled run, launch by launch."""
    merged: dict[tuple[str, ...], Launch] = {}
    messages: list[str] = []
    layouts: dict[str, str] = {}
    conflicts: list[str] = []
    for path in paths:
        layout, launches, found = read_file(path)
        layouts[str(path)] = layout
        messages += found
        for launch in launches:
            _merge(merged, launch, conflicts)
    return Profile(list(merged.values()), messages, layouts, conflicts)


def _merge(merged: dict[tuple[str, ...], Launch], launch: Launch, conflicts: list[str]) -> None:
    known = merged.get(launch.key)
    if known is None:
        merged[launch.key] = launch
        return
    for name, metric in launch.metrics.items():
        first = known.metrics.get(name)
        if first is None:
            known.metrics[name] = metric
        elif first.value != metric.value:
            conflicts.append(
                f"{launch.name}: {name} is {first.text} in {known.source} and {metric.text} in "
                f"{launch.source}; the first is kept"
            )
    known.grid = known.grid or launch.grid
    known.block = known.block or launch.block


def read_file(path: Path) -> tuple[str, list[Launch], list[str]]:
    """``(layout, launches, tool messages)`` of one ncu CSV file."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ImportFailure(f"{path}: cannot read the file: {exc.strerror}") from None
    lines = _decode(raw).splitlines()
    messages = [line.strip() for line in lines if line.startswith(("==ERROR==", "==WARNING=="))]
    try:
        start, header = _find_header(lines)
        if header is None:
            raise ImportFailure(
                f'{path}: no Nsight Compute CSV header found (a line with "ID", "Kernel Name" '
                'and "Metric Name", or metric columns): write the profile with `ncu --csv ...` '
                "or export it with `ncu --import report.ncu-rep --csv`"
            )
        lines = _csv_lines(lines[start + 1 :])
        rows = [r for r in csv.reader(lines) if any(c.strip() for c in r)]
    except csv.Error as exc:
        why = str(exc)
        if "field limit" in why:  # no kernel name or metric is that long
            why = f"a field of more than {csv.field_size_limit():,} characters"
        raise ImportFailure(f"{path}: not an Nsight Compute CSV export: {why}") from None
    if "Metric Name" in header and "Metric Value" in header:
        return "long", _long(path, header, rows), messages
    if "Metric Name" in header and "Average" in header:
        return "summary", _summary(path, header, rows), messages
    return "raw", _raw(path, header, rows), messages


def _decode(raw: bytes) -> str:
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16", errors="replace")
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    return raw.decode("utf-8", errors="replace")


def _find_header(lines: list[str]) -> tuple[int, list[str] | None]:
    for i, line in enumerate(lines):
        if '"Kernel Name"' not in line and "Kernel Name," not in line:
            continue
        cells = next(csv.reader([line]), [])
        if "Kernel Name" in cells and ("Metric Name" in cells or any("__" in c for c in cells)):
            return i, cells
    return 0, None


def _csv_lines(lines: list[str]) -> list[str]:
    """CSV rows only: tool and program lines after the header are dropped."""
    return [line for line in lines if line.strip() and not line.startswith("==")]


def _cell(row: list[str], columns: dict[str, int], name: str) -> str:
    index = columns.get(name)
    return row[index] if index is not None and index < len(row) else ""


def _new_launch(
    path: Path, row: list[str], columns: dict[str, int], key: tuple[str, ...]
) -> Launch:
    invocations = parse_number(_cell(row, columns, "Invocations"))
    return Launch(
        key=key,
        name=clean_name(_cell(row, columns, "Kernel Name")),
        source=path.name,
        grid=parse_dims(_cell(row, columns, "Grid Size")),
        block=parse_dims(_cell(row, columns, "Block Size")),
        cc=_cell(row, columns, "CC"),
        invocations=int(invocations) if invocations else 1,
    )


def _identity(row: list[str], columns: dict[str, int]) -> tuple[str, ...]:
    """The launch key: its ID where the layout has one, else the kernel and its shape."""
    ident = _cell(row, columns, "ID")
    name = _cell(row, columns, "Kernel Name")
    if ident:
        return (ident, name)
    return (name, _cell(row, columns, "Block Size"), _cell(row, columns, "Grid Size"))


def _metric(value_text: str, unit_text: str) -> Metric | None:
    value = parse_number(value_text)
    if value is None:
        return None
    unit = parse_unit(unit_text)
    shown = f"{value_text.strip()} {unit_text.strip()}".strip()
    return Metric(value * unit.factor, unit, shown)


def _long(path: Path, header: list[str], rows: list[list[str]]) -> list[Launch]:
    columns = {name: i for i, name in enumerate(header)}
    launches: dict[tuple[str, ...], Launch] = {}
    for row in rows:
        key = _identity(row, columns)
        launch = launches.get(key)
        if launch is None:
            launch = launches[key] = _new_launch(path, row, columns, key)
        metric = _metric(_cell(row, columns, "Metric Value"), _cell(row, columns, "Metric Unit"))
        if metric is not None:
            launch.metrics.setdefault(_cell(row, columns, "Metric Name"), metric)
    return list(launches.values())


def _summary(path: Path, header: list[str], rows: list[list[str]]) -> list[Launch]:
    columns = {name: i for i, name in enumerate(header)}
    launches: dict[tuple[str, ...], Launch] = {}
    for row in rows:
        key = _identity(row, columns)
        launch = launches.get(key)
        if launch is None:
            launch = launches[key] = _new_launch(path, row, columns, key)
        unit_text = _cell(row, columns, "Metric Unit")
        metric = _metric(_cell(row, columns, "Average"), unit_text)
        if metric is None:
            continue
        unit = parse_unit(unit_text)
        low = parse_number(_cell(row, columns, "Minimum"))
        high = parse_number(_cell(row, columns, "Maximum"))
        launch.metrics.setdefault(
            _cell(row, columns, "Metric Name"),
            Metric(
                metric.value,
                metric.unit,
                metric.text,
                None if low is None else low * unit.factor,
                None if high is None else high * unit.factor,
            ),
        )
    return list(launches.values())


def _raw(path: Path, header: list[str], rows: list[list[str]]) -> list[Launch]:
    columns = {name: i for i, name in enumerate(header)}
    metric_columns = [(i, name) for i, name in enumerate(header) if name not in IDENTITY]
    units: dict[int, str] = {}
    if rows and not _cell(rows[0], columns, "Kernel Name").strip():
        units = dict(enumerate(rows[0]))  # the units row
        rows = rows[1:]
    launches = []
    for row in rows:
        launch = _new_launch(path, row, columns, _identity(row, columns))
        for i, name in metric_columns:
            if i < len(row):
                metric = _metric(row[i], units.get(i, ""))
                if metric is not None:
                    launch.metrics[name] = metric
        launches.append(launch)
    return launches
