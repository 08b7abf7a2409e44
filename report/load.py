"""Read sweep results files into one typed DataFrame.

Why a module of its own: the sweep appends a line the moment a run ends, so a
results file may be cut short mid-line (a killed sweep) and a resumed sweep
may hold the same run twice. Everything downstream wants one clean row per run.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Iterable

import pandas as pd

INT_COLUMNS = ("graph_vertices", "graph_edges", "bsize", "bcount", "rep",
               "rounds", "edges_processed", "edges_filtered", "mismatches")
FLOAT_COLUMNS = ("computation_ms", "filtering_ms", "wall_s")
STR_COLUMNS = ("run_id", "sweep", "program", "graph", "ordering", "method", "sync",
               "status", "detail", "device", "machine", "commit", "started_at")
OK = "ok"


def read_jsonl(path: Path, warn=True) -> list[dict]:
    """Rows of one results file; a torn (unparseable) last line is dropped quietly,
    an unparseable line elsewhere is dropped with a warning (on stderr when warn is True)."""
    warn = sys.stderr if warn is True else warn
    lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            if number != len(lines) and warn:
                print(f"report: {path}:{number}: skipped a line that is not JSON", file=warn)
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def variant_label(method: str, sync: str) -> str:
    """'bmf outcore', 'tpe incore', ...; segscan is out-of-core by the spec, so plain 'segscan'."""
    if method == "segscan" and sync in ("outcore", "", None):
        return "segscan"
    return f"{method} {sync}" if sync else str(method)


def config_label(bsize, bcount) -> str:
    """'256×8' — block size × block count, the spec's execution configuration."""
    if pd.isna(bsize) or pd.isna(bcount):
        return "auto"
    return f"{int(bsize)}×{int(bcount)}"


def to_frame(rows: list[dict]) -> pd.DataFrame:
    """Typed frame (nullable ints, float ms, strings) with `variant` and `config` labels,
    keeping the latest row of each run_id (by started_at, then by reading order)."""
    frame = pd.DataFrame(rows)
    for column in INT_COLUMNS + FLOAT_COLUMNS + STR_COLUMNS:
        if column not in frame.columns:
            frame[column] = None
    for column in INT_COLUMNS:
        frame[column] = pd.to_numeric(frame[column], errors="coerce").round().astype("Int64")
    for column in FLOAT_COLUMNS:
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("float64")
    for column in STR_COLUMNS:
        frame[column] = frame[column].map(lambda v: "" if v is None or (isinstance(v, float) and pd.isna(v)) else str(v))
    frame["status"] = frame["status"].replace("", "malformed")
    frame["_read_order"] = range(len(frame))
    missing_id = frame["run_id"] == ""
    frame.loc[missing_id, "run_id"] = [f"_row{i}" for i in frame.index[missing_id]]
    frame = (frame.sort_values(["started_at", "_read_order"], kind="stable")
                  .drop_duplicates("run_id", keep="last")
                  .sort_values("_read_order", kind="stable")
                  .drop(columns="_read_order")
                  .reset_index(drop=True))
    frame["variant"] = [variant_label(m, s) for m, s in zip(frame["method"], frame["sync"])]
    frame["config"] = [config_label(b, c) for b, c in zip(frame["bsize"], frame["bcount"])]
    return frame


def load_results(paths: Iterable[Path], warn=True) -> pd.DataFrame:
    """One frame from several results files (read in the order given)."""
    rows: list[dict] = []
    for path in paths:
        rows.extend(read_jsonl(Path(path), warn=warn))
    if not rows:
        return to_frame([]).iloc[0:0]
    return to_frame(rows)
