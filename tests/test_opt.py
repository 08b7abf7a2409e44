"""opt beyond the all-methods loop: far-pile splits, hubs, unit weights, work efficiency."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import random_graph, scipy_distances
from sssp_gpu.device import CPU, select_device
from sssp_gpu.engine import solve
from sssp_common.graph import Graph
from sssp_gpu.methods import opt
from sssp_gpu.methods.common import Run

DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]
SYNCS = ["outcore", "incore"]


def device_for(name: str):
    return CPU if name == "cpu" else select_device("gpu")


def grid(side: int, weights: bool, seed: int = 0) -> Graph:
    """A side x side 4-neighbour grid, both directions, edges shuffled."""
    rng = np.random.default_rng(seed)
    ids = np.arange(side * side).reshape(side, side)
    right = np.stack([ids[:, :-1].ravel(), ids[:, 1:].ravel()])
    down = np.stack([ids[:-1, :].ravel(), ids[1:, :].ravel()])
    pairs = np.concatenate([right, down, right[::-1], down[::-1]], axis=1)
    pairs = pairs[:, rng.permutation(pairs.shape[1])]
    w = rng.integers(1, 101, pairs.shape[1]) if weights else None
    return Graph.from_arrays(pairs[0], pairs[1], w)


def star_with_tail(hub_degree: int, seed: int = 0) -> Graph:
    """Vertex 0 points at hub_degree vertices (a hub cut into many chunks); a chain hangs off them."""
    rng = np.random.default_rng(seed)
    leaves = np.arange(1, hub_degree + 1)
    src = [np.zeros(hub_degree, dtype=np.int64), leaves[:-1], rng.integers(1, hub_degree, 500)]
    dst = [leaves, leaves[1:], rng.integers(1, hub_degree + 200, 500)]
    w = [rng.integers(1, 1000, hub_degree), np.ones(hub_degree - 1, dtype=np.int64), rng.integers(0, 5, 500)]
    return Graph.from_arrays(np.concatenate(src), np.concatenate(dst), np.concatenate(w))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sync", SYNCS)
@pytest.mark.parametrize("delta", ["auto", "1", "7", "100000", "0"])
def test_any_bucket_width_gives_the_reference(device, sync, delta, monkeypatch):
    """Small widths force many far-pile splits; 0 means unbounded (no far pile)."""
    if delta != "auto":
        monkeypatch.setenv("SSSP_OPT_DELTA", delta)
    for seed, max_weight in ((21, 50), (22, 1000), (23, None)):
        graph = random_graph(seed, n=2000, m=12000, max_weight=max_weight, unreachable=150)
        result = solve(graph, Run("opt", sync, False, 512, 4), device_for(device))
        np.testing.assert_array_equal(result.dist, scipy_distances(graph), err_msg=f"seed {seed}")
    if delta == "1":
        assert "far-pile splits" in result.notes[0]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sync", SYNCS)
@pytest.mark.parametrize("bsize", [32, 256, 1024])
def test_hub_vertex_split_into_chunks(device, sync, bsize):
    graph = star_with_tail(5000)
    result = solve(graph, Run("opt", sync, False, bsize, 1), device_for(device))
    np.testing.assert_array_equal(result.dist, scipy_distances(graph))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sync", SYNCS)
def test_unit_weights_relax_each_reachable_edge_once(device, sync, monkeypatch):
    """Equal weights without chain walks or fusion: rounds are BFS levels and each edge is
    relaxed once; with them, fewer rounds for a little more work."""
    graph = grid(60, weights=False)
    monkeypatch.setenv("SSSP_OPT_CHAIN", "0")
    monkeypatch.setenv("SSSP_OPT_FUSE", "0")
    result = solve(graph, Run("opt", sync, False, 512, 4), device_for(device))
    np.testing.assert_array_equal(result.dist, scipy_distances(graph))
    assert result.rounds == 2 * 59 + 1
    assert result.edges_processed == graph.m
    monkeypatch.setenv("SSSP_OPT_CHAIN", "16")
    monkeypatch.delenv("SSSP_OPT_FUSE")
    walked = solve(graph, Run("opt", sync, False, 512, 4), device_for(device))
    np.testing.assert_array_equal(walked.dist, scipy_distances(graph))
    assert walked.rounds <= result.rounds and walked.edges_processed <= 3 * graph.m


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sync", SYNCS)
def test_weighted_grid_is_work_efficient(device, sync):
    """The issue's bar: at most 3 relaxations per edge on the weighted grid (bmf: hundreds)."""
    graph = grid(80, weights=True, seed=3)
    result = solve(graph, Run("opt", sync, False, 512, 4), device_for(device))
    np.testing.assert_array_equal(result.dist, scipy_distances(graph))
    assert result.edges_processed <= 3 * graph.m


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sync", SYNCS)
@pytest.mark.parametrize("chain,fuse", [("1", "0"), ("4", "0"), ("64", "0"), ("0", "1"), ("0", "4"),
                                        ("0", "16"), ("4", "8")])
def test_chain_walks_and_fusion_give_the_reference(device, sync, chain, fuse, monkeypatch):
    """Lanes following improvements for several hops, and blocks expanding their own
    improvements before the barrier (bucket fusion), change the order of relaxations,
    never the answer (grids, random graphs, a hub)."""
    monkeypatch.setenv("SSSP_OPT_CHAIN", chain)
    monkeypatch.setenv("SSSP_OPT_FUSE", fuse)
    graphs = [grid(50, weights=True, seed=4), grid(50, weights=False), star_with_tail(3000),
              random_graph(31, n=3000, m=20000, max_weight=100, unreachable=200)]
    for delta in ("", "3"):
        monkeypatch.setenv("SSSP_OPT_DELTA", delta)
        for graph in graphs:
            result = solve(graph, Run("opt", sync, False, 256, 1), device_for(device))
            np.testing.assert_array_equal(result.dist, scipy_distances(graph))


def test_choose_delta():
    unit = Graph.from_arrays([0, 1], [1, 2])
    assert opt.choose_delta(unit) >= opt.UNBOUNDED
    weighted = Graph.from_arrays([0, 0, 1, 1], [1, 2, 2, 3], [10, 30, 20, 20])  # mean 20, degree 2
    assert opt.choose_delta(weighted) == 32 * 20 // 2


def test_cpu_fallback_reports_its_work():
    graph = random_graph(5, n=500, m=3000, max_weight=30)
    result = solve(graph, Run("opt", "outcore", False, 512, 4), CPU)
    assert 0 < result.edges_processed <= 3 * graph.m
    assert result.rounds >= 1 and result.filtering_ms >= 0
