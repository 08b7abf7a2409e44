"""Small shared pieces of the benchmarks: results kept as they come, tables, and the time budget."""
from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "build" / "bench" / "results.jsonl"


class Recorder:
    """Appends one JSON line per measurement the moment it exists (a crash later loses nothing)."""

    def __init__(self, path: Path = RESULTS, **common):
        self.path = Path(path)
        self.common = common

    def __call__(self, section: str, **row) -> dict:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        row = {"section": section, "at": time.strftime("%Y-%m-%dT%H:%M:%S"), **self.common, **row}
        with open(self.path, "a") as stream:
            stream.write(json.dumps(row, default=str) + "\n")
        return row


class Budget:
    """A wall-clock limit for the whole run, split into sections by cumulative shares.

    A section may run until ``start + share x limit`` (time a section leaves unused passes
    to the next). Before each item the harness asks :meth:`allows` with an estimate; an
    item that would end past the section's deadline is skipped and listed at the end.
    """

    def __init__(self, limit_s: float, clock=time.perf_counter):
        self.limit_s = float(limit_s)
        self.clock = clock
        self.start = clock()
        self.deadline = self.start + self.limit_s
        self.skipped: list[str] = []

    def section(self, share: float, reserve_s: float = 0.0) -> None:
        """Run until ``share`` of the limit, and leave ``reserve_s`` for later tables whose items
        are never skipped (the baselines): this one gets less when they will need more."""
        self.deadline = self.start + min(self.limit_s * min(max(share, 0.0), 1.0), self.limit_s - max(reserve_s, 0.0))

    def elapsed(self) -> float:
        return self.clock() - self.start

    def left(self) -> float:
        return self.deadline - self.clock()

    def allows(self, estimate_s: float, what: str) -> bool:
        if self.clock() + max(estimate_s, 0.0) <= self.deadline:
            return True
        self.skipped.append(f"{what} (needs ~{estimate_s:.0f} s, {max(self.left(), 0):.0f} s left in its share)")
        print(f"  skipped for time: {self.skipped[-1]}", flush=True)
        return False


def median(values) -> float:
    return float(statistics.median(list(values)))


def format_table(title: str, columns: list[str], rows: list[list], notes: list[str] | None = None) -> str:
    """A Markdown table under a ``##`` title, the notes after it, each a paragraph."""
    text = [[str(c) for c in columns]] + [[cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in text) for i in range(len(columns))]
    lines = [f"## {title}", "", "| " + " | ".join(c.ljust(w) for c, w in zip(text[0], widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(c.rjust(w) for c, w in zip(row, widths)) + " |" for row in text[1:]]
    for note in notes or []:
        lines += ["", note]
    return "\n".join(lines) + "\n"


def print_table(title: str, columns: list[str], rows: list[list], notes: list[str] | None = None) -> None:
    print("\n" + format_table(title, columns, rows, notes), flush=True)


def write_table(path: Path | None, title: str, columns: list[str], rows: list[list],
                notes: list[str] | None = None) -> None:
    """The table as it stands, replacing ``path`` whole (readers see the old file or the new
    one, never half): called after every row, so an interrupted run keeps what it measured."""
    if path is None:
        return
    from sssp_common.files import atomic_writer

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with atomic_writer(path) as stream:
        stream.write(format_table(title, columns, rows, notes))


def cell(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        if value >= 100:
            return f"{value:.1f}"
        return f"{value:.3f}" if value < 10 else f"{value:.2f}"
    return str(value)


def ratio(slow, fast) -> float | None:
    return slow / fast if slow is not None and fast else None


def goal_text(value, goal: float, unit: str, at_most: bool = True) -> str:
    """``met`` or ``missed by 1.4x`` against a bound (``at_most``: value <= goal)."""
    if value is None:
        return "not measured"
    if at_most:
        return f"met (<= {goal:g} {unit})" if value <= goal else f"missed by {value / goal:.2f}x (<= {goal:g} {unit})"
    return f"met (>= {goal:g}{unit})" if value >= goal else f"missed by {goal / value:.2f}x (>= {goal:g}{unit})"
