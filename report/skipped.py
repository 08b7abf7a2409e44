"""What the sweep meant to run but has no result for, and why: lines for the report's summary.

Why: a graph whose data was absent is skipped by the sweep with a note on its console; a
report that only shows what ran lets the reader believe the sweep was complete. The sweep
keeps its plan beside the results (sssp_common.sweepplan): every cell and every skipped
graph with its reason. Pure but for reading those plans.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pandas as pd

from sssp_common.sweepplan import PlanError, read_plan
from .load import variant_label

NOT_RUN_YET = "no result yet (the sweep was interrupted or not resumed)"
SHOWN = 4   # settings named per line; the rest are counted


def read_plans(sources: list[Path]) -> tuple[list[dict], list[str]]:
    """(plans found beside the results files, one warning line per unreadable plan)."""
    plans, warnings = [], []
    for source in sources:
        try:
            plan = read_plan(source)
        except PlanError as error:
            warnings.append(f"The sweep plan {error}; cells without results are not listed from it.")
            continue
        if plan is not None:
            plans.append(plan)
    return plans, warnings


def _names(items: list[str]) -> str:
    shown = ", ".join(items[:SHOWN])
    return shown + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")


def planned_without_result(frame: pd.DataFrame, plans: list[dict], program_key: str) -> list[str]:
    """One line per graph with planned measured cells (rep >= 0) of this program that have no
    row: the whole graph with the sweep's reason when it was skipped, else the methods and counts."""
    have = set(frame["run_id"]) if len(frame) else set()
    missing: dict[str, list[dict]] = defaultdict(list)
    planned: dict[str, int] = defaultdict(int)
    skipped: dict[str, str] = {}
    for plan in plans:
        skipped.update(plan["skipped"])
        for run_id, cell in plan["cells"].items():
            if cell.get("program") not in (program_key, None) or int(cell["rep"]) < 0:
                continue
            planned[cell["graph"]] += 1
            if run_id not in have:
                missing[cell["graph"]].append(cell)
    lines = []
    for graph, cells in missing.items():
        variants = list(dict.fromkeys(variant_label(c["method"], c["sync"]) for c in cells))
        why = f"skipped by the sweep: {skipped[graph]}" if graph in skipped else NOT_RUN_YET
        if len(cells) == planned[graph]:
            lines.append(f"Not run: {graph}, all {len(cells)} planned cells ({', '.join(variants)}): {why}.")
            continue
        per_variant = defaultdict(list)
        for cell in sorted(cells, key=lambda c: (c["ordering"], int(c["bsize"]), int(c["bcount"]), int(c["rep"]))):
            per_variant[variant_label(cell["method"], cell["sync"])].append(
                f"{cell['ordering']} {cell['bsize']}×{cell['bcount']} #{cell['rep']}")
        parts = [f"{variant} ({len(settings)}: {_names(settings)})" for variant, settings in per_variant.items()]
        lines.append(f"No result on {graph} for {len(cells)} of {planned[graph]} planned cells: "
                     f"{'; '.join(parts)}: {why}.")
    return lines


def gaps(frame: pd.DataFrame) -> list[str]:
    """Methods run on some graph of this report but not on another: said per graph."""
    if not len(frame):
        return []
    everywhere = list(dict.fromkeys(frame["variant"]))
    lines = []
    for graph, runs in frame.groupby("graph", sort=False):
        absent = [v for v in everywhere if v not in set(runs["variant"])]
        if absent:
            lines.append(f"Not in the results for {graph}: {', '.join(absent)} (run on other graphs of this report).")
    return lines


def skipped_lines(frame: pd.DataFrame, sources: list[Path], program_key: str) -> list[str]:
    """Every graph, method or cell with no result, and why; says so when no plan exists."""
    plans, warnings = read_plans(sources)
    if plans:    # the plan names every missing cell; the gaps between graphs would say it twice
        return warnings + planned_without_result(frame, plans, program_key)
    lines = warnings + gaps(frame)
    if sources:
        lines.append("No sweep plan beside the results (written before sweeps kept one, or by grade): graphs and "
                     "cells the sweep skipped or never ran cannot be listed here.")
    return lines
