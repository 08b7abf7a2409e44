"""Small shared pieces of the benchmark scripts: repeats, tables, and results kept as they come."""
from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(os.environ.get("BENCH_RESULTS", ROOT / "build" / "bench" / "results.jsonl"))


def record(section: str, **row) -> dict:
    """Append one measurement at once (a crash later loses nothing), and return it."""
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    row = {"section": section, "at": time.strftime("%Y-%m-%dT%H:%M:%S"), **row}
    with open(RESULTS, "a") as stream:
        stream.write(json.dumps(row) + "\n")
    return row


def median(values) -> float:
    return float(statistics.median(values))


def print_table(title: str, columns: list[str], rows: list[list]) -> None:
    text = [[str(c) for c in columns]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in text) for i in range(len(columns))]
    print(f"\n## {title}\n")
    print("| " + " | ".join(c.ljust(w) for c, w in zip(text[0], widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in text[1:]:
        print("| " + " | ".join(c.rjust(w) for c, w in zip(row, widths)) + " |")
    print(flush=True)


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if value < 100 else f"{value:.1f}"
    return str(value)
