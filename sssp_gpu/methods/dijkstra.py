"""dijkstra: parallel Dijkstra without a heap (seed 000's per-source Dijkstra, one source).

Each step settles one vertex: the unsettled vertex of least distance, found by a grid-wide
min-reduction over packed (distance, vertex) keys (ties to the smaller vertex), whose
out-edges are then relaxed by the last block to finish the reduction, all in one kernel.
A solve is one step per reachable vertex plus the step that finds none left, so it costs
O(n) steps of O(n) work: :data:`MAX_VERTICES` bounds it (about a second on an H100, a
minute in numpy) and larger graphs are refused with one line (exit 1). Steps are launched
from CUDA graphs of :data:`STEPS_PER_GRAPH`; the host checks once per graph. The grid is
sized to the GPU (``-bsize`` honoured, ``-bcount`` not used). ``-sync`` has no meaning for
a method that settles one vertex at a time: both run the same thing.
"""
from __future__ import annotations

import numpy as np

from sssp_common.graph import Graph
from ..timing import CpuTimer, GpuTimer
from .classic import PathResult, blocks_for, csr_cpu, csr_gpu, key_shift
from .common import Run, distance_dtype, dtype_inf, to_result_dist
from .host_loops import replay_until

MAX_VERTICES = 200_000
STEPS_PER_GRAPH = 64
UNREACHED = np.uint64(0xFFFFFFFFFFFFFFFE)  # dijkstra.cu's keys
CTRL_DONE, CTRL_SETTLED = 0, 1


def check_size(graph: Graph) -> None:
    if graph.n > MAX_VERTICES:
        raise ValueError(f"dijkstra settles one vertex per step (O(n^2) work): {graph.n} vertices is over its "
                         f"limit of {MAX_VERTICES}; use opt, harish or vbf-flag for this graph")


def run_cpu(graph: Graph, run: Run) -> PathResult:
    check_size(graph)
    row_ptr, heads, weights = csr_cpu(graph)
    dtype = distance_dtype(graph)
    inf = np.int64(dtype_inf(dtype))
    dist = np.full(graph.n, inf, dtype=np.int64)
    dist[0] = 0
    pred = np.full(graph.n, -1, dtype=np.int64)
    # the keys the GPU reduces over: unsettled reached vertices by distance, others never chosen
    key = np.full(graph.n, np.iinfo(np.int64).max, dtype=np.int64)
    key[0] = 0
    timer = CpuTimer()
    steps = relaxed = 0
    with timer.region():
        while True:
            steps += 1
            u = int(np.argmin(key))  # first index among equal keys: the smaller vertex, as packed
            if key[u] == np.iinfo(np.int64).max:
                break
            du = int(key[u])
            key[u] = np.iinfo(np.int64).max
            dist[u] = du
            lo, hi = int(row_ptr[u]), int(row_ptr[u + 1])
            relaxed += hi - lo
            head, candidate = heads[lo:hi].astype(np.int64), du + weights[lo:hi].astype(np.int64)
            keep = (head != u) & (dist[head] == inf) & (candidate < key[head])
            head, candidate = head[keep], candidate[keep]
            np.minimum.at(key, head, candidate)
            pred[head] = u
    return PathResult(to_result_dist(np.where(dist == inf, inf, dist).astype(dtype)), timer.total_ms(), 0.0,
                      steps, relaxed, 0, _launch_cpu(run), [], pred=pred)


def _launch_cpu(run: Run) -> str:
    return f"{run.bsize}-thread blocks sized to the machine (numpy: one argmin per step)"


def _blocks(graph: Graph, bsize: int) -> int:
    import cupy

    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    return min(blocks_for(graph.n, bsize), 2 * sms)


def run_gpu(graph: Graph, run: Run) -> PathResult:
    import cupy

    from .. import kernels

    check_size(graph)
    shift = np.int32(key_shift(graph, graph.n))
    dtype = distance_dtype(graph)
    step = kernels.kernel("dijkstra", f"dijkstra_step<{kernels.c_type(dtype)}>")
    row_ptr, adj = csr_gpu(graph)
    key = cupy.full(graph.n, UNREACHED, dtype=np.uint64)
    key[0] = 0
    dist = cupy.full(graph.n, dtype_inf(dtype), dtype=dtype)
    pred = cupy.full(graph.n, -1, dtype=np.int32)
    best = cupy.full(1, np.uint64(0xFFFFFFFFFFFFFFFF), dtype=np.uint64)
    arrived = cupy.zeros(1, dtype=np.uint32)
    ctrl = cupy.zeros(2, dtype=np.int32)
    blocks = _blocks(graph, run.bsize)
    args = (np.int32(graph.n), shift, row_ptr, adj, key, dist, pred, best, arrived, ctrl)
    timer = GpuTimer()

    def steps():
        for _ in range(STEPS_PER_GRAPH):
            step((blocks,), (run.bsize,), args)

    def done(state, replays) -> bool:   # the guard: more steps than vertices, plus one graph's worth
        return bool(state[CTRL_DONE]) or replays * STEPS_PER_GRAPH > graph.n + STEPS_PER_GRAPH

    state = replay_until(steps, ctrl, done, timer)
    if not state[CTRL_DONE]:
        raise RuntimeError("dijkstra did not finish (step guard hit): this is a bug")
    settled = int(state[CTRL_SETTLED])
    row = row_ptr.get()
    dist_host = dist.get()
    relaxed = int((row[1:] - row[:-1])[dist_host != dtype_inf(dtype)].sum())
    launch = (f"{blocks} blocks x {run.bsize} threads (grid sized to the GPU, -bcount not used; one kernel "
              f"per step, CUDA graphs of {STEPS_PER_GRAPH} steps; -sync incore and outcore alike)")
    return PathResult(to_result_dist(dist_host), timer.total_ms(), 0.0, settled + 1, relaxed, 0, launch,
                      [], pred=pred.get().astype(np.int64))
