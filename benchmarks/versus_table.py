"""The versus table (opt against gapbs, Gunrock and scipy) as its rows come in (pure but for the file).

Each graph's row is added the moment it is measured, and the table, with every goal line
judged on what is in it so far, replaces ``<tables dir>/versus.md`` whole: a run stopped
half-way (the device call's limit, a crash) leaves the rows it measured, the graphs not
reached marked "not measured yet", and goal lines that cannot read "met" for want of them.
At the end the same text is printed.

The opt figures of a row: from fresh ``./sssp`` processes (``versus.fresh_opt``) the median
printed time, the median wall measured outside the process and the median setup of their
``wall:`` lines, and how many processes; then the in-process warm median. The gapbs and
Gunrock ratios divide by the fresh printed time, and every goal line judges fresh figures.
"""
from __future__ import annotations

from pathlib import Path

from . import fresh_goals, verdicts
from .common import print_table, write_table
from .verdicts import Baseline

GAPBS_GOAL, GUNROCK_GOAL = 5.0, 3.0
COLUMNS = ["graph", "opt ms (fresh ./sssp)", "wall s (fresh, outside)", "setup s (fresh)", "fresh n",
           "opt ms (warm, in-process)", "gapbs ms", "gapbs/opt", "Gunrock ms", "Gunrock/opt", "scipy ms", "rounds",
           "relax/edge", "check"]
FILE_NAME = "versus.md"
NOT_YET = "not measured yet"


def table_row(label: str, fresh: dict | None, warm_ms, gap: Baseline, gun: Baseline, scipy_ms, rounds, relax: str,
              check: str) -> list:
    """One row: ``fresh`` (``versus.fresh_opt``'s figures) gives the printed time the ratios
    divide by, the wall and the setup; None: an in-process extra row, without ratios."""
    fresh_ms = fresh["ms"] if fresh else None

    def cell(baseline):
        return verdicts.ratio_cell(baseline, fresh_ms) if fresh else "—"

    figures = [fresh_ms, fresh["process_wall_s"], fresh["setup_s"], len(fresh["printed_ms"])] if fresh else [None] * 4
    return [label, *figures, warm_ms, gap.cell(), cell(gap), gun.cell(), cell(gun), scipy_ms, rounds, relax, check]


def goal_lines(judged: list[tuple[str, float | None, dict[str, Baseline]]]) -> list[str]:
    """The gapbs and Gunrock goal lines over (graph label, opt's fresh-process ms, baselines by
    name): users run ./sssp once, so the goals judge what one fresh process prints."""
    return [verdicts.verdict(name, goal, [(label, fresh_ms, baselines[name]) for label, fresh_ms, baselines in judged])
            for name, goal in (("gapbs", GAPBS_GOAL), ("Gunrock", GUNROCK_GOAL))]


class VersusTable:
    """The table of ``graphs`` ((key, label) in table order), rewritten to ``folder/versus.md``
    (None: no file) after every row; :meth:`finish` prints it."""

    def __init__(self, title: str, scale: str, graphs: list[tuple[str, str]], header: str, folder: Path | None):
        self.title, self.scale, self.graphs, self.header = title, scale, list(graphs), header
        self.path = Path(folder) / FILE_NAME if folder is not None else None
        self.rows: dict[str, list[list]] = {}      # graph key -> its row, and its extra rows (opt -tile)
        self.judged: dict[str, tuple] = {}         # graph key -> (label, fresh ms, baselines by name)
        self.fresh: dict[str, dict | None] = {}    # graph key -> fresh_opt's figures (None: row skipped)
        self.notes: list[str] = []
        self.tile_goals: list[str] = []

    def add(self, key: str, rows: list[list], fresh: dict | None, baselines: dict[str, Baseline]) -> None:
        """A measured graph (or one skipped: ``fresh`` None, baselines missing, saying why)."""
        label = dict(self.graphs)[key]
        self.rows[key] = rows
        self.fresh[key] = fresh
        self.judged[key] = (label, fresh["ms"] if fresh else None, baselines)
        self.publish()

    def parts(self) -> tuple[list[list], list[str]]:
        """(rows, notes) as they stand: the graphs not reached yet marked so, and judged unknown."""
        rows, judged, fresh_rows = [], [], []
        for key, label in self.graphs:
            if key in self.rows:
                rows += self.rows[key]
                judged.append(self.judged[key])
                fresh_rows.append((key, label, self.fresh[key]))
            else:
                rows.append([label, NOT_YET] + [None] * (len(COLUMNS) - 2))
                judged.append((label, None, {name: Baseline.missing(NOT_YET) for name in ("gapbs", "Gunrock")}))
                fresh_rows.append((key, label, None))
        lines = goal_lines(judged) + fresh_goals.lines(self.scale, fresh_rows)
        if self.tile_goals:
            lines.append("issue 26's goals for opt (its own row takes tiles by itself on grids; the -tile rows ask "
                         "for them, cap 16): " + "; ".join(self.tile_goals))
        done, total = len(self.rows), len(self.graphs)
        progress = [f"(written as rows finish: {done} of {total} graphs so far)"] if done < total else []
        return rows, [self.header] + lines + self.notes + progress

    def publish(self) -> None:
        rows, notes = self.parts()
        write_table(self.path, self.title, COLUMNS, rows, notes)

    def finish(self) -> None:
        rows, notes = self.parts()
        write_table(self.path, self.title, COLUMNS, rows, notes)
        print_table(self.title, COLUMNS, rows, notes)
