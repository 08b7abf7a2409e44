"""Predecessors: every chain leads to vertex 0 and weighs exactly the vertex's distance."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import FIGURE1_EDGES, ROOT, random_graph
from sssp_common.graph import Graph
from sssp_common.vocabulary import METHODS
from sssp_gpu.device import CPU, select_device
from sssp_gpu.engine import solve
from sssp_gpu.methods.common import INF, Run
from sssp_gpu.paths import derive_predecessors, path_to, predecessors, read_pairs, write_paths_file

DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]
FIGURE1 = Graph.from_arrays([0, 0, 1, 1, 2, 3, 4], [1, 2, 2, 3, 4, 5, 3], [4, 2, 5, 10, 3, 11, 4])


def lightest(graph: Graph) -> dict:
    best: dict = {}
    for u, v, w in zip(graph.src.tolist(), graph.dst.tolist(), graph.w.tolist()):
        best[u, v] = min(w, best.get((u, v), w))
    return best


def assert_tree(graph: Graph, dist: np.ndarray, pred: np.ndarray) -> None:
    """Walk every chain: it reaches 0 within n steps over real edges and weighs dist[v]."""
    weight = lightest(graph)
    assert pred[0] == -1
    for v in range(graph.n):
        if dist[v] == INF:
            assert pred[v] == -1, f"unreachable {v} has a predecessor"
            continue
        length, at, steps = 0, v, 0
        while at != 0:
            p = int(pred[at])
            assert (p, at) in weight, f"{p}->{at} is not an edge (chain of {v})"
            length += weight[p, at]
            at, steps = p, steps + 1
            assert steps <= graph.n, f"the chain of {v} cycles"
        assert length == dist[v], f"chain of {v} weighs {length}, distance {dist[v]}"


def zero_heavy_graph() -> Graph:
    """Zero-weight cycles among equal distances: the case where tight edges alone could loop."""
    src = [0, 1, 2, 3, 2, 4, 5, 4, 6]
    dst = [1, 2, 3, 2, 1, 5, 4, 6, 4]
    w = [3, 0, 0, 0, 0, 0, 0, 2, 0]
    return Graph.from_arrays(src + [0], dst + [4], w + [3], n=8)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", METHODS)
def test_every_method_gives_a_shortest_path_tree(device, method):
    dev = CPU if device == "cpu" else select_device("gpu")
    graphs = [FIGURE1, zero_heavy_graph()] + [random_graph(s, max_weight=mw) for s, mw in ((1, 20), (2, 0), (3, 3))]
    for graph in graphs:
        result = solve(graph, Run(method, "incore", False, 256, 8), dev)
        assert_tree(graph, result.dist, predecessors(graph, result, on_gpu=dev.is_gpu))


@pytest.mark.parametrize("device", DEVICES)
def test_derived_predecessors_with_zero_weight_cycles(device):
    graph = zero_heavy_graph()
    dist = solve(graph, Run("bmf", "outcore", False, 256, 8), CPU).dist
    pred = derive_predecessors(graph, dist, on_gpu=device == "gpu")
    assert_tree(graph, dist, pred)
    assert pred[7] == -1 and pred[1] == 0


def test_paths_file_and_command(tmp_path):
    pred = np.array([-1, 0, 0, 4, 2, 3, -1])
    paths = tmp_path / "p.txt"
    write_paths_file(paths, pred)
    assert paths.read_text() == "0:-\n1:0\n2:0\n3:4\n4:2\n5:3\n6:-\n"
    np.testing.assert_array_equal(read_pairs(paths, b"-"), pred)
    assert path_to(pred, 5) == [0, 2, 4, 3, 5] and path_to(pred, 6) is None and path_to(pred, 0) == [0]
    dist = tmp_path / "d.txt"
    dist.write_text("0:0\n1:4\n2:2\n3:9\n4:5\n5:20\n6:INF\n")
    run = [sys.executable, "-m", "sssp_gpu.paths", str(paths), str(dist)]
    out = subprocess.run(run + ["5"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.splitlines() == ["0 -> 2 -> 4 -> 3 -> 5", "length 20 (4 edges)"]
    out = subprocess.run(run + ["6"], capture_output=True, text=True, cwd=ROOT)
    assert "unreachable" in out.stdout
    out = subprocess.run(run + ["9"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 1 and out.stderr.startswith("paths: error:")


def test_sssp_paths_option(tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text(FIGURE1_EDGES)
    for form in (["-paths"], ["--paths"]):
        paths = tmp_path / "p.txt"
        cmd = [sys.executable, str(ROOT / "sssp.py"), "-input", str(graph), "-bsize", "256", "-bcount", "8",
               "-output", str(tmp_path / "o.txt"), "harish", "-sync", "incore", *form, str(paths)]
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path,
                             env={"SSSP_DEVICE": "cpu", "PATH": "/usr/bin:/bin",
                                  "SSSP_CACHE_DIR": str(tmp_path / "cache")})
        assert out.returncode == 0, out.stderr
        assert paths.read_text().split() == ["0:-", "1:0", "2:0", "3:4", "4:2", "5:3"]
        paths.unlink()


def test_read_pairs_names_the_file_on_garbage(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("0:0\n1:x\n")
    with pytest.raises(ValueError, match="bad.txt: not a file of"):
        read_pairs(bad, b"INF")
