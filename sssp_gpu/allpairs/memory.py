"""Refuse, up front and with the size needed, an all-pairs matrix the machine cannot hold."""
from __future__ import annotations

from sssp_common.errors import InputError
from sssp_common.graph import Graph
from ..memory import gib, gpu_free, host_available
from .matrix import padded, working_dtype

SLACK = 512 << 20  # CSR, masks, row blocks being converted, allocator rounding


def needed_bytes(graph: Graph, method: str, on_gpu: bool) -> int:
    entries = padded(graph.n) ** 2 * working_dtype(graph).itemsize
    copies = 2 if method == "minplus" else 1  # the squaring writes a second matrix
    if not on_gpu:
        copies += 1  # numpy's temporaries: one full-size sum per step
    return copies * entries + SLACK


def available_bytes(on_gpu: bool) -> int | None:
    """Free GPU memory, or what the host can still give this process (None: unknown)."""
    return gpu_free() if on_gpu else host_available()


def ensure_fits(source: str, graph: Graph, method: str, on_gpu: bool) -> None:
    need = needed_bytes(graph, method, on_gpu)
    have = available_bytes(on_gpu)
    if have is not None and need > have:
        where = "the GPU has" if on_gpu else "the host has"
        raise InputError(source, f"{method} needs {gib(need)} for the {graph.n:,} x {graph.n:,} "
                                 f"{working_dtype(graph).name} matrix; {where} {gib(have)} free")
