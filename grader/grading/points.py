"""Points as people read them: computed exactly, rounded once, written one way.

The rubric adds shares like 7 x 18/54 and 36 x 3/18; in binary floats those sums drift
(29.9999 instead of 30, a score put in the 20-30 bin of a histogram), so the arithmetic is in
exact rationals (fractions.Fraction) and a number is rounded once, half up, to the rubric's
`decimals` where it is written into results.json. Everything that shows a score afterwards
(gradebook.csv, the LMS exports, the console, the pages, the histogram) goes through `shown`,
which is idempotent on a rounded value, so the same number reads the same everywhere.

Pure: numbers in, numbers or text out.
"""
from __future__ import annotations

import math
from fractions import Fraction

DEFAULT_DECIMALS = 2
MAX_DECIMALS = 6


def exact(value) -> Fraction:
    """A rational from an int, a Fraction, a decimal string or a float; a float is read as the
    decimal it prints as (0.1 is 1/10, not the binary 0.1000000000000000055...), which is what
    a rubric's TOML or an earlier results.json meant."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool):
        raise TypeError("a score is a number, not a boolean")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"a score must be finite, got {value!r}")
        return Fraction(repr(value))
    return Fraction(str(value))


def rounded(value, decimals: int = DEFAULT_DECIMALS) -> float:
    """value rounded half up (away from zero for negatives) to `decimals` places, as the float
    that prints as that decimal (e.g. 2.33, 30.0)."""
    number = exact(value)
    scale = 10 ** decimals
    magnitude = (abs(number) * scale + Fraction(1, 2)).__floor__()
    return float(Fraction(magnitude if number >= 0 else -magnitude, scale))


def shown(value, decimals: int = DEFAULT_DECIMALS) -> str:
    """The text of a score wherever a person reads it: rounded to `decimals`, no trailing zeros
    ('30', '29.5', '2.33'); '' for a missing value."""
    if value is None or value == "":
        return ""
    number = exact(rounded(value, decimals))
    scale = 10 ** decimals
    whole = number * scale
    assert whole.denominator == 1
    text = f"{'-' if whole < 0 else ''}{abs(whole.numerator) // scale}"
    fraction = abs(whole.numerator) % scale
    if decimals and fraction:
        text += "." + f"{fraction:0{decimals}d}".rstrip("0")
    return text


def decimals_of(data: dict) -> int:
    """The decimals a results.json was rounded to (written there since they exist; else the default)."""
    value = data.get("decimals", DEFAULT_DECIMALS) if isinstance(data, dict) else DEFAULT_DECIMALS
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_DECIMALS \
        else DEFAULT_DECIMALS


def bin_index(value, maximum, bins: int) -> int:
    """Which of `bins` equal bins of [0, maximum] a score falls in (the last one closed), exactly:
    30 of 100 is in the 30-40 bin, never 20-30."""
    share = exact(value) / exact(maximum) * bins
    return min(bins - 1, max(0, share.__floor__()))
