"""RUNNING CANDIDATES: a failing cell's candidate graphs run like graded runs, triage, the file.

This module runs things; the reduction itself (which candidate to try next) is the pure
grader.sweep.shrink, and which student's case gets how many runs is grader.grading.counterexamples.

Every candidate is run exactly like a graded run: `cellrun.run_cell` with the cell's own
sweep settings (its jail, limits and timeout), judged against the trusted reference computed on
that candidate (reference.solver, independent of the program). With a pool (grade --jobs) each
candidate is one correctness job of the pool (its worker's own uid and GPU), up to `jobs` at once;
else they run one at a time in this process. Here too:

- triage (`triage`): before any shrinking, one run on a 1-edge graph (a method the program
  rejects or does not implement fails there the same way: same exit status, same first stderr
  line, and gets no shrinking) and three runs of the original cell (a failure that does not come
  back every time is flaky from the start: each candidate then gets several tries);
- `shrink_case`: the counterexamples of the student's other cases first, then the subgraphs
  around the nearest wrong vertex (shrink.starting_points), then the reduction;
- the random search of small graphs for a method the course graphs found right;
- the file, DIR/<method>-<sync>.txt: a valid input (`src dst w` lines) whose `#` lines say how
  to reproduce the failure, what was expected, what the program printed, and how often it failed;
- how a size is said (`size_text`, the file's and the pages' words): a graph over SMALL_EDGES is
  never a plain size but "not reproducible on small graphs" (1-minimal) or "not reproduced on a
  small graph within the budget", and the course graph itself "not shrunk".
"""
from __future__ import annotations

import dataclasses
import itertools
import os
import shlex
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grader.data import inputs
from grader.data.smallgraphs import search_graphs
from grader.jail.sandbox import shared_inputs
from grader.sweep import cellrun
from grader.sweep.executors.celltask import RowList
from grader.sweep.graphs import PreparedGraph
from grader.sweep.shrink import FAILURE_KINDS, START_TRIES, Budget, EdgeList, OutOfBudget, Reducer, Shrunk, cone, starting_points
from sssp_common.digest import distances_checksum
from sssp_common.files import write_text_atomically
from sssp_common.loader import load_graph
from sssp_common.vocabulary import SPEC_CONFIGS, UNREACHABLE

HEADER = "# counterexample candidate (grader shrink)\n"
MAX_SHOWN_VERTICES = 200
DEFAULT_BUDGET = Budget(runs=200, seconds=60.0)
SMALL_EDGES = 40             # a counterexample small enough to read whole (drawn, its edges listed in full)
_RUNNERS = itertools.count()


@dataclass
class Counterexample:
    cell: object                 # the failing cell (its configuration and ordering)
    shrunk: Shrunk
    expected: list               # distances, None where unreachable
    got: list | None             # the program's distances as it printed them (None: no readable file)
    command: str                 # how to reproduce, in the form the program was run with
    detail: str                  # the grader's verdict line on the final graph
    path: Path | None = None     # where it was saved
    origin: str = ""             # what it was shrunk from (a course graph, or the random search)
    origin_edges: int = 0        # ... and its size
    triage: str = ""             # what triage said ("reproduces", "flaky: failed k of 3", ...)

    @property
    def not_shrunk(self) -> bool:
        """Out of budget before any smaller graph was found: the failing course graph itself."""
        return bool(self.origin_edges) and self.shrunk.graph.edges >= self.origin_edges \
            and not self.shrunk.stopped.startswith("1-minimal")

    @property
    def not_small(self) -> bool:
        """Shrunk, but not to a small graph (more than SMALL_EDGES edges): said as such, never as a
        plain size (a bug that needs a large input, or a budget that ran out on the way)."""
        return not self.not_shrunk and self.shrunk.graph.edges > SMALL_EDGES

    @property
    def differing(self) -> list[int]:
        if self.got is None:
            return list(range(len(self.expected)))
        return [v for v, (e, g) in enumerate(zip(self.expected, self.got)) if e != g] + \
            list(range(len(self.got), len(self.expected)))

    def summary(self) -> dict:
        """What results.json and the pages show."""
        return {"method": self.cell.method, "sync": self.cell.sync, "bsize": self.cell.bsize,
                "bcount": self.cell.bcount, "ordering": self.cell.ordering,
                "edges": self.shrunk.graph.edges, "vertices": self.shrunk.graph.vertices,
                "edge_list": self.shrunk.graph.rows(), "kind": self.shrunk.kind,
                "failed": self.shrunk.failed, "tried": self.shrunk.tried, "flaky": self.shrunk.flaky,
                "race": self.shrunk.flaky or self.triage.startswith("flaky"),
                "runs": self.shrunk.runs, "started": self.shrunk.started, "seconds": self.shrunk.seconds,
                "stopped": self.shrunk.stopped, "triage": self.triage, "not_shrunk": self.not_shrunk,
                "not_small": self.not_small, "origin_edges": self.origin_edges,
                "expected": self.expected, "got": self.got, "differing": self.differing,
                "command": self.command, "detail": self.detail, "origin": self.origin,
                "file": str(self.path) if self.path else None}


def edges_text(edges: int) -> str:
    return f"{edges} edge" + ("" if edges == 1 else "s")


def not_shrunk_text(edges: int) -> str:
    return f"not shrunk ({edges_text(edges)}, the failing course graph)"


def size_text(entry: dict) -> str:
    """How a counterexample's size is said (its summary): "N edges"; "not shrunk (N edges, ...)"
    when no smaller graph was found; and for one shrunk but still large (not_small), whether it
    is 1-minimal (no edge of it can go: the failure needs a large graph) or the budget ran out."""
    edges = entry["edges"]
    if entry.get("not_shrunk"):
        return not_shrunk_text(edges)
    if not entry.get("not_small"):
        return edges_text(edges)
    found = f"the smallest failing graph found has {edges_text(edges)}"
    if str(entry.get("stopped", "")).startswith("1-minimal"):
        return f"not reproducible on small graphs: {found} (1-minimal: none of its edges can go)"
    return f"not reproduced on a small graph within the budget: {found}"


def edge_list_of(path: Path) -> EdgeList:
    """The spec-format input a failing run read, through the project's loader (not cached)."""
    graph = load_graph(path, cache=False)
    return EdgeList(graph.src.astype(np.int64), graph.dst.astype(np.int64), graph.w.astype(np.int64))


def reference_of(graph: EdgeList) -> np.ndarray:
    from reference.solver import solve
    return solve(graph.vertices, graph.src, graph.dst, graph.weight)


def _as_list(distances: np.ndarray) -> list:
    return [None if d == UNREACHABLE else int(d) for d in distances.tolist()]


class CandidateRunner:
    """Runs the cell's program on candidates: `trial(graph) -> status` and `batch(graphs) ->
    statuses` for the reducer. `submit(job) -> Future` (grade --jobs: the shared pool) runs each
    candidate as a pool job, `jobs` at once; without it they run here, one at a time."""

    def __init__(self, cell, sweep, provenance: dict, folder: Path | None = None, submit=None, jobs: int = 1):
        self.cell = dataclasses.replace(cell, rep=0)
        self.sweep = sweep
        self.provenance = provenance
        # beside the graded inputs, where every run finds its input (the jail exposes that folder)
        self.folder = Path(folder) if folder else shared_inputs()
        self.stem = f"shrink-{os.getpid()}-{next(_RUNNERS)}"
        self.submit, self.jobs = submit, max(1, jobs if submit is not None else 1)
        self.count = 0
        self._lock = threading.Lock()
        self.last: dict | None = None               # the last outcome (status, exit_code, detail, printed, wrong)
        self.wrong: dict[bytes, list[int]] = {}     # a failing candidate -> the vertices it got wrong
        self.failing: dict[bytes, tuple] = {}       # a failing candidate -> (what it printed, the verdict line)

    def write(self, graph: EdgeList) -> Path:
        with self._lock:
            self.count += 1
            path = self.folder / f"{self.stem}-{self.count:05d}.txt"
        text = HEADER + "".join(f"{u} {v} {w}\n" for u, v, w in graph.rows())
        path.write_text(text)
        os.chmod(path, 0o444)
        return path

    def prepared(self, graph: EdgeList, path: Path) -> PreparedGraph:
        frozen = cellrun.freeze(reference_of(graph))
        return PreparedGraph(name=self.cell.graph, path=path, reference=frozen, edges=graph.edges,
                             ordered={self.cell.ordering: path}, reference_checksum=distances_checksum(frozen),
                             identities={self.cell.ordering: inputs.identity(path)})

    def outcome(self, graph: EdgeList) -> dict:
        """One run of the program on `graph`, here: its status, exit status, the grader's verdict
        line, the distances it printed (None: no readable file) and the vertices it got wrong."""
        path = self.write(graph)
        try:
            sweep = _Capturing(self.sweep)
            prepared = self.prepared(graph, path)
            row, _ = cellrun.run_cell(self.cell, prepared, sweep, self.provenance, RowList())
            got = None if sweep.captured is None else _as_list(sweep.captured)
            wrong = None
            if row["status"] == "wrong" and got is not None:
                expected = _as_list(prepared.reference)
                wrong = [v for v, (e, g) in enumerate(zip(expected, got)) if e != g]
            return {"status": row["status"], "exit_code": row.get("exit_code"), "detail": row.get("detail", ""),
                    "printed": got, "wrong": wrong}
        finally:
            path.unlink(missing_ok=True)

    def _note(self, graph: EdgeList, outcome: dict) -> str:
        self.last = outcome
        if outcome.get("wrong"):
            self.wrong[_key(graph)] = outcome["wrong"]
        if outcome["status"] in FAILURE_KINDS:       # what it printed when it failed: shown beside the expected
            self.failing[_key(graph)] = (outcome.get("printed"), outcome.get("detail", ""))
        return outcome["status"]

    def __call__(self, graph: EdgeList) -> str:
        return self.batch([graph])[0]

    def outcomes(self, graphs: list[EdgeList]) -> list[dict]:
        """Each graph's outcome, in the order given (whichever finished first)."""
        if self.submit is None:
            return [self.outcome(graph) for graph in graphs]
        futures = [self.submit({"cell": self.cell, "sweep": self.sweep, "provenance": self.provenance,
                                "folder": str(self.folder), "rows": graph.rows()}) for graph in graphs]
        found = []
        for future in futures:
            try:
                found.append(future.result()[0])
            except Exception as error:        # its worker died: this candidate crashed the harness
                raise HarnessKilled(f"the worker running a candidate failed: {type(error).__name__}: {error}") \
                    from None
        return found

    def batch(self, graphs: list[EdgeList]) -> list[str]:
        statuses = []
        for start in range(0, len(graphs), self.jobs):
            group = graphs[start:start + self.jobs]
            statuses += [self._note(graph, outcome) for graph, outcome in zip(group, self.outcomes(group))]
        return statuses

    def focus(self, graph: EdgeList) -> EdgeList | None:
        """The cone of the vertices this graph's failing run got wrong, when known."""
        wrong = self.wrong.get(_key(graph))
        return cone(graph, wrong) if wrong else None

    def close(self) -> None:
        for leftover in self.folder.glob(f"{self.stem}-*.txt"):
            leftover.unlink(missing_ok=True)


def candidate_job(job: dict) -> dict:
    """A pool job (grade --jobs): one candidate run in the worker's own jail; its outcome."""
    runner = CandidateRunner(job["cell"], job["sweep"], job["provenance"], folder=Path(job["folder"]))
    return runner.outcome(EdgeList.of(job["rows"]))


def _key(graph: EdgeList) -> bytes:
    return graph.src.tobytes() + graph.dst.tobytes() + graph.weight.tobytes()


class _Capturing:
    """The sweep settings with `capture_distances` on: cellrun hands over the distances the
    output file holds (shown to the student beside the expected ones)."""
    def __init__(self, sweep):
        self._sweep = sweep
        self.captured: np.ndarray | None = None
        self.capture_distances = self._keep

    def _keep(self, distances: np.ndarray | None) -> None:
        self.captured = distances

    def __getattr__(self, name):
        return getattr(self._sweep, name)


class HarnessKilled(Exception):
    """The process running the candidates died: the program under test killed it (or the machine did)."""


_KEPT: dict = {}


def isolated(function, *args, **kwargs):
    """function(*args, **kwargs) in a process of its own (spawned: no inherited threads or CUDA
    state), kept for the next call (a class's students one after another pay one start): a
    candidate program that kills its parent kills that process, never the grader. Raises
    HarnessKilled when it dies (the next call starts a fresh one)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    with _KEPT.setdefault("lock", threading.Lock()):
        pool = _KEPT.get("pool")
        if pool is None:
            pool = _KEPT["pool"] = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        try:
            return pool.submit(function, *args, **kwargs).result()
        except BrokenProcessPool:
            _KEPT.pop("pool", None)
            pool.shutdown(wait=False)
            raise HarnessKilled("the process running the candidates died (killed by the program under test?)") \
                from None


ONE_EDGE = EdgeList.of([(0, 1, 1)])
FLAKY_RERUNS = 3


def first_stderr_line(detail: str) -> str:
    """The first line of stderr the grader's verdict line quotes ("exit code N; stderr: a | b")."""
    _, _, stderr = (detail or "").partition("stderr: ")
    return stderr.split(" | ")[0].split("; the output file")[0].strip()


@dataclass
class Triage:
    verdict: str          # "rejected" (no shrinking), "one edge" (the 1-edge graph fails the same way),
                          # "flaky" (not every re-run of the original failed) or "reproduces"
    line: str = ""        # rejected: the first stderr line; flaky: where the graded runs were right and wrong
    failed: int = 0       # re-runs of the original cell that failed ...
    tried: int = 0        # ... of this many
    runs: int = 0         # program runs the triage took
    wrong: list | None = None   # the vertices a failing re-run got wrong


def triage(runner: CandidateRunner, row: dict) -> Triage | None:
    """One run on a 1-edge graph: "rejected" when it fails there as it failed on the course graph
    (a crash or usage error: the same exit status and first stderr line), "one edge" when the
    1-edge graph shows the failure itself; None when it is right there (shrinking is worth it)."""
    kind = row["status"]
    tiny = runner.outcomes([ONE_EDGE])[0]
    runner._note(ONE_EDGE, tiny)
    if kind != "wrong" and tiny["status"] == kind and tiny["exit_code"] == row.get("exit_code") \
            and first_stderr_line(tiny["detail"]) == first_stderr_line(row.get("detail", "")):
        return Triage("rejected", line=first_stderr_line(row.get("detail", "")) or row.get("detail", ""), runs=1)
    if tiny["status"] == "wrong" or tiny["status"] == kind:
        return Triage("one edge", failed=1, tried=1, runs=1, wrong=tiny.get("wrong"))
    return None


def rerun(runner: CandidateRunner, original: EdgeList, row: dict, reruns: int = FLAKY_RERUNS) -> Triage:
    """`reruns` runs of the original cell (at once where a pool runs them): "flaky" unless every one fails."""
    kind = row["status"]
    again = runner.outcomes([original] * reruns)
    failing = [o for o in again if o["status"] == "wrong" or o["status"] == kind]
    for outcome in again:
        runner._note(original, outcome)
    wrong = next((o["wrong"] for o in failing if o.get("wrong")), None)
    if wrong:
        runner.wrong[_key(original)] = wrong
    return Triage("reproduces" if len(failing) == reruns else "flaky", failed=len(failing), tried=reruns,
                  runs=reruns, wrong=wrong)


def try_known(runner: CandidateRunner, kind: str, known: list[tuple[str, EdgeList]],
              budget: Budget, tries: int = 1) -> tuple[Shrunk | None, int]:
    """(the first of the student's other counterexamples that fails this case too, taken as it
    is, or None; the runs charged): `tries` runs each (more for a race: they are tiny, and a miss
    sends the case back to its course graph), at once where a pool runs them."""
    reducer = Reducer(runner, kind, budget=budget, tries=tries, batch=runner.batch, jobs=runner.jobs)
    try:
        taken = reducer.first_failing([g for _, g in known])
    except OutOfBudget:
        taken = None
    if taken is None:
        return None, reducer.runs
    return Shrunk(graph=known[taken][1], kind=kind, failed=1, tried=1, runs=reducer.runs, seconds=0.0,
                  stopped=f"{known[taken][0]} fails here too", started=reducer.started_runs), reducer.runs


def shrink_case(runner: CandidateRunner, original: EdgeList, kind: str, *, budget: Budget,
                tries: int = 1, confirm: int = 0, wrong: list | None = None) -> tuple[Shrunk, list | None, str]:
    """(the shrunk graph, what the program printed on it, the verdict line): the subgraphs around
    the nearest wrong vertex first, then the reduction; `confirm` more runs of the result (counted
    in its runs) say how often it fails (a flaky case's "failed k of n")."""
    zero = bool((original.weight == 0).any())
    reducer = Reducer(runner, kind, budget=budget, tries=tries, zero_weights=zero, focus=runner.focus,
                      batch=runner.batch, jobs=runner.jobs)
    starts = starting_points(original, reference_of(original), wrong) if wrong else []
    result = reducer.run(original, starts=starts)
    return confirmed(runner, result, kind, confirm)


def confirmed(runner: CandidateRunner, result: Shrunk, kind: str, confirm: int) -> tuple[Shrunk, list | None, str]:
    """`confirm` more runs of the result; what it printed when it failed (from those runs, else
    from the run that made the reducer keep it)."""
    failed, tried = result.failed, result.tried
    got, detail = runner.failing.get(_key(result.graph), (None, ""))
    for outcome in (runner.outcomes([result.graph] * confirm) if confirm > 0 else []):
        tried += 1
        if outcome["status"] == "wrong" or outcome["status"] == kind:
            failed += 1
            got, detail = outcome["printed"], outcome.get("detail", "")
    if got is None and not detail:                       # it failed only while shrinking
        detail = "failed while shrinking; not on the confirming runs"
    return dataclasses.replace(result, failed=failed, tried=tried, runs=result.runs + confirm,
                               started=result.started + confirm), got, detail


def shrink_cell(cell, sweep, provenance: dict, failing_input: Path, kind: str, *,
                budget: Budget = DEFAULT_BUDGET, tries: int = 1, confirm: int = 4,
                reproduce: str = "") -> Counterexample:
    """Shrink the failure `kind` of `cell` on `failing_input` (the spec-format file it failed on):
    `grader shrink`'s one case, which has counted its own tries."""
    runner = CandidateRunner(cell, sweep, provenance)
    original = edge_list_of(failing_input)
    try:
        wrong = None
        looks = (START_TRIES if tries > 1 else 1) if kind == "wrong" else 0
        for _ in range(looks):               # what it got wrong there: where to start (a race: until a run fails)
            runner(original)
            wrong = runner.wrong.get(_key(original))
            if wrong:
                break
        result, got, detail = shrink_case(runner, original, kind, budget=budget, tries=tries, confirm=confirm,
                                          wrong=wrong)
    finally:
        runner.close()
    return example_of(cell, sweep, result, got, detail, reproduce)


def example_of(cell, sweep, result: Shrunk, got, detail: str, reproduce: str = "") -> Counterexample:
    expected = _as_list(reference_of(result.graph))
    command = reproduce or render_reproduction(cell, sweep)
    return Counterexample(cell=cell, shrunk=result, expected=expected, got=got, command=command, detail=detail)


def search(template, sweep, provenance: dict, count: int, kinds=FAILURE_KINDS, submit=None, jobs: int = 1):
    """(the first failing small random graph's runner and graph, or None; graphs tried): up to
    `count` small random graphs at the spec's configurations, `jobs` at once."""
    graphs = list(search_graphs(count))
    tried = 0
    for start in range(0, len(graphs), max(1, jobs)):
        group = graphs[start:start + max(1, jobs)]
        runners = []
        for index, (name, edges) in enumerate(group, start):
            bsize, bcount = SPEC_CONFIGS[index % len(SPEC_CONFIGS)]
            runners.append(CandidateRunner(dataclasses.replace(template, bsize=bsize, bcount=bcount, rep=0, graph=name),
                                           sweep, provenance, submit=submit, jobs=jobs))
        futures = [r.outcomes([EdgeList.of(edges)]) for r, (_, edges) in zip(runners, group)] \
            if submit is None else _together(runners, [EdgeList.of(edges) for _, edges in group])
        for runner, (_, edges), found in zip(runners, group, futures):
            tried += 1
            if found[0]["status"] in kinds:
                graph = EdgeList.of(edges)
                runner._note(graph, found[0])
                return runner, graph, found[0], tried
    return None, None, None, tried


def _together(runners: list[CandidateRunner], graphs: list[EdgeList]) -> list[list[dict]]:
    """One graph for each runner (each its own configuration), all submitted before any is awaited."""
    futures = [r.submit({"cell": r.cell, "sweep": r.sweep, "provenance": r.provenance, "folder": str(r.folder),
                         "rows": g.rows()}) for r, g in zip(runners, graphs)]
    found = []
    for future in futures:
        try:
            found.append([future.result()[0]])
        except Exception as error:
            raise HarnessKilled(f"the worker running a candidate failed: {type(error).__name__}: {error}") from None
    return found


def render_reproduction(cell, sweep) -> str:
    """The command line in the form the program was run with, the input named `%INPUT%`."""
    from grader.sweep.cells import render_command
    argv = render_command(sweep.command, cell, Path("%INPUT%"), Path("out.txt"), sweep.config_dir, sssp=Path("./sssp"))
    return shlex.join(argv)


def save(example: Counterexample, folder: Path) -> Path:
    """DIR/<method>-<sync>.txt: `#` lines (how to reproduce, expected vs printed, how often), then
    the edges; written whole (a temporary name, then renamed)."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{example.cell.method}-{example.cell.sync}.txt"
    shrunk = example.shrunk
    said = size_text(example.summary())
    how = (f"# {said}: out of budget after {shrunk.runs} runs ({shrunk.stopped})" if example.not_shrunk else
           f"# {said + ': ' if example.not_small else ''}shrunk in {shrunk.runs} runs, {shrunk.seconds:.1f} s "
           f"({shrunk.stopped})")
    lines = [f"# smallest graph found on which this program's {example.cell.method} -sync {example.cell.sync} "
             f"is {shrunk.kind} ({shrunk.graph.edges} edges, {shrunk.graph.vertices} vertices)",
             f"# reproduce: {example.command.replace('%INPUT%', target.name)}",
             f"# failed {shrunk.failed} of {shrunk.tried} runs"
             + (" (sometimes right: likely a race)" if shrunk.flaky else ""),
             how,
             f"# grader: {example.detail}" if example.detail else "# grader: see the run's verdict"]
    if shrunk.graph.vertices <= MAX_SHOWN_VERTICES:
        lines.append("# vertex: expected  printed")
        differing = set(example.differing)
        for vertex, want in enumerate(example.expected):
            if example.got is None:
                have = "(no output read)"
            else:
                have = example.got[vertex] if vertex < len(example.got) else "(missing)"
                have = "INF" if have is None else have
            mark = "   <-- differs" if vertex in differing else ""
            lines.append(f"# {vertex}: {'INF' if want is None else want}  {have}{mark}")
    lines += [f"{u} {v} {w}" for u, v, w in shrunk.graph.rows()]
    write_text_atomically(target, "\n".join(lines) + "\n")
    example.path = target
    return target
