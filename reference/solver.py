"""Reference distances from vertex 0: scipy's Dijkstra (Bellman-Ford if a weight is negative),
exact at any size: where a path could reach 2**53, float64's answer is only a hint that
:mod:`reference.exact` turns into certified integer distances.

Deliberately shares nothing with :mod:`sssp_gpu.methods`; only the file reader is common,
so a reader bug would show in both (the loader has its own tests against hand-made files).
Answers are cached by the file's content hash, so the grader's many runs over one graph
solve it once, and a renamed or copied file still hits the cache; every entry carries a
checksum that is checked on load (:mod:`reference.cache`), and :func:`verify` lets a
caller check an answer it holds.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import NegativeCycleError, bellman_ford, dijkstra

from sssp_common.errors import InputError
from sssp_common.files import cache_dir
from sssp_common.graph import Graph
from sssp_common.loader import load_graph
from sssp_common.vocabulary import SOURCE, UNREACHABLE
from sssp_common.digest import distances_checksum, file_digest

from . import cache
from .exact import exact_from_hint, exact_solve, float_is_exact


def reference_dir() -> Path:
    return cache_dir("reference")


@dataclass(frozen=True)
class ReferenceResult:
    dist: np.ndarray  # int64, UNREACHABLE where vertex 0 cannot reach
    cached: bool
    seconds: float
    digest: str       # of the graph file's bytes (the cache key)
    checksum: str = ""  # of ``dist`` (cache.checksum): what verify() checks


def distances(path) -> np.ndarray:
    """Distances from vertex 0 for the graph file at ``path`` (int64, unreachable = -1)."""
    return compute(path).dist


def compute(path, err=None) -> ReferenceResult:
    """Like :func:`distances`, also saying whether the answer came from the cache (checked:
    a damaged entry is recomputed with a one-line warning on ``err``) and how long it took."""
    started = time.perf_counter()
    digest = _digest_or_input_error(Path(path))
    found = cache.load(reference_dir(), digest, err)
    if found is not None:
        dist, checksum = found
        return ReferenceResult(dist, True, time.perf_counter() - started, digest, checksum)
    dist = distances_for_graph(load_graph(path))
    checksum = cache.store(reference_dir(), digest, dist)
    return ReferenceResult(dist, False, time.perf_counter() - started, digest, checksum)


def verify(result: ReferenceResult, n: int | None = None) -> bool:
    """True when ``result.dist`` is still the answer that was computed or loaded: a 1-D int64
    array (of ``n`` values when given) whose checksum is ``result.checksum``.

    Callers holding a reference for a while (the grader compares many outputs with one)
    call this before use; it costs one pass over the array (~10 ms per million vertices)."""
    dist = result.dist
    if not isinstance(dist, np.ndarray) or dist.dtype != np.int64 or dist.ndim != 1:
        return False
    if n is not None and dist.shape[0] != n:
        return False
    return bool(result.checksum) and distances_checksum(dist) == result.checksum


def _digest_or_input_error(path: Path) -> str:
    try:
        if path.is_dir():
            raise InputError(path, "is a folder, not a graph file")
        return file_digest(path)
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except OSError as err:
        raise InputError(path, f"cannot read: {err.strerror or err}") from None


def distances_for_graph(graph: Graph) -> np.ndarray:
    """Distances from vertex 0 for an in-memory graph (int64, unreachable = -1)."""
    return solve(graph.n, graph.src, graph.dst, graph.w)


def solve(n: int, src, dst, w) -> np.ndarray:
    """Distances from vertex 0 over edges ``src[i] -> dst[i]`` of integer weight ``w[i]`` (int64,
    unreachable = -1), exact at any size: scipy's float64 solvers where every path is shorter
    than 2**53 (float64 is exact there), integers past it (:mod:`reference.exact`)."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    src, dst, w = _lightest_edges(n, np.asarray(src), np.asarray(dst), np.asarray(w))
    exact = float_is_exact(n, w)
    # Explicit zeros survive csr construction from (data, (row, col)) and scipy's csgraph
    # treats them as edges (tests/test_reference.py checks that), so zero weights are kept.
    matrix = sp.csr_matrix((w.astype(np.float64), (src, dst)), shape=(n, n))
    negative = bool(w.size) and int(w.min()) < 0
    try:
        solver = bellman_ford if negative else dijkstra
        found = solver(matrix, directed=True, indices=SOURCE, return_predecessors=not exact)
    except NegativeCycleError:
        raise ValueError("the graph has a negative cycle: shortest distances are undefined") from None
    if not exact:
        dist, parent = found
        result = exact_from_hint(n, src, dst, w, np.isfinite(dist), parent, SOURCE)
        return result if result is not None else exact_solve(n, src, dst, w, SOURCE)
    out = np.full(n, UNREACHABLE, dtype=np.int64)
    finite = np.isfinite(found)
    out[finite] = np.rint(found[finite]).astype(np.int64)
    return out


def integer_mode(graph: Graph) -> bool:
    """True when :func:`distances_for_graph` works in integers (a path could reach 2**53)."""
    _, _, w = _lightest_edges(graph.n, graph.src, graph.dst, graph.w)
    return not float_is_exact(graph.n, w)


def _lightest_edges(n: int, src, dst, w):
    """One edge per (src, dst), the lightest, sorted by (src, dst); self-loops dropped (csr would sum duplicates)."""
    src = src.astype(np.int64)
    dst = dst.astype(np.int64)
    w = w.astype(np.int64)
    keep = src != dst
    src, dst, w = src[keep], dst[keep], w[keep]
    key = src * n + dst
    order = np.lexsort((w, key))
    key, w = key[order], w[order]
    first = np.ones(key.shape[0], dtype=bool)
    first[1:] = key[1:] != key[:-1]
    key, w = key[first], w[first]
    return key // n, key % n, w
