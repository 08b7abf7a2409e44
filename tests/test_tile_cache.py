"""opt -tile's tiling built fast and cached on disk (issue 40, item 2): the vectorised build makes
exactly what the plain one made, and a cached tiling is exactly the built one, or built again."""
from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest

from conftest import random_graph
from sssp_common.graph import Graph
from sssp_gpu.methods import tile_cache, tiles


# ---------------------------------------------------------------- the plain build, for reference

def plain_grid_columns(graph: Graph) -> int | None:
    """tiles.grid_columns as first written: np.unique of every difference."""
    if graph.m == 0 or graph.n < 4:
        return None
    diff = np.abs(graph.dst.astype(np.int64) - graph.src.astype(np.int64))
    values = np.unique(diff)
    if values.shape[0] != 2 or values[0] != 1 or values[1] < 2:
        return None
    cols = int(values[1])
    low = np.minimum(graph.src, graph.dst)[diff == 1].astype(np.int64)
    return None if np.any(low % cols == cols - 1) else cols


def plain_build(graph: Graph, size: int) -> tiles.Tiling:
    """tiles.build as first written: lexsort, np.unique and stable argsorts over int64 ids."""
    n = graph.n
    cols = plain_grid_columns(graph)
    if cols is not None:
        bh, bw = tiles.block_shape(size, cols)
        ids = np.arange(n, dtype=np.int64)
        row, col = ids // cols, ids % cols
        block = (row // bh) * (-(-cols // bw)) + col // bw
        order = np.lexsort(((row % bh) * bw + col % bw, block))
        _, tile_of = np.unique(block[order], return_inverse=True)
        tile_of, how = tile_of.astype(np.int32), f"grid of {cols} columns in {bh}x{bw} blocks"
    else:
        order, tile_of, how = tiles.locality_order(graph, size)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n, dtype=np.int64)
    tile_ptr = np.zeros(int(tile_of.max()) + 2, dtype=np.int64)
    np.cumsum(np.bincount(tile_of), out=tile_ptr[1:])
    tail, head = rank[graph.src], rank[graph.dst]
    inside = tile_of[tail] == tile_of[head]
    by_tail = np.argsort(tail, kind="stable")
    tail, head, w, inside = tail[by_tail], head[by_tail], graph.w[by_tail], inside[by_tail]

    def csr(keep):
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(tail[keep], minlength=n), out=ptr[1:])
        return ptr.astype(np.int32), head[keep], w[keep].astype(np.int32)

    in_ptr, in_head, in_w = csr(inside)
    out_ptr, out_head, out_w = csr(~inside)
    local = (in_head - tile_ptr[tile_of[in_head]]).astype(np.uint16)
    in_tail = tail[inside]
    by_head = np.argsort(in_head, kind="stable")
    pin_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(in_head, minlength=n), out=pin_ptr[1:])
    pin_tail = (in_tail - tile_ptr[tile_of[in_tail]])[by_head].astype(np.uint16)
    return tiles.Tiling(size, how, order, rank, tile_ptr.astype(np.int32), tile_of, in_ptr, local, in_w,
                        out_ptr, out_head.astype(np.int32), out_w, pin_ptr.astype(np.int32), pin_tail,
                        in_w[by_head])


def assert_same_tiling(got: tiles.Tiling, want: tiles.Tiling) -> None:
    for field in fields(tiles.Tiling):
        a, b = getattr(got, field.name), getattr(want, field.name)
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), field.name
        else:
            assert a == b, field.name


def graphs() -> dict[str, Graph]:
    from grader.data import synth

    grid = synth.grid(70, 45, weights=(1, 100), seed=3)
    return {"grid-w": grid, "grid-u": synth.grid(64, 64, weights=None, seed=1),
            "grid-tall": synth.grid(200, 9, weights=(1, 9), seed=2),
            "road": synth.road_like(1 / 256, seed=0), "rmat": synth.rmat(11, 8, weights=(1, 50), seed=4),
            "shuffled-grid": Graph(grid.n, grid.src, (grid.dst + 1) % grid.n, grid.w),
            "random": random_graph(5, n=2000, m=9000, unreachable=100)}


GRAPHS = graphs()


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("size", [32, 256, 1024])
def test_the_fast_build_makes_what_the_plain_one_made(name, size):
    assert_same_tiling(tiles.build(GRAPHS[name], size), plain_build(GRAPHS[name], size))


def test_grid_columns_agrees_with_the_plain_check():
    grid = GRAPHS["grid-w"]
    cases = dict(GRAPHS)
    cases["self-loop"] = Graph(grid.n, np.append(grid.src, 5), np.append(grid.dst, 5), np.append(grid.w, 1))
    cases["wraps"] = Graph(grid.n, np.append(grid.src, 44), np.append(grid.dst, 45), np.append(grid.w, 1))
    cases["no-row-edges"] = Graph(100, np.arange(90, dtype=np.int32), np.arange(10, 100, dtype=np.int32),
                                  np.ones(90, dtype=np.int32))
    cases["chain"] = Graph(100, np.arange(99, dtype=np.int32), np.arange(1, 100, dtype=np.int32),
                           np.ones(99, dtype=np.int32))
    found = {name: tiles.grid_columns(g) for name, g in cases.items()}
    assert found == {name: plain_grid_columns(g) for name, g in cases.items()}
    assert found["grid-w"] == 45 and found["wraps"] is None and found["self-loop"] is None


def test_stable_order_is_a_stable_argsort():
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 50, 10_000).astype(np.int32)  # many ties: stability shows
    assert np.array_equal(tiles.stable_order(keys, 50), np.argsort(keys, kind="stable"))
    wide = rng.integers(0, 1 << 40, 1000)  # past the packed range: numpy's own stable argsort
    assert np.array_equal(tiles.stable_order(wide, 1 << 40), np.argsort(wide, kind="stable"))


# ---------------------------------------------------------------- the cache

@pytest.fixture
def counted_builds(monkeypatch):
    """Caches every graph here (they are small) and counts tiles.build calls."""
    monkeypatch.setattr(tile_cache, "MIN_CACHED_EDGES", 1)
    calls = []

    def counting(graph, size):
        calls.append(size)
        return tiles.build(graph, size)

    monkeypatch.setattr(tile_cache, "build", counting)
    return calls


@pytest.mark.parametrize("name", ["grid-w", "road", "random"])
def test_a_cached_tiling_is_the_built_one(name, counted_builds):
    graph = GRAPHS[name]
    first = tile_cache.cached_build(graph, 256)
    again = tile_cache.cached_build(graph, 256)
    assert counted_builds == [256]  # the second came from disk
    assert again is not first
    assert_same_tiling(again, tiles.build(graph, 256))
    assert tile_cache.entry_for(graph, 256).is_dir()


def test_another_size_or_graph_is_another_entry(counted_builds):
    graph = GRAPHS["grid-w"]
    tile_cache.cached_build(graph, 256)
    tile_cache.cached_build(graph, 512)
    heavier = Graph(graph.n, graph.src, graph.dst, graph.w + (np.arange(graph.m) == 7))
    assert_same_tiling(tile_cache.cached_build(heavier, 256), tiles.build(heavier, 256))
    assert counted_builds == [256, 512, 256]
    assert len({tile_cache.entry_for(g, s) for g, s in ((graph, 256), (graph, 512), (heavier, 256))}) == 3


def flip_last_byte(path):
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["flipped weight", "truncated", "meta lies", "missing"])
def test_a_damaged_entry_is_rebuilt_not_trusted(damage, counted_builds, capsys):
    graph = GRAPHS["grid-w"]
    tile_cache.cached_build(graph, 256)
    entry = tile_cache.entry_for(graph, 256)
    if damage == "flipped weight":
        flip_last_byte(entry / "pin_w.npy")
    elif damage == "truncated":
        target = entry / "in_head.npy"
        target.write_bytes(target.read_bytes()[:-6])
    elif damage == "meta lies":
        meta = (entry / "meta.json").read_text()
        (entry / "meta.json").write_text(meta.replace('"intra": ', '"intra": 1'))
    else:
        (entry / "order.npy").unlink()
    again = tile_cache.cached_build(graph, 256)
    assert counted_builds == [256, 256]
    assert "cached tiling" in capsys.readouterr().err
    assert_same_tiling(again, tiles.build(graph, 256))
    assert_same_tiling(tile_cache.cached_build(graph, 256), again)  # the rebuilt entry is read back
    assert counted_builds == [256, 256]


def test_small_graphs_are_built_every_time(monkeypatch):
    graph = GRAPHS["random"]
    monkeypatch.setattr(tile_cache, "MIN_CACHED_EDGES", graph.m + 1)
    tile_cache.cached_build(graph, 256)
    assert not tile_cache.entry_for(graph, 256).exists()


def test_the_last_tiling_is_kept_in_memory(counted_builds):
    graph = GRAPHS["grid-u"]
    first = tile_cache.tiling_for(graph, 512)
    assert tile_cache.tiling_for(graph, 512) is first
    assert tile_cache.tiling_for(graph, 1024) is not first
    assert counted_builds == [512, 1024]
