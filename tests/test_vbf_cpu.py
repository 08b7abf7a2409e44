"""vbf's numpy rounds against a plain-Python model of the same rounds (CPU).

Agreement with scipy (tests/test_classics.py) cannot see the frontier: a mask never cleared
or a head missed still ends at the right distances, only later. Here the rounds and the
edges relaxed must equal the model's, vertex by vertex: a grid-stride step reads the
distances as they were when it began (out-of-core: a round reads the last round only), a
head is improved when a candidate beats its distance at that moment, and vbf-flag relaxes
exactly the heads improved in the round before.
"""
from __future__ import annotations

import pytest

from conftest import random_graph
from sssp_gpu.methods import vbf
from sssp_gpu.methods.common import INF, Run, max_rounds


def model(graph, method: str, sync: str, step: int) -> tuple[list[int], int, int]:
    """(distances, rounds, edges relaxed) by loops over Python lists."""
    out = [[] for _ in range(graph.n)]
    for tail, head, weight in zip(graph.src.tolist(), graph.dst.tolist(), graph.w.tolist()):
        out[tail].append((head, weight))
    dist = [INF] * graph.n
    dist[0] = 0
    frontier = {0}
    rounds = relaxed = 0
    for _ in range(max_rounds(graph)):
        rounds += 1
        improved = set()
        chunks = [range(graph.n)] if sync == "outcore" else \
            [range(start, min(start + step, graph.n)) for start in range(0, graph.n, step)]
        written = list(dist)  # outcore: the round's copy; incore: the one array, read per step
        for chunk in chunks:
            seen = list(dist) if sync == "outcore" else list(written)
            for vertex in chunk:
                if (vertex not in frontier) if method == "vbf-flag" else seen[vertex] == INF:
                    continue
                for head, weight in out[vertex]:
                    relaxed += 1
                    candidate = min(seen[vertex] + weight, INF)
                    if candidate < seen[head]:
                        improved.add(head)
                        written[head] = min(written[head], candidate)
        dist = written
        frontier = improved
        if not improved:
            break
    return dist, rounds, relaxed


@pytest.mark.parametrize("method", ("vbf", "vbf-flag", "vbf-stride"))
@pytest.mark.parametrize("sync", ("outcore", "incore"))
def test_rounds_and_edges_follow_the_model(method, sync):
    run = Run(method, sync, False, 32, 2)  # 64 threads: several grid-stride steps a round
    for seed, max_weight in ((11, 20), (12, None), (13, 0)):
        graph = random_graph(seed, n=200, m=900, max_weight=max_weight)
        result = vbf.run_cpu(graph, run)
        dist, rounds, relaxed = model(graph, method, sync, vbf._threads(graph, run))
        assert result.dist.tolist() == dist, f"{run} seed {seed}"
        assert (result.rounds, result.edges_processed) == (rounds, relaxed), f"{run} seed {seed}"
