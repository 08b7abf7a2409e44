"""What an executor hands back for one submitted task."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Outcome:
    key: str                       # the key it was submitted under (a cell's run id)
    row: dict | None               # the run record, tagged with worker and gpu; None: no row came back
    error: str = ""                # why no row came back (a worker that kept dying, an exception)
    overhead: float | None = None  # the harness's own seconds for this run, when the work function says
    attempts: int = 1
