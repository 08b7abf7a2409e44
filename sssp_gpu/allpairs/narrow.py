"""fw-blocked on 16-bit entries (Hopper's DPX add-min on two halves at once), kept exact.

Entries are int16 with unreachable = HALF_INF[2] = 16383, so two entries add without wrapping.
Every write is min(a + b, c) with c <= 16383, so the 16-bit matrix is exactly
min(true distance, 16383) entry by entry (a sum below 16383 is a sum of two exact entries;
one at or above it is clamped by the min). The 16-bit run therefore cannot tell a distance
>= 16383 from "unreachable". It can prove there is none: on a shortest path whose length is
>= 16383, the last prefix below 16383 is >= 16383 - w_max (weights are >= 0 and one edge adds
at most w_max), and that prefix is itself a shortest distance, held exactly. So when the
largest finite 16-bit entry is below 16383 - w_max, no distance reaches 16383 and the result is
exact; otherwise the solve is repeated in int32 (``proven_exact``).

Whether to try at all (``worth_trying``): weights must be >= 0 and w_max small; if (n - 1) w_max
fits, the run is exact in advance; otherwise a few sampled sources' Dijkstra (scipy, on the CPU)
estimate the longest distance, and a graph whose sample is already near the limit goes straight
to int32 instead of paying for a 16-bit run that the check would throw away.
"""
from __future__ import annotations

import numpy as np

from sssp_common.graph import Graph
from .matrix import HALF_INF, lightest_edges

NARROW = np.dtype(np.int16)
LIMIT = HALF_INF[2]
SAMPLES = 4


def margin(graph: Graph) -> int:
    """The largest finite entry a proven-exact 16-bit result may hold, plus one."""
    return LIMIT - int(graph.w.max()) if graph.m else LIMIT


def worth_trying(graph: Graph) -> bool:
    if graph.m == 0:
        return True
    if int(graph.w.min()) < 0 or int(graph.w.max()) * 4 >= LIMIT:
        return False
    if (graph.n - 1) * int(graph.w.max()) < margin(graph):
        return True  # exact in advance: no simple path is that long
    estimate = sampled_longest(graph)
    return estimate is None or 2 * estimate < margin(graph)


def sampled_longest(graph: Graph) -> int | None:
    """The longest finite distance from a few sources (vertex 0 and seeded others); None
    without scipy (then the 16-bit run is tried and checked)."""
    try:
        import scipy.sparse as sp
        from scipy.sparse.csgraph import dijkstra
    except ImportError:
        return None
    sources = np.unique(np.r_[0, np.random.default_rng(0).integers(0, graph.n, SAMPLES - 1)])
    src, dst, w = lightest_edges(graph)  # scipy's csr_matrix would add duplicates up
    # a zero weight would vanish from a sparse matrix: every weight shifted up by a tiny amount
    matrix = sp.csr_matrix((w.astype(np.float64) + 1e-9, (src, dst)), shape=(graph.n, graph.n))
    dist = dijkstra(matrix, directed=True, indices=sources)
    finite = dist[np.isfinite(dist)]
    return int(np.floor(finite.max())) if finite.size else 0


def proven_exact(top: int, graph: Graph) -> bool:
    """``top``: the 16-bit result's largest finite entry (``ApspResult.stats()[2]``)."""
    return top < margin(graph)
