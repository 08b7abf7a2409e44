"""Exact distances past 2**53 (reference/exact.py): where float64 rounds, the reference does not."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

import reference
from reference import exact
from sssp_common.graph import Graph
from tests.conftest import random_graph, scipy_distances

BIG = 2 ** 53
W_MAX = 2 ** 31 - 1


def _float_answer(n, src, dst, w):
    matrix = sp.csr_matrix((np.asarray(w, dtype=np.float64), (src, dst)), shape=(n, n))
    return dijkstra(matrix, directed=True, indices=0)


def test_a_small_graph_float64_gets_wrong_by_one():
    src, dst, w = [0, 1, 0], [1, 2, 2], [BIG, 1, BIG + 2]
    assert _float_answer(3, src, dst, w)[2] == BIG  # float64: 2**53 + 1 rounds to 2**53
    assert reference.solve(3, src, dst, w).tolist() == [0, BIG, BIG + 1]


def test_a_tie_in_float64_that_is_not_a_tie():
    # via 1: 2**53 + 1; direct: 2**53. float64 sees two equal paths and may keep either,
    # so both edge orders are tried.
    edges = [(0, 1, BIG), (1, 3, 1), (0, 3, BIG)]
    for listed in (edges, edges[::-1]):
        src, dst, w = (list(column) for column in zip(*listed))
        assert reference.solve(4, src, dst, w).tolist() == [0, BIG, -1, BIG]


def test_a_wrong_hint_is_repaired():
    # 0 -> 1 -> 2 (1 + 1) is shorter than 0 -> 2 (5); the hint claims 2's parent is 0
    src, dst, w = np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([1, 5, 1])
    reachable = np.ones(3, dtype=bool)
    assert exact.exact_from_hint(3, src, dst, w, reachable, np.array([-9999, 0, 0]), 0).tolist() == [0, 1, 2]


def test_an_unusable_hint_is_refused():
    src, dst, w = np.array([0, 1, 2]), np.array([1, 2, 1]), np.array([1, 1, 1])
    reachable = np.ones(3, dtype=bool)
    assert exact.exact_from_hint(3, src, dst, w, reachable, np.array([-1, 2, 1]), 0) is None  # cycle 1 <-> 2
    assert exact.exact_from_hint(3, src, dst, w, reachable, np.array([-1, 0, 0]), 0) is None  # no edge 0 -> 2


def test_the_bound():
    assert exact.float_is_exact(3, np.array([BIG // 2 - 1, BIG // 2 - 1]))
    assert not exact.float_is_exact(3, np.array([BIG // 2, BIG // 2]))
    # many vertices, one heavy edge: (n - 1) x max is huge, the sum is small
    assert exact.float_is_exact(10 ** 7, np.array([W_MAX, 1, 1]))
    assert not exact.float_is_exact(4_194_401, np.full(4_194_400, W_MAX))
    assert exact.float_is_exact(4_194_305, np.full(4_194_304, W_MAX))  # sum just below 2**53


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hintless_solvers_agree_with_scipy(seed):
    g = random_graph(seed)
    expected = scipy_distances(g)
    expected[expected == np.iinfo(np.int64).max] = -1
    assert np.array_equal(exact.heap_dijkstra(g.n, g.src, g.dst, g.w), expected)
    assert np.array_equal(exact.bellman_ford_int(g.n, g.src, g.dst, g.w), expected)
    assert np.array_equal(exact.exact_solve(g.n, g.src, g.dst, g.w), expected)


def test_integer_bellman_ford_negative_weights_and_cycles():
    assert exact.exact_solve(3, np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([5, 2, -4])).tolist() == [0, 5, 1]
    with pytest.raises(ValueError, match="negative cycle"):
        exact.exact_solve(3, np.array([0, 1, 2]), np.array([1, 2, 1]), np.array([1, -3, 1]))


def test_negative_weights_past_the_bound():
    # 0 -> 1 (2**53), 1 -> 2 (-1), 0 -> 2 (2**53): exact 2**53 - 1 via 1
    src, dst, w = [0, 1, 0], [1, 2, 2], [BIG, -1, BIG]
    assert reference.solve(3, src, dst, w).tolist() == [0, BIG, BIG - 1]


def test_the_issue_chain_of_4194400_edges_is_exact():
    m = 4_194_400
    src = np.arange(m, dtype=np.int32)
    graph = Graph(m + 1, src, src + 1, np.full(m, W_MAX, dtype=np.int32))
    assert reference.integer_mode(graph)
    expected = np.arange(m + 1, dtype=np.int64) * W_MAX
    floats = _float_answer(m + 1, graph.src, graph.dst, graph.w)
    assert int((np.rint(floats).astype(np.int64) != expected).sum()) == 96  # what float64 gets wrong
    assert np.array_equal(reference.distances_for_graph(graph), expected)


def test_small_graphs_stay_on_float64(monkeypatch):
    monkeypatch.setattr(exact, "exact_from_hint", lambda *a: pytest.fail("integer mode on a small graph"))
    monkeypatch.setattr(reference.solver, "exact_from_hint", lambda *a: pytest.fail("integer mode"))
    g = random_graph(5)
    assert not reference.integer_mode(g)
    assert reference.distances_for_graph(g)[0] == 0


def test_an_unusable_hint_falls_back_to_the_heap(monkeypatch):
    monkeypatch.setattr(reference.solver, "exact_from_hint", lambda *a: None)
    assert reference.solve(3, [0, 1, 0], [1, 2, 2], [BIG, 1, BIG + 2]).tolist() == [0, BIG, BIG + 1]
    assert reference.solve(3, [0, 1, 0], [1, 2, 2], [BIG, -1, BIG]).tolist() == [0, BIG, BIG - 1]
