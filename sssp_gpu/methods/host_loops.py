"""How the host drives a method's kernels on the GPU, in the two ways the methods need.

- :class:`FlagRounds`: launch a round's kernels, read back one "changed" flag, stop at the
  first round that changes nothing (or at the spec's |V|-1 bound): the papers' loop (vbf,
  harish). Every round costs a device-to-host read, so it suits methods with few, large rounds.
- :func:`replay_until`: capture many steps once as a CUDA graph and replay it, reading the
  control words back once per replay (dijkstra, opt): for methods with many small steps,
  where one read per step would cost more than the step.

Only the kernels are timed: the reads back and the host's decisions fall outside the regions.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from sssp_common.graph import Graph
from ..pinned import pinned_zeros
from ..timing import GpuTimer
from .common import max_rounds


class FlagRounds:
    """The round loop with its device counters: a round's kernels set ``changed`` when they
    improve a distance and add their relaxations to ``edges``."""

    def __init__(self, graph: Graph):
        import cupy

        self.changed = cupy.zeros(1, dtype=np.int32)
        self.edges = cupy.zeros(1, dtype=np.uint64)
        self.timer = GpuTimer()
        self.rounds = 0
        self._limit = max_rounds(graph)

    def run(self, one_round: Callable[[], None]) -> None:
        """Calls ``one_round`` (it launches the kernels) until a round leaves ``changed`` clear;
        the round that changes nothing is counted too."""
        changed_host = pinned_zeros(1, dtype=np.int32)
        for _ in range(self._limit):
            self.rounds += 1
            self.changed.fill(0)
            with self.timer.region():
                one_round()
            self.changed.get(out=changed_host)
            if not changed_host[0]:
                return

    def relaxed(self) -> int:
        return int(self.edges.get()[0])


def replay_until(capture: Callable[[], None], flags, done: Callable[[np.ndarray, int], bool],
                 timer: GpuTimer) -> np.ndarray:
    """Captures the launches ``capture`` makes as one CUDA graph and replays it, timing each
    replay, until ``done(flags as read back, replays so far)``; returns that last read.

    A blocking stream: it runs after the setup copies queued on the default stream."""
    import cupy

    stream = cupy.cuda.Stream(non_blocking=False)
    cupy.cuda.Device().synchronize()
    host = np.zeros(flags.shape, dtype=flags.dtype)
    replays = 0
    with stream:
        stream.begin_capture()
        capture()
        graph_exec = stream.end_capture()
        # the graph's first launch would upload it to the device inside the first timed replay
        # (cudaGraphUpload): done here, outside the timed region, as one-time setup
        if hasattr(graph_exec, "upload"):
            graph_exec.upload(stream)
            stream.synchronize()
        while True:
            with timer.region():
                graph_exec.launch(stream)
            replays += 1
            flags.get(out=host, stream=stream)
            stream.synchronize()
            if done(host, replays):
                return host
