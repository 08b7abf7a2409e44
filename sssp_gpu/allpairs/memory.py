"""Refuse, up front and with the size needed, an all-pairs matrix the machine cannot hold."""
from __future__ import annotations

from sssp_common.errors import InputError
from sssp_common.graph import Graph
from .matrix import padded, working_dtype

SLACK = 512 << 20  # CSR, masks, row blocks being converted, allocator rounding


def needed_bytes(graph: Graph, method: str, on_gpu: bool) -> int:
    entries = padded(graph.n) ** 2 * working_dtype(graph).itemsize
    copies = 2 if method == "minplus" else 1  # the squaring writes a second matrix
    if not on_gpu:
        copies += 1  # numpy's temporaries: one full-size sum per step
    return copies * entries + SLACK


def available_bytes(on_gpu: bool) -> int | None:
    if on_gpu:
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()
        return int(cupy.cuda.runtime.memGetInfo()[0])
    try:
        with open("/proc/meminfo") as stream:
            for line in stream:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def gib(value: int) -> str:
    return f"{value / 2**30:.1f} GiB"


def ensure_fits(source: str, graph: Graph, method: str, on_gpu: bool) -> None:
    need = needed_bytes(graph, method, on_gpu)
    have = available_bytes(on_gpu)
    if have is not None and need > have:
        where = "the GPU has" if on_gpu else "the host has"
        raise InputError(source, f"{method} needs {gib(need)} for the {graph.n:,} x {graph.n:,} "
                                 f"{working_dtype(graph).name} matrix; {where} {gib(have)} free")
