"""What the seed papers' vertex-centric methods share: the CSR by source, packed keys, results with predecessors.

vbf, harish and dijkstra all give one thread a vertex and walk its out-edges, so they
read the graph as a CSR by source (``row_ptr``, then each out-edge's head and weight
together, one 8-byte load). harish and dijkstra pack a distance and a vertex into one
64-bit key so a single ``atomicMin`` (or a min-reduction) orders by distance, then by
vertex: the key is ``distance << shift | low`` with ``shift`` bits for the low part.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from sssp_common.graph import Graph
from ..resident import on_device
from .common import Result

ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


@dataclass
class PathResult(Result):
    """A :class:`Result` that also carries each vertex's predecessor (-1: source or unreachable)."""

    pred: Optional[np.ndarray] = None


def longest_path_bound(graph: Graph) -> int:
    """No shortest path weighs more than this (the bound distance_dtype uses)."""
    if graph.m == 0:
        return 0
    return min((graph.n - 1) * graph.w_max, graph.w_total)


def key_shift(graph: Graph, low_values: int) -> int:
    """Bits for the low part of a packed key holding values ``0..low_values-1``.

    The distance part gets the rest; a candidate is at most a path bound plus one edge,
    and keys of real candidates stay below 2^63 (the all-ones patterns mean "none").
    Raises ValueError (one line) when a graph's weights leave no room.
    """
    shift = max(1, int(low_values - 1).bit_length())
    top = longest_path_bound(graph) + graph.w_max
    if top >= (1 << (62 - shift)):
        raise ValueError(f"distances up to {top} and {low_values} vertices do not fit one 64-bit "
                         f"(distance, vertex) key; use bmf, tpe or opt for this graph")
    return shift


def csr_cpu(graph: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``row_ptr`` (n + 1, int64) and the out-edges' heads and weights grouped by tail, in file order."""
    order = np.argsort(graph.src, kind="stable")
    row_ptr = np.zeros(graph.n + 1, dtype=np.int64)
    np.cumsum(np.bincount(graph.src, minlength=graph.n), out=row_ptr[1:])
    return row_ptr, graph.dst[order], graph.w[order]


def csr_gpu(graph: Graph, src=None, dst=None):
    """The same on the GPU: ``row_ptr`` (int32) and ``adj`` as (head, weight) int2 pairs.

    ``src``/``dst``: device copies of the edge arrays when the caller has them already (each
    host array is copied to the GPU once per solve: at 69 M edges a copy is ~20-40 ms).
    """
    import cupy

    src = on_device(graph.src) if src is None else src
    dst = on_device(graph.dst) if dst is None else dst
    order = None if is_sorted(src) else cupy.argsort(src)  # SNAP files come sorted by tail
    # searchsorted over the sorted tails, not bincount: cupy.bincount imports cupyx (and
    # SciPy), ~0.4 s of the run (BENCHMARKS.md, wall time)
    tails = src if order is None else src[order]
    row_ptr = cupy.searchsorted(tails, cupy.arange(graph.n + 1, dtype=tails.dtype)).astype(np.int32)
    del tails
    adj = cupy.empty((graph.m, 2), dtype=np.int32)
    adj[:, 0] = dst if order is None else dst[order]
    if graph.equal_weights:
        adj[:, 1] = graph.w_min  # no copy of m equal weights
    else:
        w = on_device(graph.w)
        adj[:, 1] = w if order is None else w[order]
    return row_ptr, adj


def is_sorted(keys) -> bool:
    """Whether a device array is in non-decreasing order (then a stable sort would not move it)."""
    return keys.shape[0] < 2 or bool((keys[1:] >= keys[:-1]).all())


def out_edges(row_ptr: np.ndarray, vertices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For CSR ``row_ptr``: (edge positions, their tail) of all out-edges of ``vertices``."""
    return edges_in_ranges(vertices, row_ptr[vertices], row_ptr[vertices + 1])


def edges_in_ranges(vertices: np.ndarray, begin: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(edge positions, their tail): positions ``begin[i]..end[i] - 1`` for each ``vertices[i]``."""
    counts = end - begin
    total = int(counts.sum())
    owner = np.repeat(vertices, counts)
    edge = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    edge += np.repeat(begin, counts)
    return edge, owner


def one_per_head(head: np.ndarray, candidate: np.ndarray, tail: np.ndarray):
    """The smallest candidate per head, ties to the smallest tail (what a packed atomicMin keeps)."""
    order = np.lexsort((tail, candidate, head))
    head, candidate, tail = head[order], candidate[order], tail[order]
    first = np.ones(head.shape[0], dtype=bool)
    first[1:] = head[1:] != head[:-1]
    return head[first], candidate[first], tail[first]


def blocks_for(n: int, bsize: int) -> int:
    """One thread per vertex (the papers' naive launch)."""
    return max(1, -(-n // bsize))
