"""Counterexamples for a student: each wrong (method, sync) shrunk to the smallest graph its
program gets wrong, and a search of small random graphs for the methods the course graphs found
right. What the student's page and results.json show of them (a drawing, the two distance
columns, the command line) is built here too.

Every run goes through grader.sweep.counterexample (cellrun: the student's own jail, limits and
timeout), judged against the trusted reference.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from grader.data.smallgraphs import search_graphs
from grader.sweep.counterexample import DEFAULT_BUDGET, CandidateRunner, Counterexample, save, shrink_cell
from grader.sweep.shrink import FAILURE_KINDS, Budget, EdgeList
from sssp_common.vocabulary import SPEC_CONFIGS

DRAWN_EDGES = 40         # larger counterexamples are listed, not drawn


@dataclass
class Settings:
    budget: Budget = field(default_factory=lambda: Budget(DEFAULT_BUDGET.runs, DEFAULT_BUDGET.seconds))  # per case
    search_graphs: int = 20            # random graphs per method the course graphs found right
    tries: int = 3                     # runs of a failing case to tell a race
    confirm: int = 4                   # runs of the final graph to say how often it fails
    search_counts: bool = False        # a rubric option: a search failure costs points


def failing_cases(rows: list[dict]) -> dict[tuple[str, str], dict]:
    """For each (method, sync) with a failure among the graded rows, the row to shrink from: the
    smallest graph that failed (fewest vertices, then edges), a wrong answer before a crash or a
    timeout (a wrong answer is the most useful to shrink)."""
    chosen: dict[tuple[str, str], dict] = {}
    preference = {"wrong": 0, "crash": 1, "timeout": 2}
    for row in rows:
        if row.get("status") not in FAILURE_KINDS or row.get("rep", 0) < 0:
            continue
        key = (row["method"], row["sync"])
        rank = (preference[row["status"]], row.get("graph_vertices") or 0, row.get("graph_edges") or 0)
        if key not in chosen or rank < chosen[key][0]:
            chosen[key] = (rank, row)
    return {key: row for key, (_, row) in chosen.items()}


def right_everywhere(rows: list[dict]) -> set[tuple[str, str]]:
    """(method, sync) pairs whose every graded run was right."""
    seen: dict[tuple[str, str], bool] = {}
    for row in rows:
        if row.get("rep", 0) < 0:
            continue
        key = (row["method"], row["sync"])
        seen[key] = seen.get(key, True) and row.get("status") == "ok"
    return {key for key, ok in seen.items() if ok}


def cell_of(row: dict, cells: list):
    """The graded cell a row came from (its run id)."""
    for cell in cells:
        if cell.run_id == row["run_id"]:
            return cell
    return None


def shrink_student(rows: list[dict], cells: list, graphs: dict, sweep, provenance: dict, folder: Path,
                   settings: Settings = Settings(), err=None) -> list[Counterexample]:
    """Shrink each failing (method, sync); save DIR/<student>/smallest/<method>-<sync>.txt (+ .png)."""
    found = []
    for (method, sync), row in sorted(failing_cases(rows).items()):
        cell = cell_of(row, cells)
        graph = graphs.get(row["graph"])
        if cell is None or graph is None:
            continue
        failing_input = graph.ordered[cell.ordering]
        example = shrink_cell(cell, sweep, provenance, failing_input, row["status"], budget=settings.budget,
                              tries=settings.tries if _flaky_hint(rows, method, sync) else 1,
                              confirm=settings.confirm)
        example.origin = f"{row['graph']} ({row.get('graph_vertices')} vertices)"
        save(example, folder)
        draw(example, folder)
        found.append(example)
        if err is not None:
            print(f"  {method} {sync}: {row['status']} on {row['graph']} -> {example.shrunk.graph.edges} edges "
                  f"({example.shrunk.runs} runs, {example.shrunk.seconds:.1f} s, {example.shrunk.stopped})",
                  file=err)
    return found


def _flaky_hint(rows: list[dict], method: str, sync: str) -> bool:
    """Mixed verdicts for one (method, sync, graph, configuration, ordering): a race is likely."""
    outcomes: dict[tuple, set] = {}
    for row in rows:
        if row["method"] == method and row["sync"] == sync and row.get("rep", 0) >= 0:
            key = (row["graph"], row["bsize"], row["bcount"], row["ordering"])
            outcomes.setdefault(key, set()).add(row["status"] == "ok")
    return any(len(v) > 1 for v in outcomes.values())


def search_student(rows: list[dict], cells: list, sweep, provenance: dict, folder: Path,
                   settings: Settings = Settings(), err=None) -> list[Counterexample]:
    """For each (method, sync) right on every course graph: `settings.search_graphs` small random
    graphs, each at one of the spec's five configurations in turn; the first failure is shrunk and
    saved (as a warning unless the rubric counts it)."""
    found = []
    for method, sync in sorted(right_everywhere(rows)):
        template = next((c for c in cells if c.method == method and c.sync == sync and c.rep >= 0), None)
        if template is None:
            continue
        example = _search_one(template, sweep, provenance, settings)
        if example is None:
            continue
        example.origin = "a random graph (the course graphs were all right)"
        save(example, folder)
        draw(example, folder)
        found.append(example)
        if err is not None:
            print(f"  {method} {sync}: wrong on {example.origin}: {example.shrunk.graph.edges} edges", file=err)
    return found


def _search_one(template, sweep, provenance: dict, settings: Settings) -> Counterexample | None:
    runner = CandidateRunner(template, sweep, provenance)
    try:
        for index, (name, edges) in enumerate(search_graphs(settings.search_graphs)):
            bsize, bcount = SPEC_CONFIGS[index % len(SPEC_CONFIGS)]
            runner.cell = dataclasses.replace(template, bsize=bsize, bcount=bcount, rep=0, graph=name)
            graph = EdgeList.of(edges)
            status = runner(graph)
            if status in FAILURE_KINDS:
                path = runner.write(graph)
                try:
                    return shrink_cell(runner.cell, sweep, provenance, path, status, budget=settings.budget,
                                       tries=1, confirm=settings.confirm)
                finally:
                    path.unlink(missing_ok=True)
    finally:
        runner.close()
    return None


def draw(example: Counterexample, folder: Path) -> Path | None:
    """A drawing of a small counterexample (matplotlib, headless): vertices on a circle, vertex 0
    marked as the source, the vertices the program got wrong in red, weights on the edges."""
    graph = example.shrunk.graph
    if graph.edges > DRAWN_EDGES:
        return None
    import math

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    n = graph.vertices
    spot = {v: (math.cos(2 * math.pi * v / n + math.pi / 2), math.sin(2 * math.pi * v / n + math.pi / 2))
            for v in range(n)}
    wrong = set(example.differing)
    figure, axes = plt.subplots(figsize=(4.2, 4.2), dpi=100)
    for u, v, w in graph.rows():
        (x0, y0), (x1, y1) = spot[u], spot[v]
        if u == v:
            axes.add_patch(plt.Circle((x0 * 1.12, y0 * 1.12), 0.1, fill=False, color="#555"))
            axes.text(x0 * 1.3, y0 * 1.3, str(w), fontsize=8, ha="center", va="center")
            continue
        axes.annotate("", xy=(x1, y1), xytext=(x0, y0),
                      arrowprops=dict(arrowstyle="-|>", color="#555", shrinkA=11, shrinkB=11, lw=1))
        axes.text((x0 + x1) / 2, (y0 + y1) / 2, str(w), fontsize=8, ha="center", va="center",
                  bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none"))
    for v, (x, y) in spot.items():
        colour = "#d62728" if v in wrong else ("#2ca02c" if v == 0 else "#1f77b4")
        axes.add_patch(plt.Circle((x, y), 0.09, color=colour))
        axes.text(x, y, str(v), color="white", fontsize=9, ha="center", va="center", weight="bold")
    axes.set_xlim(-1.45, 1.45)
    axes.set_ylim(-1.45, 1.45)
    axes.set_aspect("equal")
    axes.axis("off")
    axes.set_title(f"{example.cell.method} -sync {example.cell.sync}: red = wrong", fontsize=9)
    target = folder / f"{example.cell.method}-{example.cell.sync}.png"
    figure.savefig(target, bbox_inches="tight")
    plt.close(figure)
    return target


def feedback_text(example: Counterexample) -> str:
    """The student's view: what failed, the command, and the distances side by side."""
    shrunk = example.shrunk
    lines = [f"Your {example.cell.method} -sync {example.cell.sync} is {shrunk.kind} on this "
             f"{shrunk.graph.edges}-edge graph (found from {example.origin or 'a failing run'}); "
             f"it failed {shrunk.failed} of {shrunk.tried} runs"
             + (": sometimes right, likely a race." if shrunk.flaky else "."),
             f"Reproduce: {example.command.replace('%INPUT%', Path(example.path).name if example.path else '%INPUT%')}",
             "Edges (src dst weight): " + ", ".join(f"{u} {v} {w}" for u, v, w in shrunk.graph.rows()[:40])
             + (" ..." if shrunk.graph.edges > 40 else "")]
    if example.got is not None and len(example.expected) <= 60:
        lines.append("vertex: expected / yours")
        for v, want in enumerate(example.expected):
            have = example.got[v] if v < len(example.got) else "(missing)"
            lines.append(f"  {v}: {'INF' if want is None else want} / {'INF' if have is None else have}"
                         + ("   <-- differs" if v in set(example.differing) else ""))
    return "\n".join(lines)
