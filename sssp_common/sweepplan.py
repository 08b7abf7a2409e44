"""What a sweep meant to run, kept beside its results: `<results>.plan.json`.

Why a file beside the results and not rows in them: a results row is one run (every reader
counts it as one: resume, grade, the report's status table), and a cell that never ran is
not a run. The plan lists every cell a sweep expanded and every graph it skipped with the
reason (its data was absent, no reference could be had), so the report can say what has no
result and why. Results written before this file existed simply have no plan; the report
then says it cannot list the cells that never ran.

Several sweeps may write into one results file: the plan is merged, cells by run id, and a
graph prepared later stops being skipped.
"""
from __future__ import annotations

import json
from pathlib import Path

from .files import atomic_writer

FORMAT = "sssp-sweep-plan"
VERSION = 1
# program: the cell's program identity (its id, else its label), as the report's program_key
CELL_FIELDS = ("run_id", "program", "graph", "method", "sync", "ordering", "bsize", "bcount", "rep")
MAX_PLAN_BYTES = 64 << 20   # a plan is read whole: refuse a file that cannot be one


class PlanError(ValueError):
    """A plan file that is not one (one line names the file and what is wrong)."""


def plan_path(results: Path | str) -> Path:
    results = Path(results)
    return results.with_name(results.name + ".plan.json")


def empty_plan() -> dict:
    return {"format": FORMAT, "version": VERSION, "cells": {}, "skipped": {}}


def read_plan(results: Path | str) -> dict | None:
    """The plan beside a results file, or None when there is none (results older than plans).
    Raises PlanError for a file that is not a plan."""
    path = plan_path(results)
    if not path.is_file():
        return None
    if path.stat().st_size > MAX_PLAN_BYTES:
        raise PlanError(f"{path}: over {MAX_PLAN_BYTES >> 20} MiB, not a sweep plan")
    try:
        plan = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PlanError(f"{path}: not a sweep plan ({error})") from None
    if not isinstance(plan, dict) or plan.get("format") != FORMAT:
        raise PlanError(f"{path}: not a sweep plan (key 'format' is not {FORMAT!r})")
    cells, skipped = plan.get("cells"), plan.get("skipped")
    if not isinstance(cells, dict) or not isinstance(skipped, dict):
        raise PlanError(f"{path}: keys 'cells' and 'skipped' must be objects")
    for key, cell in cells.items():
        if not isinstance(cell, dict) or any(field not in cell for field in CELL_FIELDS[1:]):
            raise PlanError(f"{path}: cell {key!r} lacks one of {', '.join(CELL_FIELDS[1:])}")
    return plan


def merged(plan: dict | None, cells, skipped: dict[str, str], prepared=()) -> dict:
    """`plan` with this sweep's cells (objects with CELL_FIELDS as attributes) and skipped
    graphs added; graphs in `prepared` (run this time) are no longer skipped."""
    out = empty_plan() if plan is None else {**plan, "cells": dict(plan["cells"]),
                                             "skipped": dict(plan["skipped"])}
    for cell in cells:
        entry = {field: getattr(cell, field) for field in CELL_FIELDS[2:]}
        out["cells"][cell.run_id] = {"program": getattr(cell, "program_id", "") or cell.program, **entry}
    for graph in prepared:
        out["skipped"].pop(graph, None)
    out["skipped"].update({str(graph): str(why) for graph, why in skipped.items()})
    return out


def write_plan(results: Path | str, cells, skipped: dict[str, str], prepared=()) -> Path:
    """Merge this sweep's plan into the one beside `results` (an unreadable old plan is
    replaced) and write it whole."""
    try:
        old = read_plan(results)
    except PlanError:
        old = None
    path = plan_path(results)
    with atomic_writer(path, "w", encoding="utf-8") as out:
        json.dump(merged(old, cells, skipped, prepared), out, indent=0, sort_keys=True)
    return path
