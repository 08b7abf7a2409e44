"""WHAT A STUDENT'S COUNTEREXAMPLES SHOW: results.json's tests, the console line naming the
student, the drawing; the page (templates/student.html.j2) reads the same record.

Which case gets how many runs is grader.grading.counterexamples; how a size is said (plain, "not
shrunk (N edges, the failing course graph)", or not reproducible on small graphs) is
grader.sweep.counterexample.size_text, shared with the saved file's `#` lines.
"""
from __future__ import annotations

import json
from pathlib import Path

from grader.sweep.counterexample import SMALL_EDGES, Counterexample, edges_text, size_text

RECORD = "counterexamples.json"  # a student's counterexamples, in their folder
TEST_NAME = "Smallest failing graphs"
DRAWN_EDGES = SMALL_EDGES       # larger counterexamples are listed, not drawn
LARGE = ("No smaller failing graph was found, and no edge of this one can go: likely a failure that needs a large "
         "input, such as an array, frontier or queue sized for small graphs, many in-edges, or long paths.")
LARGE_UNFINISHED = "The budget for counterexamples ran out before a small failing graph was found."


def draw(example: Counterexample, folder: Path) -> Path | None:
    """A drawing of a small counterexample (matplotlib's object API, headless, no pyplot: with
    --jobs several students' are drawn at once, in threads): vertices on a circle, vertex 0
    marked as the source, the vertices the program got wrong in red, weights on the edges."""
    graph = example.shrunk.graph
    if graph.edges > DRAWN_EDGES:
        return None
    import math

    from matplotlib.figure import Figure
    from matplotlib.patches import Circle
    n = graph.vertices
    spot = {v: (math.cos(2 * math.pi * v / n + math.pi / 2), math.sin(2 * math.pi * v / n + math.pi / 2))
            for v in range(n)}
    wrong = set(example.differing)
    figure = Figure(figsize=(4.2, 4.2), dpi=100)
    axes = figure.subplots()
    for u, v, w in graph.rows():
        (x0, y0), (x1, y1) = spot[u], spot[v]
        if u == v:
            axes.add_patch(Circle((x0 * 1.12, y0 * 1.12), 0.1, fill=False, color="#555"))
            axes.text(x0 * 1.3, y0 * 1.3, str(w), fontsize=8, ha="center", va="center")
            continue
        axes.annotate("", xy=(x1, y1), xytext=(x0, y0),
                      arrowprops=dict(arrowstyle="-|>", color="#555", shrinkA=11, shrinkB=11, lw=1))
        axes.text((x0 + x1) / 2, (y0 + y1) / 2, str(w), fontsize=8, ha="center", va="center",
                  bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none"))
    for v, (x, y) in spot.items():
        colour = "#d62728" if v in wrong else ("#2ca02c" if v == 0 else "#1f77b4")
        axes.add_patch(Circle((x, y), 0.09, color=colour))
        axes.text(x, y, str(v), color="white", fontsize=9, ha="center", va="center", weight="bold")
    axes.set_xlim(-1.45, 1.45)
    axes.set_ylim(-1.45, 1.45)
    axes.set_aspect("equal")
    axes.axis("off")
    axes.set_title(f"{example.cell.method} -sync {example.cell.sync}: red = wrong", fontsize=9)
    target = folder / f"{example.cell.method}-{example.cell.sync}.png"
    figure.savefig(target, bbox_inches="tight")
    return target


def console_line(student: str, record: dict) -> str:
    """The console's line for a student's counterexamples: sizes, what was rejected, what was not shrunk."""
    parts = [f"{s['method']} {s['sync']}: {size_text(s)}" + (" (flaky)" if s.get("flaky") else "")
             for s in record.get("shrunk", [])]
    parts += [f"{s['method']} {s['sync']}: {edges_text(s['edges'])} (random graph)" for s in record.get("search", [])
              if s.get("found")]
    parts += [f"{r['method']} {r['sync']}: not implemented / rejected: {r['line']}" for r in record.get("rejected", [])]
    unsearched = [k for k in record.get("skipped", []) if k["why"].startswith("random search")]
    parts += [f"{k['method']} {k['sync']}: {k['why']}" for k in record.get("skipped", []) if k not in unsearched]
    if unsearched:
        parts.append(f"random search: {len(unsearched)} right method(s) not searched (no runs left)")
    if not parts:
        return ""
    return f"  {student}: counterexamples ({record.get('runs', 0)} of {record.get('allowance_runs', 0)} runs): " \
        + "; ".join(parts)


def results_tests(folder: Path, program_id: str, visibility: str = "visible", search_points: float = 0.0) -> list[dict]:
    """The Gradescope tests that show a student's counterexamples: one line per shrunk failure
    (no points: correctness is scored by the course graphs), and the random search, worth
    `search_points` (0 by default: a failure found there is a warning)."""
    record = _read(folder / RECORD)
    if record.get("program_id") != program_id:
        return []
    tests = []
    for entry in record.get("shrunk", []):
        tests.append({"name": f"{TEST_NAME}: {entry['method']} -sync {entry['sync']} ({size_text(entry)})",
                      "score": 0.0, "max_score": 0.0, "output": _text(entry), "visibility": visibility})
    for entry in record.get("rejected", []):
        tests.append({"name": f"{TEST_NAME}: {entry['method']} -sync {entry['sync']} (not implemented / rejected)",
                      "score": 0.0, "max_score": 0.0, "visibility": visibility,
                      "output": f"not implemented / rejected: {entry['line']}\nIt fails the same way on a 1-edge graph "
                                "(the same exit status and first line of stderr), so there is no smaller graph to show."})
    for entry in record.get("skipped", []):
        if entry.get("edges") is not None:
            tests.append({"name": f"{TEST_NAME}: {entry['method']} -sync {entry['sync']} ({entry['why']})",
                          "score": 0.0, "max_score": 0.0, "visibility": visibility,
                          "output": f"{entry['why']}: the class's budget for counterexamples ran out before this case."})
    searched = record.get("search", [])
    if searched:
        found = [s for s in searched if s["found"]]
        lines = [f"{s['method']} -sync {s['sync']}: {'WRONG on a random graph' if s['found'] else 'right'} "
                 f"({s['graphs_tried']} graphs tried)" for s in searched]
        lines += ["", *(_text(s) for s in found)]
        if not search_points and found:
            lines.insert(0, "A warning, no points lost: the course's own graphs decide the grade.")
        score = search_points if not found else 0.0
        tests.append({"name": "Random small graphs (trees, DAGs, cycles, zero weights, duplicates, self-loops, "
                              "wide in-degree, unreachable parts)", "score": score, "max_score": search_points,
                      "output": "\n".join(lines).strip(), "visibility": visibility})
    return tests


def _text(entry: dict) -> str:
    how = (f"{size_text(entry)}: out of budget after {entry['runs']} runs ({entry['stopped']})"
           if entry.get("not_shrunk") else
           f"{size_text(entry) + ', ' if entry.get('not_small') else ''}"
           f"shrunk from {entry.get('origin') or 'a failing run'} ({entry['runs']} runs, {entry['stopped']})")
    lines = [f"{entry['method']} -sync {entry['sync']} is {entry['kind']} on this {entry['edges']}-edge, "
             f"{entry['vertices']}-vertex graph, {how}; it failed {entry['failed']} of "
             f"{entry['tried']} runs" + (": sometimes right, likely a race." if entry["flaky"] else
                                         f" ({entry['triage']}): likely a race." if entry.get("race") else "."),
             f"Reproduce: {entry['command'].replace('%INPUT%', Path(entry['file']).name if entry.get('file') else 'graph.txt')}"
             f"   (the file: smallest/{Path(entry['file']).name if entry.get('file') else ''})",
             *([LARGE if str(entry["stopped"]).startswith("1-minimal") else LARGE_UNFINISHED]
               if entry.get("not_small") else []),
             "Edges (src dst weight): " + "; ".join(f"{u} {v} {w}" for u, v, w in entry["edge_list"][:DRAWN_EDGES])
             + (" ..." if entry["edges"] > DRAWN_EDGES else "")]
    if len(entry["expected"]) <= 60:
        differing = set(entry["differing"])
        got = entry.get("got")
        lines.append("vertex: expected / yours")
        for v, want in enumerate(entry["expected"]):
            have = "(no output)" if got is None else (got[v] if v < len(got) else "(missing)")
            lines.append(f"  {v}: {'INF' if want is None else want} / {'INF' if have is None else have}"
                         + ("   <-- differs" if v in differing else ""))
    return "\n".join(lines)


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
