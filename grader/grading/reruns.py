"""`[grading] reruns`: which of the matrix's runs a verdict needs.

- "all" (the default): every cell of the spec's matrix is run.
- "first-right": a (graph, method, sync, ordering, rep) right at its first configuration (bsize x
  bcount, the matrix's first) is not run at its other configurations; one not right there is run
  at all of them. Allowed only with a rubric that scores each such setting once, right when right
  at any configuration (rubric `correctness.configurations = "any"`): then a skipped run could
  not change any score (rubric.once_per_setting takes the first right run), and grading with and
  without it gives the same scores. A rubric that scores every configuration's run is refused
  (config.load_grading), so no run a score needs is ever dropped.

What was skipped, and why, goes into the student's results.json (`skipped_runs`); the runs file
holds no row for a skipped run, so a later grade with "all" runs it. Pure: cells and rows in.
"""
from __future__ import annotations

from grader.grading.rubric import setting

RULES = ("all", "first-right")
WHY = {"first-right": "right at the first configuration; the rubric counts each graph, method, sync and "
                      "ordering once (correctness.configurations = \"any\"), so other configurations cannot change a score"}


class Plan:
    """Which of a student's cells to run now, which once a first configuration's row is in, and
    which were skipped. cells: every cell of the matrix (in its order); todo: those to run;
    rows: run id -> rows already had."""

    def __init__(self, rule: str, cells: list, todo: list, rows: dict):
        self.rule = rule
        self._skipped: list = []
        self._waiting: dict[str, list] = {}      # first cell's run id -> its setting's other cells to run
        if rule != "first-right":
            self.now = list(todo)
            return
        wanted = {c.run_id for c in todo}
        groups: dict[tuple, list] = {}
        for cell in cells:
            groups.setdefault(setting(cell), []).append(cell)
        self.now = []
        for first, *others in groups.values():
            others = [c for c in others if c.run_id in wanted]
            if first.run_id in wanted:
                self.now.append(first)
                if others:
                    self._waiting[first.run_id] = others
            elif first.run_id in rows and rows[first.run_id].get("status") == "ok":
                self._skipped += others
            else:
                self.now += others

    @property
    def pending(self) -> list:
        """Every cell that may still run: now, or once its first configuration's row is in."""
        return self.now + [c for others in self._waiting.values() for c in others]

    def after(self, cell, row: dict) -> list:
        """The cells to run now that this cell's row is final."""
        others = self._waiting.pop(cell.run_id, [])
        if others and row.get("status") == "ok":
            self._skipped += others
            return []
        return others

    def skipped(self) -> dict | None:
        """For results.json: the rule, why, and each skipped run (None when none was)."""
        if not self._skipped:
            return None
        return {"rule": self.rule, "why": WHY[self.rule], "count": len(self._skipped),
                "runs": [c.label for c in self._skipped]}
