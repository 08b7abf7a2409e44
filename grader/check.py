"""Judge one run: parse its timing lines and output file, compare with the reference.

Pure functions (apart from reading the output file), so every failure mode can be
tested without running anything. Tolerant where implementations legitimately differ
(spacing, case, "milli-seconds" vs "ms", INF spellings, sentinel values), strict
where a difference would hide a wrong answer (missing, duplicate or stray vertices).
"""
from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np

from sssp_common.vocabulary import STATUSES, UNREACHABLE  # noqa: F401 (STATUSES: the verdicts classify returns)

SHOW_DIFFERENCES = 5

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_UNIT = r"(?P<unit>milli-?\s*seconds?|milliseconds?|msecs?|ms|micro-?\s*seconds?|us|seconds?|secs?|s)?"


def _timing_pattern(stage: str) -> re.Pattern:
    return re.compile(
        rf"total\s+{stage}\s+kernel\s+time(?:\s+on\s+(?P<device>.*?))?\s+is\s*:?\s*(?P<value>{_NUMBER})\s*{_UNIT}",
        re.IGNORECASE)


COMPUTATION = _timing_pattern("computation")
FILTERING = _timing_pattern("filtering")
_EXTRAS = {
    "rounds": re.compile(r"^\s*rounds\s*:\s*(\d+)", re.IGNORECASE | re.MULTILINE),
    "edges_processed": re.compile(r"^\s*edges\s+processed\s*:\s*(\d+)", re.IGNORECASE | re.MULTILINE),
    "edges_filtered": re.compile(r"^\s*edges\s+scanned\s+by\s+filtering\s*:\s*(\d+)", re.IGNORECASE | re.MULTILINE),
}


class MalformedOutput(ValueError):
    """The output file cannot be read as one distance per vertex; the message says where."""


def _to_ms(value: str, unit: str | None) -> float:
    number = float(value)
    unit = (unit or "ms").lower().replace(" ", "").replace("-", "")
    if unit.startswith(("milli", "ms", "msec")):
        return number
    if unit.startswith(("micro", "us")):
        return number / 1000.0
    return number * 1000.0   # seconds


def _device_name(text: str | None) -> str:
    """'GPU NVIDIA H100 80GB HBM3' -> 'NVIDIA H100 80GB HBM3'; 'GPU' alone -> ''; 'CPU (numpy)' kept."""
    text = (text or "").strip()
    if text.upper() == "GPU":
        return ""
    if text[:4].upper() == "GPU ":
        return text[4:].strip()
    return text


def parse_timing(stdout: str) -> tuple[float | None, float | None, str]:
    """(computation_ms, filtering_ms, device) from the spec's two lines; None where a line is absent."""
    computation = COMPUTATION.search(stdout)
    filtering = FILTERING.search(stdout)
    device = ""
    for match in (computation, filtering):
        if match and not device:
            device = _device_name(match.group("device"))
    return (_to_ms(computation.group("value"), computation.group("unit")) if computation else None,
            _to_ms(filtering.group("value"), filtering.group("unit")) if filtering else None,
            device)


def parse_extras(stdout: str) -> dict[str, int | None]:
    """rounds, edges_processed, edges_filtered from CONTRACTS.md's `key: value` lines (None if absent)."""
    found = {}
    for key, pattern in _EXTRAS.items():
        match = pattern.search(stdout)
        found[key] = int(match.group(1)) if match else None
    return found


# --- output file -------------------------------------------------------------------

_INF_MARK = b"-9223372036854775807"   # what INF spellings become before the numeric parse
_LOWER_AND_DROP = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")


def parse_output(path: Path | str, n: int, sentinels=()) -> np.ndarray:
    """Distances (int64, UNREACHABLE = -1) from `<vertex>:<distance>` lines, one per vertex 0..n-1.

    Vectorised (pandas' C reader after one pass of byte translation) so millions of lines
    take well under a second; the slow line-by-line reader runs only to say where a bad
    file goes wrong.
    """
    data = Path(path).read_bytes()
    data = data.translate(_LOWER_AND_DROP, b" \t\r\v\f")
    if b"inf" in data:
        data = data.replace(b"infinity", _INF_MARK).replace(b"inf", _INF_MARK)
    if not data.strip(b"\n"):
        if n:
            raise MalformedOutput(f"line 1: the output file is empty (expected {n} vertices)")
        return np.zeros(0, dtype=np.int64)
    ids, dists = _fast_columns(data)
    if ids is None:
        ids, dists = _slow_columns(data)   # raises with the line number
    unreachable = dists == np.iinfo(np.int64).min + 1
    for sentinel in sentinels:
        unreachable |= dists == sentinel
    dists = np.where(unreachable, UNREACHABLE, dists)
    if ids.shape[0] == n and (n == 0 or (ids[0] == 0 and np.array_equal(ids, np.arange(n, dtype=ids.dtype)))):
        return dists.astype(np.int64, copy=False)
    return _place(ids, dists, n, data)


def _fast_columns(data: bytes):
    import pandas as pd
    try:
        frame = pd.read_csv(io.BytesIO(data), sep=":", header=None, names=["v", "d"],
                            dtype={"v": np.int64, "d": np.int64}, engine="c", skip_blank_lines=True)
    except (ValueError, OverflowError, pd.errors.ParserError):
        return None, None
    return frame["v"].to_numpy(), frame["d"].to_numpy()


_LINE = re.compile(rb"^(-?\d+):(-?\d+)$")
_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def _slow_columns(data: bytes):
    """Line by line: the first line that is not `<int>:<int>` raises MalformedOutput with its number."""
    ids, dists = [], []
    for number, line in enumerate(data.split(b"\n"), 1):
        if not line:
            continue
        match = _LINE.match(line)
        if not match:
            shown = line.replace(_INF_MARK, b"INF").decode("utf-8", errors="replace")[:60]
            raise MalformedOutput(f"line {number}: not '<vertex>:<distance>': {shown!r}")
        vertex, distance = int(match.group(1)), int(match.group(2))
        if not (_INT64_MIN <= vertex <= _INT64_MAX and _INT64_MIN <= distance <= _INT64_MAX):
            raise MalformedOutput(f"line {number}: a number does not fit in 64 bits")
        ids.append(vertex)
        dists.append(distance)
    return np.array(ids, dtype=np.int64), np.array(dists, dtype=np.int64)


def _line_numbers(data: bytes) -> np.ndarray:
    """1-based file line of each non-blank line (only computed for error messages)."""
    return np.array([number for number, line in enumerate(data.split(b"\n"), 1) if line], dtype=np.int64)


def _place(ids: np.ndarray, dists: np.ndarray, n: int, data: bytes) -> np.ndarray:
    """Lines out of order are fine; stray, repeated or missing vertices are not."""
    stray = np.flatnonzero((ids < 0) | (ids >= n))
    if stray.size:
        line = _line_numbers(data)[stray[0]]
        raise MalformedOutput(f"line {line}: vertex {ids[stray[0]]} is out of range (the graph has {n} vertices)")
    counts = np.bincount(ids, minlength=n)
    repeated = np.flatnonzero(counts > 1)
    if repeated.size:
        vertex = repeated[0]
        second = np.flatnonzero(ids == vertex)[1]
        raise MalformedOutput(f"line {_line_numbers(data)[second]}: vertex {vertex} appears a second time")
    missing = np.flatnonzero(counts == 0)
    if missing.size:
        raise MalformedOutput(f"line {min(int(missing[0]) + 1, len(ids) + 1)}: no line for vertex {missing[0]} "
                              f"({missing.size} of {n} vertices missing)")
    out = np.empty(n, dtype=np.int64)
    out[ids] = dists
    return out


# --- the verdict -------------------------------------------------------------------

def _shown(value: int) -> str:
    return "INF" if value == UNREACHABLE else str(int(value))


def compare(got: np.ndarray, expected: np.ndarray) -> tuple[int, str]:
    """(number of differing vertices, 'v: expected X got Y; ...' for the first few)."""
    differ = np.flatnonzero(got != expected)
    shown = "; ".join(f"{v}: expected {_shown(expected[v])} got {_shown(got[v])}" for v in differ[:SHOW_DIFFERENCES])
    more = f"; ... ({differ.size - SHOW_DIFFERENCES} more)" if differ.size > SHOW_DIFFERENCES else ""
    return int(differ.size), (f"{differ.size} of {expected.size} vertices differ: {shown}{more}" if differ.size else "")


def _last_lines(text: str, count: int = 5, width: int = 600) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[-count:])[-width:]


def classify(result, reference: np.ndarray, sentinels=()) -> dict:
    """The record fields of one run (CONTRACTS.md): status, timings, extras, mismatches, detail, device.

    Order matters: a timeout or a non-zero exit is that, whatever files exist; a run that
    exits 0 must print the timing lines and write a whole, correct output file.
    """
    computation_ms, filtering_ms, device = parse_timing(result.stdout_head)
    record = {"status": "ok", "computation_ms": computation_ms, "filtering_ms": filtering_ms,
              **parse_extras(result.stdout_head), "mismatches": None, "detail": "", "device": device}
    if result.launch_error:
        return {**record, "status": "crash", "detail": result.launch_error}
    if result.exit_code is None:
        return {**record, "status": "timeout", "detail": f"killed after {result.timeout_s:g} s"}
    if result.exit_code != 0:
        if result.exit_code < 0:
            import signal
            try:
                why = f"killed by {signal.Signals(-result.exit_code).name}"
            except ValueError:
                why = f"killed by signal {-result.exit_code}"
        else:
            why = f"exit code {result.exit_code}"
        tail = _last_lines(result.stderr_tail)
        return {**record, "status": "crash", "detail": why + (f"; stderr: {tail}" if tail else "; stderr empty")}
    missing = [name for name, value in (("computation", computation_ms), ("filtering", filtering_ms)) if value is None]
    if missing:
        return {**record, "status": "malformed",
                "detail": f"no {' and no '.join(missing)} timing line on stdout "
                          f"(expected 'The total computation kernel time on GPU <name> is <x> milli-seconds')"}
    if not Path(result.output_path).is_file():
        return {**record, "status": "no_output", "detail": "exited 0 but wrote no output file"}
    try:
        got = parse_output(result.output_path, int(reference.shape[0]), sentinels)
    except MalformedOutput as error:
        return {**record, "status": "malformed", "detail": f"output file: {error}"}
    mismatches, detail = compare(got, reference)
    if mismatches:
        return {**record, "status": "wrong", "mismatches": mismatches, "detail": detail}
    return record
