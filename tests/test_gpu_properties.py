"""Properties of the kernels and their host code that a red team's mutants showed the GPU
suite missed (issue 41, item 3), each written as a property over a family of inputs, not
as the one mutant. Every GPU test has a CPU twin with the same graph and assertions (the
numpy fallback implements the same semantics), which runs everywhere:

1. timers: the reported kernel time is exactly the sum of every timed region's own
   duration, over all phases, rounds and timers of a solve, and no more than a host clock
   around the solve (a timer keeping only its last region, or a new timer per round, fails);
2. batches: every batched loop (bmf's 8 x 32-edge loads per lane, tpe's 4 x 32-edge ballots,
   grid-stride vertex loops, opt's 256-edge hub chunks, all pairs' 128-wide tiles, sssp-all's
   source batches, the all-pairs writers' row blocks) on inputs of 1, 2 and 3+ batches,
   just below, at and past each boundary, on graphs where every edge is needed;
3. flag reductions: the one improving item of a round placed first, in the middle and last
   of a thread's range (a "changed" flag that keeps the last item's value stops early);
4. the int32/int64 distance choice: longest shortest paths of INT32_MAX - 1, INT32_MAX and
   INT32_MAX + 1 (int32's INF is INT32_MAX, so the boundary itself must go to int64);
5. memory checks with most of the free memory held by another allocation (a check that reads
   total instead of free memory passes on an idle device).
"""
from __future__ import annotations

import re
import resource
import sys
import time
from contextlib import contextmanager

import numpy as np
import pytest

from benchmarks.classics import reference_rows as scipy_rows
from conftest import random_graph, scipy_distances
from sssp_common.errors import InputError
from sssp_common.graph import Graph
from sssp_common.vocabulary import METHODS, SPEC_CONFIGS, SYNCS
from sssp_gpu import memory, timing
from sssp_gpu.allpairs import methods as apsp_methods
from sssp_gpu.allpairs.matrix import HALF_INF, TILE, ApspResult, padded
from sssp_gpu.allpairs.methods import METHODS as APSP_METHODS, solve as apsp_solve
from sssp_gpu.allpairs.output import write_result
from sssp_gpu.device import CPU, select_device
from sssp_gpu.engine import solve
from sssp_gpu.kernels import KERNEL_DIR
from sssp_gpu.methods import opt
from sssp_gpu.methods.common import Run, distance_dtype

DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]
INT32_MAX = 2**31 - 1


def kernel_define(file: str, name: str) -> int:
    """A ``#define`` of the kernels' sources, so the batch boundaries follow the kernels."""
    found = re.findall(rf"^#define {name} (\d+)", (KERNEL_DIR / file).read_text(), re.MULTILINE)
    assert len(found) == 1, (file, name, found)
    return int(found[0])


# the batches of the kernels' loops: a lane of bmf loads UNROLL 32-edge steps before it relaxes
# any, a warp of tpe_count ballots FILTER_UNROLL steps at a time, opt cuts the edges of a vertex
# of more than HUB_DEGREE out-edges into OPT_CHUNK-edge pieces
BMF_BATCH = {sync: 32 * kernel_define("bmf.cu", f"UNROLL_{sync.upper()}") for sync in SYNCS}
TPE_BATCH = 32 * kernel_define("tpe.cu", "FILTER_UNROLL")
OPT_CHUNK = kernel_define("opt_phases.cuh", "OPT_CHUNK")
# every method as the command line can ask for it (segscan: bmf -usesmem yes, out-of-core only)
ALL_RUNS = [(m, s, False) for m in METHODS for s in SYNCS] + [("bmf", "outcore", True)]
RUN_IDS = [f"{m}-{s}{'-segscan' if u else ''}" for m, s, u in ALL_RUNS]


def device_for(name: str):
    return CPU if name == "cpu" else select_device("gpu")


def check(graph: Graph, run: Run, device: str, what: str = ""):
    result = solve(graph, run, device_for(device))
    np.testing.assert_array_equal(result.dist, scipy_distances(graph), err_msg=f"{run} {what}")
    return result


# -- 1. timers: the total is the sum of every region ---------------------------------------

def chain_with_filler(hops: int, filler: int, seed: int = 3) -> Graph:
    """The path 0 -> ... -> hops (random weights) spread evenly among ``filler`` edges
    between two unreachable vertices, plus a few shortcuts: many rounds, each reading
    the whole list."""
    rng = np.random.default_rng(seed)
    far = hops + 1
    src = np.full(filler + hops, far)
    dst = np.full(filler + hops, far + 1)
    at = np.linspace(0, filler + hops - 1, hops).astype(np.int64)
    src[at], dst[at] = np.arange(hops), np.arange(1, hops + 1)
    w = rng.integers(1, 50, filler + hops)
    return Graph.from_arrays(src, dst, w, n=far + 2)


@contextmanager
def region_clock_log(device: str):
    """Logs the clock readings every timer region takes, from inside the timer under test
    (CUDA events created by GpuTimer.region, perf_counter readings in CpuTimer.region), so
    the regions' own durations can be summed independently of how the timer adds them."""
    log = []

    def from_region() -> bool:
        caller = sys._getframe(2)
        return caller.f_code.co_name == "region" and caller.f_globals.get("__name__") == timing.__name__

    if device == "cpu":
        real = time.perf_counter

        def reading():
            value = real()
            if from_region():
                log.append(value)
            return value

        time.perf_counter = reading
        try:
            yield log
        finally:
            time.perf_counter = real
    else:
        import cupy

        real = cupy.cuda.Event

        def event(*args, **kwargs):
            made = real(*args, **kwargs)
            if from_region():
                log.append(made)
            return made

        cupy.cuda.Event = event
        try:
            yield log
        finally:
            cupy.cuda.Event = real


def summed_regions_ms(device: str, log: list) -> tuple[int, float]:
    """(regions, the sum of their durations in ms): each region takes its start reading
    (or event) first and its end second."""
    assert len(log) % 2 == 0, "every region takes a start and an end reading"
    pairs = list(zip(log[0::2], log[1::2]))
    if device == "cpu":
        return len(pairs), sum(end - start for start, end in pairs) * 1e3
    import cupy

    for _, end in pairs:
        end.synchronize()
    return len(pairs), sum(cupy.cuda.get_elapsed_time(start, end) for start, end in pairs)


def single_region(run: Run, device: str) -> bool:
    """Methods whose whole solve may be one timed region: opt's persistent in-core kernel and
    its tile kernel on the GPU, its tile fixpoints on the CPU; dijkstra (one region on the
    CPU, CUDA graphs of 64 steps on the GPU)."""
    if run.method == "dijkstra":
        return True
    if run.method != "opt":
        return False
    return bool(run.tile) or (device == "gpu" and run.sync == "incore")


# opt: tiles off and no bucket fusion, so its 120-hop chain takes 120+ rounds (15+ CUDA-graph
# replays out-of-core); with tiles (on the GPU, chosen automatically) it is one launch
TIMER_RUNS = [Run(m, s, u, 256, 8) for m, s, u in ALL_RUNS if m != "opt"] + \
    [Run("opt", s, False, 256, 8, fuse=0, tile=0) for s in ("outcore", "incore")] + \
    [Run("opt", s, False, 256, 8, tile=64) for s in ("outcore", "incore")] + \
    [Run("opt", s, False, 256, 8, delta=16, fuse=0, tile=0) for s in ("outcore", "incore")]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("run", TIMER_RUNS, ids=lambda r: f"{r.label}-{r.sync}-t{r.tile}-d{r.delta}-f{r.fuse}")
def test_reported_kernel_time_is_the_sum_of_every_timed_region(device, run):
    graph = chain_with_filler(hops=120, filler=20000)
    solve(graph, run, device_for(device))  # kernels compiled and first launches paid outside the check
    with region_clock_log(device) as log:
        started = time.monotonic()
        result = solve(graph, run, device_for(device))
        wall_ms = (time.monotonic() - started) * 1e3
    np.testing.assert_array_equal(result.dist, scipy_distances(graph))
    regions, summed = summed_regions_ms(device, log)
    reported = result.computation_ms + result.filtering_ms
    assert regions >= 1
    if not single_region(run, device):
        assert regions >= 2, "a multi-round solve times more than one region"
    assert reported == pytest.approx(summed, rel=1e-6, abs=1e-3), \
        f"{regions} regions sum to {summed:.4f} ms, the solve reports {reported:.4f} ms"
    assert 0 < reported <= wall_ms + 0.5, (reported, wall_ms)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", ["bmf", "tpe"])
def test_kernel_time_is_most_of_a_kernel_bound_solve(device, method):
    """Against a clock the timer does not own: one warp reading 400k edges for 41 rounds, so
    the kernels are most of the solve's wall time; a total of one round's region (1/41) fails."""
    graph = chain_with_filler(hops=40, filler=400_000)
    run = Run(method, "outcore", False, 32, 1)
    solve(graph, run, device_for(device))
    started = time.monotonic()
    result = solve(graph, run, device_for(device))
    wall_ms = (time.monotonic() - started) * 1e3
    np.testing.assert_array_equal(result.dist, scipy_distances(graph))
    assert result.rounds == 41
    kernel_ms = result.computation_ms + result.filtering_ms
    assert 0.3 * wall_ms <= kernel_ms <= wall_ms + 0.5, (kernel_ms, wall_ms)


# -- 2. batches: 1, 2 and 3+ batches, at each boundary -------------------------------------

def every_edge_needed(level1: int, level2: int, seed: int = 11, order: str = "given") -> Graph:
    """0 -> 1..level1, then i -> level1 + i for i in 1..level2: every edge is the only way
    into its head, so an edge a kernel skips (a wrong offset in some batch) leaves a vertex
    unreached or too far. ``order``: "given" (level 1 first) or "shuffled"."""
    rng = np.random.default_rng(seed)
    src = np.concatenate([np.zeros(level1, dtype=np.int64), np.arange(1, level2 + 1)])
    dst = np.concatenate([np.arange(1, level1 + 1), level1 + np.arange(1, level2 + 1)])
    if order == "shuffled":
        permutation = rng.permutation(src.shape[0])
        src, dst = src[permutation], dst[permutation]
    w = rng.integers(1, 1000, src.shape[0])
    return Graph.from_arrays(src, dst, w, n=level1 + level2 + 1)


def around(boundary: int) -> list[int]:
    """Sizes of 1, 2 and 3+ batches: just below, at and just past the first boundary, past
    the second, and past the third."""
    return [boundary - 1, boundary, boundary + 1, 2 * boundary + 1, 3 * boundary + 1]


def test_every_edge_needed_graph_needs_every_edge():
    graph = every_edge_needed(300, 200, order="shuffled")
    assert np.unique(graph.dst).shape[0] == graph.m and 0 not in graph.dst  # one way into each head
    assert (scipy_distances(graph) < np.iinfo(np.int64).max).all()


EDGE_CENTRIC = [("bmf", "outcore", False), ("bmf", "incore", False), ("bmf", "outcore", True),
                ("tpe", "outcore", False), ("tpe", "incore", False)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method,sync,usesmem", EDGE_CENTRIC, ids=["bmf-out", "bmf-in", "segscan", "tpe-out", "tpe-in"])
@pytest.mark.parametrize("bsize,bcount", [(32, 1), (256, 8), (1024, 2)], ids=["32x1", "256x8", "1024x2"])
def test_edge_batches_of_every_warp(device, method, sync, usesmem, bsize, bcount):
    """Each warp's share of the list (Listing 2: m / warps, rounded up) is 1, 2 and 3+ of
    the kernel's batches, at and around each boundary."""
    warps = bsize * bcount // 32
    batch = BMF_BATCH[sync] if method == "bmf" else TPE_BATCH
    for per_warp in around(batch) + around(32)[:3]:
        m = warps * per_warp
        for order in ("given", "shuffled"):
            graph = every_edge_needed(m - m // 3, m // 3, seed=per_warp, order=order)
            assert graph.m == m
            check(graph, Run(method, sync, usesmem, bsize, bcount), device, f"{per_warp} edges a warp, {order}")


VERTEX_CENTRIC = [(m, s) for m in ("vbf", "vbf-stride", "vbf-flag", "harish", "dijkstra") for s in ("outcore", "incore")]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method,sync", VERTEX_CENTRIC, ids=[f"{m}-{s}" for m, s in VERTEX_CENTRIC])
@pytest.mark.parametrize("bsize,bcount", [(32, 1), (256, 8)], ids=["32x1", "256x8"])
def test_vertex_batches_of_a_grid_stride(device, method, sync, bsize, bcount):
    """n = 1, 2 and 3+ times the grid's threads (grid-stride loops; the one-thread-per-vertex
    launches get 1, 2, 3+ blocks of bsize), at and around each boundary."""
    for per in (bsize * bcount, bsize):
        for n in around(per):
            level1 = (n - 1) - (n - 1) // 2
            graph = every_edge_needed(level1, (n - 1) // 2, seed=n, order="shuffled")
            assert graph.n == n
            check(graph, Run(method, sync, False, bsize, bcount), device, f"n = {n}")


def hubs(degrees: list[int], seed: int = 5) -> Graph:
    """A chain of hubs 0 -> h1 -> h2 ...: hub k has ``degrees[k]`` out-edges, each the only
    way into its head (the next hub is one of them, in the middle), so the hubs are expanded
    in successive rounds and every chunk of every hub is needed."""
    rng = np.random.default_rng(seed)
    src, dst = [], []
    hub, next_id = 0, 1
    for k, degree in enumerate(degrees):
        heads = np.arange(next_id, next_id + degree)
        next_id += degree
        src.append(np.full(degree, hub))
        dst.append(heads)
        hub = int(heads[degree // 2])
    src, dst = np.concatenate(src), np.concatenate(dst)
    return Graph.from_arrays(src, dst, rng.integers(1, 100, src.shape[0]), n=next_id)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sync", ["outcore", "incore"])
@pytest.mark.parametrize("delta,tile", [(None, 0), (0, 0), (50, 0), (None, None)], ids=["auto", "unbounded", "d50", "autotile"])
def test_opt_hub_chunks(device, sync, delta, tile):
    """Hubs of 1, 2 and 3+ chunks, at and around HUB_DEGREE and each chunk boundary, one
    after another in a chain and each alone as the source."""
    assert opt.CHUNK == OPT_CHUNK, "the host sizes the chunk list by methods/opt.py's CHUNK"
    degrees = around(opt.HUB_DEGREE)[:3] + [OPT_CHUNK * k + d for k in (1, 2, 3) for d in (0, 1)] + [7]
    degrees = list(dict.fromkeys(d for d in degrees if d > 1))  # the next hub is the middle head
    run = Run("opt", sync, False, 256, 8, delta=delta, tile=tile)
    check(hubs(degrees), run, device)
    for degree in degrees:
        check(hubs([degree, 3]), run, device, f"hub {degree}")


def on_device(device: str) -> bool:
    if device == "gpu":
        select_device("gpu")
    return device == "gpu"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", APSP_METHODS)
def test_apsp_tiles_of_the_matrix(device, method):
    """All pairs on N x N matrices padded to TILE (128): 1, 2 and 3+ tiles a side, at and
    around each boundary, every row against scipy."""
    for n in around(TILE):
        graph = random_graph(n, n=n, m=4 * n, max_weight=50, unreachable=3)
        got = apsp_solve(graph, method, on_device(device)).full(np.int64)
        np.testing.assert_array_equal(got, scipy_rows(graph, np.arange(n)), err_msg=f"{method} n = {n}")


@pytest.mark.parametrize("device", DEVICES)
def test_sssp_all_source_batches(device, monkeypatch):
    """sssp-all relaxes BATCH_PAIRS / n sources at a time: with the budget cut to 64 rows,
    1, 2 and 3+ batches of sources, at and around each boundary."""
    for n in around(64):
        monkeypatch.setattr(apsp_methods, "BATCH_PAIRS", 64 * n)
        graph = random_graph(n, n=n, m=4 * n, max_weight=50, unreachable=3)
        got = apsp_solve(graph, "sssp-all", on_device(device)).full(np.int64)
        np.testing.assert_array_equal(got, scipy_rows(graph, np.arange(n)), err_msg=f"n = {n}")


def sparse_apsp_result(n: int, on_gpu: bool) -> tuple[ApspResult, np.ndarray]:
    """An all-pairs result (padded int32 matrix, on the device asked for) where row i
    reaches only itself (0) and vertex (7 i + 3) mod n (at i + 1), and the int64 matrix
    it stands for: each row distinct, so a block written at the wrong offset shows."""
    size = padded(n)
    inf = HALF_INF[4]
    matrix = np.full((size, size), inf, dtype=np.int32)
    rows = np.arange(n)
    matrix[rows, (7 * rows + 3) % n] = rows + 1
    matrix[rows, rows] = 0
    expected = np.where(matrix[:n, :n] < inf, matrix[:n, :n].astype(np.int64), np.iinfo(np.int64).max)
    if on_gpu:
        import cupy
        matrix = cupy.asarray(matrix)
    return ApspResult(matrix=matrix, n=n, computation_ms=0.0, rounds=1, launch="", on_gpu=on_gpu), expected


@pytest.mark.parametrize("device", DEVICES)
def test_apsp_output_row_blocks(device, tmp_path):
    """The writers stream 2048 (.npy) and 1024 (text) rows at a time, stats() 2048: 1, 2 and
    3+ blocks (5 for text), at and around each boundary; read back and compared with the matrix."""
    for n in sorted(set(around(1024)[:3] + around(2048)[:4])):
        result, expected = sparse_apsp_result(n, on_device(device))
        finite = expected != np.iinfo(np.int64).max
        assert result.stats() == (int(expected[finite].sum()), int(finite.sum()), int(expected[finite].max()))
        write_result(str(tmp_path / "d.npy"), result, np.dtype(np.int32))
        np.testing.assert_array_equal(np.load(tmp_path / "d.npy"), np.where(finite, expected, INT32_MAX),
                                      err_msg=f"npy n = {n}")
        write_result(str(tmp_path / "d.txt"), result, np.dtype(np.int64))
        text = np.loadtxt(tmp_path / "d.txt", dtype=np.int64, ndmin=2)
        read = np.full((n, n), np.iinfo(np.int64).max, dtype=np.int64)
        read[text[:, 0], text[:, 1]] = text[:, 2]
        assert text.shape[0] == int(finite.sum())
        np.testing.assert_array_equal(read, expected, err_msg=f"text n = {n}")


# -- 3. flag reductions: the improving item first, middle and last ---------------------------

POSITIONS = ["first", "middle", "last"]


def item_index(position: str, items: int) -> int:
    return {"first": 0, "middle": items // 2, "last": items - 1}[position]


def hops_in_lane_ranges(position: str, warps: int, items: int = 3 * 8 + 1, hops: int = 40) -> Graph:
    """For bmf: each warp's share is 32 x ``items`` edges, so each lane has ``items`` edges
    (lane, lane + 32, ...; 3+ unrolled batches). Hop k of the path 0 -> 1 -> ... -> hops sits
    at the ``position`` item of one lane's range (warp k mod warps, lane k div warps); the
    other edges join two unreachable vertices. Each round improves exactly one distance,
    through that one item: a lane flag that keeps its last item's value instead of or-ing
    them reads 0 in every round unless the hop is the last item."""
    load = 32 * items
    m = warps * load
    hops = min(hops, 32 * warps)
    far = hops + 1
    src = np.full(m, far)
    dst = np.full(m, far + 1)
    for k in range(hops):
        warp, lane = k % warps, (k // warps) % 32
        at = warp * load + lane + 32 * item_index(position, items)
        assert src[at] == far, "one hop per position"
        src[at], dst[at] = k, k + 1
    return Graph.from_arrays(src, dst, np.full(m, 7), n=far + 2)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("sync,usesmem", [("outcore", False), ("incore", False), ("outcore", True)],
                         ids=["bmf-out", "bmf-in", "segscan"])
@pytest.mark.parametrize("bsize,bcount", [(32, 1), (512, 4)], ids=["32x1", "512x4"])
def test_bmf_changed_flag_or_of_every_item(device, position, sync, usesmem, bsize, bcount):
    warps = bsize * bcount // 32
    graph = hops_in_lane_ranges(position, warps)
    result = check(graph, Run("bmf", sync, usesmem, bsize, bcount), device, position)
    assert result.rounds >= 3


def hops_among_back_edges(position: str, per_vertex: int = 32 * 25, hops: int = 30) -> Graph:
    """For tpe, whose list T holds only the edges of the vertices changed last round: path
    vertex k has ``per_vertex`` out-edges, the hop k -> k+1 at the ``position`` item of
    lane 0's range of T (one warp: lane 0 takes T[0], T[32], ...) and edges back to the
    source (never improving) everywhere else. Each round improves only through the hop."""
    src = np.repeat(np.arange(hops), per_vertex)
    dst = np.zeros(src.shape[0], dtype=np.int64)
    hop_at = np.arange(hops) * per_vertex + 32 * item_index(position, per_vertex // 32)
    dst[hop_at] = np.arange(1, hops + 1)
    w = np.full(src.shape[0], 3)
    return Graph.from_arrays(src, dst, w, n=hops + 2)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("sync", ["outcore", "incore"])
def test_tpe_changed_flag_or_of_every_item(device, position, sync):
    graph = hops_among_back_edges(position)
    result = check(graph, Run("tpe", sync, False, 32, 1), device, position)
    assert result.rounds >= 3


def hops_among_settled_vertices(position: str, threads: int, items: int = 5, hops: int = 20,
                                out_edges: int = 5) -> Graph:
    """For the vertex-centric methods (a thread takes vertices t, t + S, t + 2S, ...; S the
    grid's threads): the path vertex p_k (k = 1..hops) is thread k's ``position`` vertex,
    and among its ``out_edges`` out-edges the hop to p_(k+1) is at ``position`` too (the
    others go back to the source). Every other vertex is reached straight from the source
    in round 1 and has no out-edges, so in later rounds it is a finite vertex that improves
    nothing: a thread flag (or an edge flag) keeping the last item's value reads 0."""
    n = threads * items
    index = item_index(position, items)
    path = [0] + [k + index * threads for k in range(1, hops + 1)]
    on_path = np.zeros(n, dtype=bool)
    on_path[path] = True
    others = np.flatnonzero(~on_path)
    src, dst, w = [np.zeros(others.shape[0], dtype=np.int64)], [others], [np.full(others.shape[0], 10**6)]
    hop_slot = item_index(position, out_edges)
    for k in range(hops):
        heads = np.zeros(out_edges, dtype=np.int64)
        heads[hop_slot] = path[k + 1]
        src.append(np.full(out_edges, path[k]))
        dst.append(heads)
        w.append(np.full(out_edges, 2))
    return Graph.from_arrays(np.concatenate(src), np.concatenate(dst), np.concatenate(w), n=n)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("method,sync", VERTEX_CENTRIC, ids=[f"{m}-{s}" for m, s in VERTEX_CENTRIC])
def test_vertex_centric_changed_flag_or_of_every_item(device, position, method, sync):
    bsize, bcount = 64, 2
    graph = hops_among_settled_vertices(position, bsize * bcount)
    check(graph, Run(method, sync, False, bsize, bcount), device, position)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("sync", ["outcore", "incore"])
def test_opt_with_the_improving_edge_first_middle_last(device, position, sync):
    """opt on the same shapes (its warps share a frontier vertex's edges)."""
    for graph in (hops_among_back_edges(position), hops_among_settled_vertices(position, 128)):
        for delta in (None, 0, 4):
            check(graph, Run("opt", sync, False, 256, 8, delta=delta, tile=0), device, position)


# -- 4. the int32/int64 distance width at the boundary -------------------------------------

def path_weighing(total: int, hops: int = 5) -> Graph:
    """0 -> 1 -> ... -> hops weighing ``total`` in all (and one isolated vertex), no other
    edges: its longest shortest path, the total weight and the distance_dtype bound all
    equal ``total``. The edges are listed last hop first (many rounds for bmf)."""
    w = np.full(hops, total // hops)
    w[-1] += total - int(w.sum())
    src = np.arange(hops)[::-1]
    return Graph.from_arrays(src, src + 1, w[::-1], n=hops + 2)


def pair_weighing(total: int) -> Graph:
    """0 -> 1 (total) and 1 -> 0 (total): here the bound is (n - 1) x w_max = total, not the
    sum of the weights (2 x total); ``total`` must fit an int32 weight."""
    return Graph.from_arrays([0, 1], [1, 0], [total, total], n=2)


WIDTHS = [INT32_MAX - 1, INT32_MAX, INT32_MAX + 1]


def test_width_graphs_reach_the_boundary():
    for total in WIDTHS:
        graph = path_weighing(total)
        assert scipy_distances(graph)[-2] == total and graph.w_total == total
        assert distance_dtype(graph) == (np.int32 if total < INT32_MAX else np.int64), total
    assert distance_dtype(pair_weighing(INT32_MAX)) == np.int64
    assert distance_dtype(pair_weighing(INT32_MAX - 1)) == np.int32


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method,sync,usesmem", ALL_RUNS, ids=RUN_IDS)
def test_distances_exact_around_the_int32_boundary(device, method, sync, usesmem):
    """A path of INT32_MAX - 1 stays int32; INT32_MAX is int32's INF, so a path of exactly
    that weight (and one more) must be solved in int64 and come out exact, not unreachable."""
    graphs = [(f"path {t}", path_weighing(t)) for t in WIDTHS]
    graphs += [(f"pair {t}", pair_weighing(t)) for t in (INT32_MAX - 1, INT32_MAX)]
    for what, graph in graphs:
        for bsize, bcount in ((32, 1), SPEC_CONFIGS[0]):
            check(graph, Run(method, sync, usesmem, bsize, bcount), device, what)


# -- 5. memory checks with memory held elsewhere ------------------------------------------

GIB = 1 << 30


def graph_needing_gpu(nbytes: int) -> Graph:
    """A one-edge graph whose vertex count makes memory.gpu_bytes about ``nbytes``."""
    n = nbytes // memory.GPU_PER_VERTEX
    return Graph.from_arrays([0], [n - 1], [1], n=n)


@pytest.mark.gpu
def test_gpu_memory_check_sees_memory_held_by_another_allocation():
    import cupy

    from sssp_gpu.resident import drop_all

    device = select_device("gpu")
    drop_all()  # earlier tests' kept edge copies would count as free (resident.py)
    run = Run("opt", "outcore")
    big, small = graph_needing_gpu(2 * GIB), graph_needing_gpu(GIB // 4)
    memory.ensure_fits("big.txt", big, run, device)  # idle GPU: 2 GiB fits
    held = []
    try:
        # hold all but ~1 GiB of the free memory, in pieces of at most 4 GiB
        while (free := int(cupy.cuda.runtime.memGetInfo()[0])) > GIB + GIB // 2:
            held.append(cupy.empty(min(free - GIB, 4 * GIB), dtype=np.uint8))
        left = memory.gpu_free()
        assert left <= GIB + (256 << 20), f"the check sees {left} bytes free with all but 1 GiB held"
        with pytest.raises(InputError, match="GPU memory"):
            memory.ensure_fits("big.txt", big, run, device)
        memory.ensure_fits("small.txt", small, run, device)  # what is left is still usable
        from sssp_gpu.allpairs.memory import available_bytes
        assert available_bytes(True) <= GIB + (256 << 20)
    finally:
        held.clear()
        cupy.get_default_memory_pool().free_all_blocks()
    memory.ensure_fits("big.txt", big, run, device)


def test_host_memory_check_sees_the_address_space_already_mapped():
    """The CPU twin: with the address-space limit set to what is mapped plus 1 GiB, a graph
    needing 1 GiB plus half of what is mapped is refused (a check reading the limit alone,
    not the limit less what is mapped, lets it through) and one needing 0.5 GiB is not."""
    mapped = memory._read_kib("/proc/self/status", "VmSize:")
    assert mapped and mapped > 256 << 20, "the premise: this process has mapped a fair amount"
    n_for = lambda nbytes: (nbytes - memory.HOST_FIXED) // memory.HOST_PER_VERTEX  # noqa: E731
    big = Graph.from_arrays([0], [1], [1], n=n_for(GIB + mapped // 2))
    small = Graph.from_arrays([0], [1], [1], n=n_for(GIB // 2))
    run = Run("opt", "outcore")
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY and hard < mapped + 2 * GIB:
        pytest.skip("the hard address-space limit is too low to set the test's limit under it")
    if memory.host_available() > 3 * GIB + mapped:
        memory.ensure_fits("big.txt", big, run, CPU)  # unlimited, it fits
    resource.setrlimit(resource.RLIMIT_AS, (mapped + GIB, hard))
    try:
        with pytest.raises(InputError, match="memory"):
            memory.ensure_fits("big.txt", big, run, CPU)
        memory.ensure_fits("small.txt", small, run, CPU)
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
