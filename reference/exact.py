"""Exact integer distances where float64 could round: past 2**53.

scipy's solvers add in float64, which holds every integer up to 2**53 exactly. Every value
they compute is the length of a simple path (with no negative cycle a relaxation never
closes a cycle), so when every simple path is shorter than 2**53 in magnitude, float64 is
exact. :func:`float_is_exact` checks that bound. Past it, scipy's answer is only a hint:

1. take scipy's shortest-path tree (its predecessors);
2. sum the integer weights along that tree exactly (pointer jumping, int64);
3. check every edge: ``d[v] <= d[u] + w``. An edge that is shorter re-parents ``v`` and
   the tree is summed again. A tree whose sums no edge can improve is a certificate: those
   sums are the exact shortest distances.

Step 3 only ever lowers distances and never closes a cycle (that would need a negative
cycle), so it ends; when the hint is unusable (a cycle in it) an exact solver that needs
no hint runs instead: a binary-heap Dijkstra on Python integers, or integer Bellman-Ford
rounds for negative weights.
"""
from __future__ import annotations

import heapq

import numpy as np

FLOAT_EXACT_LIMIT = 2 ** 53
NO_PARENT = -1
MAX_REPAIRS = 256


def path_bound(n: int, w: np.ndarray) -> int:
    """An upper bound on |length| of any simple path: min(sum |w|, (n - 1) x max |w|)."""
    if w.size == 0:
        return 0
    magnitude = np.abs(w.astype(np.int64))
    return min(int(magnitude.sum(dtype=np.int64)), (n - 1) * int(magnitude.max()))


def float_is_exact(n: int, w: np.ndarray) -> bool:
    """True when float64 Dijkstra/Bellman-Ford cannot round any distance (``w``: one weight per edge used)."""
    return path_bound(n, w) < FLOAT_EXACT_LIMIT


def exact_from_hint(n: int, src: np.ndarray, dst: np.ndarray, w: np.ndarray, reachable: np.ndarray,
                    hint_parent: np.ndarray, source: int = 0) -> np.ndarray | None:
    """Exact int64 distances (unreachable = -1) from a float solver's predecessor array.

    ``src, dst, w``: one edge per (src, dst), sorted by ``src * n + dst``; ``reachable``:
    what the float solver reached (reachability does not depend on rounding);
    ``hint_parent``: its predecessors (anything negative = none). None when the hint
    cannot be used (a parent edge that does not exist, a cycle): use :func:`exact_solve`.
    """
    keys = src.astype(np.int64) * n + dst
    parent = np.where(reachable, hint_parent, NO_PARENT).astype(np.int64)
    parent[parent < 0] = NO_PARENT
    parent[source] = NO_PARENT
    if np.any(reachable & (parent == NO_PARENT) & (np.arange(n) != source)):
        return None
    parent_w = np.zeros(n, dtype=np.int64)
    child = np.flatnonzero(parent != NO_PARENT)
    wanted = parent[child] * n + child
    where = np.searchsorted(keys, wanted)
    if np.any(where >= keys.size) or np.any(keys[np.minimum(where, keys.size - 1)] != wanted):
        return None
    parent_w[child] = w[where]
    usable = reachable[src]
    e_src, e_dst, e_w = src[usable].astype(np.int64), dst[usable].astype(np.int64), w[usable].astype(np.int64)
    for _ in range(MAX_REPAIRS):
        dist = tree_sums(parent, parent_w, source)
        if dist is None:
            return None
        candidate = dist[e_src] + e_w
        better = np.flatnonzero(candidate < dist[e_dst])
        if better.size == 0:
            dist[~reachable] = -1
            return dist
        # the best improving edge per vertex: sort by (vertex, candidate), keep each vertex's first
        order = np.lexsort((candidate[better], e_dst[better]))
        better = better[order]
        first = np.ones(better.size, dtype=bool)
        first[1:] = e_dst[better][1:] != e_dst[better][:-1]
        better = better[first]
        parent[e_dst[better]] = e_src[better]
        parent_w[e_dst[better]] = e_w[better]
    return None


def tree_sums(parent: np.ndarray, parent_w: np.ndarray, source: int) -> np.ndarray | None:
    """Exact sum of weights from ``source`` down the tree to every vertex (vertices without a
    parent other than the source get 0); None when the parent pointers contain a cycle.

    Pointer jumping: after round k each vertex knows the sum over its 2**k nearest ancestors'
    edges, so a tree of depth D takes log2(D) vectorised rounds."""
    n = parent.shape[0]
    ancestor = np.where(parent == NO_PARENT, source, parent)
    total = np.where(parent == NO_PARENT, 0, parent_w).astype(np.int64)
    total[source] = 0
    ancestor[source] = source
    for _ in range(max(1, int(n).bit_length()) + 1):
        if np.all(ancestor == source):
            return total
        total += total[ancestor]
        ancestor = ancestor[ancestor]
    return total if np.all(ancestor == source) else None


def exact_solve(n: int, src: np.ndarray, dst: np.ndarray, w: np.ndarray, source: int = 0) -> np.ndarray:
    """Exact distances without a hint: heap Dijkstra (weights >= 0) or integer Bellman-Ford.

    Raises ValueError on a negative cycle reachable from the source."""
    if w.size and int(w.min()) < 0:
        return bellman_ford_int(n, src, dst, w, source)
    return heap_dijkstra(n, src, dst, w, source)


def heap_dijkstra(n: int, src: np.ndarray, dst: np.ndarray, w: np.ndarray, source: int = 0) -> np.ndarray:
    """Dijkstra with a binary heap on Python integers (exact at any size; about 1 s per million edges)."""
    order = np.argsort(src, kind="stable")
    start = np.searchsorted(src[order], np.arange(n + 1)).tolist()
    targets = dst[order].tolist()
    weights = w[order].astype(np.int64).tolist()
    best = [-1] * n
    done = [False] * n
    best[source] = 0
    heap = [(0, source)]
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        d, u = pop(heap)
        if done[u]:
            continue
        done[u] = True
        for k in range(start[u], start[u + 1]):
            v = targets[k]
            nd = d + weights[k]
            if not done[v] and (best[v] < 0 or nd < best[v]):
                best[v] = nd
                push(heap, (nd, v))
    return np.array(best, dtype=np.int64)


def bellman_ford_int(n: int, src: np.ndarray, dst: np.ndarray, w: np.ndarray, source: int = 0) -> np.ndarray:
    """Vectorised integer Bellman-Ford rounds (each relaxes every edge from the last round's values)."""
    unreached = np.iinfo(np.int64).max
    dist = np.full(n, unreached, dtype=np.int64)
    dist[source] = 0
    src64, dst64, w64 = src.astype(np.int64), dst.astype(np.int64), w.astype(np.int64)
    for _ in range(n):
        live = dist[src64] != unreached
        candidate = np.full(n, unreached, dtype=np.int64)
        np.minimum.at(candidate, dst64[live], dist[src64[live]] + w64[live])
        improved = candidate < dist
        if not improved.any():
            dist[dist == unreached] = -1
            return dist
        dist = np.minimum(dist, candidate)
    raise ValueError("the graph has a negative cycle: shortest distances are undefined")
