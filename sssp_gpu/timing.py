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


class Stages:
    """Wall time of one ``./sssp`` run by stage, for the ``wall:`` line (docs/CONTRACTS.md).

    Each :meth:`lap` charges the time since the previous one to a stage; the first lap
    starts when the interpreter began running sssp.py, so imports count as start-up.
    """

    NAMES = ("start-up", "load", "device", "setup", "kernels", "output")

    def __init__(self, started: float):
        self.started = self._last = started
        self.seconds = dict.fromkeys(self.NAMES, 0.0)

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] += now - self._last
        self._last = now

    def move(self, source: str, target: str, seconds: float) -> None:
        """Re-charge up to ``seconds`` of ``source`` to ``target`` (the kernels inside a solve)."""
        moved = min(max(seconds, 0.0), self.seconds[source])
        self.seconds[source] -= moved
        self.seconds[target] += moved

    def line(self) -> str:
        total = time.perf_counter() - self.started
        parts = ", ".join(f"{name} {self.seconds[name]:.3f}" for name in self.NAMES)
        return f"wall: total {total:.3f} s ({parts})"
