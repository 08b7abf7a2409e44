"""``python -m sssp_gpu.warm``'s tiny solves: every method, sync and option runs on each tiny
graph (a method may refuse the int64 one, as harish and dijkstra refuse weights that large),
and each answer is the reference's. On the CPU here; the GPU twin is what ``make sssp`` runs."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import scipy_distances
from sssp_gpu import warm
from sssp_gpu.device import select_device
from sssp_gpu.engine import solve
from sssp_gpu.methods.common import Run


@pytest.mark.parametrize("where", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_every_method_warms_on_the_tiny_graphs(where):
    device = select_device(where)
    graphs = dict(warm.tiny_graphs())
    assert set(graphs) == {"grid", "unit grid", "int64 path"}
    assert warm.warm_solves(device) >= 3 * 2 * 8  # two grids: every method at both syncs, at least
    for label, graph in graphs.items():
        expected = scipy_distances(graph)
        for run in (Run("opt", "incore"), Run("bmf", "outcore", True), Run("tpe", "outcore")):
            result = solve(graph, run, device)
            np.testing.assert_array_equal(result.dist, expected, err_msg=f"{label} {run.method}")
