"""The grid-path demo (seed 003): the path found is a real 4-neighbour path whose cost is scipy's optimum."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

from sssp_gpu.device import CPU, select_device
from sssp_gpu.gridpath import cheapest_path, cost_grid, main, two_smallest

DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]


def scipy_grid_distance(cost: np.ndarray, source, target) -> int:
    size = cost.shape[0]
    rows, cols, weights = [], [], []
    for r in range(size):
        for c in range(size):
            for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
                if 0 <= r + dr < size and 0 <= c + dc < size:
                    rows.append(r * size + c)
                    cols.append((r + dr) * size + c + dc)
                    weights.append(float(cost[r + dr, c + dc]))
    matrix = sp.csr_matrix((weights, (rows, cols)), shape=(size * size, size * size))
    dist = dijkstra(matrix, directed=True, indices=source[0] * size + source[1])
    return int(dist[target[0] * size + target[1]])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("size,inner,seed", ((12, 4, 0), (40, 16, 3), (64, 2, 7)))
def test_path_is_cheapest_and_real(device, size, inner, seed):
    dev = CPU if device == "cpu" else select_device("gpu")
    found = cheapest_path(size, inner, seed, 9, dev)
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 10, (size, inner))
    b = rng.integers(1, 10, (inner, size))
    np.testing.assert_array_equal(found.cost, a @ b)
    flat = np.sort(found.cost.reshape(-1))
    assert found.cost[found.source] == flat[0] and found.cost[found.target] == flat[1]
    assert found.source != found.target
    assert found.cells[0] == found.source and found.cells[-1] == found.target
    for (r0, c0), (r1, c1) in zip(found.cells, found.cells[1:]):
        assert abs(r0 - r1) + abs(c0 - c1) == 1
    assert found.length == sum(int(found.cost[cell]) for cell in found.cells[1:])
    assert found.length == scipy_grid_distance(found.cost, found.source, found.target)


def test_two_smallest_restores_the_grid():
    cost = np.array([[5, 1], [1, 7]])
    assert two_smallest(cost) == (1, 2) and cost.tolist() == [[5, 1], [1, 7]]
    assert cost_grid(3, 2, 0, 9, False).shape == (3, 3)


def test_command_prints_the_path(capsys, monkeypatch):
    monkeypatch.setenv("SSSP_DEVICE", "cpu")
    select_device.cache_clear()
    try:
        assert main(["--size", "12", "--inner", "4"]) == 0
    finally:
        select_device.cache_clear()  # the next test must not inherit this CPU choice
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("smallest cells: (1, 0) = 28 (source)")
    assert out[2].startswith("path: (1, 0)=28 -> ") and out[3].startswith("length: 105 over 3 steps")
