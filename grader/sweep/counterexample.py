"""A failing cell shrunk to the smallest graph its program still gets wrong, saved as a file.

Every candidate is run exactly like a graded run: `cellrun.run_cell` with the cell's own
sweep settings (its jail, limits and timeout), judged against the trusted reference computed on
that candidate (reference.solver, independent of the program). The reducer is
grader.sweep.shrink; this module only writes candidates, runs them and saves the result:

    DIR/<method>-<sync>.txt   a valid input (`src dst w` lines) whose `#` lines say how to
                              reproduce the failure, what was expected, what the program
                              printed, and how often it failed.
"""
from __future__ import annotations

import dataclasses
import itertools
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grader.data import inputs
from grader.jail.sandbox import shared_inputs
from grader.sweep import cellrun
from grader.sweep.executors.celltask import RowList
from grader.sweep.graphs import PreparedGraph
from grader.sweep.shrink import Budget, EdgeList, Shrunk, cone, shrink
from sssp_common.digest import distances_checksum
from sssp_common.files import write_text_atomically
from sssp_common.loader import load_graph
from sssp_common.vocabulary import UNREACHABLE

HEADER = "# counterexample candidate (grader shrink)\n"
MAX_SHOWN_VERTICES = 200
DEFAULT_BUDGET = Budget(runs=200, seconds=60.0)
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
                "runs": self.shrunk.runs, "seconds": self.shrunk.seconds, "stopped": self.shrunk.stopped,
                "expected": self.expected, "got": self.got, "differing": self.differing,
                "command": self.command, "detail": self.detail, "origin": self.origin,
                "file": str(self.path) if self.path else None}


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
    """Runs the cell's program on candidates: `trial(graph) -> status` for the reducer."""

    def __init__(self, cell, sweep, provenance: dict, folder: Path | None = None):
        self.cell = dataclasses.replace(cell, rep=0)
        self.sweep = sweep
        self.provenance = provenance
        # beside the graded inputs, where every run finds its input (the jail exposes that folder)
        self.folder = Path(folder) if folder else shared_inputs()
        self.stem = f"shrink-{os.getpid()}-{next(_RUNNERS)}"
        self.count = 0
        self.last_row: dict | None = None
        self.last_printed: list | None = None       # what the last run's output file said
        self.wrong: dict[bytes, list[int]] = {}     # a failing candidate -> the vertices it got wrong

    def write(self, graph: EdgeList) -> Path:
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

    def __call__(self, graph: EdgeList) -> str:
        path = self.write(graph)
        try:
            rows = RowList()        # candidate runs are not results of the sweep
            sweep = _Capturing(self.sweep)
            prepared = self.prepared(graph, path)
            row, _ = cellrun.run_cell(self.cell, prepared, sweep, self.provenance, rows)
            got = None if sweep.captured is None else _as_list(sweep.captured)
            self.last_row, self.last_printed = row, got
            if row["status"] == "wrong":
                if got is not None:
                    expected = _as_list(prepared.reference)
                    self.wrong[_key(graph)] = [v for v, (e, g) in enumerate(zip(expected, got)) if e != g]
            return row["status"]
        finally:
            path.unlink(missing_ok=True)

    def focus(self, graph: EdgeList) -> EdgeList | None:
        """The cone of the vertices this graph's failing run got wrong, when known."""
        wrong = self.wrong.get(_key(graph))
        return cone(graph, wrong) if wrong else None

    def close(self) -> None:
        for leftover in self.folder.glob(f"{self.stem}-*.txt"):
            leftover.unlink(missing_ok=True)


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


def isolated(function, *args, **kwargs):
    """function(*args, **kwargs) in a process of its own (spawned: no inherited threads or CUDA
    state): a candidate program that kills its parent kills that process, never the grader.
    Raises HarnessKilled when it dies."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        try:
            return pool.submit(function, *args, **kwargs).result()
        except BrokenProcessPool:
            raise HarnessKilled("the process running the candidates died (killed by the program under test?)") \
                from None


def shrink_cell(cell, sweep, provenance: dict, failing_input: Path, kind: str, *,
                budget: Budget = DEFAULT_BUDGET, tries: int = 1, confirm: int = 4,
                reproduce: str = "") -> Counterexample:
    """Shrink the failure `kind` of `cell` on `failing_input` (the spec-format file it failed on)."""
    runner = CandidateRunner(cell, sweep, provenance)
    original = edge_list_of(failing_input)
    try:
        if kind == "wrong":              # what it got wrong on the original: the first focus
            runner(original)
        result = shrink(original, runner, kind, budget=budget, tries=tries, confirm=0,
                        zero_weights=bool((original.weight == 0).any()), focus=runner.focus)
        # the final graph's own runs: how often it fails, and what the program printed when it did
        failed, tried, got, detail = result.failed, result.tried, None, ""
        for _ in range(confirm):
            status = runner(result.graph)
            tried += 1
            if status == "wrong" or status == kind:
                failed += 1
                got = runner.last_printed
                detail = runner.last_row.get("detail", "") if runner.last_row else ""
        if got is None and not detail:                       # it failed only while shrinking
            detail = "failed while shrinking; not on the confirming runs"
        result = dataclasses.replace(result, failed=failed, tried=tried, runs=result.runs + confirm)
    finally:
        runner.close()
    expected = _as_list(reference_of(result.graph))
    command = reproduce or render_reproduction(cell, sweep)
    return Counterexample(cell=cell, shrunk=result, expected=expected, got=got, command=command, detail=detail)


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
    lines = [f"# smallest graph found on which this program's {example.cell.method} -sync {example.cell.sync} "
             f"is {shrunk.kind} ({shrunk.graph.edges} edges, {shrunk.graph.vertices} vertices)",
             f"# reproduce: {example.command.replace('%INPUT%', target.name)}",
             f"# failed {shrunk.failed} of {shrunk.tried} runs"
             + (" (sometimes right: likely a race)" if shrunk.flaky else ""),
             f"# shrunk in {shrunk.runs} runs, {shrunk.seconds:.1f} s ({shrunk.stopped})",
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
