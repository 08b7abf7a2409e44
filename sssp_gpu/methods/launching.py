"""Launching opt's persistent kernels: the grid that can all be resident, and the first launch
of a kernel paid during setup rather than inside the events that time the solve.

Why the second (issue 40): the kernel time a fresh ``./sssp`` printed on the weighted 700^2
grid was 3.5 ms above the warm median (unit grid 1.2 ms, other graphs 0.2 ms). A timed region
is CUDA events around the one launch; when the GPU is idle, whatever the host does between the
start event and the kernel reaching the GPU counts as kernel time. The first launch of a
function in a process does one-time host work there: loading the function (lazy module
loading), sizing the context's local memory for it, the shared-memory carve-out, CuPy's launch
path. :func:`launch_once_tiny` launches the same function with the same grid, block and dynamic
shared memory on a tiny input (a 2-vertex graph: microseconds of GPU time), once per process,
before the solve's timed region. It is not a warm-up solve of the graph being timed.
"""
from __future__ import annotations

import numpy as np

from sssp_common.graph import Graph

# the tiny input of a first launch: vertex 0 -> vertex 1, weight 1
TINY = Graph(2, np.zeros(1, dtype=np.int32), np.ones(1, dtype=np.int32), np.ones(1, dtype=np.int32))
_launched: set = set()  # (function, grid, block, shared bytes) already launched by this process


def persistent_blocks(kernel, bsize: int, shared: int = 0) -> int:
    """Blocks that can all be resident at once (a grid barrier needs every block running);
    ``shared``: the dynamic shared memory of each block, in bytes."""
    import cupy

    device = cupy.cuda.Device()
    sms = device.attributes["MultiProcessorCount"]
    try:
        per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, bsize, shared)
    except Exception:  # older CuPy: estimate from registers, threads and shared memory
        regs = max(1, kernel.num_regs)
        per_sm = min(device.attributes["MaxThreadsPerMultiProcessor"] // bsize,
                     device.attributes["MaxRegistersPerMultiprocessor"] // (regs * bsize))
        if shared:
            per_sm = min(per_sm, device.attributes["MaxSharedMemoryPerMultiprocessor"] // (shared + 1024))
    if per_sm < 1:
        raise RuntimeError(f"opt's persistent kernel does not fit {bsize}-thread blocks on this GPU")
    return int(per_sm) * sms


def launch_key(kernel, blocks: int, bsize: int, shared: int) -> tuple:
    function = getattr(kernel, "kernel", None)
    return (getattr(function, "ptr", id(kernel)), blocks, bsize, shared)


def launch_once_tiny(kernel, blocks: int, bsize: int, shared: int, tiny_args) -> bool:
    """Launch ``kernel`` on ``tiny_args()`` (the arguments of a solve of :data:`TINY`) unless
    this process has launched it with this grid, block and shared memory already; True when it
    did. Asynchronous: the solve's start event waits for it on the stream, untimed."""
    key = launch_key(kernel, blocks, bsize, shared)
    if key in _launched:
        return False
    kernel((blocks,), (bsize,), tiny_args(), shared_mem=shared)
    _launched.add(key)
    return True


def launched_keys() -> frozenset:
    """What has been launched once (for tests)."""
    return frozenset(_launched)
