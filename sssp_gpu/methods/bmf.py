"""Bellman-Ford (spec section 1, Listing 2): every edge, every round.

``outcore`` reads ``distance_prev`` and writes ``distance_cur``, swapping between rounds;
``incore`` relaxes one ``distance`` array in place. ``usesmem`` selects the segmented-scan
kernel (out-of-core only, meant for destination-sorted lists). A round that changes no
distance ends the loop; it is counted in ``rounds``.
"""
from __future__ import annotations

import numpy as np

from sssp_common.graph import Graph
from ..pinned import pinned_zeros
from ..resident import on_device
from ..timing import CpuTimer, GpuTimer
from . import relax_cpu
from .common import Result, Run, distance_dtype, dtype_inf, max_rounds, to_result_dist


def check_segscan(graph: Graph, run: Run) -> list[str]:
    """A warning for lists not sorted by destination (Run refuses segscan in-core)."""
    if graph.m > 1 and not bool(np.all(graph.dst[1:] >= graph.dst[:-1])):
        return ["warning: the edge list is not sorted by destination; segscan's result is unchanged "
                "but its segments are short, so it is slower (sort by destination to use it as meant)"]
    return []


def _launch(run: Run) -> str:
    return f"{run.bcount} blocks x {run.bsize} threads ({run.warps} warps)"


def run_cpu(graph: Graph, run: Run) -> Result:
    notes = check_segscan(graph, run) if run.usesmem else []
    dtype = distance_dtype(graph)
    inf = dtype_inf(dtype)
    dist = np.full(graph.n, inf, dtype=dtype)
    dist[0] = 0
    timer = CpuTimer()
    everything = np.arange(graph.m, dtype=np.int64)
    rounds = 0
    for _ in range(max_rounds(graph)):
        rounds += 1
        with timer.region():
            if run.sync == "outcore":
                dist, improved = relax_cpu.relax_outcore(dist, graph.src, graph.dst, graph.w, inf)
            else:
                improved = relax_cpu.relax_incore(dist, everything, graph.src, graph.dst, graph.w, run.warps, inf)
        if not improved.any():
            break
    return Result(to_result_dist(dist), timer.total_ms(), 0.0, rounds, rounds * graph.m, 0,
                  _launch(run), notes)


def run_gpu(graph: Graph, run: Run) -> Result:
    import cupy

    from .. import kernels

    notes = check_segscan(graph, run) if run.usesmem else []
    dtype = distance_dtype(graph)
    inf = dtype_inf(dtype)
    name = "bmf_segscan" if run.usesmem else f"bmf_{run.sync}"
    relax = kernels.kernel("bmf", f"{name}<{kernels.c_type(dtype)}>")

    src, dst, w = (on_device(a) for a in (graph.src, graph.dst, graph.w))
    num_edges = np.int32(graph.m)
    distance = cupy.full(graph.n, inf, dtype=dtype)
    distance[0] = 0
    spare = cupy.empty_like(distance) if run.sync == "outcore" else None
    changed = cupy.zeros(1, dtype=np.int32)
    changed_host = pinned_zeros(1, dtype=np.int32)
    grid, block = (run.bcount,), (run.bsize,)
    timer = GpuTimer()
    rounds = 0
    for _ in range(max_rounds(graph)):
        rounds += 1
        changed.fill(0)
        if run.sync == "outcore":
            distance_prev, distance_cur = distance, spare
            cupy.copyto(distance_cur, distance_prev)
            with timer.region():
                relax(grid, block, (src, dst, w, num_edges, distance_prev, distance_cur, changed))
            distance, spare = distance_cur, distance_prev
        else:
            with timer.region():
                relax(grid, block, (src, dst, w, num_edges, distance, changed))
        changed.get(out=changed_host)
        if not changed_host[0]:
            break
    return Result(to_result_dist(distance.get()), timer.total_ms(), 0.0, rounds, rounds * graph.m, 0,
                  _launch(run), notes)
