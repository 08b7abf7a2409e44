"""Read sweep results files into one typed DataFrame.

Why a module of its own: the sweep appends a line the moment a run ends, so a
results file may be cut short mid-line (a killed sweep) and a resumed sweep
may hold the same run twice. Everything downstream wants one clean row per run.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Iterable

import pandas as pd

from sssp_common import vocabulary
from sssp_common.record import latest, read_rows

INT_COLUMNS = ("graph_vertices", "graph_edges", "bsize", "bcount", "rep",
               "rounds", "edges_processed", "edges_filtered", "mismatches")
FLOAT_COLUMNS = ("computation_ms", "filtering_ms", "wall_s")
STR_COLUMNS = ("run_id", "sweep", "program", "program_id", "graph", "ordering", "method", "sync",
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


CPU_DEVICE = "CPU (numpy)"   # the device word of the numpy fallback (docs/CONTRACTS.md)


def device_text(frame: pd.DataFrame) -> str:
    """'GPU NVIDIA H100 80GB HBM3', 'CPU fallback (numpy), not a GPU', or both: what a figure or
    caption must say ran it."""
    devices = [d for d in dict.fromkeys(frame["device"]) if d] if len(frame) else []
    words = ["CPU fallback (numpy), not a GPU" if d == CPU_DEVICE else f"GPU {d}" for d in devices]
    return " and ".join(words) or "a device no run printed"
INT_RANGE = 2 ** 53                 # beyond, a count is not one a run could have made (and not exact in float64)
FLOAT_RANGE = 1e15                  # ms or s past this are not measurements
TEXT_CAP = 2000                     # characters of a text field kept


def as_int(value):
    """A whole number within INT_RANGE, or None: what a row's count field may hold, read from
    any JSON value (a huge int, NaN, inf, a string, a list: None, never an exception)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = as_float(value)
    if isinstance(value, float):
        if value is None or not math.isfinite(value) or value != int(value):
            return None
        value = int(value)
    if isinstance(value, int) and -INT_RANGE <= value <= INT_RANGE:
        return value
    return None


def as_float(value):
    """A finite number within FLOAT_RANGE, or None (strings of up to 64 characters are read)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        if len(value) > 64:
            return None
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, int):
        return float(value) if abs(value) <= FLOAT_RANGE else None
    if isinstance(value, float) and math.isfinite(value) and abs(value) <= FLOAT_RANGE:
        return value
    return None


def as_text(value) -> str:
    """A row's text field as printable text: None is '', others str()'d, lone surrogates
    replaced (a file could not be written with them), at most TEXT_CAP characters."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    text = value if isinstance(value, str) else str(value)[:TEXT_CAP]
    text = text[:TEXT_CAP]
    return text.encode("utf-8", errors="replace").decode("utf-8")


def to_frame(rows: list[dict]) -> pd.DataFrame:
    """Typed frame (nullable ints, float ms, strings) with `variant`, `config` and `program_key`
    labels, keeping the latest row of each run_id (sssp_common.record's rule: the last written).
    Warm-up runs (rep < 0) are kept here, flagged by `warmup`; `measured` drops them."""
    rows = [_typed(row) for row in latest(rows) if isinstance(row, dict)]
    frame = pd.DataFrame(rows, columns=list(dict.fromkeys(
        list(INT_COLUMNS + FLOAT_COLUMNS + STR_COLUMNS) + [k for row in rows for k in row])))
    for column in INT_COLUMNS:
        frame[column] = pd.array(list(frame[column]), dtype="Int64")
    for column in FLOAT_COLUMNS:
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("float64")
    frame["status"] = frame["status"].replace("", "malformed")
    frame = frame.reset_index(drop=True)
    frame["variant"] = [variant_label(m, s) for m, s in zip(frame["method"], frame["sync"])]
    frame["config"] = [config_label(b, c) for b, c in zip(frame["bsize"], frame["bcount"])]
    frame["program_key"] = [pid or label for pid, label in zip(frame["program_id"], frame["program"])]
    if "ran_alone" in frame.columns:   # grade --jobs: a run that shared the GPU has no time to report
        shared = frame["ran_alone"].map(lambda v: v is False)
        frame.loc[shared, list(FLOAT_COLUMNS)] = float("nan")
    frame["warmup"] = (frame["rep"].fillna(0) < 0).astype(bool)
    frame["cpu"] = frame["device"] == CPU_DEVICE
    return frame


def _typed(row: dict) -> dict:
    """A row with every column the report reads of the type it reads (anything else None or
    '': a row `grade` or a hand wrote may hold any JSON value anywhere)."""
    typed = dict(row)
    for column in INT_COLUMNS:
        typed[column] = as_int(row.get(column))
    for column in FLOAT_COLUMNS:
        typed[column] = as_float(row.get(column))
    for column in STR_COLUMNS:
        typed[column] = as_text(row.get(column))
    return typed


def measured(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows a report may use: warm-up runs (rep < 0) dropped."""
    return frame[~frame["warmup"]] if len(frame) else frame


def load_results(paths: Iterable[Path], warn=True) -> pd.DataFrame:
    """One frame from several results files (read in the order given)."""
    rows: list[dict] = []
    for path in paths:
        rows.extend(read_rows(Path(path), warn=sys.stderr if warn is True else (warn or None)))
    if not rows:
        return to_frame([]).iloc[0:0]
    return to_frame(rows)


# ---- one program per report --------------------------------------------------------------

def programs(frame: pd.DataFrame) -> list[tuple[str, str, int]]:
    """(identity, label, runs) of every program in the results, most runs first. The identity
    is the record's program_id, or its label for rows written before program_id existed."""
    if not len(frame):
        return []
    out = []
    for key, group in frame.groupby("program_key", sort=False):
        labels = [v for v in dict.fromkeys(group["program"]) if v]
        label = ", ".join(labels[:5]) + (f", ... ({len(labels)} labels)" if len(labels) > 5 else "")
        out.append((str(key), label or str(key), len(group)))
    return sorted(out, key=lambda item: -item[2])


class ProgramChoiceError(ValueError):
    """--program names no program of the results, or names several."""


def select_program(frame: pd.DataFrame, choice: str) -> pd.DataFrame:
    """Rows of the program whose identity or label is `choice` (an identity prefix of 7+
    characters also matches); refuses when the label is shared by several identities."""
    present = programs(frame)
    exact = [key for key, label, _ in present if choice == key]
    by_label = [key for key, label, _ in present if choice in label.split(", ")]
    by_prefix = [key for key, _, _ in present if len(choice) >= 7 and key.startswith(choice)]
    matches = exact or by_label or by_prefix
    listing = describe_programs(present)
    if not matches:
        raise ProgramChoiceError(f"--program {choice!r}: no such program in the results; they hold {listing}")
    if len(matches) > 1:
        raise ProgramChoiceError(f"--program {choice!r} matches {len(matches)} programs; name one by its "
                                 f"identity: {listing}")
    return frame[frame["program_key"] == matches[0]]


def describe_programs(present: list[tuple[str, str, int]]) -> str:
    """'project (id abc123…, 624 runs); student-7 (id 9f…, 50 runs)'."""
    parts = []
    for key, label, runs in present:
        ident = "" if key == label else f"id {key}, "
        parts.append(f"{label} ({ident}{runs} runs)")
    return "; ".join(parts)
