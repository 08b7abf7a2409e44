"""The all-pairs methods on either device: fw, fw-blocked, minplus, sssp-all.

- ``fw``: Floyd-Warshall, one kernel per k over the whole matrix (Hochberg, seed 002);
- ``fw-blocked``: three-phase blocked Floyd-Warshall on 128 x 128 tiles in shared memory
  and registers (Bodra's tiled with shared memory, seed 000): n / 128 rounds of a
  diagonal closure, a panel product and a min-plus product into every other tile;
- ``minplus``: repeated min-plus squaring D <- D (x) D with the same tiled product
  (An, seed 001), until a squaring changes nothing (at most ceil(log2 n) + 1);
- ``sssp-all``: every source at once in batches, each row relaxed from the vertices that
  improved in the last round (vbf-flag over a batch of sources).

The numpy fallbacks run the same steps (the same k order, tiles and squarings) on the CPU.
Kernel time is CUDA-event time around the kernels only.
"""
from __future__ import annotations

import numpy as np

from sssp_common.graph import Graph
from ..pinned import pinned_zeros
from ..methods.classic import csr_cpu, csr_gpu, edges_in_ranges
from ..timing import CpuTimer, GpuTimer
from . import narrow as narrow_rule
from .matrix import HALF_INF, TILE, ApspResult, initial_matrix, padded, working_dtype

METHODS = ("fw", "fw-blocked", "minplus", "sssp-all")
BATCH_PAIRS = 1 << 26  # sssp-all: sources per batch x n (the masks' bytes)


def solve(graph: Graph, method: str, on_gpu: bool, narrow: str = "auto") -> ApspResult:
    """``narrow`` (fw-blocked only): ``auto`` runs on int16 entries when :mod:`.narrow` expects
    it to be exact, ``always`` tries int16 whatever the graph, ``never`` keeps the working type;
    an int16 result that is not proven exact is thrown away and the solve rerun (both counted)."""
    if method not in METHODS:
        raise ValueError(f"unknown all-pairs method {method!r} (choose from {', '.join(METHODS)})")
    if narrow not in ("auto", "always", "never"):
        raise ValueError(f"narrow must be auto, always or never, not {narrow!r}")
    name = method.replace("-", "_")
    run = globals()[f"_{name}_gpu"] if on_gpu else globals()[f"_{name}_cpu"]
    if method != "fw-blocked" or narrow == "never" or (narrow == "auto" and not narrow_rule.worth_trying(graph)):
        return run(graph)
    first = run(graph, narrow_rule.NARROW)
    top = first.stats()[2]
    if narrow_rule.proven_exact(top, graph):
        first.notes.append(f"int16 entries, two per DPX add-min: exact (largest distance {top} < "
                           f"{narrow_rule.margin(graph)} = {narrow_rule.LIMIT} - the largest weight)")
        return first
    spent = first.computation_ms
    del first  # the GPU may not hold both matrices
    _free_gpu(on_gpu)
    second = run(graph)
    second.computation_ms += spent
    second.notes.append(f"int16 run not provably exact (largest finite entry {top} >= {narrow_rule.margin(graph)}): "
                        f"rerun in {second.matrix.dtype.name}; both runs' {spent:.1f} + "
                        f"{second.computation_ms - spent:.1f} ms counted")
    return second


def _free_gpu(on_gpu: bool) -> None:
    if on_gpu:
        import cupy
        cupy.get_default_memory_pool().free_all_blocks()


def squarings_bound(n: int) -> int:
    return max(1, int(np.ceil(np.log2(max(n, 2))))) + 1


def _unreached_rows(graph: Graph, xp):
    """sssp-all's start: every source at 0 from itself, nothing else known (frontiers start at the source)."""
    dtype = working_dtype(graph)
    size = padded(graph.n)
    d = xp.full((size, size), HALF_INF[dtype.itemsize], dtype=dtype)
    diagonal = xp.arange(size)
    d[diagonal, diagonal] = 0
    return d


# ---------------------------------------------------------------- CPU (numpy)

def _relax_through(d: np.ndarray, k: int, rows=slice(None), cols=slice(None)) -> None:
    """d[rows, cols] = min(d[rows, cols], d[rows, k] + d[k, cols]) (one FW step on a block)."""
    block = d[rows, cols]
    np.minimum(block, d[rows, k][:, None] + d[k, cols][None, :], out=block)


def _minplus_acc(c: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    for k in range(a.shape[1]):
        np.minimum(c, a[:, k][:, None] + b[k][None, :], out=c)


def _fw_cpu(graph: Graph) -> ApspResult:
    d = initial_matrix(graph)
    timer = CpuTimer()
    with timer.region():
        for k in range(graph.n):
            _relax_through(d, k)
    return ApspResult(d, graph.n, timer.total_ms(), graph.n, "numpy: one vectorised step per k", False)


def _fw_blocked_cpu(graph: Graph, dtype=None) -> ApspResult:
    d = initial_matrix(graph, dtype=dtype)
    tiles = d.shape[0] // TILE
    timer = CpuTimer()
    with timer.region():
        for kb in range(tiles):
            K = slice(kb * TILE, (kb + 1) * TILE)
            for k in range(K.start, K.stop):  # phase 1: close the diagonal tile
                _relax_through(d, k, K, K)
            closure = d[K, K].copy()
            for t in range(tiles):  # phase 2: the panels times the closure
                if t != kb:
                    T = slice(t * TILE, (t + 1) * TILE)
                    row, col = d[K, T], d[T, K]
                    _minplus_acc(row, closure, row.copy())
                    _minplus_acc(col, col.copy(), closure)
            others = np.r_[0:K.start, K.stop:d.shape[0]]  # phase 3: every other tile
            if others.size:
                block = d[np.ix_(others, others)]
                _minplus_acc(block, d[others, K], d[K][:, others])
                d[np.ix_(others, others)] = block
    return ApspResult(d, graph.n, timer.total_ms(), tiles, f"numpy: {tiles} rounds of {TILE} x {TILE} tiles",
                      False)


def _minplus_cpu(graph: Graph) -> ApspResult:
    d = initial_matrix(graph)
    timer = CpuTimer()
    squarings = 0
    with timer.region():
        for _ in range(squarings_bound(graph.n)):
            squarings += 1
            c = d.copy()
            _minplus_acc(c, d, d)
            changed = bool((c < d).any())
            d = c
            if not changed:
                break
    return ApspResult(d, graph.n, timer.total_ms(), squarings, "numpy: repeated min-plus squaring", False)


def _sssp_all_cpu(graph: Graph) -> ApspResult:
    d = _unreached_rows(graph, np)
    size = d.shape[0]
    row_ptr, heads, weights = csr_cpu(graph)
    timer = CpuTimer()
    rounds = 0
    batch = max(1, min(graph.n, BATCH_PAIRS // max(1, graph.n)))
    with timer.region():
        for first in range(0, graph.n, batch):
            sources = np.arange(first, min(graph.n, first + batch))
            active_s, active_u = sources, sources  # pairs (source, vertex) that improved
            while active_s.size:
                rounds += 1
                # owner = the pair's index: one vertex may be active for several sources
                edge, position = edges_in_ranges(np.arange(active_u.size), row_ptr[active_u],
                                                 row_ptr[active_u + 1])
                s = active_s[position]
                head = heads[edge].astype(np.int64)
                cand = d[s, active_u[position]].astype(np.int64) + weights[edge]
                flat = s * size + head
                before = d.reshape(-1)[flat]
                better = cand < before
                flat, cand = flat[better], cand[better]
                np.minimum.at(d.reshape(-1), flat, cand.astype(d.dtype))
                improved = np.unique(flat)
                active_s, active_u = improved // size, improved % size
    return ApspResult(d, graph.n, timer.total_ms(), rounds, f"numpy: frontiers of {batch} sources at once", False)


# ---------------------------------------------------------------- GPU (CuPy)

def _kernel(name: str, d):
    from .. import kernels
    return kernels.kernel("apsp", f"{name}<{kernels.c_type(d.dtype)}>")


def _fw_gpu(graph: Graph) -> ApspResult:
    import cupy

    d = initial_matrix(graph, cupy)
    step = _kernel("apsp_fw_k", d)
    size, n = np.int32(d.shape[0]), np.int32(graph.n)
    block = (32, 8)
    grid = (-(-graph.n // 32), -(-graph.n // 8))
    timer = GpuTimer()
    with timer.region():
        for k in range(graph.n):
            step(grid, block, (d, size, n, np.int32(k)))
    return ApspResult(d, graph.n, timer.total_ms(), graph.n,
                      f"{grid[0]} x {grid[1]} blocks x 32 x 8 threads, one launch per k ({graph.n})", True)


def _blocked_rounds(d, timer) -> int:
    import cupy

    diagonal = _kernel("apsp_fw_diagonal", d)
    if d.dtype.itemsize == 2:  # two entries per DPX add-min, 128 threads per tile
        from .. import kernels
        tiles_kernel, threads = kernels.kernel("apsp", "apsp_minplus_s16x2"), (128,)
    else:
        tiles_kernel, threads = _kernel("apsp_minplus_tiles", d), (256,)
    tiles = d.shape[0] // TILE
    size = np.int32(d.shape[0])
    unused = cupy.zeros(1, dtype=np.int32)  # the changed flag: only squarings (mode 2) set it
    with timer.region():
        for kb in range(tiles):
            k0, k1, kb32 = np.int32(kb * TILE), np.int32((kb + 1) * TILE), np.int32(kb)
            diagonal((1,), (256,), (d, size, kb32))
            if tiles > 1:
                tiles_kernel((tiles, 2), threads, (d, d, d, d, size, k0, k1, np.int32(0), kb32, unused))
                tiles_kernel((tiles, tiles), threads, (d, d, d, d, size, k0, k1, np.int32(1), kb32, unused))
    return tiles


def _fw_blocked_gpu(graph: Graph, dtype=None) -> ApspResult:
    import cupy

    d = initial_matrix(graph, cupy, dtype)
    timer = GpuTimer()
    tiles = _blocked_rounds(d, timer)
    shape = ("128 threads, 8 x 16 int16 entries each" if d.dtype.itemsize == 2
             else "256 threads, 8 x 8 entries each")
    return ApspResult(d, graph.n, timer.total_ms(), tiles,
                      f"{tiles} rounds of 3 phases on {TILE} x {TILE} tiles ({shape})", True)


def _minplus_gpu(graph: Graph) -> ApspResult:
    import cupy

    d = initial_matrix(graph, cupy)
    other = cupy.empty_like(d)
    product = _kernel("apsp_minplus_tiles", d)
    tiles = d.shape[0] // TILE
    size = np.int32(d.shape[0])
    changed = cupy.zeros(1, dtype=np.int32)
    timer = GpuTimer()
    squarings = 0
    for _ in range(squarings_bound(graph.n)):
        squarings += 1
        changed.fill(0)
        with timer.region():
            product((tiles, tiles), (256,), (other, d, d, d, size, np.int32(0), size, np.int32(2), np.int32(0), changed))
        d, other = other, d
        if not int(changed.get()[0]):
            break
    del other
    return ApspResult(d, graph.n, timer.total_ms(), squarings,
                      f"{tiles} x {tiles} tiles of {TILE} x {TILE} per squaring (256 threads, 8 x 8 entries each)", True)


def _sssp_all_gpu(graph: Graph) -> ApspResult:
    import cupy

    d = _unreached_rows(graph, cupy)
    relax = _kernel("apsp_batch_relax", d)
    row_ptr, adj = csr_gpu(graph)
    n = graph.n
    batch = max(1, min(n, BATCH_PAIRS // max(1, n)))
    masks = [cupy.zeros(batch * n, dtype=np.uint8) for _ in range(2)]
    changed = cupy.zeros(1, dtype=np.int32)
    changed_host = pinned_zeros(1, dtype=np.int32)
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    grid, block = (sms * 8,), (256,)
    timer = GpuTimer()
    rounds = 0
    for first in range(0, n, batch):
        count = min(batch, n - first)
        pairs = np.int64(count * n)
        masks[0][:] = 0
        masks[1][:] = 0
        local = cupy.arange(count, dtype=np.int64)
        masks[0][local * n + first + local] = 1  # each source's own vertex
        while True:
            rounds += 1
            changed.fill(0)
            with timer.region():
                relax(grid, block, (d, np.int32(d.shape[0]), np.int32(n), np.int32(first), pairs, row_ptr, adj,
                                    masks[0], masks[1], changed))
            masks.reverse()
            changed.get(out=changed_host)
            if not changed_host[0]:
                break
    return ApspResult(d, n, timer.total_ms(), rounds,
                      f"{grid[0]} blocks x 256 threads; frontiers of {batch} sources at once", True)
