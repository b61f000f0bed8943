"""The one number formatter: values with units, for reports, pages, explain and charts.

Every expected string is worked out by hand: round to three significant digits, then
pick the prefix that the rounded value needs.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from roofgen.units import (
    NO_PREFIX,
    SI_PREFIXES,
    fmt_frequency,
    fmt_percent,
    fmt_ratio,
    fmt_si,
    fmt_time,
)


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (312e12, "FLOP/s", "312 TFLOP/s"),  # A100 BF16 dense peak
        (7068.86e9, "FLOP/s", "7.07 TFLOP/s"),  # V100 FP64 at its measured clock
        (10e9, "FLOP/s", "10 GFLOP/s"),
        (1.5552e12, "B/s", "1.56 TB/s"),  # 5120 bit x 2 x 1215 MHz / 8
        (828.758e9, "B/s", "829 GB/s"),  # V100 HBM2, measured (ERT)
        (999.4e9, "FLOP/s", "999 GFLOP/s"),  # 999.4 rounds down: stays in giga
        (999.96e9, "FLOP/s", "1 TFLOP/s"),  # 999.96 rounds to 1000: tera, not 1000 G
        (999.5e9, "FLOP/s", "1 TFLOP/s"),  # 999.5 to three digits is 1000 too
        (1.5e21, "FLOP", "1500 EFLOP"),  # past the largest prefix: plain digits
        (0.5, "FLOP/B", "0.5 FLOP/B"),  # under 1: no prefix
        (-2.5e9, "B", "-2.5 GB"),
        (-999.96e9, "FLOP/s", "-1 TFLOP/s"),
        (0.0, "FLOP/s", "0 FLOP/s"),
        (-0.0, "B", "0 B"),
    ],
)
def test_si_prefix_is_chosen_after_rounding(value: float, unit: str, text: str) -> None:
    assert fmt_si(value, unit) == text


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (312e12, "FLOP/s", "312 TFLOP/s"),
        (7068.86e9, "FLOP/s", "7.07 TFLOP/s"),
        (10e9, "FLOP/s", "10.0 GFLOP/s"),
        (999.96e9, "FLOP/s", "1.00 TFLOP/s"),
        (999.4e9, "FLOP/s", "999 GFLOP/s"),
        (1.5552e12, "B/s", "1.56 TB/s"),
        (0.0, "FLOP/s", "0.00 FLOP/s"),
        (-1e9, "B", "-1.00 GB"),
    ],
)
def test_chart_style_keeps_trailing_zeros(value: float, unit: str, text: str) -> None:
    assert fmt_si(value, unit, zeros=True) == text


def test_no_prefix_writes_plain_numbers() -> None:
    assert fmt_si(0.865326481, "FLOP/B", zeros=True, prefixes=NO_PREFIX) == "0.865 FLOP/B"
    assert fmt_si(2.5, "FLOP/B", zeros=True, prefixes=NO_PREFIX) == "2.50 FLOP/B"
    assert fmt_si(2500.0, "FLOP/B", prefixes=NO_PREFIX) == "2500 FLOP/B"
    assert fmt_si(2500.0, "FLOP/B") == "2.5 kFLOP/B"


def test_digits() -> None:
    assert fmt_si(1234.0, "B", 2) == "1.2 kB"
    assert fmt_si(1234.0, "B", 4) == "1.234 kB"
    assert fmt_si(999.94e6, "B", 4) == "999.9 MB"
    assert fmt_si(999.96e6, "B", 4) == "1 GB"  # 1000 MB to four digits


def test_missing_and_non_finite_values() -> None:
    assert fmt_si(None, "B/s") == "n/a"
    assert fmt_time(None) == "n/a"
    assert fmt_si(math.nan, "FLOP/s") == "nan FLOP/s"
    assert fmt_si(math.inf, "B/s") == "inf B/s"
    assert fmt_time(-math.inf) == "-inf s"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (2.0, "2 s"),
        (1.51e-3, "1.51 ms"),
        (4.2e-6, "4.2 us"),
        (345e-6, "345 us"),
        (999.96e-3, "1 s"),  # rounds to 1000 ms: one second
        (999.4e-6, "999 us"),
        (12e-9, "12 ns"),
        (5e-10, "500 ps"),
        (1500.0, "1500 s"),  # no prefix above the second
        (0.0, "0 s"),
        (-2e-3, "-2 ms"),
    ],
)
def test_time(seconds: float, text: str) -> None:
    assert fmt_time(seconds) == text


def test_frequency_has_four_digits() -> None:
    assert fmt_frequency(1.41e9) == "1.41 GHz"
    assert fmt_frequency(765e6) == "765 MHz"
    assert fmt_frequency(999.94e6) == "999.9 MHz"
    assert fmt_frequency(999.96e6) == "1 GHz"


def test_percent_and_ratio() -> None:
    assert fmt_percent(0.42) == "42%"
    assert fmt_percent(0.068) == "6.8%"
    assert fmt_percent(None) == "n/a"
    assert fmt_ratio(2.5) == "2.50x"
    assert fmt_ratio(None) == "n/a"


@given(st.floats(min_value=1.0, max_value=9.99e20), st.booleans())
def test_every_prefixed_value_reads_between_1_and_1000(value: float, negative: bool) -> None:
    """Whatever the value, the number before the prefix is in [1, 1000), and it is the
    value to three significant digits."""
    signed = -value if negative else value
    number, unit = fmt_si(signed, "B").split(" ")
    factor = dict((prefix, f) for f, prefix in SI_PREFIXES)[unit[:-1]]
    assert 1 <= abs(float(number)) < 1000
    assert float(number) * factor == pytest.approx(signed, rel=5e-3)
