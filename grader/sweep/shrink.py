"""Shrinking a failing graph to a small one the program still gets wrong (delta debugging).

Pure logic over an abstract trial: `trial(graph) -> status` runs the program on a candidate
and says how it went ("ok", "wrong", "crash", "timeout", ...), as judged by the grader against
the trusted reference (the caller's business: here no process is started). The reducer:

1. ddmin over the edges (Zeller and Hildebrandt's delta debugging): drop halves, quarters, ...
   single edges; after every step the remaining vertices are renumbered compactly with vertex 0
   kept as the source, so a candidate is always a valid input with no isolated ids;
2. weights lowered edge by edge: to 1 (or 0 where 0 is allowed), else halved;
3. another vertex made the source (the program always starts at 0): a failure far from the
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
                 tries: int = 1, zero_weights: bool = False, clock=time.monotonic):
        if kind not in FAILURE_KINDS:
            raise ValueError(f"nothing to shrink: the original run was {kind!r}, not a failure")
        self.trial, self.kind, self.budget, self.tries = trial, kind, budget, max(1, tries)
        self.lowest_weight = 0 if zero_weights else 1
        self.clock = clock
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
            raise OutOfBudget(f"budget: {self.budget.seconds:g} s")

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
                smaller = self.ddmin(best)
                lighter = self.lower_weights(smaller)
                progressed = lighter.edges < best.edges or int(lighter.weight.sum()) < int(best.weight.sum())
                best = lighter
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

    def ddmin(self, graph: EdgeList) -> EdgeList:
        """Zeller's ddmin over edge indices: try each chunk alone, then each complement; on
        failure keep it and coarsen, else refine; ends when chunks are single edges."""
        current = graph
        chunks = 2
        while current.edges >= 2:
            parts = np.array_split(np.arange(current.edges), min(chunks, current.edges))
            reduced = False
            for part in parts:                                  # a chunk alone
                candidate = renumber(current.take(part))
                if self.fails(candidate):
                    current = self._accept(candidate, f"kept {len(part)} of {current.edges} edges")
                    chunks, reduced = 2, True
                    break
            if not reduced:
                for part in parts:                              # everything but a chunk
                    keep = np.setdiff1d(np.arange(current.edges), part)
                    if keep.size == 0:
                        continue
                    candidate = renumber(current.take(keep))
                    if self.fails(candidate):
                        current = self._accept(candidate, f"dropped {len(part)} of {current.edges} edges")
                        chunks, reduced = max(chunks - 1, 2), True
                        break
            if not reduced:
                if chunks >= current.edges:
                    break                                       # single edges: 1-minimal
                chunks = min(current.edges, chunks * 2)
        return current

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
           tries: int = 1, confirm: int = 0, zero_weights: bool = False, clock=time.monotonic) -> Shrunk:
    """The smallest graph found that still fails as `kind` did (see the module's docstring)."""
    return Reducer(trial, kind, budget=budget, tries=tries, zero_weights=zero_weights, clock=clock).run(
        graph, confirm=confirm)
