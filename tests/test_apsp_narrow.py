"""fw-blocked on int16 entries (DPX on the GPU, numpy int16 on the CPU): exact, or rerun in int32.

The checks run on both devices: the proof that a 16-bit result is exact (its largest finite
entry below 16383 - the largest weight) and the rerun when it is not, against scipy."""
from __future__ import annotations

import numpy as np
import pytest

from benchmarks.classics import reference_rows as scipy_rows
from conftest import random_graph
from sssp_common.graph import Graph
from sssp_gpu.allpairs import narrow
from sssp_gpu.allpairs.methods import solve
from sssp_gpu.device import select_device

DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]


def on(device: str) -> bool:
    if device == "gpu":
        select_device("gpu")
    return device == "gpu"


def path_graph(n: int, weight: int) -> Graph:
    """0 -> 1 -> ... -> n-1, every edge ``weight``: the longest distance is (n - 1) weight."""
    return Graph.from_arrays(np.arange(n - 1), np.arange(1, n), np.full(n - 1, weight), n=n)


@pytest.mark.parametrize("device", DEVICES)
def test_small_distances_run_in_int16_and_match_scipy(device):
    for seed, n, m, max_weight in ((1, 300, 1500, 20), (2, 150, 900, 0), (4, 260, 700, 1)):
        graph = random_graph(seed, n=n, m=m, max_weight=max_weight, unreachable=10)
        result = solve(graph, "fw-blocked", on(device))
        assert result.matrix.dtype == np.int16 and any("int16" in note for note in result.notes)
        np.testing.assert_array_equal(result.full(np.int64), scipy_rows(graph, np.arange(graph.n)))


@pytest.mark.parametrize("device", DEVICES)
def test_a_distance_past_16_bits_is_rerun_in_int32(device):
    """(n - 1) x 100 = 19,900 > 16,383: the int16 run clamps the far end to "unreachable", the
    check sees a distance within one weight of the limit, and the int32 rerun is exact."""
    graph = path_graph(200, 100)
    result = solve(graph, "fw-blocked", on(device), narrow="always")
    assert result.matrix.dtype == np.int32
    assert any("not provably exact" in note for note in result.notes)
    np.testing.assert_array_equal(result.full(np.int64), scipy_rows(graph, np.arange(graph.n)))
    assert result.full(np.int64)[0, -1] == 19_900


@pytest.mark.parametrize("device", DEVICES)
def test_the_proof_holds_at_the_limit(device):
    """Largest distance 16,200 (< 16,383 - 100): int16 is kept and exact. 16,300 would fit but
    cannot be told apart from a clamped path (the check is conservative), 16,400 does not fit:
    both are rerun in int32."""
    kept = solve(path_graph(163, 100), "fw-blocked", on(device), narrow="always")
    assert kept.matrix.dtype == np.int16 and kept.full(np.int64)[0, -1] == 16_200
    for n, longest in ((164, 16_300), (165, 16_400)):
        rerun = solve(path_graph(n, 100), "fw-blocked", on(device), narrow="always")
        assert rerun.matrix.dtype == np.int32 and rerun.full(np.int64)[0, -1] == longest


@pytest.mark.parametrize("device", DEVICES)
def test_never_keeps_the_working_type(device):
    graph = random_graph(3, n=100, m=400, max_weight=5, unreachable=5)
    result = solve(graph, "fw-blocked", on(device), narrow="never")
    assert result.matrix.dtype == np.int32
    np.testing.assert_array_equal(result.full(np.int64), scipy_rows(graph, np.arange(graph.n)))


def test_worth_trying_rules():
    assert narrow.worth_trying(path_graph(100, 100))        # 9,900: exact in advance
    assert not narrow.worth_trying(path_graph(200, 100))    # the sample sees 19,900
    assert not narrow.worth_trying(path_graph(10, 5000))    # one weight is a third of the range
    negative = Graph.from_arrays([0, 1], [1, 2], [3, -1], n=3)
    assert not narrow.worth_trying(negative)
    assert narrow.margin(path_graph(10, 100)) == 16_383 - 100
    assert narrow.proven_exact(16_282, path_graph(10, 100)) and not narrow.proven_exact(16_283, path_graph(10, 100))


def test_unknown_narrow_mode_is_refused():
    with pytest.raises(ValueError, match="narrow"):
        solve(path_graph(5, 1), "fw-blocked", False, narrow="sometimes")
