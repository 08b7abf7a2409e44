"""Page-locked host buffers for the few flags a solve reads back every round.

Why not ``cupyx.zeros_pinned``: importing ``cupyx`` imports ``cupyx.scipy`` and with it
SciPy, ~0.4 s of a run whose kernels take 2 ms (measured on the H100 host; BENCHMARKS.md).
"""
from __future__ import annotations

import numpy as np


def pinned_zeros(count: int, dtype) -> np.ndarray:
    """A zeroed numpy array of ``count`` items in pinned memory (fast, async device copies)."""
    import cupy

    dtype = np.dtype(dtype)
    memory = cupy.cuda.alloc_pinned_memory(max(1, count * dtype.itemsize))
    array = np.frombuffer(memory, dtype=dtype, count=count)
    array[...] = 0
    return array
