"""What a resumed sweep may skip, read from its results file (the format is sssp_common.record's)."""
from __future__ import annotations

import sys
from pathlib import Path

from sssp_common.record import latest, read_rows
from sssp_common.vocabulary import OK


def done_ids(path: Path | str, rerun_failed: bool = False, warn=None) -> set[str]:
    """Run ids a resumed sweep may skip: every recorded one, or only those whose latest
    row is ok when failures are to be redone."""
    rows = latest(read_rows(path, warn=warn or sys.stderr))
    if rerun_failed:
        return {row["run_id"] for row in rows if row.get("status") == OK}
    return {row["run_id"] for row in rows}
