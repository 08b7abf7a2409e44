"""opt's tiles (``-tile N``): vertices renumbered for locality, cut into tiles of at most N.

Issue 26, item 1. A tile is a range of consecutive new ids, small enough for one block to
hold its distances in shared memory. Each round every active tile is taken by one block,
which relaxes the tile's own (intra-tile) edges to a local fixpoint in shared memory; only
the boundary edges (tail and head in different tiles) cross the grid barrier.

The renumbering, in this order of preference:

- a graph that is recognisably a grid (every edge joins ``v`` and ``v +- 1`` in one row or
  ``v +- cols``, as ``synth.grid`` numbers it) is cut into blocks of ``bh x bw`` cells
  (32 x 32 for N = 1024), one tile each;
- ids that are already local (at least half the edges inside chunks of N consecutive ids,
  as the road stand-in's 32 x 32 spatial tiles are) are kept, in chunks of N;
- otherwise reverse Cuthill-McKee order (scipy, deterministic) in chunks of N, when it
  keeps more edges inside tiles than the ids as given.

:func:`solve_cpu` is the same scheme in numpy (the fallback of ``opt -tile``): the rounds,
the per-tile worklist steps, the near-far split between tiles, as the kernel
(``kernels/opt_tiles.cu``) first ran them: push steps, every tile of a round stepping together,
then the boundary edges in a phase of their own. The kernel now runs pull passes where a tile
fits a block and relaxes boundary edges into inboxes in each tile's write-back (one grid
barrier a round; tests/test_tile_rounds.py models that), so its counts differ from the
model's; its distances do not.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sssp_common.graph import Graph
from .common import TILE_RANGE

MIN_TILE, MAX_TILE = TILE_RANGE  # shared memory: a distance (8 B at most) and 4 flag bytes a vertex
# A tile activation's worklist steps stop after this many (what is left waits a round, its tile
# queued again): a round then waits for no tile's long tail of steps (the road stand-in's
# winding roads) while the boundary improvements already found move on. ``-fuse N`` sets it
# with -tile (0: no cap, i.e. STEPS_PER_VERTEX x the tile size); on the GPU a step is a pull
# pass where a tile fits one block (opt.TILE_PULL_PASSES). 16 came from the numpy model and is
# the road stand-in's best with -tile (pull passes: 3.42 ms at 16, 4.82 ms at 32); on the grids
# 32 won (H100, pull passes and inboxes: weighted 1.28 -> 1.18 ms, unit 0.79 -> 0.59 ms;
# BENCHMARKS.md, issue 26), so the automatic choice below uses 32 and an explicit -tile keeps
# 16 unless -fuse says otherwise.
DEFAULT_STEPS = 16
AUTO_TILE, AUTO_STEPS = 1024, 32
STEPS_PER_VERTEX = 4
LOCAL_SHARE = 0.5      # ids as given are "local" when this share of the edges stays inside tiles
INF64 = np.iinfo(np.int64).max


@dataclass(frozen=True)
class Tiling:
    """The renumbered graph, tile by tile. New ids: ``rank[old]``; ``order[new]`` is the old id."""

    size: int               # N: at most this many vertices per tile
    how: str                # what renumbering was used, for the notes
    order: np.ndarray       # int64 [n]: old id of each new id
    rank: np.ndarray        # int64 [n]: new id of each old id
    tile_ptr: np.ndarray    # int32 [tiles + 1]: tile k holds new ids tile_ptr[k] .. tile_ptr[k+1]-1
    tile_of: np.ndarray     # int32 [n]: the tile of each new id
    in_ptr: np.ndarray      # int32 [n + 1]: intra-tile out-edges of each new id ...
    in_head: np.ndarray     # uint16: ... their heads as offsets inside the tile
    in_w: np.ndarray        # int32: ... and weights
    out_ptr: np.ndarray     # int32 [n + 1]: boundary out-edges of each new id ...
    out_head: np.ndarray    # int32: ... their heads (new ids, another tile)
    out_w: np.ndarray       # int32
    pin_ptr: np.ndarray     # int32 [n + 1]: intra-tile in-edges of each new id (pull passes) ...
    pin_tail: np.ndarray    # uint16: ... their tails as offsets inside the tile
    pin_w: np.ndarray       # int32

    @property
    def tiles(self) -> int:
        return int(self.tile_ptr.shape[0] - 1)

    @property
    def intra_share(self) -> float:
        total = self.in_head.shape[0] + self.out_head.shape[0]
        return self.in_head.shape[0] / total if total else 1.0

    def edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every edge back in old ids (src, dst, w), intra-tile edges first: for tests."""
        n = self.order.shape[0]
        tail_in = np.repeat(np.arange(n), np.diff(self.in_ptr))
        head_in = self.tile_ptr[self.tile_of[tail_in]] + self.in_head.astype(np.int64)
        tail_out = np.repeat(np.arange(n), np.diff(self.out_ptr))
        src = self.order[np.concatenate([tail_in, tail_out])]
        dst = self.order[np.concatenate([head_in, self.out_head.astype(np.int64)])]
        return src, dst, np.concatenate([self.in_w, self.out_w])


def step_cap(size: int, fuse: int | None = None) -> int:
    """Worklist steps one tile activation may take (``fuse``: opt's -fuse; see DEFAULT_STEPS)."""
    if fuse is None:
        return DEFAULT_STEPS
    return fuse if fuse > 0 else STEPS_PER_VERTEX * size


def check_size(size: int) -> None:
    if not MIN_TILE <= size <= MAX_TILE:
        raise ValueError(f"-tile must be 0 (off) or from {MIN_TILE} to {MAX_TILE}, not {size}")


def grid_columns(graph: Graph) -> int | None:
    """``cols`` when every edge joins ``v`` to ``v +- 1`` inside a row or to ``v +- cols``.

    Passes over the edges, no sort (a np.unique of 2 M differences took 70 ms of every grid's
    setup, and opt asks this of every graph it is given on the GPU)."""
    if graph.m == 0 or graph.n < 4:
        return None
    head = slice(0, 4096)  # a quick look first: most graphs fail on their first edges
    if np.unique(np.abs(graph.dst[head].astype(np.int64) - graph.src[head])).shape[0] > 2:
        return None
    diff = np.abs(graph.dst - graph.src)  # int32 ids in [0, 2^31 - 1): no overflow
    cols = int(diff.max())
    unit = diff == 1
    if cols < 2 or not unit.any() or not np.all(unit | (diff == cols)):
        return None
    low = np.minimum(graph.src, graph.dst)[unit]
    if np.any(low % cols == cols - 1):  # a "horizontal" edge that wraps to the next row
        return None
    return cols


def stable_order(keys: np.ndarray, bound: int) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for keys in [0, bound), by one sort of unique
    (key, index) pairs packed into int64: numpy's SIMD quicksort of plain integers is ~8x its
    stable argsort (2 M edges: 27 vs 228 ms), and unique keys leave it nothing to break ties."""
    count = keys.shape[0]
    if bound > 1 << 31 or count > 1 << 32:
        return np.argsort(keys, kind="stable")
    packed = keys.astype(np.int64) << 32
    packed |= np.arange(count, dtype=np.int64)
    packed.sort()
    packed &= 0xFFFFFFFF
    return packed


def automatic(graph: Graph) -> tuple[int, int] | None:
    """(tile size, step cap) when opt should use tiles without being asked, else None: on the
    H100, with pull passes at cap 32 and boundary inboxes, they win on grids (unit 700^2: 3.16
    -> 0.64 ms; weighted: 3.83 -> 1.20 ms, bucket 64x the largest weight) and lose 1.8x on the
    road stand-in (1.63 -> 2.89 ms), whose highways leave every tile many times (BENCHMARKS.md,
    issue 26)."""
    if graph.m == 0 or graph.n < MIN_TILE:
        return None
    if grid_columns(graph) is None:   # first: its look at the first edges rejects most graphs at once
        return None
    return AUTO_TILE, AUTO_STEPS


def block_shape(size: int, cols: int) -> tuple[int, int]:
    """(rows, cols) of a grid block: a power-of-two width near sqrt(size), as many rows as fit."""
    width = min(cols, 1 << int(math.log2(math.isqrt(size))))
    return size // width, width


def _grid_order(n: int, cols: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(order, block of each new id): cells grouped by bh x bw block, row-major inside."""
    bh, bw = block_shape(size, cols)
    ids = np.arange(n, dtype=np.int64)
    row, col = ids // cols, ids % cols
    block = (row // bh) * (-(-cols // bw)) + col // bw
    inside = (row % bh) * bw + col % bw
    order = stable_order(block * (bh * bw) + inside, (int(block.max(initial=0)) + 1) * bh * bw)
    return order, block[order]


def _intra_share(graph: Graph, rank: np.ndarray, size: int) -> float:
    if graph.m == 0:
        return 1.0
    return float(np.count_nonzero(rank[graph.src] // size == rank[graph.dst] // size)) / graph.m


def _rcm_order(graph: Graph) -> np.ndarray:
    import scipy.sparse as sp
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    ones = np.ones(2 * graph.m, dtype=np.int8)
    both = sp.csr_matrix((ones, (np.concatenate([graph.src, graph.dst]), np.concatenate([graph.dst, graph.src]))),
                         shape=(graph.n, graph.n))
    return np.asarray(reverse_cuthill_mckee(both, symmetric_mode=True), dtype=np.int64)


def locality_order(graph: Graph, size: int) -> tuple[np.ndarray, np.ndarray, str]:
    """(order, tile of each new id, how): the renumbering and the cut into tiles."""
    n = graph.n
    cols = grid_columns(graph)
    if cols is not None:
        order, block = _grid_order(n, cols, size)
        tile = block  # every block holds a cell (rows and columns of blocks cover the grid) ...
        if np.bincount(block).min() == 0:  # ... and when not, number the blocks that do
            _, tile = np.unique(block, return_inverse=True)
        bh, bw = block_shape(size, cols)
        return order, tile.astype(np.int32), f"grid of {cols} columns in {bh}x{bw} blocks"
    identity = np.arange(n, dtype=np.int64)
    chunks = (identity // size).astype(np.int32)
    given = _intra_share(graph, identity, size)
    if given >= LOCAL_SHARE:
        return identity, chunks, "ids as given"
    order = _rcm_order(graph)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = identity
    rcm = _intra_share(graph, rank, size)
    if rcm <= given:
        return identity, chunks, f"ids as given (reverse Cuthill-McKee: {rcm:.0%} of edges inside tiles)"
    return order, chunks, "reverse Cuthill-McKee order"


def build(graph: Graph, size: int) -> Tiling:
    """The tiling of ``graph`` with tiles of at most ``size`` vertices."""
    check_size(size)
    n = graph.n
    order, tile_of, how = locality_order(graph, size)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n, dtype=np.int64)
    counts = np.bincount(tile_of, minlength=int(tile_of.max(initial=-1)) + 1)
    tile_ptr = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=tile_ptr[1:])
    if counts.max(initial=0) > size or np.any(np.diff(tile_of) < 0):
        raise AssertionError("tiles must be ranges of consecutive new ids of at most size vertices")
    # int32 ids throughout (half the bytes of every gather); each edge list is one gather of
    # the graph's arrays by a stable order, so the edges of a vertex keep their file order
    rank32 = rank.astype(np.int32)
    tail, head = rank32[graph.src], rank32[graph.dst]
    tile_of = tile_of.astype(np.int32, copy=False)
    inside = tile_of[tail] == tile_of[head]
    by_tail = stable_order(tail, n)
    inside_sorted = inside[by_tail]
    pick_in, pick_out = by_tail[inside_sorted], by_tail[~inside_sorted]

    def csr(pick):
        ptr = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(np.bincount(tail[pick], minlength=n), out=ptr[1:])
        return ptr, head[pick], graph.w[pick]

    in_ptr, in_head, in_w = csr(pick_in)
    out_ptr, out_head, out_w = csr(pick_out)
    starts = tile_ptr.astype(np.int32)[tile_of]  # the first new id of each new id's tile
    local = (in_head - starts[in_head]).astype(np.uint16)
    by_head = stable_order(in_head, n)
    pin_ptr = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount(in_head, minlength=n), out=pin_ptr[1:])
    in_tail = tail[pick_in[by_head]]
    pin_tail = (in_tail - starts[in_tail]).astype(np.uint16)
    return Tiling(size, how, order, rank, tile_ptr.astype(np.int32), tile_of, in_ptr, local, in_w,
                  out_ptr, out_head, out_w, pin_ptr, pin_tail, in_w[by_head])


@dataclass
class CpuStats:
    rounds: int = 0
    splits: int = 0
    relaxed: int = 0
    activations: int = 0
    steps: int = 0
    scanned: int = 0


def _segment_min(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Minimum of each segment ``values[starts[k]:starts[k]+lengths[k]]`` (INF for an empty one)."""
    out = np.full(starts.shape[0], INF64, dtype=np.int64)
    some = lengths > 0
    if some.any():
        out[some] = np.minimum.reduceat(values, starts[some])
    return out


def solve_cpu(tiling: Tiling, delta: int, max_steps: int, timers=None) -> tuple[np.ndarray, CpuStats]:
    """Distances in new ids (int64, INF64 unreachable) by the kernel's scheme, in numpy.

    State as in the kernel: ``dirty[v]`` (improved, out-edges not expanded since), per tile
    ``tpend`` (a lower bound on its dirty vertices' distances), the tile queue of the round.
    A round: (A) each queued tile expands its dirty vertices below the threshold and runs
    worklist steps over its intra-tile edges until none improves one below the threshold
    (at most ``max_steps``; leftovers stay dirty and the tile is queued again), keeping
    improvements at or above it dirty; (B) the vertices expanded in (A) relax their boundary
    edges, and the tiles of heads improved below the threshold are queued for the next round.
    When no tile is queued: the threshold becomes ``min(tpend) + delta`` and every tile with
    ``tpend`` below it is queued (a split); ``min(tpend)`` infinite ends the solve.
    """
    n, tiles = tiling.order.shape[0], tiling.tiles
    starts = tiling.tile_ptr[:-1].astype(np.int64)
    tile_of = tiling.tile_of
    in_ptr, out_ptr = tiling.in_ptr.astype(np.int64), tiling.out_ptr.astype(np.int64)
    in_head = starts[tile_of[np.repeat(np.arange(n), np.diff(in_ptr))]] + tiling.in_head  # as new ids
    from .classic import edges_in_ranges

    stats = CpuStats()
    dist = np.full(n, INF64, dtype=np.int64)
    dirty = np.zeros(n, dtype=bool)
    tpend = np.full(tiles, INF64, dtype=np.int64)
    if n == 0:
        return dist, stats
    source = int(tiling.rank[0])
    dist[source], dirty[source] = 0, True
    tpend[tile_of[source]] = 0
    queued = np.array([tile_of[source]], dtype=np.int64)
    threshold = min(delta, INF64)
    guard = 8 * n + 1024
    while True:
        if queued.size == 0:
            low = int(tpend.min())
            stats.scanned += tiles
            if low >= INF64:
                break
            threshold = INF64 if delta >= INF64 - low else low + delta
            queued = np.flatnonzero(tpend < threshold)
            stats.splits += 1
            continue
        stats.rounds += 1
        stats.activations += queued.size
        if stats.rounds > guard:
            raise RuntimeError("opt -tile did not converge (round guard hit): this is a bug")
        member = np.zeros(tiles, dtype=bool)
        member[queued] = True
        active = member[tile_of]
        cur = active & dirty & (dist < threshold)
        pend = active & dirty & ~cur
        dirty[active] = False
        expanded = np.zeros(n, dtype=bool)
        steps = 0
        while cur.any() and steps < max_steps:  # phase A: all queued tiles step together
            steps += 1
            u = np.flatnonzero(cur)
            cur[u] = False
            expanded[u] = True
            pend[u] = False
            edge, owner = edges_in_ranges(u, in_ptr[u], in_ptr[u + 1])
            stats.relaxed += edge.shape[0]
            head, cand = in_head[edge], dist[owner] + tiling.in_w[edge]
            best = dist.copy()
            np.minimum.at(best, head, cand)
            better = np.flatnonzero(best < dist)
            dist[better] = best[better]
            near = best[better] < threshold
            cur[better[near]] = True
            pend[better[~near]] = True
        stats.steps += steps
        left = cur  # step cap: below the threshold, still to expand
        dirty[pend | left] = True
        counts = np.diff(tiling.tile_ptr).astype(np.int64)
        in_tile = np.where(dirty, dist, INF64)
        tpend[queued] = _segment_min(in_tile, starts, counts)[queued]
        again = np.unique(tile_of[np.flatnonzero(left)]).astype(np.int64)
        u = np.flatnonzero(expanded)  # phase B: boundary edges of the expanded vertices
        edge, owner = edges_in_ranges(u, out_ptr[u], out_ptr[u + 1])
        stats.relaxed += edge.shape[0]
        head, cand = tiling.out_head[edge].astype(np.int64), dist[owner] + tiling.out_w[edge]
        best = dist.copy()
        np.minimum.at(best, head, cand)
        better = np.flatnonzero(best < dist)
        dist[better] = best[better]
        dirty[better] = True
        np.minimum.at(tpend, tile_of[better], best[better])
        near_tiles = tile_of[better[best[better] < threshold]].astype(np.int64)
        queued = np.unique(np.concatenate([again, near_tiles]))
    return dist, stats
