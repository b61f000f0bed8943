"""Quantities as people write them: ``1.5 TB/s``, ``312 TFLOP/s``, ``40 GiB``.

A quantity is converted to a float in SI base units of roofgen's own
dimensions (second, byte, FLOP, OP, instruction, transaction, launch, joule).
pint parses the unit text; the number is parsed as a decimal and multiplied
exactly, and each distinct unit text is parsed once and cached (pint parsing
every value one by one costs several times a YAML load).

Every quantity, in SI base units, is 0 or between :data:`SMALLEST` (1e-60) and
:data:`LARGEST` (1e60) in size: some thirty orders of magnitude beyond any real
measurement (a yottaFLOP is 1e24 FLOP, a picojoule 1e-12 J), and close enough to 1
that the products and ratios the analysis forms of a few of them stay within a
float's normal range (about 2.2e-308 to 1.8e308): no infinity, no zero from an
underflow, no division by zero. A plain number elsewhere in a spec (a sweep's
weight) keeps to the same range (:func:`out_of_range`), and a count (calls, launches,
a grid's blocks) to :data:`MAX_COUNT`, 2^53, the largest integer a float holds exactly.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation, Overflow, localcontext
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from roofgen.files import write_cache_entry

# Dimension names used in schemas and messages, mapped to pint dimensionality
# (a sorted tuple of (base dimension, exponent)).
DIMENSIONS: dict[str, tuple[tuple[str, int], ...]] = {
    "time": (("[time]", 1),),
    "frequency": (("[time]", -1),),
    "information": (("[information]", 1),),
    "bandwidth": (("[information]", 1), ("[time]", -1)),
    "flop": (("[flop]", 1),),
    "flop_rate": (("[flop]", 1), ("[time]", -1)),
    "op": (("[op]", 1),),
    "op_rate": (("[op]", 1), ("[time]", -1)),
    "instruction": (("[instruction]", 1),),
    "instruction_rate": (("[instruction]", 1), ("[time]", -1)),
    "transaction": (("[transaction]", 1),),
    "launch": (("[launch]", 1),),
    "energy": (("[energy]", 1),),
    "power": (("[energy]", 1), ("[time]", -1)),
    "energy_per_flop": (("[energy]", 1), ("[flop]", -1)),
    "energy_per_op": (("[energy]", 1), ("[op]", -1)),
    "energy_per_byte": (("[energy]", 1), ("[information]", -1)),
}

# What a person would write, for messages.
EXAMPLES: dict[str, str] = {
    "time": "1.42 ms",
    "frequency": "1410 MHz",
    "information": "40 GiB",
    "bandwidth": "1.555 TB/s",
    "flop": "3.2e12 FLOP",
    "flop_rate": "312 TFLOP/s",
    "op": "2e9 OP",
    "op_rate": "624 TOP/s",
    "instruction": "1.2e9 inst",
    "instruction_rate": "489.6 Ginst/s",
    "transaction": "4e8 txn",
    "launch": "3 launches",
    "energy": "12 J",
    "power": "700 W",
    "energy_per_flop": "0.5 pJ/FLOP",
    "energy_per_op": "0.3 pJ/OP",
    "energy_per_byte": "7 pJ/B",
}

# How a message names each dimension, article included.
LABELS: dict[str, str] = {
    "time": "a time",
    "frequency": "a frequency",
    "information": "an amount of data",
    "bandwidth": "a bandwidth",
    "flop": "a FLOP count",
    "flop_rate": "a FLOP rate",
    "op": "an OP count (integer operations)",
    "op_rate": "an OP rate (integer operations)",
    "instruction": "an instruction count",
    "instruction_rate": "an instruction rate",
    "transaction": "a transaction count",
    "launch": "a launch count",
    "energy": "an energy",
    "power": "a power",
    "energy_per_flop": "an energy per FLOP",
    "energy_per_op": "an energy per OP",
    "energy_per_byte": "an energy per byte",
}

# The unit a value of each dimension is reported in (SI base, for JSON output).
BASE_UNIT: dict[str, str] = {
    "time": "s",
    "frequency": "Hz",
    "information": "B",
    "bandwidth": "B/s",
    "flop": "FLOP",
    "flop_rate": "FLOP/s",
    "op": "OP",
    "op_rate": "OP/s",
    "instruction": "inst",
    "instruction_rate": "inst/s",
    "transaction": "txn",
    "launch": "launch",
    "energy": "J",
    "power": "W",
    "energy_per_flop": "J/FLOP",
    "energy_per_op": "J/OP",
    "energy_per_byte": "J/B",
}

# A unit is words (letters, µ) joined by '/', '*' or spaces, each with an optional
# exponent of one or two digits; anything else (a decimal comma, a second number) is
# not a unit. Each join is required, so a word cannot be split in several ways: an
# unmatched long word costs linear time, not exponential (no catastrophic backtracking).
_WORD = r"[A-Za-zµμ]+(?:\^-?\d{1,2})?"
_UNIT = re.compile(rf"^{_WORD}(?:(?:\s*[/*]\s*|\s+|(?<=\d)){_WORD})*$")
# Longer unit texts are refused before pint parses them (pint's prefix search is slow
# on long words); roofgen's longest unit, 'instructions/s', has 14 characters.
MAX_UNIT_CHARS = 40
SMALLEST = 1e-60  # the smallest size of a quantity other than 0, in SI base units
LARGEST = 1e60  # the largest
_SMALLEST, _LARGEST = Decimal("1e-60"), Decimal("1e60")
_SHOWN = {"too small": "1e-60", "too large": "1e60"}  # the bounds as messages write them
MAX_COUNT = 2**53  # the largest count a spec may give (calls, launches, grid), as the schemas say
_NUMBER = re.compile(r"^\s*([+-]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(.*?)\s*$")


_UNITS_KEPT = 4096  # distinct unit texts kept in memory and in a unit table


class QuantityError(ValueError):
    """A quantity that cannot be read, with a message for a person."""


@dataclass(frozen=True)
class _ParsedUnit:
    factor: Decimal
    dimensionality: tuple[tuple[str, int], ...]


@cache
def _registry() -> Any:
    import pint  # imported lazily: pint costs a few tenths of a second to import

    definitions = resources.files("roofgen.spec").joinpath("units.txt")
    with resources.as_file(definitions) as path:
        return pint.UnitRegistry(str(path), autoconvert_offset_to_baseunit=False)


@lru_cache(maxsize=_UNITS_KEPT)
def _parse_unit(text: str) -> _ParsedUnit:
    ureg = _registry()
    try:
        quantity = ureg.parse_expression(text) if text else ureg.Quantity(1)
        if not hasattr(quantity, "to_base_units"):
            raise QuantityError(f"unknown unit {text!r}")
        base = quantity.to_base_units()  # raises OverflowError for e.g. 'ms^-99'
        magnitude = base.magnitude
        factor = Decimal(magnitude) if isinstance(magnitude, int) else Decimal(repr(magnitude))
        if not factor.is_finite() or factor == 0:
            raise QuantityError(f"unknown unit {text!r}")
        dims = tuple(sorted((str(k), int(v)) for k, v in base.dimensionality.items()))
    except QuantityError:
        raise
    except Exception as exc:  # pint raises several unrelated exception types
        raise QuantityError(f"unknown unit {text!r}") from exc
    return _ParsedUnit(factor, dims)


# Units parsed in this process or read from a build's unit table (see read_unit_table).
_TABLE: dict[str, _ParsedUnit] = {}


def _unit(text: str) -> _ParsedUnit:
    known = _TABLE.get(text)
    if known is None:
        known = _parse_unit(text)
        if len(_TABLE) < _UNITS_KEPT:  # bounded: specs may spell units many ways
            _TABLE[text] = known
    return known


def read_unit_table(path: Path) -> frozenset[str]:
    """Take the units an earlier process parsed from ``path``: a build whose spec
    files use only those units never imports pint (a few tenths of a second).

    The file maps a unit's text to its exact factor to SI base units and its
    dimensions; its name carries a digest of roofgen's files (the unit
    definitions among them). A missing file, or one not exactly of that shape, is
    ignored whole (and written again). Returns the units the file holds.
    """
    try:
        table = _unit_table(json.loads(path.read_bytes()))
    except (OSError, ValueError, RecursionError):
        return frozenset()
    if table is None:
        return frozenset()
    for text, unit in table.items():
        if len(_TABLE) >= _UNITS_KEPT:
            break
        _TABLE.setdefault(text, unit)
    return frozenset(table)


def _unit_table(data: Any) -> dict[str, _ParsedUnit] | None:
    """The units of a unit table as :func:`write_unit_table` writes it, or None."""
    if not isinstance(data, dict) or len(data) > _UNITS_KEPT:
        return None
    table = {}
    for text, row in data.items():
        if not (isinstance(row, list) and len(row) == 2):
            return None
        factor_text, dims = row
        if not (isinstance(factor_text, str) and isinstance(dims, list)):
            return None
        try:
            factor = Decimal(factor_text)
        except ArithmeticError:
            return None
        if not factor.is_finite() or factor == 0:
            return None
        if not all(
            isinstance(d, list) and len(d) == 2 and isinstance(d[0], str) and type(d[1]) is int
            for d in dims
        ):
            return None
        table[text] = _ParsedUnit(factor, tuple((d[0], d[1]) for d in dims))
    return table


def write_unit_table(path: Path, held: frozenset[str]) -> None:
    """Write every unit parsed so far to ``path`` if it ``held`` fewer."""
    if not set(_TABLE) - held:
        return
    entries = {t: [str(u.factor), [list(d) for d in u.dimensionality]] for t, u in _TABLE.items()}
    write_cache_entry(path, json.dumps(entries, sort_keys=True), replaces="units-*.json")


def dimension_name(dims: tuple[tuple[str, int], ...]) -> str | None:
    for name, expected in DIMENSIONS.items():
        if expected == dims:
            return name
    return None


# Quantities already parsed during one load (see parsed_once), by text and dimension.
_PARSED: dict[tuple[str, str], float] | None = None
_PARSED_KEPT = 1 << 17  # at most this many (some 20 MB): beyond, parsed again


@contextlib.contextmanager
def parsed_once() -> Iterator[None]:
    """Within this block, a quantity text is parsed once per dimension: the schema's
    format check, the checks across files and the model build each read it, and all but
    the first take its value from a table that is let go at the end of the block."""
    global _PARSED
    outer, _PARSED = _PARSED, _PARSED if _PARSED is not None else {}
    try:
        yield
    finally:
        _PARSED = outer


def parse_quantity(value: Any, dimension: str) -> float:
    """Return ``value`` in SI base units of ``dimension``.

    ``value`` is a number (already in base units) or a string such as
    ``"1.5 TB/s"``. Raises :class:`QuantityError` with a message that says
    what is expected.
    """
    if _PARSED is not None and isinstance(value, str):
        known = _PARSED.get((value, dimension))
        if known is None:
            known = _parse_quantity(value, dimension)
            if len(_PARSED) < _PARSED_KEPT:
                _PARSED[(value, dimension)] = known
        return known
    return _parse_quantity(value, dimension)


def _parse_quantity(value: Any, dimension: str) -> float:
    expected = DIMENSIONS[dimension]
    example = EXAMPLES[dimension]
    if isinstance(value, bool):
        raise QuantityError(f"expected {_label(dimension)} such as '{example}', not {value}")
    if isinstance(value, int | float):
        if isinstance(value, float):
            _finite(value, dimension, value)
        _within(value, dimension, value)  # exact for an int of any size
        return float(value)
    if not isinstance(value, str):
        raise QuantityError(f"expected {_label(dimension)} such as '{example}'")
    shown = _shown(value)
    match = _NUMBER.match(value)
    if match is None:
        raise QuantityError(
            f"{shown} is not {_label(dimension)}: write a number and a unit, e.g. '{example}'"
        )
    number_text, unit_text = match.group(1), match.group(2)
    try:
        number = Decimal(number_text.replace("_", ""))
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only numbers
        raise QuantityError(f"{shown} is not a number") from exc
    try:
        if unit_text and (len(unit_text) > MAX_UNIT_CHARS or not _UNIT.match(unit_text)):
            raise QuantityError(f"unknown unit {_shown(unit_text)}")
        unit = _unit(unit_text)
    except QuantityError as exc:
        raise QuantityError(
            f"{shown}: {exc}; {_label(dimension)} is written like '{example}'"
        ) from None
    if unit.dimensionality != expected:
        if not unit_text:  # a plain number is in base units
            return float(_within(number, dimension, value))
        got = _label(dimension_name(unit.dimensionality))
        raise QuantityError(f"{shown} is {got}, not {_label(dimension)}; write e.g. '{example}'")
    with localcontext() as ctx:  # exact: both operands have fewer than 60 digits
        ctx.prec = 60
        ctx.traps[Overflow] = False  # an overflowing product is infinite: too large
        product = number * unit.factor
    return float(_within(product, dimension, value))


def _finite(result: float, dimension: str, original: Any) -> float:
    if not math.isfinite(result):
        raise QuantityError(
            f"{_shown(original)} is not finite: write {_label(dimension)} "
            f"such as '{EXAMPLES[dimension]}'"
        )
    return result


def out_of_range(value: float | Decimal) -> str | None:
    """'too large' or 'too small' when ``value`` (exact, in SI base units) is neither 0
    nor between :data:`SMALLEST` and :data:`LARGEST` in size; None when it is."""
    if isinstance(value, float):
        size = abs(value)
        large, small = size > LARGEST, 0 < size < SMALLEST
    else:  # an int or a Decimal, compared exactly
        exact = Decimal(value).copy_abs()  # abs() would round to the context's 28 digits
        large, small = exact > _LARGEST, 0 < exact < _SMALLEST
    return "too large" if large else "too small" if small else None


def _within(value: Any, dimension: str, original: Any) -> Any:
    """``value`` when :func:`out_of_range` has no objection, else the error."""
    why = out_of_range(value)
    if why is None:
        return value
    edge = "largest" if why == "too large" else "smallest"
    other = ", other than 0," if why == "too small" else ""
    raise QuantityError(
        f"{_shown(original)} is {why}: the {edge} {_noun(dimension)} roofgen computes "
        f"with{other} is {_SHOWN[why]} {BASE_UNIT[dimension]}; write e.g. '{EXAMPLES[dimension]}'"
    )


def _noun(dimension: str) -> str:
    """'time', 'FLOP rate': the label without its article or its note."""
    return LABELS[dimension].split(" (")[0].split(" ", 1)[1]


def _shown(value: Any) -> str:
    """``value`` as a message quotes it, shortened when long."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of about {math.ceil(value.bit_length() * math.log10(2))} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:56] + "...'"


def _label(dimension: str | None) -> str:
    return LABELS.get(dimension or "", "a quantity of another dimension")
