"""Kernel timers: CUDA events on the GPU, ``perf_counter`` for the numpy fallback."""
from __future__ import annotations

import time
from contextlib import contextmanager


class GpuTimer:
    """Sums CUDA-event time over the regions it wraps (only the kernels inside)."""

    def __init__(self):
        self._pairs = []

    @contextmanager
    def region(self):
        import cupy

        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        yield
        end.record()
        self._pairs.append((start, end))

    def total_ms(self) -> float:
        import cupy

        if not self._pairs:
            return 0.0
        self._pairs[-1][1].synchronize()
        return float(sum(cupy.cuda.get_elapsed_time(s, e) for s, e in self._pairs))


class CpuTimer:
    """Sums wall time over the regions it wraps."""

    def __init__(self):
        self._seconds = 0.0

    @contextmanager
    def region(self):
        start = time.perf_counter()
        yield
        self._seconds += time.perf_counter() - start

    def total_ms(self) -> float:
        return self._seconds * 1e3
