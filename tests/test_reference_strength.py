"""The reference's contracts that agreement with scipy on random graphs cannot pin (found by
`make mutants-grader`): int64 answers on every path, exact integers past 2**53 on every solver,
negative weights, the hint path used and repaired in one round, one-line errors naming the
file, and a cache that never unpickles or crashes on what it finds in its folder."""
from __future__ import annotations

import io
import os
import pickle

import numpy as np
import pytest

import reference
from reference import cache, exact, solver
from sssp_common.digest import file_digest
from sssp_common.errors import InputError

BIG = 2 ** 60 + 1          # past 2**53: float64 rounds it


def arrays(*columns):
    return [np.asarray(c, dtype=np.int64) for c in columns]


# --- solve: every path answers int64 ------------------------------------------------------

def test_no_vertices_and_one_vertex():
    none = solver.solve(0, [], [], [])
    assert none.shape == (0,) and none.dtype == np.int64
    one = solver.solve(1, *arrays([], [], []))
    assert one.tolist() == [0] and one.dtype == np.int64


def test_negative_weights_are_solved_right_where_dijkstra_would_not_be():
    # Dijkstra settles 1 at distance 1 before it sees 0 -> 2 -> 1 at -5
    dist = solver.solve(3, *arrays([0, 0, 2], [1, 2, 1], [1, 5, -10]))
    assert dist.tolist() == [0, -5, 5] and dist.dtype == np.int64


def test_weights_past_two_to_the_53_through_solve_use_the_hint(monkeypatch):
    src, dst, w = arrays([0, 1, 0, 2], [1, 2, 2, 3], [BIG, 1, BIG + 3, 1])
    expected = [0, BIG, BIG + 1, BIG + 2]
    monkeypatch.setattr(solver, "exact_solve", lambda *a, **k: pytest.fail("the hint was not used"))
    dist = solver.solve(4, src, dst, w)
    assert dist.tolist() == expected and dist.dtype == np.int64


def test_a_negative_cycle_is_a_clear_error():
    with pytest.raises(ValueError, match="negative cycle"):
        solver.solve(3, *arrays([0, 1, 2], [1, 2, 1], [1, 1, -5]))
    with pytest.raises(ValueError, match="negative cycle"):
        exact.bellman_ford_int(3, *arrays([0, 1, 2], [1, 2, 1], [1, 1, -5]))


# --- the exact solvers -------------------------------------------------------------------

def test_path_bound():
    assert exact.path_bound(3, np.zeros(0, dtype=np.int64)) == 0
    assert exact.path_bound(3, np.array([10, 10, 10, 10])) == 20            # (n - 1) x max
    assert exact.path_bound(9, np.array([1, -7, 2])) == 10                  # sum of magnitudes
    assert exact.path_bound(3, np.array([BIG, BIG])) == 2 * BIG             # no float rounding


def test_hintless_solvers_are_exact_past_2_53_and_take_the_source():
    src, dst, w = arrays([1, 1, 2, 0], [2, 0, 0, 2], [BIG, 1, 1, BIG + 5])
    assert exact.heap_dijkstra(3, src, dst, w, source=1).tolist() == [1, 0, BIG]
    assert exact.exact_solve(3, src, dst, w, source=1).tolist() == [1, 0, BIG]
    negative = arrays([1, 2, 2], [2, 0, 3], [BIG, -BIG, 7])
    assert exact.bellman_ford_int(4, *negative, source=1).tolist() == [0, 0, BIG, BIG + 7]
    assert exact.exact_solve(4, *negative, source=1).tolist() == [0, 0, BIG, BIG + 7]


def test_exact_solve_without_edges():
    assert exact.exact_solve(2, *arrays([], [], [])).tolist() == [0, -1]


def test_heap_dijkstra_keeps_the_lighter_of_parallel_edges_to_a_zero_distance_vertex():
    dist = exact.heap_dijkstra(3, *arrays([0, 0, 1], [1, 1, 2], [0, 3, 4]))
    assert dist.tolist() == [0, 0, 4]


def test_tree_sums_on_a_path_deeper_than_a_power_of_two_and_an_unreached_vertex():
    n = 6                                    # depth 5: needs three doublings
    parent = np.array([exact.NO_PARENT, 0, 1, 2, 3, 4])
    weights = np.array([0, 1, 2, 3, 4, 5])
    assert exact.tree_sums(parent, weights, 0).tolist() == [0, 1, 3, 6, 10, 15]
    with_unreached = np.array([exact.NO_PARENT, 0, exact.NO_PARENT])
    assert exact.tree_sums(with_unreached, np.array([0, 7, 9]), 0).tolist() == [0, 7, 0]
    cycle = np.array([exact.NO_PARENT, 2, 1])
    assert exact.tree_sums(cycle, np.array([0, 1, 1]), 0) is None
    assert n == parent.size


def sorted_edges(src, dst, w, n):
    order = np.lexsort((dst, src))
    return src[order], dst[order], w[order]


def test_a_hint_whose_parent_edge_is_the_last_one_is_usable():
    n = 3
    src, dst, w = sorted_edges(*arrays([0, 1], [1, 2], [BIG, 2]), n)
    reachable = np.array([True, True, True])
    hint = np.array([-9999, 0, 1])
    got = exact.exact_from_hint(n, src, dst, w, reachable, hint, 0)
    assert got is not None and got.tolist() == [0, BIG, BIG + 2] and got.dtype == np.int64


def test_a_hint_naming_an_edge_past_the_last_one_is_refused():
    n = 3
    src, dst, w = sorted_edges(*arrays([0, 0], [1, 2], [1, 1]), n)
    hint = np.array([-9999, 0, 2])           # 2 -> 2 sorts after every edge, and is none
    assert exact.exact_from_hint(n, src, dst, w, np.array([True, True, True]), hint, 0) is None


def test_a_wrong_hint_is_repaired_with_the_best_edge_in_one_round(monkeypatch):
    n = 4
    src, dst, w = sorted_edges(*arrays([0, 0, 1, 2, 0], [1, 2, 3, 3, 3], [1, 1, 5, 1, 4]), n)
    hint = np.array([-9999, 0, 0, 1])        # 3 through 1 (6); through 0 is 4, through 2 is 2
    monkeypatch.setattr(exact, "MAX_REPAIRS", 2)
    got = exact.exact_from_hint(n, src, dst, w, np.ones(n, dtype=bool), hint, 0)
    assert got is not None and got.tolist() == [0, 1, 1, 2]


def test_a_reached_vertex_without_a_parent_refuses_the_hint():
    n = 3
    src, dst, w = sorted_edges(*arrays([0, 1], [1, 2], [1, 1]), n)
    assert exact.exact_from_hint(n, src, dst, w, np.ones(n, dtype=bool), np.array([-1, 0, -1]), 0) is None


# --- compute: one-line errors naming the file; what the result says -----------------------

def test_bad_paths_are_one_line_naming_the_file(tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("0 1 1\n")
    cases = {folder: "is a folder, not a graph file", tmp_path / "absent.txt": "no such file",
             not_a_folder / "below": "cannot read: Not a directory"}
    for path, words in cases.items():
        with pytest.raises(InputError) as error:
            reference.compute(path)
        assert str(error.value) == f"{path}: {words}"


def test_the_result_says_cached_digest_and_time(figure1_file, tmp_path, monkeypatch):
    import time
    monkeypatch.setenv("SSSP_CACHE_DIR", str(tmp_path / "cache"))
    began = time.perf_counter()
    first = reference.compute(figure1_file)
    second = reference.compute(figure1_file)
    elapsed = time.perf_counter() - began
    assert (first.cached, second.cached) == (False, True)
    assert first.digest == second.digest == file_digest(figure1_file)
    assert 0 <= first.seconds <= elapsed and 0 <= second.seconds <= elapsed
    assert first.checksum == second.checksum and reference.solver.verify(second)


# --- the cache -----------------------------------------------------------------------------

class _Planted:
    """Unpickling this writes a marker: what a poisoned cache entry would run."""
    marker = ""

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_pickled_entry_is_never_unpickled(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    marker = tmp_path / "ran"
    _Planted.marker = str(marker)
    digest = "ab" * 8
    entry = folder / f"{digest}.1.{'0' * 32}.npy"
    poisoned = np.empty(1, dtype=object)
    poisoned[0] = _Planted()
    with open(entry, "wb") as stream:
        np.save(stream, poisoned, allow_pickle=True)
    err = io.StringIO()
    assert cache.load(folder, digest, err) is None
    assert not marker.exists()
    assert "unreadable: ValueError" in err.getvalue() and not entry.exists()
    assert pickle  # the module the attack needs is the test's, not the cache's


def test_an_entry_with_an_odd_name_is_removed_not_a_crash(tmp_path, capsys):
    folder = tmp_path / "cache"
    folder.mkdir()
    digest = "cd" * 8
    odd = folder / f"{digest}.weird.npy"
    np.save(odd, np.zeros(2, dtype=np.int64))
    assert cache.load(folder, digest) is None
    captured = capsys.readouterr()
    assert "unexpected name" in captured.err and captured.out == "" and not odd.exists()


def test_a_checksum_mismatch_is_named(tmp_path):
    folder = tmp_path / "cache"
    digest = "ef" * 8
    checksum = cache.store(folder, digest, np.array([0, 4], dtype=np.int64))
    entry = folder / f"{digest}.2.{checksum}.npy"
    with open(entry, "wb") as stream:
        np.save(stream, np.array([0, 5], dtype=np.int64))
    err = io.StringIO()
    assert cache.load(folder, digest, err) is None and "checksum mismatch" in err.getvalue()


def test_store_makes_its_folders_and_keeps_int64(tmp_path):
    folder = tmp_path / "a" / "b" / "c"
    digest = "12" * 8
    checksum = cache.store(folder, digest, np.array([0, 3, -1], dtype=np.int32))
    loaded = cache.load(folder, digest, io.StringIO())
    assert loaded is not None and loaded[1] == checksum
    assert loaded[0].dtype == np.int64 and loaded[0].tolist() == [0, 3, -1]
    assert os.listdir(folder) == [f"{digest}.3.{checksum}.npy"]
