"""Goal verdicts for "baseline / opt >= goal on every graph", honest about what was not measured.

A graph whose baseline (or opt) did not run has no ratio: the goal cannot be "met" while any
graph is unknown. A single measured miss makes it "missed"; otherwise an unknown graph makes
it "unknown". Baseline times taken from the cache count as measured but are named, with their
date, so that nobody mistakes them for this run's.
"""
from __future__ import annotations

from dataclasses import dataclass

NOT_MEASURED = "not measured"


@dataclass(frozen=True)
class Baseline:
    """One baseline's time on one graph: fresh, cached (with the date) or not measured (why)."""
    ms: float | None
    source: str = "fresh"  # fresh | cached | not measured
    note: str = ""         # the cached date, the chosen Δ, or why there is no time

    @classmethod
    def missing(cls, why: str) -> "Baseline":
        return cls(None, NOT_MEASURED, why)

    def cell(self) -> str:
        """The table cell: ``8.71 (Δ=64)``, ``8.71 (cached 2026-11-25)`` or ``not measured (no GPU)``."""
        if self.ms is None:
            return f"{NOT_MEASURED} ({self.note})" if self.note else NOT_MEASURED
        notes = [n for n in (self.note if self.source == "fresh" else "",
                             f"cached {self.note}" if self.source == "cached" else "") if n]
        return f"{self.ms:.2f}" + (f" ({', '.join(notes)})" if notes else "")


def ratio(baseline: Baseline, opt_ms: float | None) -> float | None:
    if baseline.ms is None or not opt_ms:
        return None
    return baseline.ms / opt_ms


def ratio_cell(baseline: Baseline, opt_ms: float | None) -> str:
    value = ratio(baseline, opt_ms)
    return "unknown" if value is None else f"{value:.1f}x"


def verdict(name: str, goal: float, rows: list[tuple[str, float | None, Baseline]]) -> str:
    """One line: ``<name>/opt >= <goal>x: met | missed on ... | unknown ...`` over ``rows``
    (graph label, opt ms or None, the baseline)."""
    head = f"{name}/opt >= {goal:g}x"
    if not rows:
        return f"{head}: unknown (no graph measured)"
    missed, unknown, cached = [], [], []
    for label, opt_ms, baseline in rows:
        value = ratio(baseline, opt_ms)
        if value is None:
            why = f"{name} {NOT_MEASURED}" if baseline.ms is None else f"opt {NOT_MEASURED}"
            if baseline.ms is None and baseline.note:
                why += f": {baseline.note}"
            unknown.append((label, why))
        elif value < goal:
            missed.append(f"{label} ({value:.1f}x)")
        if baseline.source == "cached":
            cached.append(f"{label} {baseline.note}")
    parts = []
    if missed:
        parts.append("missed on " + ", ".join(missed))
    if unknown:
        parts.append(("unknown on " if missed else "unknown: ") + _grouped(unknown))
    if not parts:
        parts.append(f"met on every graph ({len(rows)} of {len(rows)})")
    elif not missed and len(unknown) < len(rows):
        parts.append(f"met on the other {len(rows) - len(unknown)}")
    text = f"{head}: " + "; ".join(parts)
    if cached:
        text += f" [{name} times cached from earlier runs: " + ", ".join(cached) + "]"
    return text


def _grouped(unknown: list[tuple[str, str]]) -> str:
    """``a, b (why); c (other why)``: graphs that share a reason are listed together."""
    reasons: dict[str, list[str]] = {}
    for label, why in unknown:
        reasons.setdefault(why, []).append(label)
    return "; ".join(f"{', '.join(labels)} ({why})" for why, labels in reasons.items())
