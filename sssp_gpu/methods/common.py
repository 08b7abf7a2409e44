"""What every method takes and returns, and the arithmetic they all share."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from sssp_common.errors import UsageError
from sssp_common.graph import Graph
from sssp_common.vocabulary import METHODS, SYNCS, recorded_method


MAX_BCOUNT = 1 << 20
DEFAULT_FUSE = 32     # opt's block-local steps per thin round (bucket fusion); see methods/opt.py
MAX_FUSE = 1 << 16
TUNED_METHODS = ("opt",)  # the methods -delta, -fuse and -tile apply to
TILE_RANGE = (32, 3072)   # opt -tile N: vertices per tile (shared memory: 12 bytes a vertex at most)


@dataclass(frozen=True)
class Run:
    """What the command line asked for, checked once here (a bad value is a UsageError).

    ``delta``, ``fuse`` and ``tile`` are opt's knobs: the near-far bucket width (None: the
    automatic rule, 0: unbounded), the block-local steps per thin round (None: DEFAULT_FUSE,
    0: off) and the tile size of tile fixpoints (None or 0: off; methods/tiles.py).
    """

    method: str = "bmf"
    sync: str = "outcore"
    usesmem: bool = False
    bsize: int = 512
    bcount: int = 4
    delta: Optional[int] = None
    fuse: Optional[int] = None
    tile: Optional[int] = None

    def __post_init__(self):
        if self.method not in METHODS:
            raise UsageError(f"unknown method {self.method!r} (choose from {', '.join(METHODS)})")
        if self.sync not in SYNCS:
            raise UsageError(f"-sync must be incore or outcore, not {self.sync!r}")
        if not (32 <= self.bsize <= 1024 and self.bsize % 32 == 0):
            raise UsageError(f"-bsize must be a multiple of 32 from 32 to 1024, not {self.bsize}")
        if not 1 <= self.bcount <= MAX_BCOUNT:
            raise UsageError(f"-bcount must be from 1 to {MAX_BCOUNT}, not {self.bcount}")
        if self.usesmem and self.method != "bmf":
            raise UsageError("-usesmem yes (segscan) applies to bmf only")
        if self.usesmem and self.sync != "outcore":
            raise UsageError("-usesmem yes (segscan) is out-of-core only, as the spec defines it: use -sync outcore")
        if self.method not in TUNED_METHODS and (self.delta, self.fuse, self.tile) != (None, None, None):
            raise UsageError(f"-delta, -fuse and -tile apply to {', '.join(TUNED_METHODS)} only, not {self.method}")
        if self.delta is not None and self.delta < 0:
            raise UsageError(f"-delta must be >= 0 (0: unbounded), not {self.delta}")
        if self.fuse is not None and not 0 <= self.fuse <= MAX_FUSE:
            raise UsageError(f"-fuse must be from 0 (off) to {MAX_FUSE}, not {self.fuse}")
        if self.tile and not TILE_RANGE[0] <= self.tile <= TILE_RANGE[1]:
            raise UsageError(f"-tile must be 0 (off) or from {TILE_RANGE[0]} to {TILE_RANGE[1]}, not {self.tile}")

    @property
    def label(self) -> str:
        """Method name as the grader and report know it (segscan is bmf with shared memory)."""
        return recorded_method(self.method, self.usesmem)

    @property
    def fuse_steps(self) -> int:
        return DEFAULT_FUSE if self.fuse is None else self.fuse

    @property
    def tile_size(self) -> int:
        """opt's tile size as asked; 0: tiles off (without -tile the GPU driver may still choose
        them: opt.with_automatic_tiles)."""
        return self.tile or 0

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
    longest = min((graph.n - 1) * graph.w_max, graph.w_total)
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
