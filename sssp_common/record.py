"""The run record: one typed row per program run, one JSONL file format, one "latest row" rule.

Why JSONL with fsync: a sweep may be killed at any instant (Ctrl-C, a lost GPU node);
every finished run must survive it, and a line cut in half must never stop the next
reader. The sweep, the grader and the report all read and write through this module, so
they cannot disagree about which row of a cell counts: the one written last.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .files import REPO_ROOT


def run_id(program_id: str, graph: str, ordering: str, method: str, sync: str,
           bsize: int, bcount: int, rep: int) -> str:
    """Stable key of one cell: the same program (by identity: commit or content digest),
    graph, ordering, method, sync, configuration and repetition always get the same id,
    which is what resuming relies on; another program never does."""
    key = json.dumps([program_id, graph, ordering, method, sync, int(bsize), int(bcount), int(rep)],
                     separators=(",", ":"))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


@dataclass
class RunRecord:
    """One run of one program on one cell (docs/CONTRACTS.md lists every field)."""
    run_id: str
    graph: str
    ordering: str
    method: str
    sync: str
    bsize: int
    bcount: int
    rep: int
    status: str
    sweep: str = ""
    program: str = ""                  # label shown to people ("project", a student id)
    program_id: str = ""               # identity: commit(+dirty) or the submission's digest
    graph_vertices: int | None = None
    graph_edges: int | None = None
    computation_ms: float | None = None
    filtering_ms: float | None = None
    rounds: int | None = None
    edges_processed: int | None = None
    edges_filtered: int | None = None
    mismatches: int | None = None
    detail: str = ""
    device: str = ""
    wall_s: float | None = None
    command: list = field(default_factory=list)
    machine: str = ""
    commit: str = ""
    started_at: str = ""
    worker: str = ""                   # the worker that ran it (local-0@host, a Dask worker's address)
    gpu: str = ""                      # the GPU it saw (its CUDA_VISIBLE_DEVICES value); "" on the CPU
    extra: dict = field(default_factory=dict)   # fields a newer writer added (kept, not interpreted)

    def to_dict(self) -> dict:
        row = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "extra"}
        row.update(self.extra)
        return row

    @classmethod
    def from_dict(cls, row: dict) -> "RunRecord":
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        values = {key: row[key] for key in known if key in row}
        missing = [f.name for f in dataclasses.fields(cls)
                   if f.name in known and f.default is dataclasses.MISSING
                   and f.default_factory is dataclasses.MISSING and f.name not in values]
        if missing:
            raise ValueError(f"a run record needs {', '.join(missing)}")
        return cls(**values, extra={key: value for key, value in row.items() if key not in known})


# --- provenance ----------------------------------------------------------------------

def utc_now() -> str:
    """ISO-8601 UTC to the second, e.g. 2024-11-22T14:00:04Z."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def machine() -> str:
    return socket.gethostname()


def project_commit(repo: Path = REPO_ROOT) -> str:
    """HEAD of this project (+dirty when tracked files changed); 'unknown' outside git."""
    def git(*args) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
    try:
        head = git("rev-parse", "HEAD")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    try:
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        dirty = False
    return head + ("+dirty" if dirty else "")


# --- reading ---------------------------------------------------------------------------

_STDERR = object()   # "sys.stderr as it is at call time" (tests capture it)


def read_rows(path: Path | str, warn=_STDERR) -> list[dict]:
    """Every parseable row of one file in file order. A torn line (a writer killed mid-line)
    is skipped with a warning on ``warn`` (None: silently); a missing file is no rows."""
    warn = sys.stderr if warn is _STDERR else warn
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    lines = data.split(b"\n")
    while lines and not lines[-1].strip():
        lines.pop()
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            row = None
        if not isinstance(row, dict):
            if warn is not None:
                print(f"{path}:{number}: ignored a torn or unreadable line ({len(line)} bytes)", file=warn)
            continue
        rows.append(row)
    return rows


def read_records(paths: Iterable[Path | str], warn=_STDERR) -> list[RunRecord]:
    """Records of several files, in the order given; rows that are not records are skipped
    with a warning (they name the file)."""
    warn = sys.stderr if warn is _STDERR else warn
    records = []
    for path in paths:
        for row in read_rows(path, warn=warn):
            try:
                records.append(RunRecord.from_dict(row))
            except (TypeError, ValueError) as error:
                if warn is not None:
                    print(f"{path}: ignored a row that is not a run record ({error})", file=warn)
    return records


def latest(records: Iterable) -> list:
    """The one rule for a cell's row: the last one written for each run_id wins (a rerun
    supersedes), listed in the order those latest rows were written. Takes records or dicts."""
    chosen: dict[str, object] = {}
    for record in records:
        key = record.get("run_id") if isinstance(record, dict) else record.run_id
        if not isinstance(key, str):
            continue
        chosen.pop(key, None)
        chosen[key] = record
    return list(chosen.values())


def latest_by_run_id(records: Iterable) -> dict:
    return {(r.get("run_id") if isinstance(r, dict) else r.run_id): r for r in latest(records)}


# --- writing ---------------------------------------------------------------------------

class ResultsFile:
    """Appends rows durably: one write per line, flushed and fsynced before the next run."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        self._end_torn_line()

    def _end_torn_line(self) -> None:
        """A file cut mid-line gets its newline first, so the next row starts a line of its own."""
        size = os.fstat(self._fd).st_size
        if size:
            with open(self.path, "rb") as handle:
                handle.seek(size - 1)
                if handle.read(1) != b"\n":
                    os.write(self._fd, b"\n")

    def append(self, row) -> None:
        if isinstance(row, RunRecord):
            row = row.to_dict()
        data = (json.dumps(row, ensure_ascii=False, allow_nan=False, default=_plain) + "\n").encode("utf-8")
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _plain(value):
    """numpy scalars and paths as plain JSON values."""
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON: {type(value).__name__}")
