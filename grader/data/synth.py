"""Deterministic synthetic graphs: stand-ins with the size and shape of the spec's SNAP graphs.

The machines are offline, so the big graphs are generated: a road-like near-planar graph
for roadNet-CA (long diameter: hundreds of Bellman-Ford rounds) and R-MAT power-law graphs
for the social and web graphs (short diameter, skewed degrees). Everything is numpy,
seeded with ``numpy.random.default_rng(seed)``: the same arguments give the same bytes.
"""
from __future__ import annotations

import math
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from sssp_common.graph import Graph

# Bump when a generator's output changes, so cached stand-ins are regenerated.
# 2: power-law stand-ins give each isolated vertex an in- and an out-edge (SNAP's social graphs
#    are one weak component; plain R-MAT leaves ~42% of LiveJournal's vertices isolated).
GENERATOR_VERSION = 2

ROAD_CA_VERTICES = 1_965_206
ROAD_CA_EDGES = 5_533_214

# name -> (vertices, edges, description) of the power-law stand-ins at full scale
POWER_LAW = {
    "soc-LiveJournal1": (4_847_571, 68_993_773, "LiveJournal friendship network (directed, power law)"),
    "soc-pokec": (1_632_803, 30_622_564, "Pokec social network (directed, power law)"),
    "higgs-twitter": (456_626, 14_855_842, "Higgs Twitter follower network (directed, power law)"),
    "web-Google": (875_713, 5_105_039, "Google web graph (directed, power law)"),
    "amazon0312": (400_727, 3_200_440, "Amazon co-purchasing network (directed, power law)"),
}

STANDINS = {
    "roadNet-CA": "road-like near-planar graph with roadNet-CA's counts "
                  f"({ROAD_CA_VERTICES:,} vertices, {ROAD_CA_EDGES:,} edges), long diameter, unit weights",
    **{name: f"R-MAT stand-in for {what}: {n:,} vertices, {m:,} edges, unit weights"
       for name, (n, m, what) in POWER_LAW.items()},
}

# Other spellings callers use (the benchmarks say "road_like" and "livejournal").
_ALIASES = {"road_like": "roadNet-CA", "roadnet": "roadNet-CA", "livejournal": "soc-LiveJournal1",
            "pokec": "soc-pokec", "soc-pokec-relationships": "soc-pokec", "higgs": "higgs-twitter",
            "web-google": "web-Google", "amazon": "amazon0312"}


# ---------------------------------------------------------------- small helpers

def _weights(rng: np.random.Generator, count: int, weights) -> np.ndarray | None:
    if weights is None:
        return None
    lo, hi = int(weights[0]), int(weights[1])
    if not 0 <= lo <= hi:
        raise ValueError(f"weights must be (lo, hi) with 0 <= lo <= hi, not {weights!r}")
    return rng.integers(lo, hi + 1, count, dtype=np.int64).astype(np.int32)


def _scaled(count: int, scale) -> int:
    if scale == "full":
        return count
    if isinstance(scale, str):
        raise ValueError(f"scale must be 'full' or a number, not {scale!r}")
    scale = float(scale)
    if not 0 < scale <= 1:
        raise ValueError(f"scale must be in (0, 1], not {scale}")
    return max(1, int(round(count * scale)))


# ---------------------------------------------------------------- grid

def grid(rows: int, cols: int, weights=(1, 100), seed: int = 0) -> Graph:
    """4-neighbour grid, both directions of every street, edges in a seeded random order."""
    rng = np.random.default_rng(seed)
    ids = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    right = (ids[:, :-1].ravel(), ids[:, 1:].ravel())
    down = (ids[:-1, :].ravel(), ids[1:, :].ravel())
    u = np.concatenate([right[0], down[0]])
    v = np.concatenate([right[1], down[1]])
    src = np.concatenate([u, v])
    dst = np.concatenate([v, u])
    order = rng.permutation(src.shape[0])
    w = _weights(rng, src.shape[0], weights)
    return Graph.from_arrays(src[order], dst[order], w, n=rows * cols)


# ---------------------------------------------------------------- R-MAT

def _quadrant_table(rng, a: float, b: float, c: float) -> np.ndarray:
    """256-entry table: random byte -> 2-bit quadrant code (src bit << 1 | dst bit), noisy per level."""
    p = np.array([a, b, c, 1.0 - a - b - c]) * rng.uniform(0.95, 1.05, 4)
    bounds = np.cumsum(p / p.sum())[:3] * 256
    byte = np.arange(256) + 0.5
    return np.searchsorted(bounds, byte).astype(np.uint8)  # 0: a, 1: b (dst bit), 2: c (src bit), 3: d


def _rmat_ids(rng, count: int, levels: int, a: float, b: float, c: float, chunk: int = 1 << 20,
              workers: int | None = None):
    """R-MAT ids for ``count`` edges: one quadrant choice per bit level, two levels per 16-bit draw.

    Two levels share a 65,536-entry table (4 bits out), and edges go in cache-sized chunks:
    this is what makes LiveJournal size (69M edges, 23 levels) take seconds, not minutes. The
    draws are made in order in this thread; their table look-ups (most of the time) run in up
    to ``workers`` threads (default: up to 4 cores; numpy releases the GIL), chunk by chunk,
    so the ids are the same for any number of threads.
    """
    tables = [_quadrant_table(rng, a, b, c) for _ in range(levels)]
    pairs = []
    for level in range(0, levels - 1, 2):
        high, low = tables[level].astype(np.uint8), tables[level + 1].astype(np.uint8)
        pairs.append(((high[:, None] << 2) | low[None, :]).ravel())  # index: high byte * 256 + low byte
    odd = tables[-1] if levels % 2 else None
    src = np.empty(count, dtype=np.int32)
    dst = np.empty(count, dtype=np.int32)

    def fill(start: int, draws: np.ndarray) -> None:
        size = draws.shape[1]
        s = np.zeros(size, dtype=np.int32)
        d = np.zeros(size, dtype=np.int32)
        for index, table in enumerate(pairs):
            code = table[draws[index]]
            s <<= 2
            s |= (((code >> 3) << 1) | ((code >> 1) & 1)).astype(np.int32)
            d <<= 2
            d |= ((((code >> 2) & 1) << 1) | (code & 1)).astype(np.int32)
        if odd is not None:
            code = odd[draws[-1] & 255]
            s <<= 1
            s |= (code >> 1).astype(np.int32)
            d <<= 1
            d |= (code & 1).astype(np.int32)
        src[start:start + size] = s
        dst[start:start + size] = d

    def draws_for(start: int) -> np.ndarray:
        return rng.integers(0, 65536, (len(pairs) + (odd is not None), min(chunk, count - start)), dtype=np.uint16)

    starts = range(0, count, chunk)
    workers = min(4, os.cpu_count() or 1) if workers is None else workers
    if workers <= 1 or len(starts) <= 1:
        for start in starts:
            fill(start, draws_for(start))
        return src, dst
    with ThreadPoolExecutor(workers) as pool:
        pending: deque = deque()
        for start in starts:
            pending.append(pool.submit(fill, start, draws_for(start)))
            if len(pending) >= 2 * workers:  # bounded memory: at most two chunks per thread drawn ahead
                pending.popleft().result()
        while pending:
            pending.popleft().result()
    return src, dst


def rmat(scale: int, edge_factor: int = 16, weights=(1, 100), seed: int = 0, a: float = 0.57, b: float = 0.19,
         c: float = 0.19, n: int | None = None, relabel: bool = True, hub_to_zero: bool = True) -> Graph:
    """R-MAT power-law graph: ``2**scale`` vertices (or exactly ``n``), ``edge_factor`` edges per vertex.

    With ``n``, ids are drawn at scale ceil(log2 n) and those >= n folded into the lower
    half. Vertices are relabelled at random (R-MAT puts the hubs at low ids), then the
    highest out-degree vertex becomes vertex 0 so that the source reaches most of the
    graph. The largest id always appears, so a written file reads back with the same n.
    """
    if n is None:
        n = 1 << int(scale)
    n = int(n)
    m = int(edge_factor) * n
    return _rmat_graph(n, m, weights, seed, a, b, c, relabel, hub_to_zero)


def _levels(n: int) -> int:
    return max(1, math.ceil(math.log2(n))) if n > 1 else 1


def _rmat_graph(n, m, weights, seed, a, b, c, relabel, hub_to_zero) -> Graph:
    rng = np.random.default_rng(seed)
    levels = _levels(n)
    src, dst = _rmat_ids(rng, m, levels, a, b, c)
    half = 1 << (levels - 1)
    for ids in (src, dst):
        ids[ids >= n] -= half  # fold: n > 2**(levels-1), so the result is below n
    label = rng.permutation(n).astype(np.int32) if relabel else np.arange(n, dtype=np.int32)
    if hub_to_zero and m:
        hub = int(np.argmax(np.bincount(src, minlength=n)))
        holder = int(np.flatnonzero(label == 0)[0])
        label[holder], label[hub] = label[hub], 0
    src, dst = label[src], label[dst]
    if m and max(int(src.max()), int(dst.max())) < n - 1:
        dst[-1] = n - 1  # keep "largest id + 1 == n" true for the written file
    return Graph.from_arrays(src, dst, _weights(rng, m, weights), n=n)


# ---------------------------------------------------------------- road-like

HIGHWAY_SPACING = 16  # every 16th row and column carries a highway ...
HIGHWAY_HOP = 5       # ... whose edges skip 5 blocks (this sets the BFS depth: ~550 at full size)
DIAGONAL_SHARE = 0.02  # of the undirected roads, this share are diagonals


def road_like(scale: float | str = "full", seed: int = 0, weights=None) -> Graph:
    """Near-planar road-like graph; at ``"full"`` exactly roadNet-CA's vertex and edge counts.

    Construction: vertices fill a near-square grid row by row (the last row partial). A
    random spanning tree of the grid (minimum spanning tree under random weights) keeps it
    connected with winding roads; a sparse highway network (every ``HIGHWAY_SPACING``-th
    row/column, edges skipping ``HIGHWAY_HOP`` blocks) shortens long trips to roadNet-CA's
    few hundred hops; a few diagonals and random extra grid streets bring the undirected
    road count to exactly half the edge count; every road is written in both directions.

    Ids are spatially local but not perfectly ordered: 32x32 tiles in row-major order,
    row-major inside a tile, then each id jittered within a window of ~64. Vertex 0 is the
    top-left corner, so the BFS depth from the source is about the graph's diameter
    (~500 at full size, like roadNet-CA's ~550 from its vertex 0).
    """
    n = _scaled(ROAD_CA_VERTICES, scale)
    m = _scaled(ROAD_CA_EDGES, scale)
    roads = m // 2
    rng = np.random.default_rng(seed)
    cols = max(2, math.ceil(math.sqrt(n)))
    row_of = np.arange(n, dtype=np.int64) // cols
    col_of = np.arange(n, dtype=np.int64) % cols

    def pairs(d_row, d_col, where):
        """Cell pairs (cell, cell + offset) for the cells in ``where`` whose partner exists."""
        cells = np.flatnonzero(where)
        r, c = row_of[cells] + d_row, col_of[cells] + d_col
        ok = (c >= 0) & (c < cols)
        target = r * cols + c
        ok &= target < n
        return cells[ok], target[ok]

    everywhere = np.ones(n, dtype=bool)
    grid_u, grid_v = map(np.concatenate, zip(pairs(0, 1, everywhere), pairs(1, 0, everywhere)))
    # random spanning tree of the street grid (scipy imported here: every grader command imports this module)
    import scipy.sparse as sp
    from scipy.sparse.csgraph import minimum_spanning_tree
    tree_weight = rng.random(grid_u.shape[0]) + 1.0
    tree = minimum_spanning_tree(sp.csr_matrix((tree_weight, (grid_u, grid_v)), shape=(n, n))).tocoo()
    in_tree = np.zeros(grid_u.shape[0], dtype=bool)
    tree_key = np.sort(np.minimum(tree.row, tree.col).astype(np.int64) * n + np.maximum(tree.row, tree.col))
    grid_key = grid_u * n + grid_v
    position = np.searchsorted(tree_key, grid_key)
    position[position >= tree_key.shape[0]] = 0
    in_tree = tree_key[position] == grid_key if tree_key.size else in_tree

    highway = [pairs(0, HIGHWAY_HOP, (row_of % HIGHWAY_SPACING == 0) & (col_of % HIGHWAY_HOP == 0)),
               pairs(HIGHWAY_HOP, 0, (col_of % HIGHWAY_SPACING == 0) & (row_of % HIGHWAY_HOP == 0))]
    hw_u, hw_v = np.concatenate([h[0] for h in highway]), np.concatenate([h[1] for h in highway])
    diagonal_cells = rng.random(n) < DIAGONAL_SHARE * roads / max(n, 1)
    diag_u, diag_v = pairs(1, 1, diagonal_cells)

    chosen_u = [grid_u[in_tree], hw_u, diag_u]
    chosen_v = [grid_v[in_tree], hw_v, diag_v]
    have = sum(x.shape[0] for x in chosen_u)
    spare = np.flatnonzero(~in_tree)
    extra = rng.permutation(spare)[:max(0, roads - have)]
    chosen_u.append(grid_u[extra])
    chosen_v.append(grid_v[extra])
    u = np.concatenate(chosen_u)[:roads]
    v = np.concatenate(chosen_v)[:roads]

    label = _road_labels(rng, row_of, col_of)
    u, v = label[u], label[v]
    src = np.concatenate([u, v])
    dst = np.concatenate([v, u])
    order = rng.permutation(src.shape[0])
    return Graph.from_arrays(src[order], dst[order], _weights(rng, src.shape[0], weights), n=n)


def _road_labels(rng, row_of: np.ndarray, col_of: np.ndarray, tile: int = 32, jitter: float = 64.0) -> np.ndarray:
    """New id of each grid cell: tiled, locally jittered, corner cell (0, 0) -> 0."""
    n = row_of.shape[0]
    tiles_per_row = int(col_of.max()) // tile + 1
    tile_id = (row_of // tile) * tiles_per_row + col_of // tile
    inside = (row_of % tile) * tile + col_of % tile
    key = (tile_id * tile * tile + inside).astype(np.float64) + rng.uniform(0, jitter, n)
    order = np.argsort(key, kind="stable")
    label = np.empty(n, dtype=np.int64)
    label[order] = np.arange(n)
    corner = int(np.flatnonzero(label == 0)[0])
    label[corner], label[0] = label[0], 0
    return label


# ---------------------------------------------------------------- stand-ins

def canonical_name(name: str) -> str:
    """The catalogue spelling of a stand-in name (accepts aliases and a ``~synth`` suffix)."""
    base = name[:-len("~synth")] if name.endswith("~synth") else name
    if base in STANDINS:
        return base
    lowered = {key.lower(): key for key in STANDINS}
    if base.lower() in lowered:
        return lowered[base.lower()]
    if base.lower() in _ALIASES:
        return _ALIASES[base.lower()]
    raise ValueError(f"unknown stand-in {name!r}; known: {', '.join(STANDINS)}")


def standin(name: str, scale: float | str = "full", seed: int = 0) -> Graph:
    """The stand-in for one of the spec's six graphs, at full size or a fraction of it.

    Edges come sorted by (source, destination), as SNAP publishes its edge lists, so the
    grader's "given" ordering looks like the real file's. Weights are all 1 (SNAP's are).
    """
    base = canonical_name(name)
    if base == "roadNet-CA":
        graph = road_like(scale=scale, seed=seed)
    else:
        vertices, edges, _ = POWER_LAW[base]
        n, m = _scaled(vertices, scale), _scaled(edges, scale)
        graph = _connect_isolated(_rmat_graph(n, m, None, seed, 0.57, 0.19, 0.19, True, True), seed)
    return _by_source(graph)


def _connect_isolated(graph: Graph, seed: int) -> Graph:
    """Give every isolated vertex one out-edge and one in-edge, keeping the edge count.

    Plain R-MAT at LiveJournal's size leaves ~42% of the vertices without any edge, so its
    largest weak component holds 58% of them and vertex 0 reaches 49%; SNAP gives
    soc-LiveJournal1's largest weak component as 99.9% of its vertices and its largest strong
    component as 79%. Each isolated vertex v gets an edge v -> t and s -> v, with t the head
    and s the tail of a uniformly chosen edge (so both are degree-proportional: mostly in the
    giant strong component, which v then joins). As many R-MAT edges, chosen at random, make
    room for them; a vertex this leaves isolated (rare: it needs all its edges chosen) stays so.
    Vertices with only in- or only out-edges are kept as they are: real graphs have them too.
    """
    n, m = graph.n, graph.m
    degree = np.bincount(graph.src, minlength=n) + np.bincount(graph.dst, minlength=n)
    isolated = np.flatnonzero(degree == 0).astype(np.int32)
    extra = 2 * isolated.size
    if isolated.size == 0 or extra >= m:
        return graph
    rng = np.random.default_rng([seed, 0x150])
    picked = rng.integers(0, m, (2, isolated.size))
    heads, tails = graph.dst[picked[0]], graph.src[picked[1]]
    keep = np.ones(m, dtype=bool)
    keep[rng.choice(m, extra, replace=False)] = False
    src = np.concatenate([graph.src[keep], isolated, tails])
    dst = np.concatenate([graph.dst[keep], heads, isolated])
    if max(int(src.max()), int(dst.max())) < n - 1:
        dst[-1] = n - 1  # keep "largest id + 1 == n" true for the written file
    return Graph.from_arrays(src, dst, None, n=n)


def _by_source(graph: Graph) -> Graph:
    """Edges sorted by (source, destination): one int64 key sort, far faster than lexsort."""
    key = graph.src.astype(np.int64) << 32 | graph.dst.astype(np.int64)
    if bool(np.any(graph.w != 1)):
        order = np.argsort(key, kind="stable")
        return graph.reordered(order)
    key.sort()
    src = (key >> 32).astype(np.int32)
    dst = (key & 0xFFFFFFFF).astype(np.int32)
    return Graph(graph.n, src, dst, graph.w)


# ---------------------------------------------------------------- writing
