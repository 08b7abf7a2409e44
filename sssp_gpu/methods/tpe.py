"""To-process-edge filtering (spec section 2): each round relaxes only the edges whose
source changed in the previous round, gathered into the list T in their original order.

Filtering (count with ballots, scan the warp counts, gather into T) and computation
(relax T, divided evenly among the warps) are timed apart. Out-of-core rounds match
bmf's one for one; in-core rounds are whatever the in-place updates make them.
``on_round(round, T, changed)``, when given, sees each round's T and the changed-vertex
mask it was filtered with (tests check T against an independent filter).
"""
from __future__ import annotations

import numpy as np

from sssp_common.graph import Graph
from ..pinned import pinned_zeros
from ..resident import on_device
from ..timing import CpuTimer, GpuTimer
from . import relax_cpu
from .common import Result, RoundHook, Run, distance_dtype, dtype_inf, max_rounds, to_result_dist

SCAN_THREADS = 1024  # tpe_scan's single block; any number of warps works


def _launch(run: Run) -> str:
    return f"{run.bcount} blocks x {run.bsize} threads ({run.warps} warps)"


def run_cpu(graph: Graph, run: Run, on_round: RoundHook = None) -> Result:
    dtype = distance_dtype(graph)
    inf = dtype_inf(dtype)
    dist = np.full(graph.n, inf, dtype=dtype)
    dist[0] = 0
    changed = np.zeros(graph.n, dtype=bool)
    changed[0] = True
    filtering, computation = CpuTimer(), CpuTimer()
    rounds = processed = 0
    for _ in range(max_rounds(graph)):
        rounds += 1
        with filtering.region():
            T = np.flatnonzero(changed[graph.src])
        if on_round is not None:
            on_round(rounds, T, changed.copy())
        processed += T.shape[0]
        with computation.region():
            if run.sync == "outcore":
                dist, changed = relax_cpu.relax_outcore(dist, graph.src[T], graph.dst[T], graph.w[T], inf)
            else:
                changed = relax_cpu.relax_incore(dist, T, graph.src, graph.dst, graph.w, run.warps, inf)
        if not changed.any():
            break
    return Result(to_result_dist(dist), computation.total_ms(), filtering.total_ms(), rounds,
                  processed, rounds * graph.m, _launch(run))


def run_gpu(graph: Graph, run: Run, on_round: RoundHook = None) -> Result:
    import cupy

    from .. import kernels

    dtype = distance_dtype(graph)
    inf = dtype_inf(dtype)
    ctype = kernels.c_type(dtype)
    count = kernels.kernel("tpe", "tpe_count")
    scan = kernels.kernel("tpe", "tpe_scan")
    gather = kernels.kernel("tpe", "tpe_gather")
    relax = kernels.kernel("tpe", f"tpe_relax_{run.sync}<{ctype}>")

    src, dst, w = (on_device(a) for a in (graph.src, graph.dst, graph.w))
    num_edges, num_warps = np.int32(graph.m), np.int32(run.warps)
    distance = cupy.full(graph.n, inf, dtype=dtype)
    distance[0] = 0
    spare = cupy.empty_like(distance) if run.sync == "outcore" else None
    changed = cupy.zeros(graph.n, dtype=np.uint8)
    changed[0] = 1
    changed_next = cupy.zeros_like(changed)
    warp_count = cupy.zeros(run.warps, dtype=np.int32)
    warp_offset = cupy.zeros(run.warps + 1, dtype=np.int32)
    T = cupy.empty(max(graph.m, 1), dtype=np.int32)
    status = cupy.zeros(2, dtype=np.int32)  # [0] a distance changed, [1] |T|
    status_host = pinned_zeros(2, dtype=np.int32)
    grid, block = (run.bcount,), (run.bsize,)
    scan_block = (min(SCAN_THREADS, max(32, -(-run.warps // 32) * 32)),)
    filtering, computation = GpuTimer(), GpuTimer()
    rounds = processed = 0
    for _ in range(max_rounds(graph)):
        rounds += 1
        status.fill(0)
        with filtering.region():
            count(grid, block, (src, num_edges, changed, warp_count))
            scan((1,), scan_block, (warp_count, num_warps, warp_offset, status))
            gather(grid, block, (src, num_edges, changed, warp_offset, T))
        if run.sync == "outcore":
            cupy.copyto(spare, distance)
            with computation.region():
                relax(grid, block, (T, status, src, dst, w, distance, spare, changed_next, status))
            distance, spare = spare, distance
        else:
            with computation.region():
                relax(grid, block, (T, status, src, dst, w, distance, changed_next, status))
        status.get(out=status_host)
        if on_round is not None:
            on_round(rounds, T[: int(status_host[1])].get().astype(np.int64), changed.get().astype(bool))
        processed += int(status_host[1])
        if not status_host[0]:
            break
        changed, changed_next = changed_next, changed
        changed_next.fill(0)
    return Result(to_result_dist(distance.get()), computation.total_ms(), filtering.total_ms(), rounds,
                  processed, rounds * graph.m, _launch(run))
