"""Shrinking a failing graph to a small one the program still gets wrong (delta debugging).

Pure logic over an abstract trial: `trial(graph) -> status` runs the program on a candidate
and says how it went ("ok", "wrong", "crash", "timeout", ...), as judged by the grader against
the trusted reference (the caller's business: here no process is started). The reducer:

0. big steps first: the cone of the vertices the program got wrong (the edges on paths from 0
   to them), then ddmin over vertices (a dropped vertex takes its edges);
1. ddmin over the edges (Zeller and Hildebrandt's delta debugging): drop halves, quarters, ...
   single edges; after every step the remaining vertices are renumbered compactly with vertex 0
   kept as the source, so a candidate is always a valid input with no isolated ids;
2. weights lowered edge by edge: to 1 (or 0 where 0 is allowed), else halved;
3. a vertex passed through (one edge in, one out) contracted into one edge of the summed
   weight, and another vertex made the source (the program always starts at 0): a failure far from the
   source sits behind a path ddmin must keep, and once rerooted the next round drops the path;
4. stop when 1-minimal (no single edge can go, no weight can be lowered) or out of budget, and
   say which.

Which failures count: a wrong answer always does (it is a real counterexample); a crash or a
timeout counts only when the original failure was of that kind (a crash on a smaller graph may
be a different bug). Races make failures flaky: when the original does not fail on every try, a
candidate gets up to `tries` runs and counts when it fails in any; the result says how often the
final graph failed, and a graph on which the program was never seen failing is never returned.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

FAILURE_KINDS = ("wrong", "crash", "timeout")


@dataclass(frozen=True)
class EdgeList:
    """A small graph: edges in file order, vertex 0 the source, n = largest id + 1 (at least 1)."""
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray

    @staticmethod
    def of(edges) -> "EdgeList":
        array = np.asarray(list(edges), dtype=np.int64).reshape(-1, 3)
        return EdgeList(array[:, 0].copy(), array[:, 1].copy(), array[:, 2].copy())

    @property
    def edges(self) -> int:
        return int(self.src.shape[0])

    @property
    def vertices(self) -> int:
        return int(max(self.src.max(initial=0), self.dst.max(initial=0))) + 1

    def take(self, keep: np.ndarray) -> "EdgeList":
        return EdgeList(self.src[keep], self.dst[keep], self.weight[keep])

    def with_weight(self, index: int, weight: int) -> "EdgeList":
        weights = self.weight.copy()
        weights[index] = weight
        return EdgeList(self.src, self.dst, weights)

    def rows(self) -> list[tuple[int, int, int]]:
        return list(zip(self.src.tolist(), self.dst.tolist(), self.weight.tolist()))


def renumber(graph: EdgeList) -> EdgeList:
    """Vertex ids made compact in order of first appearance, vertex 0 staying 0 (the source):
    dropped edges leave no isolated ids behind, so the candidate is as small as its edges."""
    order = [0]
    seen = {0}
    for u, v in zip(graph.src.tolist(), graph.dst.tolist()):
        for vertex in (u, v):
            if vertex not in seen:
                seen.add(vertex)
                order.append(vertex)
    mapping = {old: new for new, old in enumerate(order)}
    remap = np.vectorize(mapping.__getitem__, otypes=[np.int64]) if graph.edges else (lambda a: a)
    return EdgeList(remap(graph.src), remap(graph.dst), graph.weight.copy())


@dataclass
class Budget:
    runs: int = 200
    seconds: float = 60.0


@dataclass
class Shrunk:
    graph: EdgeList            # the smallest failing graph found (renumbered)
    kind: str                  # the failure it shows: wrong / crash / timeout
    failed: int                # runs of the final graph that failed ...
    tried: int                 # ... of this many
    runs: int                  # program runs the whole shrink took
    seconds: float
    stopped: str               # "1-minimal" or "budget: N runs" / "budget: S s"
    steps: list[str] = field(default_factory=list)   # how it got there, one line per accepted step

    @property
    def flaky(self) -> bool:
        return self.failed < self.tried


class OutOfBudget(Exception):
    pass


class Reducer:
    """One shrink: holds the trial, the budget and the counts; `run(graph)` returns a Shrunk."""

    def __init__(self, trial: Callable[[EdgeList], str], kind: str, *, budget: Budget = Budget(),
                 tries: int = 1, zero_weights: bool = False, clock=time.monotonic,
                 focus: Callable[[EdgeList], EdgeList | None] | None = None):
        if kind not in FAILURE_KINDS:
            raise ValueError(f"nothing to shrink: the original run was {kind!r}, not a failure")
        self.trial, self.kind, self.budget, self.tries = trial, kind, budget, max(1, tries)
        self.lowest_weight = 0 if zero_weights else 1
        self.clock = clock
        self.focus = focus        # proposes the cone of the vertices last got wrong (None: no idea)
        self.runs = 0
        self.started = clock()
        self.steps: list[str] = []
        self.final_failures: tuple[int, int] = (0, 0)

    # --- the one question ---------------------------------------------------------
    def counts(self, status: str) -> bool:
        return status == "wrong" or status == self.kind

    def fails(self, graph: EdgeList) -> bool:
        """Does the program fail on this candidate (in any of `tries` runs)?"""
        for _ in range(self.tries):
            self._charge()
            self.runs += 1
            if self.counts(self.trial(graph)):
                return True
        return False

    def _charge(self) -> None:
        if self.runs >= self.budget.runs:
            raise OutOfBudget(f"budget: {self.budget.runs} runs")
        if self.clock() - self.started >= self.budget.seconds:
            raise OutOfBudget(f"budget: {round(self.budget.seconds, 1):g} s")

    # --- the passes ---------------------------------------------------------------
    def run(self, graph: EdgeList, confirm: int = 0) -> Shrunk:
        """Shrink `graph` (which failed); `confirm` extra runs of the result count how often it fails."""
        best = self._best = graph
        stopped = "1-minimal"
        try:
            compact = renumber(graph)
            if not (np.array_equal(compact.src, graph.src) and np.array_equal(compact.dst, graph.dst)) \
                    and self.fails(compact):         # ids made compact (else they stay as given)
                best = self._accept(compact, "renumbered")
            while True:
                best = self.narrow(best)
                smaller = self.ddmin(best)
                lighter = self.lower_weights(smaller)
                progressed = lighter.edges < best.edges or int(lighter.weight.sum()) < int(best.weight.sum())
                best = lighter
                contracted = self.contract(best)
                if contracted is not None:
                    best, progressed = contracted, True
                rerooted = self.reroot(best)
                if rerooted is not None:
                    best, progressed = rerooted, True
                if not progressed:
                    break
        except OutOfBudget as why:
            stopped = str(why)
        best = self._best
        failed, tried = self._confirm(best, confirm)
        return Shrunk(graph=best, kind=self.kind, failed=failed, tried=tried, runs=self.runs,
                      seconds=round(self.clock() - self.started, 3), stopped=stopped, steps=self.steps)

    def _accept(self, graph: EdgeList, why: str) -> EdgeList:
        self._best = graph
        self.steps.append(f"{why}: {graph.edges} edges, {graph.vertices} vertices")
        return graph

    def narrow(self, graph: EdgeList) -> EdgeList:
        """Cheap big steps before ddmin's edge by edge: the cone of the vertices the program got
        wrong (when the trial says which), then ddmin over vertices (a vertex dropped takes all
        its edges), which finds a failure spread over a few vertices in far fewer runs."""
        if self.focus is not None:
            cone = self.focus(graph)
            if cone is not None and 0 < cone.edges < graph.edges and self.fails(cone):
                graph = self._accept(cone, "kept the cone of the vertices it got wrong")
        return self.ddmin(graph, by_vertex=True)

    def ddmin(self, graph: EdgeList, by_vertex: bool = False) -> EdgeList:
        """Zeller's ddmin over edge indices: try each chunk alone, then each complement; on
        failure keep it and coarsen, else refine; ends when chunks are single edges."""
        current = graph
        chunks = 2
        unit = "vertices" if by_vertex else "edges"

        def items(g: EdgeList) -> np.ndarray:               # what ddmin drops: edges, or vertices but 0
            return np.arange(1, g.vertices) if by_vertex else np.arange(g.edges)

        def keeping(g: EdgeList, kept: np.ndarray) -> EdgeList:
            if not by_vertex:
                return renumber(g.take(kept))
            alive = np.zeros(g.vertices, dtype=bool)
            alive[0], alive[kept] = True, True
            return renumber(g.take(np.flatnonzero(alive[g.src] & alive[g.dst])))

        while len(items(current)) >= 2:
            every = items(current)
            parts = np.array_split(every, min(chunks, len(every)))
            reduced = False
            for part in parts:                                  # a chunk alone
                candidate = keeping(current, part)
                if 0 < candidate.edges < current.edges and self.fails(candidate):
                    current = self._accept(candidate, f"kept {len(part)} of {len(every)} {unit}")
                    chunks, reduced = 2, True
                    break
            if not reduced:
                for part in parts:                              # everything but a chunk
                    candidate = keeping(current, np.setdiff1d(every, part))
                    if 0 < candidate.edges < current.edges and self.fails(candidate):
                        current = self._accept(candidate, f"dropped {len(part)} of {len(every)} {unit}")
                        chunks, reduced = max(chunks - 1, 2), True
                        break
            if not reduced:
                if chunks >= len(every):
                    break                                       # single items: 1-minimal
                chunks = min(len(every), chunks * 2)
        return current

    def contract(self, graph: EdgeList) -> EdgeList | None:
        """A vertex passed through (one edge in, one out, no loop) becomes one edge of the summed
        weight: a path ddmin must keep whole gets shorter. The first contraction that still fails
        is kept; None when none does."""
        into = np.bincount(graph.dst, minlength=graph.vertices)
        out_of = np.bincount(graph.src, minlength=graph.vertices)
        for vertex in np.flatnonzero((into == 1) & (out_of == 1)).tolist():
            if vertex == 0:
                continue
            first = int(np.flatnonzero(graph.dst == vertex)[0])
            second = int(np.flatnonzero(graph.src == vertex)[0])
            if graph.src[first] == vertex:                     # a self-loop
                continue
            src, dst, weight = graph.src.copy(), graph.dst.copy(), graph.weight.copy()
            dst[first], weight[first] = dst[second], weight[first] + weight[second]
            keep = np.arange(graph.edges) != second
            candidate = renumber(EdgeList(src[keep], dst[keep], weight[keep]))
            if self.fails(candidate):
                return self._accept(candidate, f"vertex {vertex} contracted into one edge")
        return None

    def reroot(self, graph: EdgeList) -> EdgeList | None:
        """The failure may sit far from the source, behind a path ddmin must keep: try each other
        vertex as the source (ids 0 and v swapped), keeping the first that still fails; the next
        ddmin round then drops the path. None when no vertex does."""
        for vertex in range(1, graph.vertices):
            swap = np.arange(graph.vertices)
            swap[0], swap[vertex] = vertex, 0
            candidate = renumber(EdgeList(swap[graph.src], swap[graph.dst], graph.weight.copy()))
            if self.fails(candidate):
                return self._accept(candidate, f"vertex {vertex} made the source")
        return None

    def lower_weights(self, graph: EdgeList) -> EdgeList:
        """Each edge's weight to the lowest allowed, else halved while the failure holds."""
        current = graph
        for index in range(current.edges):
            weight = int(current.weight[index])
            for lower in self._lower_weights_of(weight):
                candidate = current.with_weight(index, lower)
                if self.fails(candidate):
                    current = self._accept(candidate, f"edge {index} weight {weight} -> {lower}")
                    break
        return current

    def _lower_weights_of(self, weight: int) -> list[int]:
        options = []
        if weight > self.lowest_weight:
            options.append(self.lowest_weight)
        half = weight // 2
        while half > self.lowest_weight:
            options.append(half)
            if len(options) >= 3:
                break
            half //= 2
        return sorted(set(options))[:3]

    def _confirm(self, graph: EdgeList, confirm: int) -> tuple[int, int]:
        """How often the result fails: its accepting run plus `confirm` more (budget permitting)."""
        failed, tried = 1, 1          # it was accepted on a failing run
        for _ in range(confirm):
            self.runs += 1
            tried += 1
            failed += self.counts(self.trial(graph))
        return failed, tried


def shrink(graph: EdgeList, trial: Callable[[EdgeList], str], kind: str, *, budget: Budget = Budget(),
           tries: int = 1, confirm: int = 0, zero_weights: bool = False, clock=time.monotonic,
           focus=None) -> Shrunk:
    """The smallest graph found that still fails as `kind` did (see the module's docstring)."""
    return Reducer(trial, kind, budget=budget, tries=tries, zero_weights=zero_weights, clock=clock,
                   focus=focus).run(graph, confirm=confirm)


def cone(graph: EdgeList, wrong: list[int]) -> EdgeList:
    """The edges on some path from vertex 0 to a vertex in `wrong`: nothing else can change what
    a correct program gives those vertices (the candidate the focus hook proposes)."""
    n = graph.vertices
    forward = _reach(n, graph.src, graph.dst, [0])
    backward = _reach(n, graph.dst, graph.src, [v for v in wrong if v < n])
    keep = np.flatnonzero(forward[graph.src] & backward[graph.dst])
    return renumber(graph.take(keep))


def _reach(n: int, tails: np.ndarray, heads: np.ndarray, start: list[int]) -> np.ndarray:
    seen = np.zeros(n, dtype=bool)
    seen[start] = True
    frontier = list(start)
    adjacency: dict[int, list[int]] = {}
    for u, v in zip(tails.tolist(), heads.tolist()):
        adjacency.setdefault(u, []).append(v)
    while frontier:
        vertex = frontier.pop()
        for neighbour in adjacency.get(vertex, ()):
            if not seen[neighbour]:
                seen[neighbour] = True
                frontier.append(neighbour)
    return seen
