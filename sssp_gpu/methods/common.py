"""What every method takes and returns, and the arithmetic they all share."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from sssp_common.graph import Graph
from sssp_common.vocabulary import METHODS, SPEC_CONFIGS, SYNCS, recorded_method  # noqa: F401 (re-exported)



@dataclass(frozen=True)
class Run:
    """What the command line asked for."""

    method: str = "bmf"
    sync: str = "outcore"
    usesmem: bool = False
    bsize: int = 512
    bcount: int = 4

    @property
    def label(self) -> str:
        """Method name as the grader and report know it (segscan is bmf with shared memory)."""
        return recorded_method(self.method, self.usesmem)

    @property
    def threads(self) -> int:
        return self.bsize * self.bcount

    @property
    def warps(self) -> int:
        return self.threads // 32


@dataclass
class Result:
    """Distances (int64, unreachable = ``INF``) and the figures the program prints."""

    dist: np.ndarray
    computation_ms: float
    filtering_ms: float = 0.0
    rounds: int = 0
    edges_processed: int = 0
    edges_filtered: int = 0
    launch: str = ""
    notes: list = field(default_factory=list)


INF = np.iinfo(np.int64).max
# Called once per round by tpe (tests) with (round, T in order, the changed mask filtered on).
RoundHook = Optional[Callable[[int, np.ndarray, np.ndarray], None]]


def distance_dtype(graph: Graph) -> np.dtype:
    """int32 unless a shortest path could exceed it; then int64 (never a wrapped value).

    No simple path has more than n-1 edges or weighs more than all edges together.
    """
    if graph.m == 0:
        return np.dtype(np.int32)
    longest = min((graph.n - 1) * int(graph.w.max()), int(graph.w.sum(dtype=np.int64)))
    return np.dtype(np.int32) if longest < np.iinfo(np.int32).max else np.dtype(np.int64)


def dtype_inf(dtype) -> int:
    return int(np.iinfo(dtype).max)


def to_result_dist(dist: np.ndarray) -> np.ndarray:
    """Widen a method's distances to int64, mapping its dtype's INF to :data:`INF`."""
    dist = np.asarray(dist)
    wide = dist.astype(np.int64)
    wide[dist == np.iinfo(dist.dtype).max] = INF
    return wide


def max_rounds(graph: Graph) -> int:
    """The spec's bound: at most |V|-1 rounds (at least one, to look at the edges once)."""
    return max(graph.n - 1, 1)


def lockstep_order(length: int, warps: int) -> tuple[np.ndarray, np.ndarray]:
    """Edge positions in the order the GPU's threads reach them, and the step boundaries.

    Thread (warp, lane) visits ``beg + lane + 32k`` at its step k; all threads of one step
    run together, so the in-core CPU fallback applies one step at a time, seeing every
    earlier step's updates, like the GPU's single distance array.
    """
    load = -(-length // warps)  # Listing 2: warp k owns [k*load, min(length, (k+1)*load))
    index = np.arange(length, dtype=np.int64)
    step = (index - (index // load) * load) // 32 if load else index
    order = np.argsort(step, kind="stable")
    bounds = np.searchsorted(step[order], np.arange(int(step.max(initial=-1)) + 2))
    return order, bounds
