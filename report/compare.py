"""When may the report call one setting faster than another? One rule, used everywhere.

Why a rule of its own: a sweep on a busy machine, or with one repetition, produces
differences that are noise. A difference is called only when
- both settings have at least MIN_REPS repetitions the cell uses (outliers aside),
- their min–max ranges do not overlap, counting every ok repetition (an outlier is left out
  of the median and the printed range, so it can stop a claim but never make one), and
- the medians differ by at least MIN_RATIO (smaller gaps, even with tight ranges, are
  not worth a sentence and drift between runs of a GPU as its clocks settle);
otherwise the two are "within noise" (or, with too few repetitions, "cannot tell").
"""
from __future__ import annotations

from dataclasses import dataclass

from .cells import Cell, format_number, format_times

MIN_REPS = 2
MIN_RATIO = 1.05

FASTER, NOISE, TOO_FEW = "faster", "noise", "too few"


@dataclass(frozen=True)
class Verdict:
    kind: str            # FASTER (first is faster), NOISE, TOO_FEW
    first_wins: bool     # meaningful for FASTER: True when the first cell is the faster one
    ratio: float         # slower median / faster median (>= 1)

    @property
    def called(self) -> bool:
        return self.kind == FASTER


def compare(first: Cell, second: Cell) -> Verdict:
    """The verdict on two clean cells by the rule above (lower values are better)."""
    a, b = first.median, second.median
    if a is None or b is None or a <= 0 or b <= 0:
        return Verdict(TOO_FEW, True, 1.0)
    ratio = max(a, b) / min(a, b)
    if first.n_used < MIN_REPS or second.n_used < MIN_REPS:
        return Verdict(TOO_FEW, a <= b, ratio)
    if ratio >= MIN_RATIO and _high(first) < _low(second):
        return Verdict(FASTER, True, ratio)
    if ratio >= MIN_RATIO and _high(second) < _low(first):
        return Verdict(FASTER, False, ratio)
    return Verdict(NOISE, a <= b, ratio)


def _low(cell: Cell) -> float:
    """The range a comparison uses: every ok repetition, outliers included (they are left out of
    the median and the printed range, but a claim must survive them)."""
    return min(v for v in (cell.low, cell.lowest) if v is not None)


def _high(cell: Cell) -> float:
    return max(v for v in (cell.high, cell.highest) if v is not None)


def span(cell: Cell, unit: str = "ms") -> str:
    """'305.7 ms [300.0–310.0]' (the range only when several repetitions differ)."""
    suffix = f" {unit}" if unit else ""
    text = f"{format_number(cell.median, cell.unit)}{suffix}"
    if cell.spread_text:
        text += f" [{cell.spread_text}]"
    return text


def versus(verdict: Verdict, fast_name: str, fast: Cell, slow_name: str, slow: Cell, unit: str = "ms") -> str:
    """The sentence core for a comparison, honest about noise.

    FASTER: '512×4 is 1.42× faster than 768×2 (305.7 ms [300.0–310.0] vs 434.1 ms [430.0–440.0])';
    NOISE: '512×4 and 768×2 are within noise (… vs …: the ranges overlap)'."""
    figures = f"({span(fast, unit)} vs {span(slow, unit)})"
    if verdict.kind == FASTER:
        verb = "are" if fast_name.endswith("(tied)") else "is"
        return f"{fast_name} {verb} {format_times(verdict.ratio)} faster than {slow_name} {figures}"
    if verdict.kind == TOO_FEW:
        return (f"{fast_name} and {slow_name} cannot be told apart {figures}: fewer than {MIN_REPS} "
                "repetitions each")
    why = "the ranges overlap" if _high(fast) >= _low(slow) else f"less than {MIN_RATIO - 1:.0%} apart"
    if why == "the ranges overlap" and fast.high < slow.low:
        why = "an outlying repetition overlaps"
    return f"{fast_name} and {slow_name} are within noise {figures}: {why}"
