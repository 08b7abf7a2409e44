"""Vertex-centric Bellman-Ford (seed 000, Bodra; seed 001, An): one thread per vertex, pushing.

The graph is a CSR by source; a vertex's thread relaxes its out-edges with ``atomicMin``.

- ``vbf`` (naive): one thread per vertex (ceil(n / bsize) blocks; ``-bcount`` is not used),
  every vertex with a finite distance relaxes every round;
- ``vbf-stride``: the ``-bsize`` x ``-bcount`` grid, each thread taking vertices
  ``tid, tid + threads, ...`` (grid-stride loop), every vertex every round;
- ``vbf-flag``: the same grid, but only vertices improved in the last round relax (a mask
  double-buffered with the next round's, and a changed flag: An's mask/mask1/flag).

``-sync outcore`` is the papers' ``prevDistance``/``distance`` pair: a round reads the
previous round's distances and writes the current ones, which are copied forward inside
the timed region (Bodra's update kernel; with flags only the improved vertices);
``incore`` relaxes one array in place. A round that changes nothing ends the loop and is
counted.
"""
from __future__ import annotations

import numpy as np

from sssp_common.graph import Graph
from ..timing import CpuTimer
from .classic import blocks_for, csr_cpu, csr_gpu, out_edges
from .common import Result, Run, distance_dtype, dtype_inf, max_rounds, to_result_dist
from .host_loops import FlagRounds


def _threads(graph: Graph, run: Run) -> int:
    return blocks_for(graph.n, run.bsize) * run.bsize if run.method == "vbf" else run.threads


def _launch(graph: Graph, run: Run) -> str:
    if run.method == "vbf":
        return (f"{blocks_for(graph.n, run.bsize)} blocks x {run.bsize} threads "
                "(one thread per vertex; -bcount not used)")
    return f"{run.bcount} blocks x {run.bsize} threads (grid-stride over vertices)"


def _relax_cpu(dist_read, dist_write, vertices, row_ptr, heads, weights, inf, improved) -> int:
    """Relax the out-edges of ``vertices`` (finite distances) into ``dist_write``, set the
    improved heads in the boolean mask ``improved`` and return the edges relaxed. The mask is
    the dedup: a head improved by several edges is set once, in O(frontier) writes (a
    np.unique here sorted every step's heads, once per grid-stride step of every round)."""
    edge, tail = out_edges(row_ptr, vertices)
    if edge.size == 0:
        return 0
    head = heads[edge].astype(np.int64)
    candidate = np.minimum(dist_read[tail].astype(np.int64) + weights[edge], inf)
    before = dist_write[head]
    better = candidate < before
    head, candidate = head[better], candidate[better]
    np.minimum.at(dist_write, head, candidate.astype(dist_write.dtype))
    improved[head] = True
    return edge.size


def run_cpu(graph: Graph, run: Run) -> Result:
    """The same rounds in numpy. In-core, vertices go in steps of the grid's thread count
    (a grid-stride step), each step seeing the earlier steps' updates, as the GPU's threads
    see the single array; out-of-core each round reads only the previous round."""
    row_ptr, heads, weights = csr_cpu(graph)
    dtype = distance_dtype(graph)
    inf = dtype_inf(dtype)
    dist = np.full(graph.n, inf, dtype=dtype)
    dist[0] = 0
    flag = run.method == "vbf-flag"
    # this round's mask and the next's, swapped each round and cleared, never reallocated
    mask, next_mask = np.zeros(graph.n, dtype=bool), np.zeros(graph.n, dtype=bool)
    mask[0] = True
    step = _threads(graph, run)
    timer = CpuTimer()
    rounds = relaxed = 0
    for _ in range(max_rounds(graph)):
        rounds += 1
        with timer.region():
            active = np.flatnonzero(mask) if flag else np.flatnonzero(dist != inf)
            next_mask.fill(False)
            if run.sync == "outcore":
                cur = dist.copy()
                relaxed += _relax_cpu(dist, cur, active, row_ptr, heads, weights, inf, next_mask)
                dist = cur
            else:
                for start in range(0, graph.n, step):
                    if flag:  # active is sorted: the step's slice by two binary searches
                        part = active[np.searchsorted(active, start):np.searchsorted(active, start + step)]
                    else:  # the GPU reads each distance when its thread gets there
                        part = start + np.flatnonzero(dist[start:start + step] != inf)
                    relaxed += _relax_cpu(dist, dist, part, row_ptr, heads, weights, inf, next_mask)
            mask, next_mask = next_mask, mask
        if not mask.any():
            break
    return Result(to_result_dist(dist), timer.total_ms(), 0.0, rounds, relaxed, 0,
                  _launch(graph, run), [])


def run_gpu(graph: Graph, run: Run) -> Result:
    import cupy

    from .. import kernels

    dtype = distance_dtype(graph)
    ctype = kernels.c_type(dtype)
    flag = run.method == "vbf-flag"
    relax = kernels.kernel("vbf", f"vbf_flag_relax<{ctype}>" if flag else f"vbf_relax<{ctype}>")
    forward = kernels.kernel("vbf", f"vbf_flag_forward<{ctype}>")
    row_ptr, adj = csr_gpu(graph)
    n = np.int32(graph.n)
    dist = cupy.full(graph.n, dtype_inf(dtype), dtype=dtype)
    dist[0] = 0
    outcore = run.sync == "outcore"
    cur = dist.copy() if outcore else dist
    masks = [cupy.zeros(graph.n, dtype=np.uint8), cupy.zeros(graph.n, dtype=np.uint8)]
    masks[0][0] = 1
    grid = (blocks_for(graph.n, run.bsize) if run.method == "vbf" else run.bcount,)
    block = (run.bsize,)
    loop = FlagRounds(graph)

    def one_round():
        if flag:
            relax(grid, block, (n, row_ptr, adj, dist, cur, masks[0], masks[1], loop.changed, loop.edges))
            if outcore:
                forward(grid, block, (n, masks[1], cur, dist))
            masks.reverse()   # this round's next mask is the next round's mask
        else:
            relax(grid, block, (n, row_ptr, adj, dist, cur, loop.changed, loop.edges))
            if outcore:
                cupy.copyto(dist, cur)

    loop.run(one_round)
    return Result(to_result_dist(dist.get()), loop.timer.total_ms(), 0.0, loop.rounds, loop.relaxed(), 0,
                  _launch(graph, run), [])
