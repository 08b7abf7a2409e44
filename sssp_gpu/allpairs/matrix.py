"""The all-pairs distance matrix: its size, its internal INF, and reading rows out of it.

Methods work on an N x N matrix, N = n rounded up to :data:`TILE`, padded with unreachable
entries (and zeros on the diagonal). Unreachable is half the working type's range
(``Half<D>`` in apsp.cu) so two entries add without overflow; the output maps it to the
output type's maximum. The working type is int32 when every candidate (a path bound
plus one edge) stays below that half range, else int64; the output type is int32 when
every finite distance fits int32, else int64.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sssp_common.graph import Graph

TILE = 128
HALF_INF = {2: (1 << 14) - 1, 4: (1 << 30) - 1, 8: (1 << 62) - 1}  # 2: fw-blocked's int16 (narrow.py)


def padded(n: int) -> int:
    return max(TILE, -(-n // TILE) * TILE)


def working_dtype(graph: Graph) -> np.dtype:
    if graph.m == 0:
        return np.dtype(np.int32)
    bound = min((graph.n - 1) * int(graph.w.max()), int(graph.w.sum(dtype=np.int64))) + int(graph.w.max())
    return np.dtype(np.int32) if bound < HALF_INF[4] else np.dtype(np.int64)


def lightest_edges(graph: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One edge per (tail, head), the lightest; self-loops dropped (the diagonal is 0)."""
    keep = graph.src != graph.dst
    src, dst, w = graph.src[keep], graph.dst[keep], graph.w[keep]
    order = np.lexsort((w, dst, src))
    src, dst, w = src[order], dst[order], w[order]
    first = np.ones(src.shape[0], dtype=bool)
    first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
    return src[first], dst[first], w[first]


def initial_matrix(graph: Graph, xp=np, dtype=None):
    """The N x N adjacency matrix in the working type, or ``dtype`` (on the GPU when ``xp`` is cupy)."""
    dtype = working_dtype(graph) if dtype is None else np.dtype(dtype)
    size = padded(graph.n)
    d = xp.full((size, size), HALF_INF[dtype.itemsize], dtype=dtype)
    diagonal = xp.arange(size)
    d[diagonal, diagonal] = 0
    src, dst, w = lightest_edges(graph)
    d[xp.asarray(src), xp.asarray(dst)] = xp.asarray(w.astype(dtype))
    return d


@dataclass
class ApspResult:
    """The solved padded matrix (host or device) and the figures the program prints."""

    matrix: object
    n: int
    computation_ms: float
    rounds: int
    launch: str
    on_gpu: bool
    notes: list = field(default_factory=list)

    @property
    def inf(self) -> int:
        return HALF_INF[self.matrix.dtype.itemsize]

    def _xp(self):
        if self.on_gpu:
            import cupy
            return cupy
        return np

    def row_chunks(self, rows: int = 2048):
        """(first row, device block of rows [first, first+rows) x n) over all sources."""
        for first in range(0, self.n, rows):
            yield first, self.matrix[first:min(self.n, first + rows), :self.n]

    def stats(self) -> tuple[int, int, int]:
        """(sum of finite distances, reachable pairs, largest finite distance)."""
        xp = self._xp()
        total = count = top = 0
        for _, block in self.row_chunks():
            finite = block < self.inf
            total += int(xp.where(finite, block, 0).sum(dtype=np.int64))
            count += int(finite.sum())
            top = max(top, int(xp.where(finite, block, 0).max()))
        return total, count, top

    def output_dtype(self, top: int | None = None) -> np.dtype:
        top = self.stats()[2] if top is None else top
        return np.dtype(np.int32) if top < np.iinfo(np.int32).max else np.dtype(np.int64)

    def rows(self, first: int, last: int, dtype=None) -> np.ndarray:
        """Host rows [first, last) in the output type, unreachable = the type's maximum."""
        xp = self._xp()
        dtype = np.dtype(np.int64) if dtype is None else np.dtype(dtype)
        block = self.matrix[first:last, :self.n]
        out = xp.where(block < self.inf, block.astype(dtype), dtype.type(np.iinfo(dtype).max))
        return out.get() if self.on_gpu else out

    def full(self, dtype=None) -> np.ndarray:
        return self.rows(0, self.n, dtype)
