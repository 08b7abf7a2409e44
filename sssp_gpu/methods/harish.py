"""harish: the Harish-Narayanan two-kernel SSSP with predecessors (seed 003, Telang).

Each round, kernel 1 takes every masked vertex (clearing its mask) and relaxes its
out-edges into the *updating cost* array with a packed 64-bit ``atomicMin`` on
``cost << shift | (tail + 1)``; kernel 2 commits, for every vertex, a candidate strictly
below its cost, records the candidate's tail as the predecessor and masks the vertex for
the next round. One thread per vertex (ceil(n / bsize) blocks; ``-bcount`` is not used).
The two kernels already separate reading (cost) from writing (updating cost), the
algorithm's own out-of-core scheme, so ``-sync incore`` and ``outcore`` run the same
thing (the ``launch:`` line says so). Refused (one line) for weights so large that
cost and vertex cannot share 64 bits.
"""
from __future__ import annotations

import numpy as np

from sssp_common.graph import Graph
from ..timing import CpuTimer
from .classic import ALL_ONES, PathResult, blocks_for, csr_cpu, csr_gpu, key_shift, one_per_head, out_edges
from .common import Run, distance_dtype, dtype_inf, max_rounds, to_result_dist
from .host_loops import FlagRounds


def _launch(graph: Graph, run: Run) -> str:
    return (f"{blocks_for(graph.n, run.bsize)} blocks x {run.bsize} threads (one thread per vertex; "
            "-bcount not used; two kernels per round, -sync incore and outcore alike)")


def run_cpu(graph: Graph, run: Run) -> PathResult:
    key_shift(graph, graph.n + 1)  # the same refusal as the GPU's
    row_ptr, heads, weights = csr_cpu(graph)
    dtype = distance_dtype(graph)
    inf = dtype_inf(dtype)
    cost = np.full(graph.n, inf, dtype=np.int64)
    cost[0] = 0
    pred = np.full(graph.n, -1, dtype=np.int64)
    mask = np.zeros(graph.n, dtype=bool)
    mask[0] = True
    timer = CpuTimer()
    rounds = relaxed = 0
    for _ in range(max_rounds(graph)):
        rounds += 1
        with timer.region():
            edge, tail = out_edges(row_ptr, np.flatnonzero(mask))
            relaxed += edge.size
            head, candidate, tail = one_per_head(heads[edge].astype(np.int64),
                                                 cost[tail] + weights[edge], tail)
            better = candidate < cost[head]
            head = head[better]
            cost[head] = candidate[better]
            pred[head] = tail[better]
            mask[:] = False
            mask[head] = True
        if not mask.any():
            break
    return PathResult(to_result_dist(cost.astype(dtype)), timer.total_ms(), 0.0, rounds, relaxed, 0,
                      _launch(graph, run), [], pred=pred)


def run_gpu(graph: Graph, run: Run) -> PathResult:
    import cupy

    from .. import kernels

    shift = np.int32(key_shift(graph, graph.n + 1))
    dtype = distance_dtype(graph)
    ctype = kernels.c_type(dtype)
    relax = kernels.kernel("harish", f"harish_relax<{ctype}>")
    commit = kernels.kernel("harish", f"harish_commit<{ctype}>")
    row_ptr, adj = csr_gpu(graph)
    n = np.int32(graph.n)
    cost = cupy.full(graph.n, dtype_inf(dtype), dtype=dtype)
    cost[0] = 0
    updating = cupy.full(graph.n, ALL_ONES, dtype=np.uint64)
    updating[0] = 0
    pred = cupy.full(graph.n, -1, dtype=np.int32)
    mask = cupy.zeros(graph.n, dtype=np.uint8)
    mask[0] = 1
    grid, block = (blocks_for(graph.n, run.bsize),), (run.bsize,)
    loop = FlagRounds(graph)

    def one_round():
        relax(grid, block, (n, row_ptr, adj, cost, updating, mask, shift, loop.edges))
        commit(grid, block, (n, cost, updating, pred, mask, loop.changed, shift))

    loop.run(one_round)
    return PathResult(to_result_dist(cost.get()), loop.timer.total_ms(), 0.0, loop.rounds, loop.relaxed(), 0,
                      _launch(graph, run), [], pred=pred.get().astype(np.int64))
