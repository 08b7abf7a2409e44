"""One table cell = the repetitions of one run setting, summarized honestly.

Why: a time is only worth printing when the run was correct. A cell keeps the
median and min–max of its ok repetitions *and* what happened to the others, so
every renderer shows a failure as its status word, never as a time.

Outliers: with 3 or more ok repetitions, a value further than OUTLIER_MADS scaled
median absolute deviations from the median is flagged and not used (not in the
median, not in the range). The MAD is floored at MAD_FLOOR of the median: with three
repetitions the MAD is the smaller of two deviations and may be tiny by chance, and
ordinary noise must not be thrown away as an outlier (which would narrow the ranges
the observations compare).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

STATUS_WORDS = {"wrong": "wrong", "timeout": "timeout", "crash": "crash",
                "malformed": "malformed", "no_output": "no output"}
FAIL_MARK = "✗"
MIXED_MARK = "⚠"
OUTLIER_MARK = "†"
MISSING = "—"
OUTLIER_MADS = 3.0
MAD_SCALE = 1.4826      # a normal distribution's sigma in MADs
MAD_FLOOR = 0.10        # of the median: outliers deviate by more than 3 x 1.4826 x 10% ~ 44%
MIN_OUTLIER_REPS = 3


def split_outliers(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(kept, outliers) by the rule in the module docstring; fewer than 3 values: all kept."""
    values = np.asarray(values, dtype=float)
    if len(values) < MIN_OUTLIER_REPS:
        return values, values[:0]
    median = float(np.median(values))
    mad = float(np.median(np.abs(values - median)))
    scale = max(MAD_SCALE * mad, MAD_SCALE * MAD_FLOOR * abs(median))
    if scale == 0:
        return values, values[:0]
    far = np.abs(values - median) > OUTLIER_MADS * scale
    return values[~far], values[far]


def format_number(value: float, unit: str = "ms") -> str:
    """Milliseconds to ~4 significant figures, counts with thousands separators, ratios short."""
    if value is None or pd.isna(value):
        return MISSING
    if unit == "count":
        return f"{int(round(value)):,}"
    magnitude = abs(value)
    if unit == "ratio":
        return f"{value:.0f}" if magnitude >= 100 else f"{value:.1f}" if magnitude >= 10 else f"{value:.2f}"
    if magnitude >= 1000:
        return f"{value:.0f}"
    if magnitude >= 100:
        return f"{value:.1f}"
    if magnitude >= 10:
        return f"{value:.2f}"
    return f"{value:.3f}"


def format_times(ratio: float) -> str:
    """'1.42×', '16.4×', '197×': three significant figures are all the data supports."""
    return f"{ratio:.0f}×" if ratio >= 100 else f"{ratio:.1f}×" if ratio >= 10 else f"{ratio:.2f}×"


@dataclass(frozen=True)
class Cell:
    """Summary of the repetitions of one setting for one measured value."""
    n_runs: int = 0
    n_ok: int = 0
    median: float | None = None
    low: float | None = None
    high: float | None = None
    failures: tuple[tuple[str, int], ...] = ()
    mismatches: tuple[int, ...] = ()
    unit: str = "ms"
    outliers: tuple[float, ...] = ()
    n_values: int = 0               # ok repetitions that printed this value
    lowest: float | None = None     # min and max of every ok value, outliers included: comparisons
    highest: float | None = None    # use these, so an outlier can stop a claim but never make one

    @property
    def n_used(self) -> int:
        """Ok repetitions that the median and range rest on (outliers not counted)."""
        return self.n_values - len(self.outliers)

    @property
    def state(self) -> str:
        """'missing' (no run), 'ok' (every rep ok), 'failed' (no rep ok) or 'mixed'."""
        if self.n_runs == 0:
            return "missing"
        if self.n_ok == self.n_runs:
            return "ok" if self.median is not None else "missing"
        return "failed" if self.n_ok == 0 else "mixed"

    @property
    def clean(self) -> bool:
        """True when every repetition was ok: only clean cells are compared in observations."""
        return self.state == "ok"

    @property
    def value_text(self) -> str:
        return format_number(self.median, self.unit) if self.n_ok and self.median is not None else ""

    @property
    def spread_text(self) -> str:
        """'300.0–310.0' when several ok reps differ, else ''."""
        if self.n_used < 2 or self.low is None:
            return ""
        low, high = format_number(self.low, self.unit), format_number(self.high, self.unit)
        return "" if low == high else f"{low}–{high}"

    @property
    def failure_text(self) -> str:
        """'wrong (12)', 'timeout 1/2, crash 1/2', ... ('' when every rep was ok)."""
        parts = []
        for status, count in self.failures:
            word = STATUS_WORDS.get(status, status)
            if status == "wrong" and self.mismatches:
                low, high = min(self.mismatches), max(self.mismatches)
                word += f" ({low})" if low == high else f" ({low}–{high})"
            if count != self.n_runs:
                word += f" {count}/{self.n_runs}"
            parts.append(word)
        return ", ".join(parts)

    @property
    def outlier_mark(self) -> str:
        """'†' for one outlier left out, '†2' for two."""
        count = len(self.outliers)
        return "" if not count else OUTLIER_MARK + (str(count) if count > 1 else "")

    @property
    def text(self) -> str:
        """Plain-text rendering shared by Markdown and HTML."""
        state = self.state
        if state == "missing":
            return MISSING
        if state == "failed":
            return f"{FAIL_MARK} {self.failure_text}"
        text = self.value_text
        if self.spread_text:
            text += f" [{self.spread_text}]"
        if self.outliers:
            text += f" {self.outlier_mark}"
        if state == "mixed":
            text += f" {MIXED_MARK} {self.failure_text}"
        return text


@dataclass(frozen=True)
class TextCell:
    """A label-like cell (a configuration name, an ordering) that is never a measurement."""
    text: str
    state: str = "label"
    clean: bool = False
    median: float | None = None


def summarize(runs: pd.DataFrame, value: str, unit: str = "ms") -> Cell:
    """Cell from the rows of one setting: median/min/max over ok reps, counts of the rest."""
    if runs is None or len(runs) == 0:
        return Cell(unit=unit)
    statuses = runs["status"].to_numpy(dtype=object)
    ok = statuses == "ok"
    raw = pd.to_numeric(runs[value], errors="coerce").to_numpy(dtype=float, na_value=np.nan)[ok]
    values = raw[~np.isnan(raw)]
    failed = statuses[~ok]
    names, counts = np.unique(failed.astype(str), return_counts=True) if len(failed) else ((), ())
    failures = tuple((str(name), int(count)) for name, count in zip(names, counts))
    mismatches = ()
    if "wrong" in names:
        wrong = pd.to_numeric(runs["mismatches"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        wrong = wrong[statuses == "wrong"]
        mismatches = tuple(sorted({int(m) for m in wrong[~np.isnan(wrong)]}))
    if len(values) == 0:
        return Cell(n_runs=len(runs), n_ok=int(ok.sum()), failures=failures, mismatches=mismatches, unit=unit)
    kept, outliers = split_outliers(values) if unit == "ms" else (values, values[:0])
    return Cell(n_runs=len(runs), n_ok=int(ok.sum()), n_values=len(values), median=float(np.median(kept)),
                low=float(kept.min()), high=float(kept.max()),
                failures=failures, mismatches=mismatches, unit=unit,
                outliers=tuple(float(v) for v in outliers), lowest=float(values.min()), highest=float(values.max()))
