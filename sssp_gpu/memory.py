"""Refuse up front a graph whose arrays cannot fit, instead of dying of it halfway.

A 3-edge file naming vertex 99,999,999 asks for 100 million distances and output lines:
that is fine in a few GB (every stage works in bounded chunks or a few bytes per vertex),
but a vertex id near 2^31 is not. The estimates are the peak arrays of the run, per vertex
and per edge, measured on the numpy fallback with int64 distances (the worst case).
"""
from __future__ import annotations

import resource

from sssp_common.errors import InputError
from sssp_common.graph import Graph
from .device import Device
from .methods.common import Run

# Host: the method's distances, the int64 result and its INF mask, the output's INF mask.
HOST_PER_VERTEX = 20
# Host, per edge: the numpy fallback's per-round candidates and sort keys; the GPU path only
# stages the edge arrays for the copy.
HOST_PER_EDGE = {False: 64, True: 16}
HOST_FIXED = 256 << 20  # output chunks, interpreter slack
# GPU: distances, queues and flags (opt has the most: ~11 int32 arrays of n), CSR and edges.
GPU_PER_VERTEX = 48
GPU_PER_EDGE = 40


def host_bytes(graph: Graph, device: Device) -> int:
    return HOST_FIXED + HOST_PER_VERTEX * graph.n + HOST_PER_EDGE[device.is_gpu] * graph.m


def gpu_bytes(graph: Graph) -> int:
    return GPU_PER_VERTEX * graph.n + GPU_PER_EDGE * graph.m


def host_available() -> int | None:
    """Bytes this process may still allocate: MemAvailable, or RLIMIT_AS less what is mapped."""
    limits = []
    meminfo = _read_kib("/proc/meminfo", "MemAvailable:")
    if meminfo is not None:
        limits.append(meminfo)
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        mapped = _read_kib("/proc/self/status", "VmSize:") or 0
        limits.append(max(0, soft - mapped))
    return min(limits) if limits else None


def gpu_free() -> int:
    """Bytes free on the current GPU, once CuPy's pool has given back the blocks it only caches."""
    import cupy

    from .resident import held_bytes

    cupy.get_default_memory_pool().free_all_blocks()
    # a kept process's copies of this graph's edges count as free: the solve reuses them
    return int(cupy.cuda.runtime.memGetInfo()[0]) + held_bytes()


def _read_kib(path: str, key: str) -> int | None:
    try:
        with open(path) as stream:
            for line in stream:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def gib(value: int) -> str:
    return f"{value / 2**30:.1f} GiB"


def ensure_fits(path, graph: Graph, run: Run, device: Device) -> None:
    """InputError naming the size needed when the run cannot fit in memory."""
    what = f"{graph.n:,} vertices and {graph.m:,} edges"
    need = host_bytes(graph, device)
    have = host_available()
    if have is not None and need > have:
        raise InputError(path, f"{what} need about {gib(need)} of memory for {run.label}; "
                               f"{gib(have)} is available")
    if device.is_gpu:
        free = gpu_free()
        need = gpu_bytes(graph)
        if need > free:
            raise InputError(path, f"{what} need about {gib(need)} of GPU memory for {run.label}; "
                                   f"{gib(free)} is free on {device.name}")
