"""opt beyond the all-methods loop: far-pile splits, hubs, unit weights, work efficiency."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import random_graph, scipy_distances
from sssp_gpu.device import CPU, select_device
from sssp_gpu.engine import solve
from sssp_common.errors import UsageError
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
@pytest.mark.parametrize("delta", [None, 1, 7, 100000, 0])
def test_any_bucket_width_gives_the_reference(device, sync, delta):
    """Small widths force many far-pile splits; 0 means unbounded (no far pile)."""
    for seed, max_weight in ((21, 50), (22, 1000), (23, None)):
        graph = random_graph(seed, n=2000, m=12000, max_weight=max_weight, unreachable=150)
        result = solve(graph, Run("opt", sync, False, 512, 4, delta=delta), device_for(device))
        np.testing.assert_array_equal(result.dist, scipy_distances(graph), err_msg=f"seed {seed}")
    if delta == 1:
        assert "far-pile splits" in result.notes[0] and "delta 1," in result.notes[0]
    if delta == 0:
        assert "delta unbounded" in result.notes[0]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sync", SYNCS)
@pytest.mark.parametrize("bsize", [32, 256, 1024])
def test_hub_vertex_split_into_chunks(device, sync, bsize):
    graph = star_with_tail(5000)
    result = solve(graph, Run("opt", sync, False, bsize, 1), device_for(device))
    np.testing.assert_array_equal(result.dist, scipy_distances(graph))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sync", SYNCS)
def test_unit_weights_relax_each_reachable_edge_once(device, sync):
    """Equal weights without fusion: rounds are BFS levels and each edge is relaxed once;
    with fusion (GPU, incore), fewer rounds for a little more work. (-tile 0: on the GPU a unit
    grid would otherwise take the tile path, whose rounds are tile rounds: tests/test_tiles.py.)"""
    graph = grid(60, weights=False)
    result = solve(graph, Run("opt", sync, False, 512, 4, fuse=0, tile=0), device_for(device))
    np.testing.assert_array_equal(result.dist, scipy_distances(graph))
    assert result.rounds == 2 * 59 + 1
    assert result.edges_processed == graph.m
    fused = solve(graph, Run("opt", sync, False, 512, 4, tile=0), device_for(device))
    np.testing.assert_array_equal(fused.dist, scipy_distances(graph))
    assert fused.rounds <= result.rounds and fused.edges_processed <= 3 * graph.m
    if device == "gpu" and sync == "incore":
        assert fused.rounds < result.rounds
        assert "bucket fusion: 32 block-local steps per round" in fused.notes


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sync", SYNCS)
def test_weighted_grid_is_work_efficient(device, sync):
    """At most 3 relaxations per edge on the weighted grid (bmf: hundreds) with the
    work-efficient bucket width (the CPU's default, -delta on the GPU); the GPU's wider
    default trades relaxations for rounds, within a bound."""
    graph = grid(80, weights=True, seed=3)
    expected = scipy_distances(graph)
    efficient = solve(graph, Run("opt", sync, False, 512, 4, delta=opt.work_efficient_delta(graph)),
                      device_for(device))
    np.testing.assert_array_equal(efficient.dist, expected)
    assert efficient.edges_processed <= 3 * graph.m
    default = solve(graph, Run("opt", sync, False, 512, 4), device_for(device))
    np.testing.assert_array_equal(default.dist, expected)
    assert default.edges_processed <= (3 if device == "cpu" else 16) * graph.m


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sync", SYNCS)
@pytest.mark.parametrize("fuse", [0, 1, 4, 16, 32])
def test_fusion_gives_the_reference(device, sync, fuse):
    """Blocks expanding their own improvements before the barrier (bucket fusion) change
    the order of relaxations, never the answer (grids, random graphs, a hub)."""
    graphs = [grid(50, weights=True, seed=4), grid(50, weights=False), star_with_tail(3000),
              random_graph(31, n=3000, m=20000, max_weight=100, unreachable=200)]
    for delta in (None, 3):
        for graph in graphs:
            result = solve(graph, Run("opt", sync, False, 256, 1, delta=delta, fuse=fuse), device_for(device))
            np.testing.assert_array_equal(result.dist, scipy_distances(graph))


def test_choose_delta():
    unit = Graph.from_arrays([0, 1], [1, 2])
    auto = Run("opt")
    for on_gpu in (False, True):
        assert opt.choose_delta(unit, auto, on_gpu) >= opt.UNBOUNDED
    weighted = Graph.from_arrays([0, 0, 1, 1], [1, 2, 2, 3], [10, 30, 20, 20])  # mean 20, degree 2, max 30
    assert opt.choose_delta(weighted, auto, on_gpu=True) == 32 * 30
    assert opt.choose_delta(weighted, auto, on_gpu=True, tiled=True) == 64 * 30
    assert opt.choose_delta(weighted, auto, on_gpu=False) == 32 * 20 // 2
    for on_gpu in (False, True):
        assert opt.choose_delta(weighted, Run("opt", delta=5), on_gpu) == 5
        assert opt.choose_delta(weighted, Run("opt", delta=0), on_gpu) >= opt.UNBOUNDED


def test_knobs_belong_to_opt_only():
    with pytest.raises(UsageError, match="opt only"):
        Run("bmf", delta=3)
    with pytest.raises(UsageError, match="opt only"):
        Run("tpe", fuse=0)
    with pytest.raises(UsageError, match=">= 0"):
        Run("opt", delta=-1)
    with pytest.raises(UsageError, match="-fuse"):
        Run("opt", fuse=-2)
    assert (Run("opt").fuse_steps, Run("opt", fuse=0).fuse_steps) == (32, 0)


def test_ctrl_layout_is_one_header_for_host_and_kernel():
    """Every ctrl[] slot the host names comes from opt_ctrl.cuh, and the kernel sources define none."""
    import re
    from pathlib import Path

    host = Path(opt.__file__).read_text()
    used = set(re.findall(r"\b((?:C|MODE)_[A-Z_]+)\b", host))
    assert used <= set(opt.CTRL), used - set(opt.CTRL)
    for name in ("opt.cu", "opt_phases.cuh"):
        kernel = (Path(opt.KERNEL_DIR) / name).read_text()
        assert not re.search(r"#define (C|MODE)_", kernel), name
        assert set(re.findall(r"\b((?:C|MODE)_[A-Z_]+)\b", kernel)) <= set(opt.CTRL), name
    assert '#include "opt_ctrl.cuh"' in (Path(opt.KERNEL_DIR) / "opt_phases.cuh").read_text()
    slots = [value for name, value in opt.CTRL.items() if name.startswith("C_") and name != "C_SIZE"]
    assert max(slots) < opt.CTRL["C_SIZE"]


def test_cpu_fallback_reports_its_work():
    graph = random_graph(5, n=500, m=3000, max_weight=30)
    result = solve(graph, Run("opt", "outcore", False, 512, 4), CPU)
    assert 0 < result.edges_processed <= 3 * graph.m
    assert result.rounds >= 1 and result.filtering_ms >= 0


def test_few_edges_among_huge_ids_use_binary_search():
    """A handful of edges naming vertex 60000: out-edge ranges come from the sorted tails,
    not from a row pointer as long as the id range, with the same answer."""
    graph = Graph.from_arrays([0, 0, 7, 60000, 3], [7, 60000, 3, 5, 0], [2, 9, 1, 4, 1], n=60001)
    assert opt.CsrBySource(graph).row_ptr is None
    assert opt.CsrBySource(grid(10, weights=True)).row_ptr is not None
    result = solve(graph, Run("opt", "incore", False, 512, 4), CPU)
    np.testing.assert_array_equal(result.dist, scipy_distances(graph))
    assert result.dist[[0, 7, 3, 60000, 5]].tolist() == [0, 2, 3, 9, 13]


@pytest.mark.gpu
@pytest.mark.parametrize("sync", ["outcore", "incore"])
@pytest.mark.parametrize("weight", [1, 7])
def test_bottom_up_rounds_give_the_reference(sync, weight):
    """Equal weights: wide rounds run bottom-up (each vertex looks for a queued in-neighbour);
    the answer is the reference's, on a power-law graph and a random one with unreachable parts."""
    from grader.data import synth

    rmat = synth.rmat(14, 16, weights=None, seed=5)
    graphs = [Graph(rmat.n, rmat.src, rmat.dst, np.full_like(rmat.w, weight)),
              random_graph(41, n=60000, m=600000, max_weight=None, unreachable=500)]
    graphs[1] = Graph(graphs[1].n, graphs[1].src, graphs[1].dst, np.full_like(graphs[1].w, weight))
    for graph in graphs:
        result = solve(graph, Run("opt", sync, False, 512, 4), select_device("gpu"))
        np.testing.assert_array_equal(result.dist, scipy_distances(graph))
        pulls = next(note for note in result.notes if note.startswith("bottom-up rounds:"))
        assert int(pulls.split()[2]) >= 1, pulls


@pytest.mark.gpu
@pytest.mark.parametrize("sync", ["outcore", "incore"])
def test_livejournal_standin_at_every_spec_configuration(sync):
    """The v2 LiveJournal stand-in (isolated vertices joined: one weak component, as SNAP's)
    at 1/64 scale: its wide levels run bottom-up from n/64 (opt.PULL_SHARE) at each of the
    spec's five configurations, and the answer is the reference's."""
    from grader.data import synth
    from sssp_common.vocabulary import SPEC_CONFIGS

    graph = synth.standin("soc-LiveJournal1", scale=1 / 64)
    expected = scipy_distances(graph)
    for bsize, bcount in SPEC_CONFIGS:
        result = solve(graph, Run("opt", sync, False, bsize, bcount), select_device("gpu"))
        np.testing.assert_array_equal(result.dist, expected, err_msg=f"({bsize},{bcount})")
        pulls = next(note for note in result.notes if note.startswith("bottom-up rounds:"))
        assert int(pulls.split()[2]) >= 1, pulls


def test_distinct_count_is_the_number_of_unique_ids():
    rng = np.random.default_rng(3)
    for ids, n in ((rng.integers(0, 500, 3000), 500),            # dense ids: the bincount
                   (rng.integers(0, 10**8, 50), 10**8),           # few ids in a huge range: the sort
                   (np.array([7, 7, 7]), 8), (np.zeros(0, dtype=np.int64), 5), (np.zeros(0, dtype=np.int64), 10**8)):
        ids = ids.astype(np.int32)
        assert opt.distinct_count(ids, n) == np.unique(ids).shape[0]
    from grader.data import synth

    for graph in (synth.grid(40, 30, weights=(1, 100), seed=1), random_graph(4, n=3000, m=9000)):  # the CPU rule as it was
        sources = np.unique(graph.src).shape[0]
        assert opt.work_efficient_delta(graph) == max(1, int(round(32 * float(graph.w.mean()) / (graph.m / sources))))
