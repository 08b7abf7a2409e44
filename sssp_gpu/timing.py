"""Timers: CUDA events on the GPU, ``perf_counter`` for the numpy fallback, and a run's wall time by stage."""
from __future__ import annotations

import os
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


def process_start(fallback: float) -> float:
    """``perf_counter()``'s reading when this process began (Linux: /proc/self/stat's start
    time, to the clock tick), so the interpreter's own start-up counts too; ``fallback``
    (taken at the top of sssp.py) where that cannot be read."""
    try:
        with open("/proc/self/stat", "rb") as stream:
            fields = stream.read().rsplit(b")", 1)[1].split()
        started_after_boot = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started_after_boot
    except (OSError, ValueError, IndexError, AttributeError):
        return fallback
    now = time.perf_counter()
    return now - age if 0 <= now - age <= fallback else fallback


class Stages:
    """Wall time of one ``./sssp`` run by stage, for the ``wall:`` line (docs/CONTRACTS.md).

    Each :meth:`lap` charges the time since the previous one to a stage; the first lap
    starts when the process began (:func:`process_start`), so the interpreter's start-up
    and the imports count as start-up.
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
