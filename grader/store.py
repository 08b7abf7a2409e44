"""The results file: one JSON line per run, on disk the moment the run ends.

Why JSONL with fsync: a sweep may be killed at any instant (Ctrl-C, a lost GPU node);
every finished run must survive it, and a line cut in half must never stop the
next reader or the resumed sweep.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


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


def read_rows(path: Path | str, warn=sys.stderr) -> list[dict]:
    """Every parseable row in file order. A torn line (a sweep killed mid-write) is skipped
    with a warning; a missing file is no rows."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    rows = []
    lines = data.split(b"\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            row = None
        if not isinstance(row, dict):
            if warn is not None:
                print(f"grader: {path}:{number}: ignored a torn or unreadable line ({len(line)} bytes)",
                      file=warn)
            continue
        rows.append(row)
    return rows


def latest_by_run_id(rows: list[dict]) -> dict[str, dict]:
    """The last row written for each run_id (a --force or --rerun-failed rerun supersedes)."""
    latest: dict[str, dict] = {}
    for row in rows:
        run_id = row.get("run_id")
        if isinstance(run_id, str):
            latest.pop(run_id, None)   # keep file order of the latest rows
            latest[run_id] = row
    return latest


def done_ids(path: Path | str, rerun_failed: bool = False, warn=sys.stderr) -> set[str]:
    """Run ids a resumed sweep may skip: every recorded one, or only those whose latest
    row is ok when failures are to be redone."""
    latest = latest_by_run_id(read_rows(path, warn=warn))
    if rerun_failed:
        return {run_id for run_id, row in latest.items() if row.get("status") == "ok"}
    return set(latest)


class ResultsFile:
    """Appends rows durably: one write per line, flushed and fsynced before the next run."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._end_torn_line()

    def _end_torn_line(self) -> None:
        """A file cut mid-line gets its newline first, so the next row starts a line of its own."""
        size = os.fstat(self._fd).st_size
        if size:
            with open(self.path, "rb") as handle:
                handle.seek(size - 1)
                if handle.read(1) != b"\n":
                    os.write(self._fd, b"\n")

    def append(self, row: dict) -> None:
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
