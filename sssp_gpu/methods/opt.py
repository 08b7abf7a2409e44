"""opt: our work-efficient SSSP (spec section 3): near-far piles over a GPU-expanded frontier.

Each round expands only the vertices whose distance improved (the *near* queue), walking
their out-edges in a CSR built once by source; improved heads below the threshold ``T``
join the next round's near queue, the others the *far* pile. When the near queue runs dry
the far pile is split at ``T' = min(far) + delta``. With ``delta`` infinite (unit or equal
weights) this is a level-synchronous BFS; with small ``delta`` it approaches Dijkstra.
In thin rounds each block also expands its own improvements for ``run.fuse`` block-local
steps before the grid barrier (bucket fusion).

The grid is sized to fill the GPU (``-bsize`` is honoured, ``-bcount`` is not: the spec's
2048 threads leave an H100 ~1% occupied). ``-sync`` picks how rounds are driven, since opt
always relaxes in place:

- ``incore``: one persistent cooperative kernel runs the whole solve; phases are separated
  by grid barriers, the host waits once;
- ``outcore``: one kernel per phase, captured in a CUDA graph of :data:`ROUNDS_PER_GRAPH`
  rounds; the host checks for convergence once per graph launch.

Filtering time is the time spent splitting the far pile (building the next bucket),
measured on the GPU's global timer; computation is the rest of the kernel time.
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np

from sssp_common.graph import Graph
from ..kernels import KERNEL_DIR
from ..resident import on_device, upload
from ..timing import CpuTimer, GpuTimer
from .classic import csr_cpu, csr_gpu, edges_in_ranges, is_sorted
from .common import Result, Run, distance_dtype, dtype_inf, to_result_dist
from .host_loops import replay_until
from .launching import TINY, launch_once_tiny, persistent_blocks

ROUNDS_PER_GRAPH = 8  # outcore: rounds per CUDA-graph launch between host checks
HUB_DEGREE = 256      # vertices with more out-edges are cut into chunks shared by the grid
CHUNK = 256           # edges per hub chunk (OPT_CHUNK in opt.cu)
UNBOUNDED = np.int64(2**62)  # delta meaning "no far pile": plain frontier relaxation
# Bucket fusion: after its share of a round whose near queue has at most 4 vertices per warp,
# a block keeps expanding, from a queue in shared memory, the vertices it improved below the
# threshold, for up to ``run.fuse`` __syncthreads-separated steps before the grid barrier.
# It turns a road graph's or a grid's hundreds of thin rounds into tens (BENCHMARKS.md, opt);
# wide rounds (power-law graphs) are not fused: their block-local steps relax out of order.
# Both GPU drivers fuse (it is per block: no grid barrier needed); the numpy fallback does not.


def _ctrl_layout(path=KERNEL_DIR / "opt_ctrl.cuh") -> dict[str, int]:
    """The ctrl[] slots and driver modes, read from the header the kernels include."""
    return {name: int(value) for name, value in
            re.findall(r"^#define ((?:C|MODE)_\w+) (\d+)", path.read_text(), re.MULTILINE)}


CTRL = _ctrl_layout()
C_NEAR, C_FARMIN, C_T, C_MODE, C_SIZE = CTRL["C_NEAR"], CTRL["C_FARMIN"], CTRL["C_T"], CTRL["C_MODE"], CTRL["C_SIZE"]
C_EDGES, C_SCANNED, C_ROUNDS, C_SPLITS = CTRL["C_EDGES"], CTRL["C_SCANNED"], CTRL["C_ROUNDS"], CTRL["C_SPLITS"]
C_BARRIERS, C_ERROR, C_SPLIT_NS, MODE_DONE = CTRL["C_BARRIERS"], CTRL["C_ERROR"], CTRL["C_SPLIT_NS"], CTRL["MODE_DONE"]
C_FMIN, C_PULLS = CTRL["C_FMIN"], CTRL["C_PULLS"]
C_TSTEPS, C_TACTIVE = CTRL["C_TSTEPS"], CTRL["C_TACTIVE"]
C_TLOAD, C_TSTEPNS, C_TWRITE, C_TCRIT = CTRL["C_TLOAD"], CTRL["C_TSTEPNS"], CTRL["C_TWRITE"], CTRL["C_TCRIT"]
# Bottom-up rounds (equal weights): when round r's near queue holds more than n / PULL_SHARE
# vertices (and is not smaller than the last: top-down again once it shrinks), each vertex
# looks for a queued in-neighbour instead (direction-optimizing BFS). n/64 (was n/32) also
# pulls the level before the widest on a power-law graph, whose top-down expansion walked most
# of the edges: LiveJournal stand-in 3.53 -> 1.13 ms on the H100, R-MAT unit, the road stand-in
# and the unit grid unchanged; the road stand-in first pulls (and slows) at n/256
# (BENCHMARKS.md, "Bottom-up share").
PULL_SHARE = 64


def choose_delta(graph: Graph, run: Run, on_gpu: bool, tiled: bool = False) -> int:
    """The near-far bucket width: ``run.delta`` when given (0: unbounded), else a rule.

    Equal weights: unbounded (every improved vertex is near; rounds are BFS levels and
    each edge is relaxed once). Otherwise it depends on what a round costs:

    - on the GPU, ``32 x the largest weight`` (an improvement may ripple 32 hops inside one
      bucket): a GPU holding ~270k threads pays for rounds (a grid barrier and dependent L2
      trips each), hardly for the extra relaxations a wide bucket allows. On the H100
      (BENCHMARKS.md, "Bucket width") the weighted grid went from 5.5 to ~3.8 ms and weighted
      R-MAT from 2.05 to 1.39 ms, at 2-6 relaxations per edge instead of 2;
    - with tile fixpoints on the GPU (``tiled``), ``64 x the largest weight``: a tile steps in
      shared memory, so a wider bucket costs less than the rounds it saves (weighted grid,
      tiles of 1024, cap 16: 3.61 ms at 32x, 3.35 ms at 64x, 3.96 ms at 16x; BENCHMARKS.md);
    - on the CPU, where every relaxation costs, Davidson et al.'s work-efficient
      ``32 x mean weight / mean out-degree`` (about a warp's worth of edges per bucket vertex).
    """
    if run.delta is not None:
        return int(UNBOUNDED) if run.delta == 0 else int(run.delta)
    if graph.m == 0 or graph.equal_weights:
        return int(UNBOUNDED)
    if on_gpu:
        return max(1, (64 if tiled else 32) * graph.w_max)
    return work_efficient_delta(graph)


def work_efficient_delta(graph: Graph) -> int:
    """``32 x mean weight / mean out-degree`` over the vertices that have out-edges."""
    sources = distinct_count(graph.src, graph.n) if graph.m else 1
    out_degree = graph.m / max(1, sources)
    return max(1, int(round(32 * float(graph.w.mean()) / out_degree)))


def distinct_count(ids: np.ndarray, n: int) -> int:
    """How many distinct values ``ids`` (in [0, n)) holds: a bincount when ``n`` is not far
    above the count, else a sort. Not np.unique: numpy 2.4's hashing unique took 2.1 s for the
    2 M tails of the 700^2 grid (a sort: 0.05 s), most of the CPU fallback's setup."""
    if n <= 8 * ids.shape[0] + 1024:
        return int(np.count_nonzero(np.bincount(ids, minlength=n)))
    ordered = np.sort(ids)
    return int(ordered.shape[0] and 1 + np.count_nonzero(ordered[1:] != ordered[:-1]))


def max_rounds(graph: Graph) -> int:
    """A guard, not a bound the algorithm needs: far above any round count seen."""
    return 8 * graph.n + 1024


class CsrBySource:
    """The edges grouped by tail, and each vertex's range of out-edges in them.

    The ranges come from a row pointer when the graph has about as many edges as vertices;
    for a few edges among a huge id range (a 3-edge file naming vertex 10^8) they come from
    a binary search over the sorted tails, so memory follows the edges, not the ids.
    """

    def __init__(self, graph: Graph):
        self.tails = self.row_ptr = None
        if graph.n <= 8 * graph.m + 1024:
            self.row_ptr, self.heads, self.weights = csr_cpu(graph)
        else:
            order = np.argsort(graph.src, kind="stable")
            self.tails, self.heads, self.weights = graph.src[order], graph.dst[order], graph.w[order]

    def ranges(self, vertices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.row_ptr is not None:
            return self.row_ptr[vertices], self.row_ptr[vertices + 1]
        keys = vertices.astype(self.tails.dtype)  # same dtype, or numpy converts all the tails per call
        return np.searchsorted(self.tails, keys, side="left"), np.searchsorted(self.tails, keys, side="right")


def _notes(delta: int, splits: int, rounds: int) -> list[str]:
    width = "unbounded (equal weights: BFS levels)" if delta >= UNBOUNDED else str(delta)
    return [f"near-far: delta {width}, {splits} far-pile splits, {rounds} rounds"]


def run_cpu(graph: Graph, run: Run) -> Result:
    """Near-far in numpy, one vectorised frontier expansion per round."""
    if run.tile_size:
        return _run_tiles_cpu(graph, run)
    csr = CsrBySource(graph)
    heads, weights = csr.heads, csr.weights
    delta = choose_delta(graph, run, on_gpu=False)
    inf = np.iinfo(np.int64).max
    dist = np.full(graph.n, inf, dtype=np.int64)
    dist[0] = 0
    in_far = np.zeros(graph.n, dtype=bool)
    near = np.zeros(1, dtype=np.int64)
    far = np.zeros(0, dtype=np.int64)
    threshold = min(delta, inf)
    computation, filtering = CpuTimer(), CpuTimer()
    rounds = splits = relaxed = scanned = 0
    while near.size or far.size:
        if not near.size:
            with filtering.region():
                scanned += far.size
                far_dist = dist[far]
                in_far[far[far_dist < threshold]] = False
                live = far[far_dist >= threshold]
                new_threshold = int(dist[live].min()) + delta if live.size else threshold
                new_threshold = min(new_threshold, inf)
                live_dist = dist[live]
                near = live[live_dist < new_threshold]
                in_far[near] = False
                far = live[live_dist >= new_threshold]
                threshold = new_threshold
                splits += 1
            continue
        with computation.region():
            rounds += 1
            edge, owner = edges_in_ranges(near, *csr.ranges(near))
            relaxed += edge.shape[0]
            head = heads[edge].astype(np.int64)
            candidate = dist[owner] + weights[edge]
            # the best candidate per head, then keep the heads it improves
            order = np.lexsort((candidate, head))
            head, candidate = head[order], candidate[order]
            first = np.ones(head.size, dtype=bool)
            first[1:] = head[1:] != head[:-1]
            head, candidate = head[first], candidate[first]
            better = candidate < dist[head]
            head, candidate = head[better], candidate[better]
            dist[head] = candidate
            near = head[candidate < threshold]
            pushed = head[(candidate >= threshold) & ~in_far[head]]
            in_far[pushed] = True
            far = np.concatenate([far, pushed])
        if rounds > max_rounds(graph):
            raise RuntimeError("opt did not converge (round guard hit): this is a bug")
    launch = f"{run.bsize}-thread blocks sized to the machine (numpy: one vectorised sweep per round)"
    return Result(to_result_dist(dist), computation.total_ms(), filtering.total_ms(), rounds,
                  relaxed, scanned, launch, _notes(delta, splits, rounds))


class _DeviceState:
    """The GPU arrays of one solve and the kernels' argument tuple."""

    def __init__(self, graph: Graph, dtype):
        import cupy

        n = graph.n
        src, dst = on_device(graph.src), on_device(graph.dst)  # each copied once
        self.row_ptr, self.adj = csr_gpu(graph, src, dst)  # adj: int2 (head, weight) grouped by tail
        self.dist = cupy.full(n, dtype_inf(dtype), dtype=dtype)
        self.queues = [cupy.empty(max(n, 1), dtype=np.int32) for _ in range(4)]  # near0 near1 far0 far1
        self.chunks = cupy.empty((2 * (graph.m // CHUNK) + 2, 2), dtype=np.int32)
        self.stamp = cupy.empty(n, dtype=np.int32)
        self.in_far = cupy.empty(n, dtype=np.int32)
        self.ctrl = cupy.zeros(C_SIZE, dtype=np.int64)
        self.delta = np.int64(UNBOUNDED)
        self.n = np.int32(n)
        # equal weights: in-edges grouped by head for bottom-up rounds (w0 = 0 turns them off)
        equal = graph.equal_weights and graph.w_min > 0
        self.w0 = np.int32(graph.w_min if equal else 0)
        self.pull_min = np.int64(max(1024, n // PULL_SHARE))
        if equal:
            order = None if is_sorted(dst) else cupy.argsort(dst)
            heads = dst if order is None else dst[order]
            self.in_ptr = cupy.searchsorted(heads, cupy.arange(n + 1, dtype=dst.dtype)).astype(np.int32)
            self.in_src = src if order is None else src[order]  # read only, by the kernels
            self.fround = cupy.full(max(n, 1), -1, dtype=np.int32)
            del heads, order
        else:
            self.in_ptr = self.in_src = self.fround = cupy.zeros(1, dtype=np.int32)
        del src, dst

    def start(self, delta: int):
        """Distances and queues as they are before the first round (the source queued)."""
        self.delta = np.int64(delta)
        if delta < UNBOUNDED:  # bottom-up rounds assume one bucket (equal weights, no far pile)
            self.w0 = np.int32(0)
        self.reset()

    def reset(self):
        self.dist[:] = self.dist.dtype.type(np.iinfo(self.dist.dtype).max)
        self.dist[0] = 0
        self.stamp.fill(-1)
        self.stamp[0] = 0
        self.in_far.fill(0)
        self.queues[0][0] = 0
        ctrl = np.zeros(C_SIZE, dtype=np.int64)
        ctrl[C_NEAR] = 1
        ctrl[C_FARMIN] = ctrl[C_FARMIN + 1] = np.iinfo(np.int64).max
        ctrl[C_FMIN:C_FMIN + 3] = np.iinfo(np.int64).max
        if self.fround.shape[0] > 1:
            self.fround.fill(-1)
        inf = np.iinfo(self.dist.dtype).max
        ctrl[C_T] = inf if self.delta >= inf else self.delta
        self.ctrl.set(ctrl)

    def args(self):
        return (self.row_ptr, self.adj, self.dist, *self.queues, self.chunks, self.stamp, self.in_far,
                self.ctrl, self.delta, np.int32(HUB_DEGREE), self.n, self.in_ptr, self.in_src, self.fround,
                self.w0, self.pull_min)


def with_automatic_tiles(graph: Graph, run: Run) -> Run:
    """On the GPU, without -tile: tile fixpoints where they were measured to win (tiles.automatic);
    -tile 0 keeps them off, -fuse still sets the step cap."""
    if run.tile is not None:
        return run
    from .tiles import automatic
    chosen = automatic(graph)
    if chosen is None:
        return run
    size, steps = chosen
    return dataclasses.replace(run, tile=size, fuse=steps if run.fuse is None else run.fuse)


def run_gpu(graph: Graph, run: Run) -> Result:
    import cupy

    from .. import kernels

    run = with_automatic_tiles(graph, run)
    if run.tile_size:
        return _run_tiles_gpu(graph, run)
    dtype = distance_dtype(graph)
    ctype = kernels.c_type(dtype)
    state = _DeviceState(graph, dtype)
    delta = choose_delta(graph, run, on_gpu=True)
    state.start(delta)
    guard = np.int32(min(max_rounds(graph), np.iinfo(np.int32).max - 1))
    timer = GpuTimer()
    if run.sync == "incore":
        persistent = kernels.kernel("opt_coop", f"opt_persistent<{ctype}>")
        blocks = persistent_blocks(persistent, run.bsize)

        def tiny_args():  # the first launch's one-time host work, paid here (launching.py)
            tiny = _DeviceState(TINY, dtype)
            tiny.start(delta)
            return (*tiny.args(), guard, np.int32(run.fuse_steps))

        launch_once_tiny(persistent, blocks, run.bsize, 0, tiny_args)
        with timer.region():
            persistent((blocks,), (run.bsize,), (*state.args(), guard, np.int32(run.fuse_steps)))
        how = "one persistent cooperative kernel"
    else:
        mark = kernels.kernel("opt", f"opt_mark_k<{ctype}>")
        expand = kernels.kernel("opt", f"opt_expand_k<{ctype}>")
        after = kernels.kernel("opt", f"opt_after_expand_k<{ctype}>")
        split = kernels.kernel("opt", f"opt_split_k<{ctype}>")
        sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
        blocks = sms * max(1, 2048 // run.bsize)
        args = state.args()

        def rounds():
            for _ in range(ROUNDS_PER_GRAPH):
                mark((blocks,), (run.bsize,), args)
                expand((blocks,), (run.bsize,), (*args, np.int32(run.fuse_steps)))
                after((blocks,), (run.bsize,), (*args, guard))
                split((blocks,), (run.bsize,), args)

        replay_until(rounds, state.ctrl[C_MODE:C_MODE + 1], lambda mode, _: mode[0] == MODE_DONE, timer)
        how = f"one kernel per phase, CUDA graphs of {ROUNDS_PER_GRAPH} rounds"
    ctrl = state.ctrl.get()
    total_ms = timer.total_ms()
    if ctrl[C_ERROR]:
        raise RuntimeError("opt did not converge (round guard hit): this is a bug")
    filtering_ms = min(total_ms, ctrl[C_SPLIT_NS] / 1e6)
    rounds = int(ctrl[C_ROUNDS])
    launch = (f"{blocks} blocks x {run.bsize} threads (grid sized to fill the GPU, -bcount not used; "
              f"{how})")
    notes = _notes(delta, int(ctrl[C_SPLITS]), rounds)
    fuse = run.fuse_steps
    notes.append(f"bucket fusion: {fuse} block-local steps per round" if fuse else "bucket fusion: off")
    if state.w0:
        notes.append(f"bottom-up rounds: {int(ctrl[C_PULLS])} (queues over {int(state.pull_min)} vertices)")
    if run.sync == "incore":
        notes.append(f"grid barriers: {int(ctrl[C_BARRIERS])}")
    return Result(to_result_dist(state.dist.get()), total_ms - filtering_ms, filtering_ms, rounds,
                  int(ctrl[C_EDGES]), int(ctrl[C_SCANNED]), launch, notes)


# ---- opt -tile N: tile fixpoints in shared memory (issue 26, item 1; methods/tiles.py) ----

def _tile_notes(tiling, run: Run, delta: int, splits: int, rounds: int, activations: int, steps: int,
                what: str = "shared-memory steps") -> list[str]:
    from .tiles import step_cap

    return _notes(delta, splits, rounds) + [
        f"tiles: {tiling.tiles} of <= {tiling.size} vertices ({tiling.how}), "
        f"{tiling.intra_share:.0%} of edges inside tiles; {activations} tile activations, "
        f"{steps} {what} (at most {step_cap(tiling.size, run.fuse)} per activation)"]


def _run_tiles_cpu(graph: Graph, run: Run) -> Result:
    """The tile scheme in numpy (tiles.solve_cpu); renumbering and tiling are setup, untimed."""
    from . import tiles
    from .tile_cache import tiling_for

    tiling = tiling_for(graph, run.tile_size)
    delta = choose_delta(graph, run, on_gpu=False)
    timer = CpuTimer()
    with timer.region():
        dist, stats = tiles.solve_cpu(tiling, delta, tiles.step_cap(tiling.size, run.fuse))
    launch = f"{run.bsize}-thread blocks sized to the machine (numpy: the tiles of a round step together)"
    return Result(to_result_dist(dist[tiling.rank]), timer.total_ms(), 0.0, stats.rounds, stats.relaxed,
                  stats.scanned, launch,
                  _tile_notes(tiling, run, delta, stats.splits, stats.rounds, stats.activations, stats.steps))


# Staging a tile's intra edges in shared memory (6 bytes an edge: weight and 16-bit head), up
# to this many bytes a block; 0: never (their reads go through L1/L2). A 32 x 32 grid tile has
# ~4k intra edges (24 KB).
TILE_STAGE_BYTES = 96 * 1024
# Tile activations by pull passes, this many between block-wide checks (kernels/opt_tiles.cu,
# tile_fixpoint_pull), when a tile fits one block; 0: push steps (tile_fixpoint).
TILE_PULL_PASSES = 8
DEFAULT_DYNAMIC_SHARED = 48 * 1024  # more needs the kernel's opt-in attribute
STATIC_SHARED = 128                 # the kernel's own __shared__ variables (s_min, s_ns, ...)


def tile_shared_memory(tiling, dtype, limit: int) -> tuple[int, int]:
    """(edge_cap, dynamic shared bytes) of opt_tiles_persistent for ``tiling``: the largest
    tile's intra edges when they fit TILE_STAGE_BYTES and ``limit`` (the block's shared memory),
    else as many as fit (bigger tiles read their edges from global memory)."""
    fixed = tiling.size * (np.dtype(dtype).itemsize + 4) + 4 * (tiling.size + 1)  # distances, flags, offsets
    per_tile = np.diff(tiling.in_ptr[tiling.tile_ptr]) if tiling.tiles else np.zeros(1, dtype=np.int64)
    room = max(0, min(TILE_STAGE_BYTES, limit - STATIC_SHARED - fixed)) // 6
    edge_cap = int(min(int(per_tile.max(initial=0)), room))
    shared = fixed + 6 * edge_cap
    return edge_cap, (shared + 7) // 8 * 8


def tile_time_note(state, total_ms: float) -> str:
    """Where a tile solve's time went, from the kernel's global-timer stamps (thread 0 of each
    block): the activations' phases summed over activations (they overlap across blocks), and
    the sum over rounds of each round's slowest activation (the activations' share of the
    critical path; the rest is the grid barriers, the splits and blocks taking several tiles)."""
    load, steps, write, slowest = (state[slot] / 1e6 for slot in (C_TLOAD, C_TSTEPNS, C_TWRITE, C_TCRIT))
    return (f"tile time: loads and staging {load:.3f} ms, steps {steps:.3f} ms, write-backs {write:.3f} ms "
            f"(sums over activations); the rounds' slowest activations {slowest:.3f} ms of {total_ms:.3f} ms")


def _shared_limit() -> int:
    import cupy

    attributes = cupy.cuda.Device().attributes
    return int(attributes.get("MaxSharedMemoryPerBlockOptin", DEFAULT_DYNAMIC_SHARED))


def _tile_state(tiling, dtype, delta: int, run: Run, passes: int, edge_cap: int, guard) -> tuple:
    """(the kernel's arguments, dist, ctrl) of one tile solve: the tiling's arrays uploaded (only
    the intra-tile edges its activations read: in-edges for pull passes, out-edges for push
    steps) and the state before the first round (the source's tile queued)."""
    import cupy

    from . import tiles

    n, count = tiling.order.shape[0], tiling.tiles

    def dev(array, dtype):
        return upload(array if array.shape[0] else np.zeros(1), dtype)

    def intra(ptr, ends, w, wanted):  # the other direction's arrays stay on the host
        return tuple(dev(a if wanted else a[:0], t) for a, t in ((ptr, np.int32), (ends, np.uint16), (w, np.int32)))

    source = int(tiling.rank[0])
    home = int(tiling.tile_of[source])
    dist = cupy.full(n, dtype_inf(dtype), dtype=dtype)
    dist[source] = 0
    dirty = cupy.zeros(n, dtype=np.int32)
    dirty[source] = 1
    tpend = cupy.full(count, np.iinfo(np.int64).max, dtype=np.int64)
    tpend[home] = 0
    tstamp = cupy.full(count, -1, dtype=np.int32)
    tstamp[home] = 0
    queues = [cupy.zeros(count, dtype=np.int32), cupy.zeros(count, dtype=np.int32)]
    queues[0][0] = home
    inbox = cupy.full(max(n, 1), dtype_inf(dtype), dtype=dtype)  # boundary relaxations wait here (opt_tiles.cu)
    ctrl = np.zeros(C_SIZE, dtype=np.int64)
    ctrl[C_NEAR] = 1
    ctrl = cupy.asarray(ctrl)
    args = (dev(tiling.tile_ptr, np.int32), dev(tiling.tile_of, np.int32), np.int32(count),
            *intra(tiling.in_ptr, tiling.in_head, tiling.in_w, not passes),
            dev(tiling.out_ptr, np.int32), dev(tiling.out_head, np.int32), dev(tiling.out_w, np.int32),
            dist, dirty, tpend, tstamp, queues[0], queues[1], inbox, ctrl, np.int64(delta),
            np.int32(tiling.size), np.int32(tiles.step_cap(tiling.size, run.fuse)), guard, np.int32(edge_cap),
            *intra(tiling.pin_ptr, tiling.pin_tail, tiling.pin_w, passes > 0), np.int32(passes))
    return args, dist, ctrl


def _run_tiles_gpu(graph: Graph, run: Run) -> Result:
    """One persistent cooperative kernel (kernels/opt_tiles.cu) for either -sync: its rounds
    need a grid barrier between them. Only the intra-tile edges its activations read go to the
    GPU: in-edges for pull passes, out-edges for push steps."""
    from .. import kernels
    from . import tiles
    from .tile_cache import tiling_for

    tiling = tiling_for(graph, run.tile_size)  # setup (untimed), like the CSR; cached on disk
    dtype = distance_dtype(graph)
    delta = choose_delta(graph, run, on_gpu=True, tiled=True)
    kernel = kernels.kernel("opt_tiles", f"opt_tiles_persistent<{kernels.c_type(dtype)}>")
    passes = TILE_PULL_PASSES if tiling.size <= run.bsize else 0  # pull: a thread a vertex
    edge_cap, shared = tile_shared_memory(tiling, dtype, _shared_limit() if not passes else 0)
    if shared > DEFAULT_DYNAMIC_SHARED:
        kernel.max_dynamic_shared_size_bytes = shared
    blocks = persistent_blocks(kernel, run.bsize, shared)
    guard = np.int32(min(max_rounds(graph), np.iinfo(np.int32).max - 1))
    launch_once_tiny(kernel, blocks, run.bsize, shared,  # the first launch's host work, paid here (launching.py)
                     lambda: _tile_state(tiles.build(TINY, tiling.size), dtype, delta, run, passes, 0, guard)[0])
    args, dist, ctrl = _tile_state(tiling, dtype, delta, run, passes, edge_cap, guard)
    timer = GpuTimer()
    with timer.region():
        kernel((blocks,), (run.bsize,), args, shared_mem=shared)
    state = ctrl.get()
    total_ms = timer.total_ms()
    if state[C_ERROR]:
        raise RuntimeError("opt -tile did not converge (round guard hit): this is a bug")
    filtering_ms = min(total_ms, state[C_SPLIT_NS] / 1e6)
    rounds = int(state[C_ROUNDS])
    launch = (f"{blocks} blocks x {run.bsize} threads (grid sized to fill the GPU, -bcount not used; "
              f"one persistent cooperative kernel, a block per tile of <= {tiling.size} vertices, "
              f"{shared} bytes of shared memory each, " +
              (f"activations by pull passes, {passes} between checks)" if passes else
               f"intra-tile edges staged there up to {edge_cap} a tile)"))
    notes = _tile_notes(tiling, run, delta, int(state[C_SPLITS]), rounds, int(state[C_TACTIVE]), int(state[C_TSTEPS]),
                        "shared-memory pull passes" if passes else "shared-memory steps")
    notes.append(f"grid barriers: {int(state[C_BARRIERS])}")
    notes.append(tile_time_note(state, total_ms))
    new = to_result_dist(dist.get())
    return Result(new[tiling.rank], total_ms - filtering_ms, filtering_ms, rounds,
                  int(state[C_EDGES]), int(state[C_SCANNED]), launch, notes)
