"""Read sweep results files into one typed DataFrame.

Why a module of its own: the sweep appends a line the moment a run ends, so a
results file may be cut short mid-line (a killed sweep) and a resumed sweep
may hold the same run twice. Everything downstream wants one clean row per run.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterable

import pandas as pd

from sssp_common import vocabulary
from sssp_common.record import latest, read_rows

INT_COLUMNS = ("graph_vertices", "graph_edges", "bsize", "bcount", "rep",
               "rounds", "edges_processed", "edges_filtered", "mismatches")
FLOAT_COLUMNS = ("computation_ms", "filtering_ms", "wall_s")
STR_COLUMNS = ("run_id", "sweep", "program", "graph", "ordering", "method", "sync",
               "status", "detail", "device", "machine", "commit", "started_at")


def variant_label(method: str, sync: str) -> str:
    """'bmf outcore', 'tpe incore', ...; segscan is out-of-core by the spec, so plain 'segscan'."""
    if method == "segscan" and sync in ("outcore", "", None):
        return "segscan"
    return f"{method} {sync}" if sync else str(method)


def config_label(bsize, bcount) -> str:
    """'256×8' — block size × block count, the spec's execution configuration."""
    if pd.isna(bsize) or pd.isna(bcount):
        return "auto"
    return vocabulary.config_label(bsize, bcount)


def to_frame(rows: list[dict]) -> pd.DataFrame:
    """Typed frame (nullable ints, float ms, strings) with `variant` and `config` labels,
    keeping the latest row of each run_id (sssp_common.record's rule: the last written)."""
    rows = latest(rows)
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
    frame = frame.reset_index(drop=True)
    frame["variant"] = [variant_label(m, s) for m, s in zip(frame["method"], frame["sync"])]
    frame["config"] = [config_label(b, c) for b, c in zip(frame["bsize"], frame["bcount"])]
    return frame


def load_results(paths: Iterable[Path], warn=True) -> pd.DataFrame:
    """One frame from several results files (read in the order given)."""
    rows: list[dict] = []
    for path in paths:
        rows.extend(read_rows(Path(path), warn=sys.stderr if warn is True else (warn or None)))
    if not rows:
        return to_frame([]).iloc[0:0]
    return to_frame(rows)
