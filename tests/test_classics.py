"""The seed papers' SSSP methods (vbf, vbf-stride, vbf-flag, harish, dijkstra) agree with scipy.

Every method x sync x a few block configurations over random graphs, Figure 1 and the real
graphs; then what agreement alone cannot show: predecessors, round counts, refusals.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import FIGURE1_DIST, REAL_GRAPH_FILES, REAL_GRAPHS, random_graph, scipy_distances
from sssp_common.graph import Graph
from sssp_common.loader import load_graph
from sssp_common.vocabulary import PAPER_METHODS
from sssp_gpu.device import CPU, select_device
from sssp_gpu.engine import solve
from sssp_gpu.methods import dijkstra
from sssp_gpu.methods.common import INF, Run

SYNCS = ("outcore", "incore")
CONFIGS = ((256, 8), (1024, 2), (32, 1), (64, 40))
DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]
FIGURE1 = Graph.from_arrays([0, 0, 1, 1, 2, 3, 4], [1, 2, 2, 3, 4, 5, 3], [4, 2, 5, 10, 3, 11, 4])


def device_for(name: str):
    return CPU if name == "cpu" else select_device("gpu")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", PAPER_METHODS)
@pytest.mark.parametrize("sync", SYNCS)
@pytest.mark.parametrize("bsize,bcount", CONFIGS)
def test_random_graphs(device, method, sync, bsize, bcount):
    run = Run(method, sync, False, bsize, bcount)
    for seed, max_weight in ((1, 20), (2, None), (3, 1000), (4, 0)):
        graph = random_graph(seed, max_weight=max_weight)
        result = solve(graph, run, device_for(device))
        np.testing.assert_array_equal(result.dist, scipy_distances(graph), err_msg=f"{run} seed {seed}")
        assert result.rounds >= 1 and result.computation_ms >= 0 and result.edges_processed > 0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", PAPER_METHODS)
def test_figure1(device, method):
    for sync in SYNCS:
        for bsize, bcount in CONFIGS:
            result = solve(FIGURE1, Run(method, sync, False, bsize, bcount), device_for(device))
            assert result.dist.tolist() == FIGURE1_DIST


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", REAL_GRAPHS)
def test_real_graphs(device, name):
    graph = load_graph(REAL_GRAPH_FILES[name])
    expected = scipy_distances(graph)
    for method in PAPER_METHODS:
        if method == "dijkstra" and device == "cpu" and graph.n > 20_000:
            continue  # O(n^2) in numpy: minutes; the GPU run checks it
        for sync in SYNCS if device == "gpu" else ("outcore",):
            result = solve(graph, Run(method, sync, False, 512, 4), device_for(device))
            mismatches = int(np.count_nonzero(result.dist != expected))
            assert mismatches == 0, f"{name} {method} {sync}: {mismatches} vertices differ"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", PAPER_METHODS)
def test_wide_distances_never_wrap(device, method):
    big = 2_000_000_000
    graph = Graph.from_arrays([0, 1, 2, 0], [1, 2, 3, 4], [big, big, big, 5], n=6)
    result = solve(graph, Run(method, "outcore", False, 256, 8), device_for(device))
    assert result.dist.tolist() == [0, big, 2 * big, 3 * big, 5, INF]


@pytest.mark.parametrize("device", DEVICES)
def test_flag_relaxes_fewer_edges_than_naive_in_as_many_rounds(device):
    """Out-of-core, the flag only skips vertices whose distance did not change: same rounds, less work."""
    graph = random_graph(5, n=2000, m=10000, max_weight=50)
    naive, flag = (solve(graph, Run(m, "outcore", False, 256, 8), device_for(device)) for m in ("vbf", "vbf-flag"))
    assert naive.rounds == flag.rounds
    assert flag.edges_processed < naive.edges_processed


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", ("harish", "dijkstra"))
def test_native_predecessors_are_a_shortest_path_tree(device, method):
    graph = random_graph(6, max_weight=5)
    result = solve(graph, Run(method, "outcore", False, 256, 8), device_for(device))
    pred = result.pred
    reached = result.dist != INF
    assert pred[0] == -1 and np.all(pred[~reached] == -1)
    inner = np.flatnonzero(reached)[1:] if reached[0] else []
    for v in inner:
        if v == 0:
            continue
        u = pred[v]
        weights = graph.w[(graph.src == u) & (graph.dst == v)]
        assert weights.size and result.dist[u] + weights.min() == result.dist[v]


@pytest.mark.parametrize("device", DEVICES)
def test_dijkstra_settles_each_reachable_vertex_once(device):
    graph = random_graph(8)
    result = solve(graph, Run("dijkstra", "incore", False, 256, 8), device_for(device))
    assert result.rounds == int(np.count_nonzero(result.dist != INF)) + 1


def test_dijkstra_refuses_big_graphs(monkeypatch):
    monkeypatch.setattr(dijkstra, "MAX_VERTICES", 100)
    with pytest.raises(ValueError, match="over its limit of 100"):
        solve(random_graph(1), Run("dijkstra", "outcore", False, 256, 8), CPU)


def test_packed_keys_refuse_weights_that_cannot_share_64_bits():
    huge = Graph.from_arrays(np.arange(200), np.arange(1, 201), np.full(200, 2**31 - 1), n=2**26)
    with pytest.raises(ValueError, match="64-bit"):
        solve(huge, Run("harish", "outcore", False, 256, 8), CPU)
