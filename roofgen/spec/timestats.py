"""Checks of a launch's time statistics that JSON Schema cannot state.

The statistics of one set of repeats are ordered: min <= q1 <= median <= q3 <= max,
and a mean lies between min and max (a mean may sit outside the quartiles of a
skewed distribution, so it is held to min and max only); ties are allowed. A value
out of that order cannot be true (a unit slip or a pasted number) and is an error.
Two things that are possible but suspicious are warnings: one measurement writing
some values as bare numbers (seconds) and others with units, and central statistics
(quartiles, median or mean, confidence interval) more than 10x apart.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from roofgen.problems import Problem, Severity
from roofgen.spec.quantity import QuantityError, parse_quantity
from roofgen.spec.yamlload import Document, PathKey

#: The keys of the time's mapping in the order their values must keep; a mean is held
#: to min and max only.
ORDER_MEDIAN = ("min", "q1", "median", "q3", "max")
ORDER_QUARTILES = ("min", "q1", "q3", "max")
#: Central statistics: all describe the bulk of the repeats.
CENTRAL = ("q1", "median", "mean", "q3", "ci_low", "ci_high")
#: Central statistics further apart than this are a unit slip, not a spread.
MAX_CENTRAL_RATIO = 10.0


def check_time(doc: Document, m: dict[str, Any], path: PathKey) -> list[Problem]:
    """Problems of the statistics of ``m['time']`` (the measurement at ``path``)."""
    t = m.get("time")
    if not isinstance(t, dict):
        return []
    where: PathKey = (*path, "time")
    seconds = _seconds(t)
    problems = _order(doc, t, seconds, where)
    problems += _mixed_units(doc, t, where)
    if not any(p.severity is Severity.ERROR for p in problems):
        problems += _central_ratio(doc, t, seconds, where)
    return problems


def _seconds(t: dict[str, Any]) -> dict[str, float]:
    out = {}
    for key, value in t.items():
        if key in ("repeats", "warmup"):
            continue
        with suppress(QuantityError):  # the schema reports it
            out[key] = parse_quantity(value, "time")
    return out


def _written(value: Any) -> str:
    return f"{value} s" if isinstance(value, int | float) else str(value)


def _order(
    doc: Document, t: dict[str, Any], seconds: dict[str, float], where: PathKey
) -> list[Problem]:
    chain = ORDER_QUARTILES if "mean" in t else ORDER_MEDIAN
    pairs = [(a, b) for i, a in enumerate(chain) for b in chain[i + 1 :]]
    if "mean" in t:
        pairs += [("min", "mean"), ("mean", "max")]
    # On a tie the statistic itself is blamed: it is the value written by hand.
    present = [k for k in ("median", "mean", *chain) if k in seconds]
    broken: dict[str, list[str]] = {k: [] for k in present}
    for low, high in pairs:
        if low in seconds and high in seconds and seconds[low] > seconds[high]:
            broken[low].append(high)
            broken[high].append(low)
    worst = max((len(v) for v in broken.values()), default=0)
    if not worst:
        return []
    # Blame the value that disagrees with the most others: it is the one written wrong.
    key = next(k for k in present if len(broken[k]) == worst)
    others = " and ".join(
        f"{'above' if seconds[key] > seconds[o] else 'below'} {o} ({_written(t[o])})"
        for o in broken[key]
    )
    rule = " <= ".join(ORDER_MEDIAN) if "mean" not in t else "min <= mean <= max"
    return [
        doc.problem(
            (*where, key),
            f"{key} {_written(t[key])} is {others}: the statistics of one set of repeats "
            f"satisfy {rule} (ties allowed); check this value and its unit",
            code="time.order",
        )
    ]


def _mixed_units(doc: Document, t: dict[str, Any], where: PathKey) -> list[Problem]:
    keys = [k for k in t if k not in ("repeats", "warmup")]
    bare = [k for k in keys if isinstance(t[k], int | float) and not isinstance(t[k], bool)]
    with_unit = [k for k in keys if isinstance(t[k], str)]
    if not bare or not with_unit:
        return []
    return [
        doc.problem(
            (*where, key),
            f"{key} is a bare number ({t[key]}, read as seconds) while "
            f"{', '.join(with_unit)} {'has' if len(with_unit) == 1 else 'have'} a unit: "
            f"write its unit (e.g. '{t[key]} us') so a unit slip cannot hide",
            severity=Severity.WARNING,
            code="time.mixed-units",
        )
        for key in bare
    ]


def _central_ratio(
    doc: Document, t: dict[str, Any], seconds: dict[str, float], where: PathKey
) -> list[Problem]:
    central = {k: seconds[k] for k in CENTRAL if k in seconds}
    if len(central) < 2:
        return []
    low = min(central, key=lambda k: central[k])
    high = max(central, key=lambda k: central[k])
    ratio = central[high] / central[low]
    if ratio <= MAX_CENTRAL_RATIO:
        return []
    return [
        doc.problem(
            (*where, high),
            f"{high} ({_written(t[high])}) is {ratio:.3g}x {low} ({_written(t[low])}): the "
            f"bulk of one set of repeats is not spread over more than "
            f"{MAX_CENTRAL_RATIO:g}x; check both values and their units",
            severity=Severity.WARNING,
            code="time.spread",
        )
    ]
