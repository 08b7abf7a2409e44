"""What a resumed sweep may skip, read from its results file (the format is sssp_common.record's)."""
from __future__ import annotations

import sys
from pathlib import Path

from sssp_common.record import ResultsFile, latest, read_rows
from sssp_common.vocabulary import OK


def done_ids(path: Path | str, rerun_failed: bool = False, warn=None) -> set[str]:
    """Run ids a resumed sweep may skip: every recorded one, or only those whose latest
    row is ok when failures are to be redone."""
    rows = latest(read_rows(path, warn=warn or sys.stderr))
    if rerun_failed:
        return {row["run_id"] for row in rows if row.get("status") == OK}
    return {row["run_id"] for row in rows}


class ResultsLocked(Exception):
    """Another grader holds this results file; one line says which file."""


class LockedResults(ResultsFile):
    """A ResultsFile that holds `<path>.lock` (fcntl.flock) from open to close, so two graders
    never run the same cells into one file; the lock goes with the process if it dies."""

    def __init__(self, path):
        import fcntl
        import os
        lock_path = Path(f"{path}.lock")
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        self._lock_fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._lock_fd)
            self._lock_fd = None
            raise ResultsLocked(f"{path} is in use by another grader (it holds {lock_path}); "
                                f"wait for it or give another --results/--out") from None
        super().__init__(path)

    def close(self) -> None:
        import os
        super().close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
