"""opt -tile N (issue 26, item 1): the tiling, the numpy scheme, and the GPU kernel against scipy."""
from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

from conftest import FIGURE1_DIST, FIGURE1_EDGES, random_graph, scipy_distances
from sssp_common.errors import UsageError
from sssp_common.graph import Graph
from sssp_common.vocabulary import SPEC_CONFIGS
from sssp_gpu.device import CPU, select_device
from sssp_gpu.engine import solve
from sssp_gpu.methods import tiles
from sssp_gpu.methods.common import Run

INF64 = np.iinfo(np.int64).max


def figure1() -> Graph:
    rows = [list(map(int, line.split())) for line in FIGURE1_EDGES.splitlines()]
    src, dst, w = zip(*rows)
    return Graph.from_arrays(src, dst, w)


def shuffled_ids(graph: Graph, seed: int) -> Graph:
    """The same graph with its vertices renamed at random (vertex 0 stays the source)."""
    rng = np.random.default_rng(seed)
    name = np.concatenate([[0], 1 + rng.permutation(graph.n - 1)])
    return Graph.from_arrays(name[graph.src], name[graph.dst], graph.w, n=graph.n)


def int64_graph() -> Graph:
    """A chain of heavy edges: distances past 2^31, so the kernels run on long long."""
    rng = np.random.default_rng(9)
    n = 3000
    src = np.concatenate([np.arange(n - 1), rng.integers(0, n, 4000)])
    dst = np.concatenate([np.arange(1, n), rng.integers(0, n, 4000)])
    w = np.concatenate([np.full(n - 1, 2_000_000), rng.integers(1_000_000, 2_000_000_000, 4000)])
    return Graph.from_arrays(src, dst, w, n=n)


def sample_graphs() -> dict[str, Graph]:
    from grader.data import synth

    graphs = {"figure1": figure1(),
              "grid-u": synth.grid(90, 90, weights=None, seed=1),
              "grid-w": synth.grid(90, 77, weights=(1, 100), seed=2),
              "grid-w0": synth.grid(40, 40, weights=(0, 3), seed=3),
              "road": synth.road_like(1 / 256, seed=0),
              "rmat": synth.rmat(12, 16, weights=(1, 100), seed=4),
              "shuffled-grid": shuffled_ids(synth.grid(50, 50, weights=(1, 100), seed=5), 6),
              "int64": int64_graph()}
    for seed, max_weight in ((11, 50), (12, 1000), (13, None), (14, 0)):
        graphs[f"random-{seed}"] = random_graph(seed, n=3000, m=15000, max_weight=max_weight, unreachable=200)
    return graphs


GRAPHS = sample_graphs()
EXPECTED: dict[str, np.ndarray] = {}


def expected(name: str) -> np.ndarray:
    if name not in EXPECTED:
        EXPECTED[name] = scipy_distances(GRAPHS[name])
    return EXPECTED[name]


# ---------------------------------------------------------------- the tiling (CPU)

@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("size", [32, 100, 1024, 3072])
def test_tiling_is_the_graph_renumbered(name, size):
    """A bijection of the ids; tiles are ranges of at most ``size`` consecutive new ids; the
    intra-tile CSR (local 16-bit heads) and the boundary edges are exactly the graph's edges."""
    graph = GRAPHS[name]
    tiling = tiles.build(graph, size)
    n = graph.n
    assert np.array_equal(np.sort(tiling.order), np.arange(n))
    assert np.array_equal(tiling.rank[tiling.order], np.arange(n))
    lengths = np.diff(tiling.tile_ptr)
    assert tiling.tile_ptr[0] == 0 and tiling.tile_ptr[-1] == n
    assert lengths.min() >= 1 and lengths.max() <= size
    assert np.array_equal(tiling.tile_of, np.repeat(np.arange(tiling.tiles), lengths))
    assert tiling.in_head.dtype == np.uint16
    tail_in = np.repeat(np.arange(n), np.diff(tiling.in_ptr))
    assert np.all(tiling.in_head < lengths[tiling.tile_of[tail_in]])
    tail_out = np.repeat(np.arange(n), np.diff(tiling.out_ptr))
    assert np.all(tiling.tile_of[tail_out] != tiling.tile_of[tiling.out_head])
    src, dst, w = tiling.edges()
    assert Counter(zip(src.tolist(), dst.tolist(), w.tolist())) == \
        Counter(zip(graph.src.tolist(), graph.dst.tolist(), graph.w.tolist()))
    # the pull passes' in-edges: the intra-tile edges again, grouped by head
    head_in = tiling.tile_ptr[tiling.tile_of[tail_in]] + tiling.in_head.astype(np.int64)
    pin_head = np.repeat(np.arange(n), np.diff(tiling.pin_ptr))
    assert tiling.pin_tail.dtype == np.uint16 and np.all(tiling.pin_tail < lengths[tiling.tile_of[pin_head]])
    pin_tail = tiling.tile_ptr[tiling.tile_of[pin_head]] + tiling.pin_tail.astype(np.int64)
    assert Counter(zip(pin_tail.tolist(), pin_head.tolist(), tiling.pin_w.tolist())) == \
        Counter(zip(tail_in.tolist(), head_in.tolist(), tiling.in_w.tolist()))


def test_grids_are_cut_into_square_blocks():
    from grader.data import synth

    grid = synth.grid(100, 70, weights=(1, 100))
    assert tiles.grid_columns(grid) == 70
    tiling = tiles.build(grid, 1024)
    assert tiling.how.startswith("grid of 70 columns in 32x32 blocks")
    assert tiling.tiles == 4 * 3 and tiling.intra_share > 0.95
    assert tiles.block_shape(512, 700) == (32, 16) and tiles.block_shape(2048, 700) == (64, 32)
    road = tiles.build(synth.road_like(1 / 256), 1024)
    assert road.how == "ids as given" and road.intra_share > 0.8
    assert tiles.grid_columns(random_graph(1)) is None
    assert tiles.grid_columns(shuffled_ids(synth.grid(20, 20), 1)) is None
    assert "Cuthill-McKee" in tiles.build(shuffled_ids(synth.grid(60, 60), 2), 256).how


def test_tile_option_is_checked():
    assert Run("opt").tile_size == 0 and Run("opt", tile=0).tile_size == 0
    assert Run("opt", tile=1024).tile_size == 1024
    with pytest.raises(UsageError, match="opt only"):
        Run("bmf", tile=1024)
    for bad in (-1, 31, 3073):
        with pytest.raises(UsageError, match="-tile"):
            Run("opt", tile=bad)


# ---------------------------------------------------------------- the numpy scheme

@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("size", [32, 1000])
def test_cpu_tiles_give_the_reference(name, size):
    result = solve(GRAPHS[name], Run("opt", "incore", False, 512, 4, tile=size), CPU)
    np.testing.assert_array_equal(result.dist, expected(name))
    assert any(note.startswith("tiles: ") for note in result.notes)


@pytest.mark.parametrize("delta", [1, 7, 5000, 0])
@pytest.mark.parametrize("cap", [1, 2, 0, None])
def test_cpu_scheme_with_small_buckets_and_step_caps(delta, cap):
    """Small buckets force splits; a step cap leaves work dirty and queues the tile again."""
    for name in ("grid-w", "random-11", "random-14", "road"):
        tiling = tiles.build(GRAPHS[name], 256)
        width = INF64 if delta == 0 else delta
        dist, stats = tiles.solve_cpu(tiling, width, tiles.step_cap(256, cap))
        np.testing.assert_array_equal(dist[tiling.rank], expected(name), err_msg=name)
        if delta == 1 and name == "grid-w":
            assert stats.splits > 10


# ---------------------------------------------------------------- the GPU kernel

GPU_SIZES = [32, 1000, 1024]


@pytest.mark.gpu
@pytest.mark.parametrize("sync", ["outcore", "incore"])
@pytest.mark.parametrize("config", SPEC_CONFIGS)
def test_gpu_tiles_give_the_reference(sync, config):
    """Every sample graph at the spec's five configurations and both syncs, tiles of 32,
    1000 (divides no graph's n) and 1024; a differing vertex is a failure."""
    device = select_device("gpu")
    bsize, bcount = config
    for name in sorted(GRAPHS):
        for size in GPU_SIZES:
            result = solve(GRAPHS[name], Run("opt", sync, False, bsize, bcount, tile=size), device)
            np.testing.assert_array_equal(result.dist, expected(name), err_msg=f"{name} tile {size}")
            assert "a block per tile" in result.launch


@pytest.mark.gpu
@pytest.mark.parametrize("delta", [1, 7, 0])
@pytest.mark.parametrize("size", [512, 2048, 3072])
def test_gpu_tiles_any_bucket_width(delta, size):
    device = select_device("gpu")
    for name in ("grid-w", "grid-u", "road", "random-11", "random-12", "int64", "figure1"):
        result = solve(GRAPHS[name], Run("opt", "incore", False, 512, 4, delta=delta, tile=size), device)
        np.testing.assert_array_equal(result.dist, expected(name), err_msg=f"{name} delta {delta}")


@pytest.mark.gpu
@pytest.mark.parametrize("fuse", [1, 3, 0])
def test_gpu_tiles_with_a_step_cap(fuse):
    """-fuse N caps the worklist steps of a tile activation (tiles queue themselves again
    until done); 0: no cap."""
    device = select_device("gpu")
    for name in ("grid-w", "grid-u", "random-13", "road", "int64"):
        result = solve(GRAPHS[name], Run("opt", "incore", False, 256, 8, tile=256, fuse=fuse), device)
        np.testing.assert_array_equal(result.dist, expected(name), err_msg=name)
        assert any(f"(at most {fuse or 4 * 256} per activation)" in note for note in result.notes)
        timing = next(note for note in result.notes if note.startswith("tile time:"))
        load, steps, write, slowest, total = map(float, re.findall(r"([0-9.]+) ms", timing))
        # the phase sums are over activations; the slowest ones per round fit in the kernel's time
        assert min(load, steps, write) >= 0 and 0 < slowest <= total * 1.05 + 0.05, timing


@pytest.mark.gpu
def test_gpu_tiles_on_figure1_and_the_cpu_agree():
    device = select_device("gpu")
    assert solve(figure1(), Run("opt", "incore", False, 256, 8, tile=32), device).dist.tolist() == FIGURE1_DIST
    graph = GRAPHS["grid-w"]
    gpu = solve(graph, Run("opt", "incore", False, 1024, 2, tile=1024), device)
    cpu = solve(graph, Run("opt", "incore", False, 1024, 2, tile=1024), CPU)
    np.testing.assert_array_equal(gpu.dist, cpu.dist)
    assert gpu.rounds >= 1 and gpu.edges_processed >= graph.m // 2


def test_opt_takes_tiles_by_itself_only_where_they_were_measured_to_win():
    """Grids: tiles of 1024 and 32 pull passes, with unit weights or not (H100: 3.16 -> 0.64 ms
    and 3.83 -> 1.20 ms); the road stand-in, power-law and shuffled grids: the plain near-far path."""
    from grader.data import synth
    assert tiles.automatic(synth.grid(90, 90, weights=None, seed=1)) == (1024, 32)
    assert tiles.automatic(synth.grid(90, 77, weights=(1, 100), seed=2)) == (1024, 32)
    for graph in (synth.road_like(1 / 256, seed=0), synth.rmat(12, 16, weights=None, seed=4),
                  shuffled_ids(synth.grid(50, 50, weights=None), 6), figure1()):
        assert tiles.automatic(graph) is None


def test_an_explicit_tile_or_fuse_wins_over_the_automatic_choice():
    from grader.data import synth
    from sssp_gpu.methods.common import Run
    from sssp_gpu.methods.opt import with_automatic_tiles
    grid = synth.grid(90, 90, weights=None, seed=1)
    chosen = with_automatic_tiles(grid, Run(method="opt", sync="incore"))
    assert (chosen.tile, chosen.fuse) == (tiles.AUTO_TILE, tiles.AUTO_STEPS)
    assert with_automatic_tiles(grid, Run(method="opt", sync="incore", tile=0)).tile_size == 0
    assert with_automatic_tiles(grid, Run(method="opt", sync="incore", fuse=8)).fuse == 8
    assert with_automatic_tiles(grid, Run(method="opt", sync="incore", tile=512)).tile == 512
    road = synth.road_like(1 / 256, seed=0)
    assert with_automatic_tiles(road, Run(method="opt", sync="incore")).tile is None


# ---------------------------------------------------------------- staged intra-tile edges

def test_staging_takes_the_largest_tile_when_it_fits_and_never_more_than_asked(monkeypatch):
    from sssp_gpu.methods import opt

    tiling = tiles.build(GRAPHS["grid-w"], 1024)
    largest = int(np.diff(tiling.in_ptr[tiling.tile_ptr]).max())
    fixed = 1024 * 8 + 4 * 1025
    cap, shared = opt.tile_shared_memory(tiling, np.int32, 227 * 1024)
    assert cap == largest and shared >= fixed + 6 * largest and shared % 8 == 0
    # a small block: as many edges as fit beside the distances, flags and offsets
    cap, shared = opt.tile_shared_memory(tiling, np.int32, fixed + opt.STATIC_SHARED + 600)
    assert cap == 100 and shared <= fixed + opt.STATIC_SHARED + 600
    monkeypatch.setattr(opt, "TILE_STAGE_BYTES", 0)
    assert opt.tile_shared_memory(tiling, np.int64, 227 * 1024) == (0, 1024 * 12 + 4 * 1025 + 4)


@pytest.mark.gpu
@pytest.mark.parametrize("stage_bytes", [0, 6 * 700, 96 * 1024])
def test_gpu_tiles_staged_in_part_or_none_give_the_reference(monkeypatch, stage_bytes):
    """Edges staged in shared memory (every tile), for tiles of up to 700 intra edges only (the
    others read global memory in the same kernel), or never."""
    from sssp_gpu.methods import opt

    monkeypatch.setattr(opt, "TILE_STAGE_BYTES", stage_bytes)
    monkeypatch.setattr(opt, "TILE_PULL_PASSES", 0)  # push steps: the ones that read staged edges
    device = select_device("gpu")
    for name in ("grid-w", "grid-u", "road", "random-12", "int64", "figure1"):
        for bsize, size in ((1024, 1024), (256, 512)):
            result = solve(GRAPHS[name], Run("opt", "incore", False, bsize, 2, tile=size), device)
            np.testing.assert_array_equal(result.dist, expected(name), err_msg=f"{name} tile {size}")
            staged = int(re.search(r"staged there up to (\d+) a tile", result.launch).group(1))
            assert staged <= stage_bytes // 6


# ---------------------------------------------------------------- pull passes (tile_fixpoint_pull)

@pytest.mark.gpu
@pytest.mark.parametrize("passes", [1, 4])
@pytest.mark.parametrize("fuse", [1, 5, 0])
def test_gpu_tiles_by_pull_passes_give_the_reference(monkeypatch, passes, fuse):
    """Phase A as pull passes (a thread a vertex, checks every ``passes`` passes), capped or
    not; tiles bigger than the block fall back to push steps."""
    from sssp_gpu.methods import opt

    monkeypatch.setattr(opt, "TILE_PULL_PASSES", passes)
    device = select_device("gpu")
    for name in ("grid-w", "grid-u", "road", "random-12", "random-13", "int64", "figure1"):
        for bsize, size in ((1024, 1024), (256, 256), (512, 200), (256, 512)):
            result = solve(GRAPHS[name], Run("opt", "incore", False, bsize, 2, tile=size, fuse=fuse), device)
            np.testing.assert_array_equal(result.dist, expected(name), err_msg=f"{name} tile {size}")
