"""Shared fixtures: the reference solver for tests, the spec's Figure 1, the real graphs."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

ROOT = Path(__file__).resolve().parents[1]
# The real graphs: rome99 and p2p-Gnutella04 are carried in the repository (grader/data/graphs),
# so every checkout tests them; more when a folder beside the checkout holds them (../shared/data,
# or the copy that ../shared/hooks/stage-device-data puts in .device-data/ for the GPU machine).
CARRIED_DATA = ROOT / "grader" / "data" / "graphs"
SHARED_DATA = next((p for p in (ROOT.parent / "shared" / "data", ROOT / ".device-data") if p.is_dir()),
                   ROOT.parent / "shared" / "data")
sys.path.insert(0, str(ROOT))

from sssp_gpu.device import gpu_available  # noqa: E402
from sssp_common.graph import Graph  # noqa: E402
from sssp_gpu.methods.common import INF  # noqa: E402

FIGURE1_EDGES = "0 1 4\n0 2 2\n1 2 5\n1 3 10\n2 4 3\n3 5 11\n4 3 4\n"
FIGURE1_DIST = [0, 4, 2, 9, 5, 20]
REAL_GRAPH_FILES = {p.name: p for folder in (CARRIED_DATA, SHARED_DATA) if folder.is_dir()
                    for p in sorted(folder.glob("*.gz"))}
REAL_GRAPHS = sorted(REAL_GRAPH_FILES)


def scipy_distances(graph: Graph) -> np.ndarray:
    """Independent answer: scipy's Dijkstra on the graph (parallel edges: the lightest)."""
    order = np.lexsort((graph.w, graph.dst, graph.src))
    src, dst, w = graph.src[order], graph.dst[order], graph.w[order]
    first = np.ones(src.shape[0], dtype=bool)
    first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
    matrix = sp.csr_matrix((w[first].astype(np.float64), (src[first], dst[first])), shape=(graph.n, graph.n))
    dist = dijkstra(matrix, directed=True, indices=0)
    out = np.full(graph.n, INF, dtype=np.int64)
    finite = np.isfinite(dist)
    out[finite] = dist[finite].astype(np.int64)
    return out


def random_graph(seed: int, n: int = 300, m: int = 1500, max_weight: int | None = 20,
                 unreachable: int = 20) -> Graph:
    """Random directed graph with duplicates, self-loops, isolated and unreachable vertices."""
    rng = np.random.default_rng(seed)
    reachable = n - unreachable
    src = rng.integers(0, reachable, m)
    dst = rng.integers(0, reachable, m)
    src[: m // 50] = dst[: m // 50]  # self-loops
    src = np.concatenate([src, src[:20]])  # duplicate edges, possibly other weights
    dst = np.concatenate([dst, dst[:20]])
    # a part reachable only from itself (edges into the main part, none out of it)
    island = rng.integers(reachable, n - 1, 30) if unreachable > 1 else np.zeros(0, dtype=np.int64)
    src = np.concatenate([src, island])
    dst = np.concatenate([dst, rng.integers(0, n, island.shape[0])])
    w = None if max_weight is None else rng.integers(0, max_weight + 1, src.shape[0])
    return Graph.from_arrays(src, dst, w, n=n)


@pytest.fixture
def figure1_file(tmp_path) -> Path:
    path = tmp_path / "figure1.txt"
    path.write_text(FIGURE1_EDGES)
    return path


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    """Each test gets its own caches (graphs, references, digests, orderings), so no test sees another's entries."""
    monkeypatch.setenv("SSSP_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def server(monkeypatch):
    """A local HTTP server of tests/http_server.py (no proxy in the way), stopped after the test."""
    from tests import http_server
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    httpd = http_server.start()
    yield httpd
    http_server.stop(httpd)


@pytest.fixture
def fresh_clone(tmp_path, monkeypatch):
    """No data folder: $SSSP_DATA_DIR empty, no ./data or .device-data; only the carried graphs."""
    from grader.data import catalogue
    empty = tmp_path / "empty-data"
    empty.mkdir()
    monkeypatch.setenv("SSSP_DATA_DIR", str(empty))
    monkeypatch.setattr(catalogue, "REPO_ROOT", tmp_path / "no-checkout")
    return empty


def pytest_collection_modifyitems(config, items):
    """GPU tests skip where there is no GPU, unless SSSP_DEVICE=gpu demands one (make test-gpu)."""
    if gpu_available() or os.environ.get("SSSP_DEVICE", "").lower() == "gpu":
        return
    skip = pytest.mark.skip(reason="no CUDA GPU here (make test-gpu runs these on the GPU machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
