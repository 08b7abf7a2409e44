"""What agreement with scipy cannot show, pinned on the GPU (and, with the same
expectations, on the numpy fallback, which implements the same semantics):

- out-of-core rounds advance exactly one hop, in-core rounds more, with many warps and
  blocks at the spec's five configurations (a kernel reading the array it writes fails);
- a distance plus a weight that overflows int32 inside a kernel never wins (a saturating
  add that lost its clamp fails);
- the kernel times are milliseconds of the kernels (a timer in seconds, or timing the
  wrong thing, fails), against a clock that is not the timer under test.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, random_graph, scipy_distances
from sssp_common.graph import Graph
from sssp_common.vocabulary import METHODS, SPEC_CONFIGS
from sssp_gpu.device import CPU, select_device
from sssp_gpu.engine import solve
from sssp_gpu.methods.common import INF, Run, distance_dtype

DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]
CONFIG_IDS = [f"{b}x{c}" for b, c in SPEC_CONFIGS]
# bmf's kernels load this many 32-edge steps per lane before relaxing any (bmf.cu UNROLL_*):
# chain edges one such group apart are relaxed one after another by the same thread.
BMF_GROUP = 32 * 8


def device_for(name: str):
    return CPU if name == "cpu" else select_device("gpu")


# -- out-of-core semantics ---------------------------------------------------------------

def chain_in_warp_order(warps: int, hops_per_warp: int, weight: int = 3) -> Graph:
    """The path 0 -> 1 -> ... -> L (L = warps x hops_per_warp), cut into one piece per warp:
    warp w's even share of the list (Listing 2) holds hops w*h .. w*h+h-1, each at lane 0 of
    its own 8-step group (offset 256 j), so one thread relaxes a warp's hops in order. The
    other positions hold edges between two unreachable vertices (skipped: source INF).

    Out-of-core a round can only use the last round's distances: exactly one hop per round,
    L + 1 rounds with the last one that changes nothing. In-core the thread that owns the
    hop reached so far walks its whole piece in one round: at most warps + 1 rounds."""
    hops = warps * hops_per_warp
    far = hops + 1
    m = hops * BMF_GROUP
    src = np.full(m, far, dtype=np.int64)
    dst = np.full(m, far + 1, dtype=np.int64)
    position = np.arange(hops) * BMF_GROUP  # warp w's share starts at w * hops_per_warp * 256
    src[position] = np.arange(hops)
    dst[position] = np.arange(1, hops + 1)
    return Graph.from_arrays(src, dst, np.full(m, weight), n=far + 2)


def ladder_for_tpe(warps: int, hops_per_warp: int, excess: int = 1000, pad: int = 10**6) -> Graph:
    """For tpe, whose list T holds only the edges of vertices changed last round: vertex 0
    reaches every chain vertex k directly (weight k + excess, 1 for vertex 1) in round 1,
    so round 2's T is every chain vertex's edges, in list order: per vertex its hop
    k -> k+1 (weight 1) and 31 edges to a sink (weight ``pad``). T's hops then sit 32
    apart, at lane 0 of the warps' even shares of T, h per warp.

    Out-of-core: vertex k reaches its distance k in round k: L + 1 rounds for L chain
    vertices (L - 1 = warps x h hops), the last finding nothing. In-core, round 2 already
    walks warp 0's h hops, so it needs fewer."""
    chain = warps * hops_per_warp + 1  # chain vertices 1 .. chain
    sink = chain + 1
    direct_dst = np.arange(1, chain + 1)
    direct_w = np.where(direct_dst == 1, 1, direct_dst + excess)
    tails = np.arange(1, chain)
    hop_src = np.repeat(tails, 32)
    hop_dst = np.full(hop_src.shape[0], sink)
    hop_dst[::32] = tails + 1
    hop_w = np.full(hop_src.shape[0], pad)
    hop_w[::32] = 1
    src = np.concatenate([np.zeros(chain, dtype=np.int64), hop_src])
    dst = np.concatenate([direct_dst, hop_dst])
    return Graph.from_arrays(src, dst, np.concatenate([direct_w, hop_w]), n=sink + 1)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bsize,bcount", SPEC_CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("usesmem", [False, True], ids=["bmf", "segscan"])
def test_bmf_outcore_advances_one_hop_per_round_incore_more(device, bsize, bcount, usesmem):
    warps, per_warp = bsize * bcount // 32, 3
    graph = chain_in_warp_order(warps, per_warp)
    hops = warps * per_warp
    expected = scipy_distances(graph)
    assert expected[hops] == 3 * hops and expected[hops + 1] == INF
    outcore = solve(graph, Run("bmf", "outcore", usesmem, bsize, bcount), device_for(device))
    np.testing.assert_array_equal(outcore.dist, expected)
    assert outcore.rounds == hops + 1, "out-of-core must advance exactly one hop per round"
    if usesmem:
        return  # segscan is out-of-core only
    incore = solve(graph, Run("bmf", "incore", False, bsize, bcount), device_for(device))
    np.testing.assert_array_equal(incore.dist, expected)
    assert 2 <= incore.rounds <= warps + 1 < outcore.rounds, \
        "in-core: a thread must see its own updates within the round"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bsize,bcount", SPEC_CONFIGS, ids=CONFIG_IDS)
def test_tpe_outcore_advances_one_hop_per_round_incore_more(device, bsize, bcount):
    warps, per_warp = bsize * bcount // 32, 4
    graph = ladder_for_tpe(warps, per_warp)
    chain = warps * per_warp + 1
    expected = scipy_distances(graph)
    assert expected[1:chain + 1].tolist() == list(range(1, chain + 1))
    outcore = solve(graph, Run("tpe", "outcore", False, bsize, bcount), device_for(device))
    incore = solve(graph, Run("tpe", "incore", False, bsize, bcount), device_for(device))
    for result in (outcore, incore):
        np.testing.assert_array_equal(result.dist, expected)
    assert outcore.rounds == chain + 1, "out-of-core must advance exactly one hop per round"
    assert 3 <= incore.rounds < outcore.rounds, "in-core: a thread must see its own updates within the round"


def chain_on_one_thread(threads: int, hops: int = 10) -> Graph:
    """The path 0 -> S -> 2S -> ... (S = the grid's thread count): in a grid-stride loop over
    vertices thread 0 owns every chain vertex, in path order; the vertices in between have
    no edges."""
    src = np.arange(hops) * threads
    return Graph.from_arrays(src, src + threads, np.full(hops, 2), n=hops * threads + 1)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bsize,bcount", SPEC_CONFIGS, ids=CONFIG_IDS)
def test_vertex_centric_outcore_advances_one_hop_per_round(device, bsize, bcount):
    """vbf, vbf-stride, vbf-flag and harish out-of-core: hops + 1 rounds. vbf-stride in-core:
    thread 0 walks the whole chain in its first round, so 2 rounds."""
    hops = 10
    graph = chain_on_one_thread(bsize * bcount, hops)
    expected = scipy_distances(graph)
    for method in ("vbf", "vbf-stride", "vbf-flag", "harish"):
        result = solve(graph, Run(method, "outcore", False, bsize, bcount), device_for(device))
        np.testing.assert_array_equal(result.dist, expected, err_msg=method)
        assert result.rounds == hops + 1, method
    incore = solve(graph, Run("vbf-stride", "incore", False, bsize, bcount), device_for(device))
    np.testing.assert_array_equal(incore.dist, expected)
    assert incore.rounds == 2


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sync", ["outcore", "incore"])
def test_opt_split_time_is_a_part_of_its_kernel_time(device, sync):
    """opt's filtering time (far-pile splits, from the GPU's nanosecond timer) is a part of
    its kernel time, so both printed lines are positive: a unit slip in the split time
    (microseconds for nanoseconds) takes all of it, and computation drops to zero."""
    graph = random_graph(4, n=20000, m=200000, max_weight=1000, unreachable=10)
    result = solve(graph, Run("opt", sync, False, 512, 4, delta=64), device_for(device))
    np.testing.assert_array_equal(result.dist, scipy_distances(graph))
    assert result.edges_filtered > 0, "the bucket width must make far-pile splits"
    assert result.filtering_ms > 0 and result.computation_ms > 0


# -- saturation --------------------------------------------------------------------------

def int32_edge_of_overflow(n: int = 200, copies: int = 8) -> tuple[Graph, np.ndarray]:
    """A path 0 -> ... -> n-1 of weight-w edges, w the largest for which (n-1) w stays below
    INT32_MAX, so the distances are int32; and edges from n-1 back to every vertex (and a
    self-loop), each weighing w again: dist[n-1] + w passes INT32_MAX. Wrapped, that sum is
    negative and would win; saturated it is INF and loses. The back edges come ``copies``
    times, spread over the list, so many warps and blocks relax one."""
    w = (2**31 - 2) // (n - 1)
    path_src = np.arange(n - 1)
    back_src = np.full(n * copies, n - 1)
    back_dst = np.tile(np.arange(n), copies)
    src = np.concatenate([path_src, back_src])
    dst = np.concatenate([path_src + 1, back_dst])
    order = np.random.default_rng(5).permutation(src.shape[0])
    graph = Graph.from_arrays(src[order], dst[order], np.full(src.shape[0], w), n=n)
    return graph, np.arange(n, dtype=np.int64) * w


def test_the_overflow_graph_stays_int32_yet_overflows_it():
    """The premise of the saturation test: the engine picks int32, and a kernel's sum does not fit."""
    graph, expected = int32_edge_of_overflow()
    assert distance_dtype(graph) == np.int32
    assert expected[-1] < 2**31 - 1 < expected[-1] + int(graph.w.max())
    np.testing.assert_array_equal(scipy_distances(graph), expected)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sync", ["outcore", "incore"])
def test_a_sum_past_int32_never_wins(device, method, sync):
    graph, expected = int32_edge_of_overflow()
    for bsize, bcount in SPEC_CONFIGS:
        for usesmem in ([False, True] if (method, sync) == ("bmf", "outcore") else [False]):
            result = solve(graph, Run(method, sync, usesmem, bsize, bcount), device_for(device))
            np.testing.assert_array_equal(result.dist, expected, err_msg=f"{method} {sync} {bsize}x{bcount}")


# -- timer units -------------------------------------------------------------------------

SPIN = r"""
extern "C" __global__ void spin(long long nanoseconds) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < nanoseconds);
}
"""


@pytest.mark.gpu
def test_gpu_timer_gives_milliseconds_of_a_kernel_of_known_length():
    """Two 40 ms kernels (timed by the GPU's own global timer) inside two regions: the
    event timer must say ~80 ms, and no more than the host clock saw."""
    import cupy

    from sssp_gpu.timing import GpuTimer

    select_device("gpu")
    spin = cupy.RawKernel(SPIN, "spin")
    spin((1,), (1,), (np.int64(1_000_000),))  # compiled and loaded outside the timed part
    cupy.cuda.Device().synchronize()
    timer = GpuTimer()
    started = time.perf_counter()
    for _ in range(2):
        with timer.region():
            spin((1,), (1,), (np.int64(40_000_000),))
        cupy.cuda.Device().synchronize()
        time.sleep(0.03)  # host time between the regions is not the kernels'
    timed = timer.total_ms()
    host_ms = (time.perf_counter() - started) * 1e3
    assert 76 <= timed <= min(120, host_ms - 50), (timed, host_ms)


def test_cpu_timer_gives_milliseconds():
    from sssp_gpu.timing import CpuTimer

    timer = CpuTimer()
    for _ in range(2):
        with timer.region():
            time.sleep(0.04)
        time.sleep(0.03)
    assert 78 <= timer.total_ms() <= 130


def slow_kernels_file(folder: Path, hops: int = 40, filler: int = 1_000_000) -> Path:
    """A chain of ``hops`` hops among a million edges between unreachable vertices: with one
    warp (32x1) every round reads the whole list, so the kernels take most of the solve."""
    far = hops + 1
    src = np.full(filler + hops, far)
    dst = np.full(filler + hops, far + 1)
    at = np.linspace(0, filler + hops - 1, hops).astype(np.int64)
    src[at], dst[at] = np.arange(hops), np.arange(1, hops + 1)
    path = folder / "slow.txt"
    np.savetxt(path, np.column_stack([src, dst, np.ones_like(src)]), fmt="%d")
    return path


def printed_times(stdout: str) -> tuple[float, float, float]:
    """(computation + filtering ms as printed, the wall line's setup + kernels in ms)."""
    kernel_ms = sum(float(x) for x in re.findall(r"kernel time on \S.* is ([0-9.]+) milli-seconds", stdout))
    wall = re.search(r"setup ([0-9.]+), kernels ([0-9.]+)", stdout)
    assert wall, stdout
    return kernel_ms, (float(wall.group(1)) + float(wall.group(2))) * 1e3


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", ["bmf", "tpe"])
def test_printed_kernel_time_is_most_of_the_host_measured_solve(tmp_path, device, method):
    """The printed times against the host's clock around the solve (the wall line's setup
    plus kernels, measured by perf_counter, whatever the timer says): in milliseconds,
    the kernels are between 30% and 100% of it on a graph built so that they dominate.
    Seconds for milliseconds (1000x) or microseconds fail either bound."""
    env = dict(os.environ, SSSP_DEVICE=device, SSSP_CACHE_DIR=str(tmp_path / "cache"))

    def sssp(graph_file: Path) -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, str(ROOT / "sssp.py"), "-input", str(graph_file), "-bsize", "32",
                               "-bcount", "1", "-output", str(tmp_path / "out.txt"), method, "-sync", "outcore"],
                              capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        return done

    (tmp_path / "tiny.txt").write_text("0 1 1\n")
    sssp(tmp_path / "tiny.txt")  # kernels compiled into the cache before the timed run
    done = sssp(slow_kernels_file(tmp_path))
    assert "rounds: 41" in done.stdout
    kernel_ms, solve_ms = printed_times(done.stdout)
    assert 0.3 * solve_ms <= kernel_ms <= 1.02 * solve_ms + 2, done.stdout
