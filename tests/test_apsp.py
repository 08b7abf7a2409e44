"""All pairs (./apsp): every method agrees with scipy's Dijkstra from every source."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from benchmarks.classics import reference_rows as scipy_rows
from conftest import FIGURE1_EDGES, ROOT, random_graph
from sssp_common.graph import Graph
from sssp_gpu.allpairs import memory
from sssp_gpu.allpairs.methods import METHODS, solve
from sssp_gpu.device import select_device

DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]
MAX32 = np.iinfo(np.int32).max


def on(device: str) -> bool:
    if device == "gpu":
        select_device("gpu")
    return device == "gpu"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", METHODS)
def test_every_row_matches_scipy(device, method):
    for seed, n, m, max_weight in ((1, 300, 1500, 20), (2, 150, 900, 0), (3, 40, 60, 1000)):
        graph = random_graph(seed, n=n, m=m, max_weight=max_weight, unreachable=10)
        result = solve(graph, method, on(device))
        got = result.full(np.int64)
        np.testing.assert_array_equal(got, scipy_rows(graph, np.arange(graph.n)), err_msg=f"seed {seed}")
        assert np.all(np.diag(got) == 0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", METHODS)
def test_figure1_and_wide_distances(device, method):
    figure1 = Graph.from_arrays([0, 0, 1, 1, 2, 3, 4], [1, 2, 2, 3, 4, 5, 3], [4, 2, 5, 10, 3, 11, 4])
    result = solve(figure1, method, on(device))
    assert result.full(np.int64)[0].tolist() == [0, 4, 2, 9, 5, 20]
    big = 2_000_000_000
    wide = Graph.from_arrays([0, 1, 2, 0], [1, 2, 3, 4], [big, big, big, 5], n=6)
    result = solve(wide, method, on(device))
    total, count, top = result.stats()
    assert result.output_dtype(top) == np.int64 and top == 3 * big
    assert result.full(np.int64)[0].tolist() == [0, big, 2 * big, 3 * big, 5, np.iinfo(np.int64).max]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", METHODS)
def test_sampled_rows_of_a_bigger_graph(device, method):
    """Several tiles per side (3000 vertices on the GPU, 520 in numpy), 40 rows checked."""
    n = 3000 if device == "gpu" else 520
    graph = random_graph(9, n=n, m=7 * n, max_weight=100, unreachable=n // 60)
    result = solve(graph, method, on(device))
    rows = np.random.default_rng(0).choice(graph.n, 40, replace=False)
    for row in rows:
        np.testing.assert_array_equal(result.rows(row, row + 1, np.int64)[0], scipy_rows(graph, [row])[0])


def run_apsp(tmp_path, *args):
    env = {"SSSP_DEVICE": "cpu", "PATH": "/usr/bin:/bin", "SSSP_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, str(ROOT / "apsp.py"), *args], capture_output=True, text=True,
                          cwd=tmp_path, env=env)


def test_program_writes_npy_and_text(tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text(FIGURE1_EDGES)
    out = run_apsp(tmp_path, "-input", str(graph), "-output", str(tmp_path / "d.npy"), "fw-blocked")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("The total computation kernel time on CPU (numpy) is ")
    assert lines[1] == "checksum: 142 (sum of the finite distances of 21 reachable pairs)"
    matrix = np.load(tmp_path / "d.npy")
    assert matrix.dtype == np.int32 and matrix.shape == (6, 6)
    assert matrix[0].tolist() == [0, 4, 2, 9, 5, 20] and matrix[5, 0] == MAX32
    out = run_apsp(tmp_path, "--input", str(graph), "--output", str(tmp_path / "d.txt"), "--method", "minplus")
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "d.txt").read_text().splitlines()
    assert len(text) == 21 and "0 5 20" in text and "4 3 4" in text


def test_program_refuses_bad_commands(tmp_path):
    assert run_apsp(tmp_path, "-input", "x", "-output", "y.npy", "dijkstra").returncode == 2
    assert run_apsp(tmp_path, "-input", "x", "fw").returncode == 2
    out = run_apsp(tmp_path, "-input", str(tmp_path / "missing.txt"), "-output", "y.npy", "fw")
    assert out.returncode == 1 and out.stderr.startswith("apsp: error:")


def test_refuses_a_matrix_that_does_not_fit(monkeypatch):
    monkeypatch.setattr(memory, "available_bytes", lambda on_gpu: 1 << 30)
    graph = Graph.from_arrays([0, 62585], [1, 0], n=62586)
    with pytest.raises(Exception, match=r"needs 29\.7 GiB for the 62,586 x 62,586 int32 matrix; the host has 1\.0 GiB"):
        memory.ensure_fits("g.txt", graph, "fw", False)
    memory.ensure_fits("g.txt", Graph.from_arrays([0], [1]), "fw", False)
