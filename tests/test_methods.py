"""Every method, sync mode, block configuration and edge ordering agrees with scipy.

One test loops over everything (csgraph style); the others pin down the semantics that
agreement alone cannot show: tpe's list T, round counts, segscan's refusal, wide distances.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import FIGURE1_DIST, REAL_GRAPH_FILES, REAL_GRAPHS, SHARED_DATA, random_graph, scipy_distances
from sssp_gpu.device import CPU, select_device
from sssp_gpu.engine import solve
from sssp_common.errors import UsageError
from sssp_common.graph import Graph
from sssp_common.loader import load_graph
from sssp_gpu.methods import tpe
from sssp_common.vocabulary import SPEC_CONFIGS
from sssp_gpu.methods.common import INF, Run

METHOD_RUNS = [
    ("bmf", "outcore", False), ("bmf", "incore", False), ("bmf", "outcore", True),
    ("tpe", "outcore", False), ("tpe", "incore", False),
    ("opt", "outcore", False), ("opt", "incore", False),
]
METHOD_IDS = [f"{m}-{s}{'-segscan' if u else ''}" for m, s, u in METHOD_RUNS]
DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]
ORDERINGS = ["given", "source", "destination"]


def device_for(name: str):
    return CPU if name == "cpu" else select_device("gpu")


def ordered(graph: Graph, ordering: str) -> Graph:
    if ordering == "source":
        return graph.reordered(np.argsort(graph.src, kind="stable"))
    if ordering == "destination":
        return graph.reordered(np.argsort(graph.dst, kind="stable"))
    return graph


def figure1() -> Graph:
    return Graph.from_arrays([0, 0, 1, 1, 2, 3, 4], [1, 2, 2, 3, 4, 5, 3], [4, 2, 5, 10, 3, 11, 4])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method,sync,usesmem", METHOD_RUNS, ids=METHOD_IDS)
@pytest.mark.parametrize("bsize,bcount", SPEC_CONFIGS + ((32, 1), (1024, 40)))
@pytest.mark.parametrize("ordering", ORDERINGS)
def test_every_method_matches_scipy_on_random_graphs(device, method, sync, usesmem, bsize, bcount, ordering):
    run = Run(method, sync, usesmem, bsize, bcount)
    for seed, max_weight in ((1, 20), (2, None), (3, 1000)):
        graph = ordered(random_graph(seed, max_weight=max_weight), ordering)
        result = solve(graph, run, device_for(device))
        np.testing.assert_array_equal(result.dist, scipy_distances(graph), err_msg=f"seed {seed}")
        assert result.rounds >= 1 and result.computation_ms >= 0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method,sync,usesmem", METHOD_RUNS, ids=METHOD_IDS)
def test_figure1(device, method, sync, usesmem):
    for bsize, bcount in SPEC_CONFIGS:
        result = solve(figure1(), Run(method, sync, usesmem, bsize, bcount), device_for(device))
        assert result.dist.tolist() == FIGURE1_DIST


@pytest.mark.gpu
def test_real_graphs_are_present_for_the_gpu_suite():
    """make test-gpu must check the real graphs: their absence fails it instead of skipping."""
    assert len(REAL_GRAPHS) > 2, f"no real graphs but the carried in {SHARED_DATA} (stage ../shared/data for the GPU machine)"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", REAL_GRAPHS)
def test_real_graphs(device, name):
    graph = load_graph(REAL_GRAPH_FILES[name])
    expected = scipy_distances(graph)
    configs = SPEC_CONFIGS if device == "gpu" else ((512, 4),)
    for method, sync, usesmem in METHOD_RUNS:
        ordering = "destination" if usesmem else "given"
        for bsize, bcount in configs:
            run = Run(method, sync, usesmem, bsize, bcount)
            result = solve(ordered(graph, ordering), run, device_for(device))
            mismatches = int(np.count_nonzero(result.dist != expected))
            assert mismatches == 0, f"{name} {run}: {mismatches} vertices differ"


def jacobi_changed_sets(graph: Graph, rounds: int) -> list[np.ndarray]:
    """Independent out-of-core simulation: the changed-vertex mask before each round."""
    dist = np.full(graph.n, np.inf)
    dist[0] = 0
    changed = np.zeros(graph.n, dtype=bool)
    changed[0] = True
    masks = []
    for _ in range(rounds):
        masks.append(changed)
        cand = dist[graph.src] + graph.w
        new = dist.copy()
        np.minimum.at(new, graph.dst, cand)
        changed = new < dist
        dist = new
    return masks


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sync", ["outcore", "incore"])
@pytest.mark.parametrize("bsize,bcount", ((256, 8), (1024, 2), (32, 3), (1024, 40)))
def test_tpe_list_is_the_filter_in_original_order(device, sync, bsize, bcount):
    """Each round's T is exactly the edges whose source changed, in edge-list order;
    out-of-core, the changed sets are those of an independent Jacobi simulation.
    The graph is big enough that every warp gathers several 32-edge segments."""
    graph = random_graph(7, n=3000, m=60000, max_weight=50, unreachable=100)
    run = Run("tpe", sync, False, bsize, bcount)
    if device == "gpu":
        select_device("gpu")
    seen = []
    method = tpe.run_cpu if device == "cpu" else tpe.run_gpu
    result = method(graph, run, on_round=lambda r, T, changed: seen.append((T, changed)))
    assert len(seen) == result.rounds
    assert sum(T.shape[0] for T, _ in seen) == result.edges_processed
    for T, changed in seen:
        np.testing.assert_array_equal(T, np.flatnonzero(changed[graph.src]))
    if sync == "outcore":
        for (T, changed), expected in zip(seen, jacobi_changed_sets(graph, result.rounds)):
            np.testing.assert_array_equal(changed, expected)
    np.testing.assert_array_equal(result.dist, scipy_distances(graph))


@pytest.mark.parametrize("device", DEVICES)
def test_tpe_outcore_rounds_equal_bmf_outcore_rounds(device):
    graph = random_graph(11, n=2000, m=8000, max_weight=9)
    runs = [solve(graph, Run(m, "outcore", False, 512, 4), device_for(device)) for m in ("bmf", "tpe")]
    assert runs[0].rounds == runs[1].rounds
    assert runs[1].edges_processed < runs[0].edges_processed == runs[0].rounds * graph.m
    assert runs[1].edges_filtered == runs[1].rounds * graph.m


@pytest.mark.parametrize("device", DEVICES)
def test_wide_distances_never_wrap(device):
    """Weights near int32's limit force 64-bit distances; sums above 2^31 stay exact."""
    big = 2_000_000_000
    graph = Graph.from_arrays([0, 1, 2, 0], [1, 2, 3, 4], [big, big, big, 5], n=6)
    for method, sync, usesmem in METHOD_RUNS:
        result = solve(graph, Run(method, sync, usesmem, 256, 8), device_for(device))
        assert result.dist.tolist() == [0, big, 2 * big, 3 * big, 5, INF]


@pytest.mark.parametrize("fields,message", [
    (("bmf", "incore", True, 256, 8), "out-of-core only"),
    (("tpe", "outcore", True, 256, 8), "bmf only"),
    (("nosuch", "outcore", False, 256, 8), "unknown method"),
    (("bmf", "halfcore", False, 256, 8), "-sync"),
    (("bmf", "outcore", False, 48, 8), "multiple of 32"),
    (("bmf", "outcore", False, 256, 0), "-bcount"),
])
def test_run_refuses_what_no_method_can_do(fields, message):
    """The run request is checked once, when it is made (the CLI maps this to exit 2)."""
    with pytest.raises(UsageError, match=message):
        Run(*fields)


def one_warp_chain(hops: int) -> Graph:
    """Chain edge j -> j+1 at position 32 j (lane 0 of step j of the only warp); the other
    lanes hold edges between two unreachable vertices. In place, step j sees step j-1's
    update, so one round walks the whole chain; out of place, one hop per round."""
    far = hops + 1
    src = np.full(32 * hops, far)
    dst = np.full(32 * hops, far + 1)
    src[::32] = np.arange(hops)
    dst[::32] = np.arange(1, hops + 1)
    return Graph.from_arrays(src, dst, np.full(32 * hops, 3))


def test_one_warp_chain_rounds_show_each_sync():
    """Exact round counts: in-core run with out-of-core semantics, or with lanes taking
    consecutive edges instead of striding by 32, would need one round per hop."""
    hops = 10
    graph = one_warp_chain(hops)
    expected = [0] + [3 * k for k in range(1, hops + 1)] + [INF, INF]
    incore = solve(graph, Run("bmf", "incore", False, 32, 1), CPU)
    outcore = solve(graph, Run("bmf", "outcore", False, 32, 1), CPU)
    assert incore.dist.tolist() == expected == outcore.dist.tolist()
    assert (incore.rounds, outcore.rounds) == (2, hops + 1)
    assert (incore.edges_processed, outcore.edges_processed) == (2 * graph.m, (hops + 1) * graph.m)


def test_segscan_warns_when_not_destination_sorted():
    result = solve(figure1(), Run("bmf", "outcore", True, 256, 8), CPU)
    assert any("not sorted by destination" in note for note in result.notes)
    dst_sorted = ordered(figure1(), "destination")
    assert solve(dst_sorted, Run("bmf", "outcore", True, 256, 8), CPU).notes == []
