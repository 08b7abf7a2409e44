"""Issue 40's bounds, judged on the fresh ``./sssp`` processes of the versus table (pure).

Each graph's fresh figures are medians over the same processes whose printed time is the
table's opt column (``versus.fresh_opt``): the wall measured outside the process (start to
exit, what ``time ./sssp`` says; it includes the interpreter's start and exit, so it is never
below the program's own ``wall:`` total), and the setup stage of the ``wall:`` line. Bounds:

- a grid's setup <= 0.2 s and its wall <= 0.9 s (both 700² grids, the tiling cached);
- the road stand-in's printed time <= 1.0 ms (the stretch goal);
- issue 13's end-to-end wall, for opt as these processes run it (bsize 1024): <= 1.0 s on the
  road stand-in, <= 2.0 s on the LiveJournal stand-in (``benchmarks.wall`` judges every method
  at (512,4), when its table is not cut short for time).

They are stated for issue 13's full-size graphs: at any other scale a line says so and
never "met". A graph without the figure (row skipped, no process printed it) is unknown,
and the bound cannot be met while one is.
"""
from __future__ import annotations

from .wall import GOALS_S as STANDIN_WALL_GOALS_S  # issue 13's wall goals: one place

GRID_KEYS = ("grid-w", "grid-u")
GRID_SETUP_GOAL_S, GRID_WALL_GOAL_S, ROAD_PRINTED_GOAL_MS = 0.2, 0.9, 1.0
STANDIN_NAMES = {"road": "road stand-in", "lj": "LiveJournal stand-in"}


def at_most(head: str, goal: float, unit: str, rows: list[tuple[str, float | None, str]], scale: str = "full") -> str:
    """``<head> <= <goal> <unit>: met on ... | missed on ... | unknown ...`` over ``rows``
    (graph label, value or None, why there is none)."""
    text = f"{head} <= {goal:g} {unit}"
    if not rows:
        return f"{text}: unknown (no graph measured)"
    shown = [f"{label} {_value(value, unit)}" for label, value, _ in rows if value is not None]
    if scale != "full":
        return f"{text}: applies at full scale only" + (f" (this run: {', '.join(shown)})" if shown else "")
    missed = [f"{label} ({_value(value, unit)}, {value / goal:.2f}x the bound)"
              for label, value, _ in rows if value is not None and value > goal]
    unknown = [f"{label} ({why or 'not measured'})" for label, value, why in rows if value is None]
    if missed:
        return f"{text}: missed on " + ", ".join(missed) + (f"; unknown on {', '.join(unknown)}" if unknown else "")
    if unknown:
        met = len(rows) - len(unknown)
        return f"{text}: unknown on {', '.join(unknown)}" + (f"; met on the other {met} ({', '.join(shown)})"
                                                             if met else "")
    return f"{text}: met on every graph ({len(rows)} of {len(rows)}: {', '.join(shown)})"


def lines(scale: str, rows: list[tuple[str, str, dict | None]]) -> list[str]:
    """The five lines over the versus table's rows: (graph key, label, its ``fresh_opt``
    figures, or None when the row was not measured)."""
    def figure(key_set, field, why_none):
        return [(label, (fresh or {}).get(field), why_none if fresh is not None else "row not measured")
                for key, label, fresh in rows if key in key_set]

    return [
        at_most("grid setup (fresh ./sssp, the `wall:` line's setup, median)", GRID_SETUP_GOAL_S, "s",
                figure(GRID_KEYS, "setup_s", "no `wall:` line printed"), scale),
        at_most("grid wall (fresh ./sssp, measured outside the process, median)", GRID_WALL_GOAL_S, "s",
                figure(GRID_KEYS, "process_wall_s", "no process finished"), scale),
        at_most("road stand-in printed (fresh ./sssp, median)", ROAD_PRINTED_GOAL_MS, "ms",
                figure(("road",), "ms", "no process printed a time"), scale),
    ] + [at_most(f"{STANDIN_NAMES[key]} wall, opt (fresh ./sssp, measured outside the process, median)", goal, "s",
                 figure((key,), "process_wall_s", "no process finished"), scale)
         for key, goal in STANDIN_WALL_GOALS_S.items()]


def _value(value: float, unit: str) -> str:
    return f"{value:.3f} {unit}"
