"""A STUDENT'S COUNTEREXAMPLES: which of their failing cases get how many candidate runs, and the
record (counterexamples.json, smallest/) that results.json, the page and the console show
(grader.grading.counterexample_pages: the words, the drawing).

Neither the reduction (grader.sweep.shrink, pure) nor the running of candidates (grader.sweep.
counterexample: cellrun in the student's own jail, triage, the random search) lives here.

Budgets are candidate runs, never seconds, so a class gets the same counterexamples on any machine:
the class's runs are `share` x its graded runs (measured so that the whole adds at most 25 % to the
class's grading: BENCHMARKS.md), shared out by `share_runs` (a student with nothing to shrink leaves
their share to the others). A small class is not starved: its shrinking gets at least what lets
each failing case be looked at and each student's first case shrunk (`least`, the class's total
capped at `floor_runs`), a fixed cost in runs that a class of five at the course's config already
exceeds, so real classes keep the 25 %; the floor buys no random search. A student's cases are taken
by points at stake (the spec's methods before opt, which is extra credit), each capped at
`budget.runs` and none starved below LEAST_CASE_RUNS by the runs kept for the cases after it;
what a case leaves goes to the next, and what the cases leave to the random search of the methods
the course graphs found right. A seconds ceiling stays as a safety stop, and says so. A case the
budget did not reach is said to be "not shrunk (N edges, the failing course graph)".
"""
from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.grading.counterexample_pages import RECORD, console_line, draw, results_tests  # noqa: F401 (the API)
from grader.sweep.counterexample import (ONE_EDGE, CandidateRunner, HarnessKilled, Triage, candidate_job, confirmed,
                                         edge_list_of, example_of, first_stderr_line, isolated, not_shrunk_text, rerun,
                                         save, search, shrink_case, size_text, triage, try_known)
from grader.sweep.check import differing_in
from grader.sweep.shrink import START_TRIES, Budget, Shrunk
from sssp_common.files import write_text_atomically

CASE_RUNS = 200          # candidate runs one case may take (the cap; what it leaves goes on)
SAFETY_S = 120.0         # seconds one case may take: a safety stop only, recorded as such
TRIAGE_RUNS = 4          # the 1-edge run and three of the original cell
RESERVE_PER_CASE = 3     # kept for each later case: its 1-edge run, one earlier counterexample and its confirming run
RUNS_PER_GRADED_RUN = 0.15  # the class's candidate runs per graded run (CPU class of four: +20.7 % CPU time, median of 5 pairs)
LEAST_CASE_RUNS = TRIAGE_RUNS + 4  # a case's triage and four candidates (the starting points, the cone): a
                         # deterministic bug's first shrink (the example class's wrong: 76 edges to 13 in 2 candidates)
CLASS_FLOOR_RUNS = 96    # at most this many runs for a small class's shrinking whatever its share (a class of five
                         # at the course's config has 650 graded runs: 98 by its share, so the floor never binds there)


@dataclass
class Settings:
    budget: Budget = field(default_factory=lambda: Budget(CASE_RUNS, SAFETY_S))  # per case: runs; seconds: safety
    search_graphs: int = 20            # random graphs per method the course graphs found right
    tries: int = 3                     # runs of each candidate of a flaky case
    confirm: int = 6                   # runs of a flaky case's final graph to say how often it fails (a race
                                       # wrong one run in two fails all 6, looking steady, once in 64)
    share: float = RUNS_PER_GRADED_RUN  # the class's candidate runs per graded run
    floor_runs: int = CLASS_FLOOR_RUNS  # a small class's shrinking: up to this many runs (0: its share alone)
    floor_s: float = 0.0               # > 0: a student's own sweep (no class to share with): every case its cap


@dataclass
class Allowance:
    """A student's part of the class's candidate runs, and how many may run at once."""
    runs: int
    jobs: int = 1


def ordered_cases(rows: list[dict]) -> list[tuple[tuple[str, str], dict]]:
    """The failing cases by points at stake: the spec's methods before opt (extra credit)."""
    return sorted(failing_cases(rows).items(), key=lambda item: (item[0][0] == "opt", item[0]))


def demand(rows: list[dict], settings: Settings) -> dict:
    """What a student could use: their graded runs (the class's budget grows with them), the runs
    their failing cases could take at most, and their random search's."""
    cases = failing_cases(rows)
    rejected = sum(1 for method, sync in cases if looks_rejected(rows, method, sync))
    right = len(right_everywhere(rows)) if settings.search_graphs > 0 else 0
    examined = len(cases) - rejected
    return {"graded": sum(1 for row in rows if row.get("rep", 0) >= 0),
            "shrink": rejected + examined * (TRIAGE_RUNS + settings.budget.runs + settings.confirm),
            "least": rejected + (LEAST_CASE_RUNS + RESERVE_PER_CASE * (examined - 1) if examined else 0),
            "search": right * settings.search_graphs, "share": settings.share, "floor": settings.floor_runs}


def looks_rejected(rows: list[dict], method: str, sync: str) -> bool:
    """Every graded run of (method, sync) crashed the same way (exit status, first stderr line): the
    program likely rejects it, and its triage will take one run, so it asks for one."""
    seen = {(row.get("exit_code"), first_stderr_line(row.get("detail", ""))) if row.get("status") == "crash" else None
            for row in rows if row.get("method") == method and row.get("sync") == sync and row.get("rep", 0) >= 0}
    return len(seen) == 1 and None not in seen


def share_runs(demands: dict[str, dict]) -> dict[str, int]:
    """Each student's candidate runs out of the class's (share x graded runs): an equal share to
    each student who can use it, what one cannot use (nothing to shrink, or less than a share)
    going to the others; the shrinking first, the random search from what is left. A small class's
    shrinking gets at least the students' `least` (each case looked at, each first case shrunk a
    little), at most `floor` runs in all: a fixed cost in runs, never reached by a real class's
    share, and never spent on the random search. Pure and deterministic: the same class gets the
    same runs."""
    pot = int(round(sum(d["share"] * d["graded"] for d in demands.values())))
    floor = min(max((d.get("floor", 0) for d in demands.values()), default=0),
                sum(d.get("least", 0) for d in demands.values()))
    given = _fill(max(pot, floor), {student: d["shrink"] for student, d in demands.items()})
    left = max(0, pot - sum(given.values()))
    searched = _fill(left, {student: d["search"] for student, d in demands.items()})
    return {student: given[student] + searched[student] for student in demands}


def _fill(pot: int, wants: dict[str, int]) -> dict[str, int]:
    """Water-filling: equal shares of `pot`, no one above what they want, the rest shared again."""
    given = {student: 0 for student in wants}
    active = sorted(s for s, w in wants.items() if w > 0)
    while pot > 0 and active:
        each = pot // len(active)
        if each == 0:                        # fewer runs than students: one each, in name order
            for student in active[:pot]:
                given[student] += 1
            break
        for student in active:
            more = min(each, wants[student] - given[student])
            given[student] += more
            pot -= more
        active = [s for s in active if given[s] < wants[s]]
    return given


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


def _flaky_hint(rows: list[dict], method: str, sync: str) -> str:
    """The first (graph, ordering) on which one (method, sync) was both right and wrong in the
    graded runs, whatever the block size and count ("" when none): a race is likely, so the case
    gets the race treatment (each candidate tried several times). A program whose answer really
    depends on the block size pays more runs, never a wrong word: the final graph is called
    "sometimes right" only when it was seen both failing and not."""
    outcomes: dict[tuple, set] = {}
    for row in rows:
        if row["method"] == method and row["sync"] == sync and row.get("rep", 0) >= 0:
            outcomes.setdefault((row["graph"], row["ordering"]), set()).add(row["status"] == "ok")
    return next((f"{graph} ({ordering} order)" for (graph, ordering), seen in outcomes.items() if len(seen) > 1), "")


# --- in grade: one student's counterexamples, within their part of the class's runs -----------



def for_student(folder: Path, program_id: str, rows: list[dict], cells: list, graphs: dict, runner, provenance: dict,
                allowance, settings: Settings = Settings(), err=None, submit=None) -> dict:
    """One student's counterexamples within `allowance` (an Allowance: their part of the class's
    runs; a number of seconds from a student's own sweep: no class to share with, so every case
    gets its whole cap). `submit` (grade --jobs): each candidate one correctness job of the shared
    pool, `allowance.jobs` at once; else the whole in a process of its own (a program that kills
    its parent must not take the grader with it)."""
    record_path = folder / RECORD
    previous = _read(record_path)
    if previous.get("program_id") == program_id and previous.get("complete"):
        return previous
    if not isinstance(allowance, Allowance):
        allowance = Allowance(runs=demand(rows, settings)["shrink"])
    if not failing_cases(rows) and (settings.search_graphs <= 0 or not right_everywhere(rows)):
        record = {"program_id": program_id, "allowance_runs": allowance.runs, "runs": 0, "shrunk": [], "search": [],
                  "rejected": [], "skipped": [], "complete": True}   # nothing to shrink or search: nothing started
        _write(record_path, record)
        return record
    arguments = dict(folder=folder, program_id=program_id, rows=rows, cells=cells, graphs=graphs, runner=runner,
                     provenance=provenance, allowance=allowance, settings=settings, submit=submit)
    try:
        record = _for_student(**arguments) if submit is not None else isolated(_student_job, arguments)
    except HarnessKilled as why:
        record = {"program_id": program_id, "allowance_runs": allowance.runs, "shrunk": [], "search": [],
                  "rejected": [], "complete": True, "skipped": [{"method": "*", "sync": "*", "why": str(why)}]}
        _write(record_path, record)
    except Exception as error:   # noqa: BLE001 - one student's counterexamples never stop the class
        said = " ".join(str(error).split())[:300]
        record = {"program_id": program_id, "allowance_runs": allowance.runs, "shrunk": [], "search": [],
                  "rejected": [], "complete": False, "skipped": [{"method": "*", "sync": "*", "why":
                  f"counterexamples stopped by a grader error ({type(error).__name__}: {said})"}]}
        _write(record_path, record)
    if err is not None:
        said = console_line(folder.name, record)
        if said:
            print(said, file=err)
    return record


def _student_job(arguments: dict) -> dict:
    """A process job (no pool): one student's counterexamples (the record)."""
    return _for_student(**arguments)


job = candidate_job     # the shared pool's job (grade --jobs): one candidate run in a worker's own jail


def _for_student(folder: Path, program_id: str, rows: list[dict], cells: list, graphs: dict, runner,
                 provenance: dict, allowance: Allowance, settings: Settings, submit=None) -> dict:
    """Each failing (method, sync) by points at stake: triage, then shrunk within min(its cap, what
    is left); then the random search for the ones found right with what the cases left. Saved under
    folder/smallest/ and recorded in folder/counterexamples.json (keyed by the program's identity:
    a regrade of the same build keeps it)."""
    target = folder / "smallest"
    began = time.monotonic()
    record = {"program_id": program_id, "allowance_runs": allowance.runs, "runs": 0, "shrunk": [], "search": [],
              "rejected": [], "skipped": []}
    left = allowance.runs
    known: list = []            # this student's counterexamples so far: tried first on the next case
    racy = False                # a case of this program was flaky: its later cases get the race treatment too
    cases = ordered_cases(rows)
    for index, ((method, sync), row) in enumerate(cases):
        cell, graph = cell_of(row, cells), graphs.get(row["graph"])
        if cell is None or graph is None:
            continue
        edges = row.get("graph_edges") or 0
        if left < 1:             # not even the 1-edge run
            record["skipped"].append({"method": method, "sync": sync, "edges": edges, "why": not_shrunk_text(edges)})
            continue
        candidates = CandidateRunner(cell, runner, provenance, submit=submit, jobs=allowance.jobs)
        try:
            # the cases after this one keep the runs of their cheapest look (the 1-edge graph and this
            # student's counterexample so far): a first case must not take every run
            # (but never below LEAST_CASE_RUNS: a case shrunk is worth more than the later cases' 1-edge runs)
            reserve = sum(1 if looks_rejected(rows, *later) else RESERVE_PER_CASE for later, _ in cases[index + 1:])
            result, got, detail, said, spent = _one_case(candidates, graph.ordered[cell.ordering], row, rows, settings,
                                                         max(left - reserve, min(left, LEAST_CASE_RUNS)), known, racy)
        finally:
            candidates.close()
        left -= spent
        record["runs"] += spent
        if said.verdict == "rejected":
            record["rejected"].append({"method": method, "sync": sync, "line": said.line, "runs": said.runs})
            continue
        if result is None:       # out of budget before the shrinking could start
            record["skipped"].append({"method": method, "sync": sync, "edges": edges, "why": not_shrunk_text(edges)})
            continue
        example = example_of(cell, runner, result, got, detail)
        example.origin = f"{row['graph']} ({row.get('graph_vertices')} vertices, {edges} edges)"
        example.origin_edges = edges
        example.triage = (f"flaky: {said.line}" if said.line else
                          f"flaky: failed {said.failed} of {said.tried} re-runs of the course graph") \
            if said.verdict == "flaky" else said.verdict
        racy = racy or example.shrunk.flaky or said.verdict.startswith("flaky")
        save(example, target)
        picture = draw(example, target)
        summary = example.summary()
        record["shrunk"].append({**summary, "size_said": size_text(summary), "picture": picture.name if picture else None,
                                 "case_runs": spent})
        known.append((f"the counterexample of {method} -sync {sync}", result.graph))
    right = sorted(right_everywhere(rows)) if settings.search_graphs > 0 else []
    for index, (method, sync) in enumerate(right):
        template = next((c for c in cells if c.method == method and c.sync == sync and c.rep >= 0), None)
        if template is None:
            continue
        count = min(settings.search_graphs, left // (len(right) - index))
        if count <= 0:
            record["skipped"].append({"method": method, "sync": sync, "why": "random search: out of budget"})
            continue
        found, graph, outcome, tried = search(template, runner, provenance, count, submit=submit, jobs=allowance.jobs)
        left -= tried
        record["runs"] += tried
        entry = {"method": method, "sync": sync, "graphs_tried": tried, "found": found is not None}
        if found is not None:
            try:
                result, got, detail = shrink_case(found, graph, outcome["status"], wrong=outcome.get("wrong"),
                                                  budget=Budget(runs=max(1, min(settings.budget.runs, left - 1)),
                                                                seconds=settings.budget.seconds))
            finally:
                found.close()
            left -= result.runs
            record["runs"] += result.runs
            example = example_of(found.cell, runner, result, got, detail)
            example.origin = "a random small graph (every course graph was right)"
            save(example, target)
            picture = draw(example, target)
            entry.update(example.summary(), picture=picture.name if picture else None)
            entry["size_said"] = size_text(entry)
        record["search"].append(entry)
    record.update(complete=not record["skipped"], seconds=round(time.monotonic() - began, 2))   # said, never a budget
    _write(folder / RECORD, record)
    return record


def _one_case(candidates: CandidateRunner, path: Path, row: dict, rows: list[dict], settings: Settings, left: int,
              known: list, racy: bool = False) -> tuple:
    """(result, printed, verdict line, triage, runs charged) of one failing case within `left` runs:
    the 1-edge run (triage); the student's other counterexamples; three re-runs of the course graph
    (flaky?); then the shrinking from the subgraphs around the nearest wrong vertex."""
    kind = row["status"]
    said = triage(candidates, row)
    spent = 1
    if said is not None and said.verdict == "rejected":
        return None, None, "", said, spent
    if said is not None:                                 # the 1-edge graph shows it: nothing smaller exists
        result, got, detail = confirmed(candidates, Shrunk(graph=ONE_EDGE, kind=kind, failed=1, tried=1, runs=0,
                                                           seconds=0.0, stopped="1-minimal: a 1-edge graph"),
                                        kind, 0)
        return result, got, detail, said, spent
    if known and left - spent >= 1:
        result, charged = try_known(candidates, kind, known, Budget(runs=max(1, left - spent),
                                                                     seconds=settings.budget.seconds),
                                    tries=START_TRIES if racy else 1)
        spent += charged
        if result is not None:   # one more run: a race shows there too (failed 1 of 2)
            confirm = min(settings.confirm if racy else 1, max(0, left - spent))
            result, got, detail = confirmed(candidates, result, kind, confirm)
            said = Triage("an earlier counterexample fails here too" if result.failed == result.tried else
                          f"flaky: an earlier counterexample failed {result.failed} of {result.tried} runs here")
            return result, got, detail, said, spent + result.runs - charged
    if left - spent < TRIAGE_RUNS:                       # the re-runs and one candidate at least
        return None, None, "", Triage("out of budget"), spent
    original = edge_list_of(path)
    said = rerun(candidates, original, row)
    spent += said.runs
    mixed = _flaky_hint(rows, row["method"], row["sync"])
    if said.verdict == "reproduces" and mixed:
        said = dataclasses.replace(said, verdict="flaky", line=f"right and wrong on {mixed} in the graded runs")
    if said.wrong is None:       # no re-run failed (a race): the vertices the graded run got wrong
        said = dataclasses.replace(said, wrong=differing_in(row.get("detail") or "") or None)
    flaky = racy or said.verdict == "flaky"
    confirm = min(settings.confirm if flaky else 0, max(0, left - spent - 1))
    case = Budget(runs=max(1, min(settings.budget.runs, left - spent - confirm)), seconds=settings.budget.seconds)
    result, got, detail = shrink_case(candidates, original, kind, budget=case, tries=settings.tries if flaky else 1,
                                      confirm=confirm, wrong=said.wrong)
    return result, got, detail, said, spent + result.runs


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _write(path: Path, data: dict) -> None:
    write_text_atomically(path, json.dumps(data, indent=1, default=str))
