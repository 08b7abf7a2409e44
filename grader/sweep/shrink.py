"""THE REDUCTION (pure): a failing graph shrunk to a small one the program still gets wrong.

This module is the reducer alone: it starts no process and reads no file. Running the candidates
(the student's jail, the reference, triage) is grader.sweep.counterexample; which cases a student's
budget goes to, and what the pages show, is grader.grading.counterexamples.

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

Where to start (`starting_points`): the smallest of a few subgraphs around the wrong vertex nearest
the source (fewest edges on its path in the reference's shortest-path tree) that still fails: the
path with part of the list of the vertex before it, ..., 2 hops around it, the cone of every wrong vertex.

Candidates in parallel: the candidates of one step (ddmin's chunks or complements at one
granularity, the weights of one edge, the starting points) are independent; `batch` runs up to
`jobs` of them at once and the lowest-index one that fails is taken, so the result does not depend
on which finished first. The budget is counted in runs, as a one-at-a-time search would have made
them (the runs up to and including the one taken): the same graph on any machine and at any
--jobs; a seconds ceiling stays only as a safety stop, and says so ("safety stop: S s").

Which failures count: a wrong answer always does (it is a real counterexample); a crash or a
timeout counts only when the original failure was of that kind (a crash on a smaller graph may
be a different bug). Races make failures flaky: when the original does not fail on every try, a
candidate gets up to `tries` runs and counts when it fails in any; the result says how often the
final graph failed, and a graph on which the program was never seen failing is never returned.
A race's starting points get START_TRIES each (stopping at a failure): the only way its case
gets small within its runs (two nested starts hide a one-in-two race once in 2^16).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

FAILURE_KINDS = ("wrong", "crash", "timeout")
VERTEX_DDMIN_EDGES = 32       # graphs up to this many edges skip ddmin over vertices
WINDOWS = (2, 8)              # starting points: the path's edge with this many of its tail's edges each side
START_TRIES = 8               # runs of each starting point of a race (tries > 1), stopping at a failure


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
    runs: int = 200            # candidate runs: the cap that decides the result
    seconds: float = 600.0     # a safety stop only (a program far slower than its graded runs)


@dataclass
class Shrunk:
    graph: EdgeList            # the smallest failing graph found (renumbered)
    kind: str                  # the failure it shows: wrong / crash / timeout
    failed: int                # runs of the final graph that failed ...
    tried: int                 # ... of this many
    runs: int                  # program runs the whole shrink was charged (as if one at a time)
    seconds: float
    stopped: str               # "1-minimal", "budget: N runs" or "safety stop: S s"
    steps: list[str] = field(default_factory=list)   # how it got there, one line per accepted step
    started: int = 0           # runs actually started (more than `runs` when candidates ran in parallel)

    @property
    def flaky(self) -> bool:
        return self.failed < self.tried


class OutOfBudget(Exception):
    pass


class Reducer:
    """One shrink: holds the trial, the budget and the counts; `run(graph)` returns a Shrunk."""

    def __init__(self, trial: Callable[[EdgeList], str], kind: str, *, budget: Budget = Budget(),
                 tries: int = 1, zero_weights: bool = False, clock=time.monotonic,
                 focus: Callable[[EdgeList], EdgeList | None] | None = None,
                 batch: Callable[[list[EdgeList]], list[str]] | None = None, jobs: int = 1):
        if kind not in FAILURE_KINDS:
            raise ValueError(f"nothing to shrink: the original run was {kind!r}, not a failure")
        self.trial, self.kind, self.budget, self.tries = trial, kind, budget, max(1, tries)
        self.batch = batch or (lambda graphs: [trial(g) for g in graphs])
        self.jobs = max(1, jobs)
        self.lowest_weight = 0 if zero_weights else 1
        self.clock = clock
        self.focus = focus        # proposes the cone of the vertices last got wrong (None: no idea)
        self.runs = 0             # charged: the runs a one-at-a-time search would have made
        self.started_runs = 0     # started: with jobs > 1, the rest of a batch too
        self.started = clock()
        self.steps: list[str] = []
        self.final_failures: tuple[int, int] = (0, 0)

    # --- the one question ---------------------------------------------------------
    def counts(self, status: str) -> bool:
        return status == "wrong" or status == self.kind

    def fails(self, graph: EdgeList) -> bool:
        """Does the program fail on this candidate (in any of `tries` runs)?"""
        return self.first_failing([graph]) == 0

    def first_failing(self, candidates: list[EdgeList], tries: int | None = None) -> int | None:
        """The lowest index of a candidate that fails (in any of `tries` runs, the reducer's
        unless given), or None. Up to `jobs` candidates run at once; the runs charged are those a
        one-at-a-time search would have made (every try of the candidates before the one taken,
        and its tries up to its failure), so the outcome and the count are the same at any --jobs
        and on any machine."""
        tries = tries or self.tries
        start = 0
        while start < len(candidates):
            self._check_budget()
            affordable = max(1, (self.budget.runs - self.runs) // tries)
            group = candidates[start:start + min(self.jobs, affordable)]
            failed_at: list[int | None] = [None] * len(group)     # the try on which each failed
            for attempt in range(tries):
                pending = [i for i, f in enumerate(failed_at) if f is None]
                if not pending or (failed_at[0] is not None):
                    break
                statuses = self.batch([group[i] for i in pending])
                self.started_runs += len(pending)
                for i, status in zip(pending, statuses):
                    if self.counts(status):
                        failed_at[i] = attempt
                if any(f is not None for f in failed_at):
                    first = next(i for i, f in enumerate(failed_at) if f is not None)
                    if all(failed_at[j] is not None or attempt + 1 >= tries for j in range(first)):
                        break
            for index, attempt in enumerate(failed_at):
                if attempt is not None:
                    self._charge(tries * index + attempt + 1)
                    return start + index
            self._charge(tries * len(group))
            start += len(group)
        return None

    def _charge(self, runs: int) -> None:
        self.runs += runs
        if self.runs > self.budget.runs:      # a one-at-a-time search would have stopped at the cap
            self.runs = self.budget.runs
            raise OutOfBudget(f"budget: {self.budget.runs} runs")

    def _check_budget(self) -> None:
        if self.runs >= self.budget.runs:
            raise OutOfBudget(f"budget: {self.budget.runs} runs")
        if self.clock() - self.started >= self.budget.seconds:
            raise OutOfBudget(f"safety stop: {round(self.budget.seconds, 1):g} s")

    # --- the passes ---------------------------------------------------------------
    def run(self, graph: EdgeList, confirm: int = 0, starts: list[tuple[str, EdgeList]] = ()) -> Shrunk:
        """Shrink `graph` (which failed); `confirm` extra runs of the result count how often it fails.
        `starts`: smaller graphs to try first, smallest first (see starting_points); the first that
        fails is where the reduction starts."""
        best = self._best = graph
        stopped = "1-minimal"
        try:
            starts = [(why, g) for why, g in starts if 0 < g.edges < graph.edges]
            taken = self.first_failing([g for _, g in starts],
                                       tries=max(self.tries, START_TRIES) if self.tries > 1 else 1)
            if taken is not None:
                best = graph = self._accept(starts[taken][1], f"started from {starts[taken][0]}")
            compact = renumber(graph)
            if not (np.array_equal(compact.src, graph.src) and np.array_equal(compact.dst, graph.dst)) \
                    and self.fails(compact):         # ids made compact (else they stay as given)
                best = self._accept(compact, "renumbered")
            lowered = False
            while True:          # the structure first (what a run budget buys most), weights at the end
                best = self.narrow(best)
                smaller = self.ddmin(best)
                progressed = smaller.edges < best.edges
                best = smaller
                contracted = self.contract(best)
                if contracted is not None:
                    best, progressed = contracted, True
                rerooted = self.reroot(best)
                if rerooted is not None:
                    best, progressed = rerooted, True
                if not progressed and not lowered:
                    lighter = self.lower_weights(best)
                    lowered, progressed = True, int(lighter.weight.sum()) < int(best.weight.sum())
                    best = lighter
                if not progressed:
                    break
        except OutOfBudget as why:
            stopped = str(why)
        best = self._best
        failed, tried = self._confirm(best, confirm)
        return Shrunk(graph=best, kind=self.kind, failed=failed, tried=tried, runs=self.runs,
                      seconds=round(self.clock() - self.started, 3), stopped=stopped, steps=self.steps,
                      started=self.started_runs)

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
        if graph.edges <= VERTEX_DDMIN_EDGES:    # small: edge by edge is as quick, and needs no extra round
            return graph
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
            # a chunk alone: at halves only (finer, a chunk alone rarely still fails, and on a small
            # graph that needs most of its edges those runs are the budget's largest waste)
            alone = [(part, keeping(current, part)) for part in parts] if len(parts) == 2 else []
            alone = [(part, c) for part, c in alone if 0 < c.edges < current.edges]
            taken = self.first_failing([c for _, c in alone])
            if taken is not None:
                current = self._accept(alone[taken][1], f"kept {len(alone[taken][0])} of {len(every)} {unit}")
                chunks, reduced = 2, True
            if not reduced:                                                       # everything but a chunk
                others = [(part, keeping(current, np.setdiff1d(every, part))) for part in parts]
                others = [(part, c) for part, c in others if 0 < c.edges < current.edges]
                taken = self.first_failing([c for _, c in others])
                if taken is not None:
                    current = self._accept(others[taken][1], f"dropped {len(others[taken][0])} of {len(every)} {unit}")
                    chunks, reduced = max(chunks - 1, 2), True
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
        candidates = []
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
            candidates.append((vertex, renumber(EdgeList(src[keep], dst[keep], weight[keep]))))
        taken = self.first_failing([c for _, c in candidates])
        if taken is None:
            return None
        return self._accept(candidates[taken][1], f"vertex {candidates[taken][0]} contracted into one edge")

    def reroot(self, graph: EdgeList) -> EdgeList | None:
        """The failure may sit far from the source, behind a path ddmin must keep: try each other
        vertex as the source (ids 0 and v swapped), keeping the first that still fails; the next
        ddmin round then drops the path. None when no vertex does."""
        candidates = []
        for vertex in range(1, graph.vertices):
            swap = np.arange(graph.vertices)
            swap[0], swap[vertex] = vertex, 0
            candidates.append(renumber(EdgeList(swap[graph.src], swap[graph.dst], graph.weight.copy())))
        taken = self.first_failing(candidates)
        if taken is None:
            return None
        return self._accept(candidates[taken], f"vertex {taken + 1} made the source")

    def lower_weights(self, graph: EdgeList) -> EdgeList:
        """Each edge's weight to the lowest allowed, else halved while the failure holds."""
        current = graph
        for index in range(current.edges):
            weight = int(current.weight[index])
            lowered = self._lower_weights_of(weight)
            taken = self.first_failing([current.with_weight(index, lower) for lower in lowered])
            if taken is not None:
                current = self._accept(current.with_weight(index, lowered[taken]),
                                       f"edge {index} weight {weight} -> {lowered[taken]}")
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
            self.started_runs += 1
            tried += 1
            failed += self.counts(self.trial(graph))
        return failed, tried


def shrink(graph: EdgeList, trial: Callable[[EdgeList], str], kind: str, *, budget: Budget = Budget(),
           tries: int = 1, confirm: int = 0, zero_weights: bool = False, clock=time.monotonic,
           focus=None, batch=None, jobs: int = 1, starts: list[tuple[str, EdgeList]] = ()) -> Shrunk:
    """The smallest graph found that still fails as `kind` did (see the module's docstring)."""
    return Reducer(trial, kind, budget=budget, tries=tries, zero_weights=zero_weights, clock=clock,
                   focus=focus, batch=batch, jobs=jobs).run(graph, confirm=confirm, starts=starts)


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


def nearest_wrong_path(graph: EdgeList, expected: np.ndarray, wrong: list[int]) -> list[int]:
    """The vertices of the path from 0 to the wrong vertex with the fewest edges on its path in the
    reference's shortest-path tree (the tight edges: dist[u] + w == dist[v]; a breadth-first search
    over them from 0, ties to the lowest id). [] when no wrong vertex is reachable in the reference."""
    n = graph.vertices
    expected = np.asarray(expected, dtype=np.int64)[:n]
    reachable = expected >= 0
    tight = reachable[graph.src] & reachable[graph.dst] & (expected[graph.src] + graph.weight == expected[graph.dst])
    parent = np.full(n, -1, dtype=np.int64)
    hops = np.full(n, -1, dtype=np.int64)
    hops[0] = 0
    adjacency: dict[int, list[int]] = {}
    for u, v in zip(graph.src[tight].tolist(), graph.dst[tight].tolist()):
        adjacency.setdefault(u, []).append(v)
    frontier = [0]
    while frontier:
        following = []
        for u in frontier:
            for v in sorted(adjacency.get(u, ())):
                if hops[v] < 0:
                    hops[v], parent[v] = hops[u] + 1, u
                    following.append(v)
        frontier = following
    targets = [v for v in wrong if 0 <= v < n and hops[v] >= 0]
    if not targets:
        return []
    target = min(targets, key=lambda v: (hops[v], v))
    path = [target]
    while path[-1] != 0:
        path.append(int(parent[path[-1]]))
    return path[::-1]


def neighbourhood(graph: EdgeList, vertices: list[int], hops: int) -> EdgeList:
    """The edges (out and in) of the given vertices and of every vertex up to hops - 1 steps away
    from them (either direction), renumbered with 0 kept the source."""
    near = np.zeros(graph.vertices, dtype=bool)
    near[list(vertices)] = True
    for _ in range(hops - 1):
        touched = near[graph.src] | near[graph.dst]
        near[graph.src[touched]] = True
        near[graph.dst[touched]] = True
    return renumber(graph.take(np.flatnonzero(near[graph.src] | near[graph.dst])))


def starting_points(graph: EdgeList, expected: np.ndarray, wrong: list[int]) -> list[tuple[str, EdgeList]]:
    """Subgraphs to try before the whole graph, smallest first: the path to the nearest wrong
    vertex with the out-edges of the vertex before it (a slip in how one vertex's edge list is
    walked shows there: first the 2, then 8, edges each side of the path's in file order, then
    the whole list), then with every path vertex's
    out-edges (the wrong vertex's own out-edges cannot change its distance), then with their
    in-edges too (1 hop), then 2 hops, then the cone of every wrong vertex. A deterministic bug in
    a spec method usually shows within a few hops of vertex 0."""
    points: list[tuple[str, EdgeList]] = []
    expected = np.asarray(expected, dtype=np.int64)[:graph.vertices]
    path = nearest_wrong_path(graph, expected, wrong)
    if len(path) >= 2:           # [0] alone: the source itself is wrong, and no path leads there
        about = f"the path to wrong vertex {path[-1]} ({len(path) - 1} edges)"
        before = np.zeros(graph.vertices, dtype=bool)
        before[path[:-1]] = True
        on_path = np.zeros(graph.edges, dtype=bool)
        tight = expected[graph.src] + graph.weight == expected[graph.dst]     # not a heavier parallel edge
        for u, v in zip(path, path[1:]):
            on_path[last := int(np.flatnonzero((graph.src == u) & (graph.dst == v) & tight)[0])] = True
        # where a slip in walking one adjacency list sits: the vertex before the wrong one, its
        # edges nearest the path's in file order (a hub's list is long), then its whole list
        theirs = np.flatnonzero(graph.src == path[-2])
        at = int(np.searchsorted(theirs, last))
        for reach in WINDOWS:
            window = theirs[max(0, at - reach):at + reach + 1]
            keep = on_path.copy()
            keep[window] = True
            points.append((f"{about} and the {window.size} out-edges of the vertex before it nearest the path's",
                           renumber(graph.take(np.flatnonzero(keep)))))
        points.append((f"{about} and the out-edges of the vertex before it",
                       renumber(graph.take(np.flatnonzero((graph.src == path[-2]) | on_path)))))
        points.append((f"{about} and the out-edges of the vertices before it",
                       renumber(graph.take(np.flatnonzero(before[graph.src] | on_path)))))
        for hops in (1, 2):
            points.append((f"{about} and {hops} hop{'s' if hops > 1 else ''} around it (out- and in-edges)",
                           neighbourhood(graph, path, hops)))
    if wrong:
        points.append(("the cone of the vertices it got wrong", cone(graph, wrong)))
    kept: list[tuple[str, EdgeList]] = []
    for why, candidate in sorted(points, key=lambda p: p[1].edges):
        if 0 < candidate.edges < graph.edges and all(candidate.edges != k.edges for _, k in kept):
            kept.append((why, candidate))
    return kept
