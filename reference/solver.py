"""Reference distances from vertex 0: scipy's Dijkstra (Bellman-Ford if a weight is negative).

Deliberately shares nothing with :mod:`sssp_gpu.methods`; only the file reader is common,
so a reader bug would show in both (the loader has its own tests against hand-made files).
Answers are cached by the file's content hash, so the grader's many runs over one graph
solve it once, and a renamed or copied file still hits the cache.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import NegativeCycleError, bellman_ford, dijkstra

from sssp_common.errors import InputError
from sssp_common.files import atomic_writer, cache_dir
from sssp_common.graph import Graph
from sssp_common.loader import load_graph
from sssp_common.vocabulary import SOURCE, UNREACHABLE

from sssp_common.digest import file_digest



def reference_dir() -> Path:
    return cache_dir("reference")


@dataclass(frozen=True)
class ReferenceResult:
    dist: np.ndarray  # int64, UNREACHABLE where vertex 0 cannot reach
    cached: bool
    seconds: float
    digest: str


def distances(path) -> np.ndarray:
    """Distances from vertex 0 for the graph file at ``path`` (int64, unreachable = -1)."""
    return compute(path).dist


def compute(path) -> ReferenceResult:
    """Like :func:`distances`, also saying whether the answer came from the cache and how long it took."""
    started = time.perf_counter()
    digest = _digest_or_input_error(Path(path))
    entry = reference_dir() / f"{digest}.npy"
    cached = _read(entry)
    if cached is not None:
        return ReferenceResult(cached, True, time.perf_counter() - started, digest)
    dist = distances_for_graph(load_graph(path))
    _write(entry, dist)
    return ReferenceResult(dist, False, time.perf_counter() - started, digest)


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
    n = graph.n
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    src, dst, w = _lightest_edges(graph)
    # Explicit zeros survive csr construction from (data, (row, col)) and scipy's csgraph
    # treats them as edges (tests/test_reference.py checks that), so zero weights are kept.
    matrix = sp.csr_matrix((w.astype(np.float64), (src, dst)), shape=(n, n))
    if w.size and int(w.min()) < 0:
        try:
            dist = bellman_ford(matrix, directed=True, indices=SOURCE)
        except NegativeCycleError:
            raise ValueError("the graph has a negative cycle: shortest distances are undefined") from None
    else:
        dist = dijkstra(matrix, directed=True, indices=SOURCE)
    out = np.full(n, UNREACHABLE, dtype=np.int64)
    finite = np.isfinite(dist)
    # float64 is exact for integer distances below 2**53 (far above any spec graph's)
    out[finite] = np.rint(dist[finite]).astype(np.int64)
    return out


def _lightest_edges(graph: Graph):
    """One edge per (src, dst), the lightest; self-loops dropped (csr would sum duplicates)."""
    src = graph.src.astype(np.int64)
    dst = graph.dst.astype(np.int64)
    w = graph.w.astype(np.int64)
    keep = src != dst
    src, dst, w = src[keep], dst[keep], w[keep]
    key = src * graph.n + dst
    order = np.lexsort((w, key))
    key, w = key[order], w[order]
    first = np.ones(key.shape[0], dtype=bool)
    first[1:] = key[1:] != key[:-1]
    key, w = key[first], w[first]
    return key // graph.n, key % graph.n, w


def _read(entry: Path) -> np.ndarray | None:
    try:
        dist = np.load(entry, allow_pickle=False)
    except (OSError, ValueError):
        return None
    if dist.dtype != np.int64 or dist.ndim != 1:
        return None
    return dist


def _write(entry: Path, dist: np.ndarray) -> None:
    """Atomic and best effort: a read-only cache folder only costs speed."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        with atomic_writer(entry, "wb") as stream:
            np.save(stream, dist)
    except OSError:
        pass
