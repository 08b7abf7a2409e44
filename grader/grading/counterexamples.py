"""Counterexamples for a student: each wrong (method, sync) shrunk to the smallest graph its
program gets wrong, and a search of small random graphs for the methods the course graphs found
right. What the student's page and results.json show of them (a drawing, the two distance
columns, the command line) is built here too.

Every run goes through grader.sweep.counterexample (cellrun: the student's own jail, limits and
timeout), judged against the trusted reference.
"""
from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.data.smallgraphs import search_graphs
from grader.sweep.counterexample import (DEFAULT_BUDGET, CandidateRunner, Counterexample, HarnessKilled, isolated,
                                         save, shrink_cell)
from sssp_common.files import write_text_atomically
from grader.sweep.shrink import FAILURE_KINDS, Budget, EdgeList
from sssp_common.vocabulary import SPEC_CONFIGS

DRAWN_EDGES = 40         # larger counterexamples are listed, not drawn


@dataclass
class Settings:
    budget: Budget = field(default_factory=lambda: Budget(DEFAULT_BUDGET.runs, DEFAULT_BUDGET.seconds))  # per case
    search_graphs: int = 20            # random graphs per method the course graphs found right
    tries: int = 3                     # runs of a failing case to tell a race
    confirm: int = 4                   # runs of the final graph to say how often it fails
    share: float = 0.20                # of the student's grading time so far, for the shrinking and the search:
                                       # their hand-over, re-publishing and drawing take the rest of the
                                       # 25 % they may add (the CPU class added 26.7 % at 0.25: BENCHMARKS.md)
    floor_s: float = 0.0               # ... but never less (grading: none, the class's 25 % is the promise;
                                       # a student's own sweep --program: 10 s, a few runs to be worth it)


def failing_cases(rows: list[dict]) -> dict[tuple[str, str], dict]:
    """For each (method, sync) with a wrong answer or a crash among the graded rows, the row to
    shrink from: the smallest graph that failed (fewest vertices, then edges), a wrong answer
    before a crash (the most useful to shrink). Timeouts are not shrunk: every candidate would
    cost a whole timeout."""
    chosen: dict[tuple[str, str], dict] = {}
    preference = {"wrong": 0, "crash": 1}
    for row in rows:
        if row.get("status") not in preference or row.get("rep", 0) < 0:
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


def _flaky_hint(rows: list[dict], method: str, sync: str) -> bool:
    """Mixed verdicts for one (method, sync, graph, configuration, ordering): a race is likely."""
    outcomes: dict[tuple, set] = {}
    for row in rows:
        if row["method"] == method and row["sync"] == sync and row.get("rep", 0) >= 0:
            key = (row["graph"], row["bsize"], row["bcount"], row["ordering"])
            outcomes.setdefault(key, set()).add(row["status"] == "ok")
    return any(len(v) > 1 for v in outcomes.values())


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


# --- in grade: one student's counterexamples, within a share of their grading time --------------

RECORD = "counterexamples.json"
# Kept back from each case's share of the budget, beside its confirming runs (which come after
# the shrinking): saving and drawing the graph (matplotlib). Without any of it a student's work
# ended ~2.4 s past its budget on the H100 (BENCHMARKS.md, issue 29).
DRAW_S = 0.3
UNKNOWN_RUN_S = 0.5      # a candidate's cost when no graded run gave an answer to measure it by
SEARCH_FIRST_EDGES = 256  # a failing course graph larger than this: small random graphs are tried first
TEST_NAME = "Smallest failing graphs"


def candidate_seconds(rows: list[dict]) -> float:
    """What one candidate run costs this program: its fastest graded run that gave an answer (a
    small graph: about a process start, jail included; ~0.4 s for a CUDA program on the H100,
    ~0.03 s for a C one on the CPU). Budgets are counted in these, not in fixed seconds."""
    walls = [row["wall_s"] for row in rows if row.get("status") in ("ok", "wrong") and row.get("wall_s")]
    return min(walls) if walls else UNKNOWN_RUN_S


def for_student(folder: Path, program_id: str, rows: list[dict], cells: list, graphs: dict, runner, provenance: dict,
                spent_s: float, settings: Settings = Settings(), err=None, submit=None) -> dict:
    """`_for_student` in a process of its own: the student's program runs many times here, and one
    that kills its parent must not take the grader with it. `submit` (grade --jobs): hand the work
    to the shared GPU pool as one correctness job, so it is admitted like any correctness run (never
    beside a timing run) on the student's GPU; else a process spawned for it."""
    record_path = folder / RECORD
    previous = _read(record_path)
    if previous.get("program_id") == program_id and previous.get("complete"):
        return previous
    if not failing_cases(rows) and (settings.search_graphs <= 0 or not right_everywhere(rows)):
        record = {"program_id": program_id, "shrunk": [], "search": [], "skipped": [], "seconds": 0.0,
                  "complete": True}        # nothing to shrink or search: no process started
        _write(record_path, record)
        return record
    # the budget runs from now, not from when a worker picks the job up: handing it over (and, with
    # more students than lanes, waiting for one) is part of what the student's counterexamples add
    arguments = dict(folder=folder, program_id=program_id, rows=rows, cells=cells, graphs=graphs, runner=runner,
                     provenance=provenance, spent_s=spent_s, settings=settings, asked_at=time.time())
    try:
        if submit is not None:
            try:
                record = submit(arguments).result()[0]
            except Exception as error:       # its worker died MAX_ATTEMPTS times, or the job failed
                raise HarnessKilled(f"the worker running the candidates failed: {type(error).__name__}: {error}") \
                    from None
        else:
            record = isolated(job, arguments)
    except HarnessKilled as why:
        record = {"program_id": program_id, "shrunk": [], "search": [], "complete": True,
                  "skipped": [{"method": "*", "sync": "*", "why": str(why)}]}
        _write(record_path, record)
    if err is not None and (record["shrunk"] or any(s["found"] for s in record["search"])):
        sizes = ", ".join(f"{s['method']} {s['sync']}: {s['edges']} edges" for s in record["shrunk"] + record["search"]
                          if s.get("edges") is not None)
        print(f"  counterexamples ({record.get('seconds', 0):.1f} s): {sizes}", file=err)
    return record


def job(arguments: dict) -> dict:
    """A pool or process job: one student's counterexamples (the record, a dict like a run's row)."""
    return _for_student(**arguments)


def _for_student(folder: Path, program_id: str, rows: list[dict], cells: list, graphs: dict, runner,
                 provenance: dict, spent_s: float, settings: Settings, asked_at: float | None = None) -> dict:
    """Shrink each failing (method, sync), then search random graphs for the ones found right, all
    within max(floor_s, share x spent_s) seconds of `asked_at` (when for_student was asked, a
    time.time(): the hand-over counts, recorded as handed_over_s), each case an equal share of what is
    left; saved under folder/smallest/ and recorded in folder/counterexamples.json (keyed by the
    program's identity: a regrade of the same build keeps it)."""
    record_path = folder / RECORD
    began = time.monotonic()
    budget_s = max(settings.floor_s, settings.share * spent_s)
    handed_over_s = max(0.0, time.time() - asked_at) if asked_at is not None else 0.0
    target = folder / "smallest"
    record = {"program_id": program_id, "budget_s": round(budget_s, 2), "handed_over_s": round(handed_over_s, 2),
              "shrunk": [], "search": [], "skipped": []}

    def left() -> float:
        return budget_s - handed_over_s - (time.monotonic() - began)

    run_s = candidate_seconds(rows)
    enough = 3 * run_s                            # fewer candidates than this is not worth starting
    finish = settings.confirm * run_s + DRAW_S    # a case's confirming runs and drawing, after its shrinking

    cases = sorted(failing_cases(rows).items())
    for index, ((method, sync), row) in enumerate(cases):
        cell, graph = cell_of(row, cells), graphs.get(row["graph"])
        if cell is None or graph is None:
            continue
        if left() < enough:
            record["skipped"].append({"method": method, "sync": sync, "why": "out of time for counterexamples"})
            continue
        share = max(enough, left() / (len(cases) - index) - finish)
        case_end = time.monotonic() + share
        example = None
        if settings.search_graphs > 0 and (row.get("graph_edges") or 0) > SEARCH_FIRST_EDGES:
            # a small random graph that fails the same way is a far better start than a course graph
            # of thousands of edges, whose candidates are slow and many: a third of the case looks
            search_end = time.monotonic() + share / 3
            example, _ = _search_within(cell, runner, provenance, settings, lambda: search_end - time.monotonic(),
                                        enough, kinds=(row["status"],), shrink_left=lambda: case_end - time.monotonic())
            if example is not None:
                example.origin = f"a random small graph ({row['graph']}, which failed too, is larger)"
        if example is None:
            seconds = max(enough, min(settings.budget.seconds, case_end - time.monotonic()))
            example = shrink_cell(cell, runner, provenance, graph.ordered[cell.ordering], row["status"],
                                  budget=Budget(runs=settings.budget.runs, seconds=seconds),
                                  tries=settings.tries if _flaky_hint(rows, method, sync) else 1, confirm=settings.confirm)
            example.origin = f"{row['graph']} ({row.get('graph_vertices')} vertices, {row.get('graph_edges')} edges)"
        save(example, target)
        picture = draw(example, target)
        record["shrunk"].append({**example.summary(), "picture": picture.name if picture else None})
    right = sorted(right_everywhere(rows)) if settings.search_graphs > 0 else []
    for index, (method, sync) in enumerate(right):
        template = next((c for c in cells if c.method == method and c.sync == sync and c.rep >= 0), None)
        if template is None:
            continue
        if left() < enough:
            record["skipped"].append({"method": method, "sync": sync, "why": "random search: out of time"})
            continue
        # the confirming runs come only after a failure is found (rare): keep back the drawing alone
        until = time.monotonic() + max(2 * enough, left() / (len(right) - index) - DRAW_S)
        example, tried = _search_within(template, runner, provenance, settings, lambda: until - time.monotonic(),
                                        enough)
        entry = {"method": method, "sync": sync, "graphs_tried": tried, "found": example is not None}
        if example is not None:
            example.origin = "a random small graph (every course graph was right)"
            save(example, target)
            picture = draw(example, target)
            entry.update(example.summary(), picture=picture.name if picture else None)
        record["search"].append(entry)
    record.update(seconds=round(time.monotonic() - began, 2), complete=not record["skipped"])
    _write(record_path, record)
    return record


def _search_within(template, runner_settings, provenance: dict, settings: Settings, left, enough: float,
                   kinds=FAILURE_KINDS, shrink_left=None) -> tuple:
    """(the shrunk counterexample or None, graphs tried): small random graphs at the spec's
    configurations while left() allows, the first that fails in one of `kinds` shrunk within
    shrink_left() (default left())."""
    shrink_left = shrink_left or left
    runner = CandidateRunner(template, runner_settings, provenance)
    tried = 0
    try:
        for index, (name, edges) in enumerate(search_graphs(settings.search_graphs)):
            if left() < enough:
                break
            bsize, bcount = SPEC_CONFIGS[index % len(SPEC_CONFIGS)]
            runner.cell = dataclasses.replace(template, bsize=bsize, bcount=bcount, rep=0, graph=name)
            graph = EdgeList.of(edges)
            status = runner(graph)
            tried += 1
            if status in kinds:
                path = runner.write(graph)
                try:
                    case = Budget(runs=settings.budget.runs,
                                  seconds=max(enough, min(settings.budget.seconds, shrink_left())))
                    return shrink_cell(runner.cell, runner_settings, provenance, path, status, budget=case,
                                       tries=1, confirm=settings.confirm), tried
                finally:
                    path.unlink(missing_ok=True)
    finally:
        runner.close()
    return None, tried


def results_tests(folder: Path, program_id: str, visibility: str = "visible", search_points: float = 0.0) -> list[dict]:
    """The Gradescope tests that show a student's counterexamples: one line per shrunk failure
    (no points: correctness is scored by the course graphs), and the random search, worth
    `search_points` (0 by default: a failure found there is a warning)."""
    record = _read(folder / RECORD)
    if record.get("program_id") != program_id:
        return []
    tests = []
    for entry in record.get("shrunk", []):
        tests.append({"name": f"{TEST_NAME}: {entry['method']} -sync {entry['sync']} ({entry['edges']} edges)",
                      "score": 0.0, "max_score": 0.0, "output": _text(entry), "visibility": visibility})
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
    lines = [f"{entry['method']} -sync {entry['sync']} is {entry['kind']} on this {entry['edges']}-edge, "
             f"{entry['vertices']}-vertex graph, shrunk from {entry.get('origin') or 'a failing run'} "
             f"({entry['runs']} runs, {entry['seconds']:.1f} s, {entry['stopped']}); it failed {entry['failed']} of "
             f"{entry['tried']} runs" + (": sometimes right, likely a race." if entry["flaky"] else "."),
             f"Reproduce: {entry['command'].replace('%INPUT%', Path(entry['file']).name if entry.get('file') else 'graph.txt')}"
             f"   (the file: smallest/{Path(entry['file']).name if entry.get('file') else ''})",
             "Edges (src dst weight): " + "; ".join(f"{u} {v} {w}" for u, v, w in entry["edge_list"][:40])
             + (" ..." if entry["edges"] > 40 else "")]
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


def _write(path: Path, data: dict) -> None:
    write_text_atomically(path, json.dumps(data, indent=1, default=str))
