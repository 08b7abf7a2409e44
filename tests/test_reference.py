"""The reference solver: Figure 1, zero weights, parallel edges, unreachable, cache, CLI."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import reference
from sssp_common.digest import file_digest
from reference import solver
from sssp_common.graph import Graph
from tests.conftest import FIGURE1_DIST, ROOT, random_graph, scipy_distances


def test_figure1(figure1_file):
    assert reference.distances(figure1_file).tolist() == FIGURE1_DIST


def test_zero_weight_edges_are_edges():
    g = Graph.from_arrays([0, 1, 0], [1, 2, 3], [0, 0, 7])
    assert reference.distances_for_graph(g).tolist() == [0, 0, 0, 7]


def test_parallel_edges_take_the_lightest_in_any_order():
    g = Graph.from_arrays([0, 0, 0, 1, 1], [1, 1, 1, 2, 2], [9, 3, 5, 0, 4])
    assert reference.distances_for_graph(g).tolist() == [0, 3, 3]
    flipped = g.reordered(np.arange(g.m)[::-1])
    assert reference.distances_for_graph(flipped).tolist() == [0, 3, 3]


def test_unreachable_is_minus_one():
    g = Graph.from_arrays([0, 3], [1, 2], [1, 1], n=5)
    assert reference.distances_for_graph(g).tolist() == [0, 1, -1, -1, -1]
    assert reference.UNREACHABLE == -1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_agrees_with_an_independent_answer(seed):
    g = random_graph(seed)
    expected = scipy_distances(g)
    expected[expected == np.iinfo(np.int64).max] = -1
    assert np.array_equal(reference.distances_for_graph(g), expected)


def test_negative_weights_take_bellman_ford():
    g = Graph(3, np.array([0, 0, 1], np.int32), np.array([1, 2, 2], np.int32), np.array([5, 2, -4], np.int32))
    assert reference.distances_for_graph(g).tolist() == [0, 5, 1]


def test_cache_hit_by_content(figure1_file, tmp_path, monkeypatch):
    first = reference.compute(figure1_file)
    assert not first.cached
    monkeypatch.setattr(solver, "distances_for_graph", lambda graph: pytest.fail("recomputed"))
    again = reference.compute(figure1_file)
    assert again.cached and np.array_equal(again.dist, first.dist)
    copy = tmp_path / "renamed.txt"
    copy.write_bytes(figure1_file.read_bytes())
    assert reference.compute(copy).cached  # same bytes, other name: same answer
    entry = tmp_path / "cache" / "reference" / f"{first.digest}.6.{first.checksum}.npy"
    assert entry.is_file() and first.checksum == again.checksum == reference.checksum(first.dist)


def test_an_edit_that_keeps_size_and_mtime_is_not_hidden(tmp_path):
    import os
    path = tmp_path / "g.txt"
    path.write_text("0 1 4\n1 2 5\n")
    assert reference.distances(path).tolist() == [0, 4, 9]
    stamp = path.stat()
    path.write_text("0 1 4\n1 2 6\n")  # same size
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # touch -d: mtime set back
    assert reference.distances(path).tolist() == [0, 4, 10]


def test_digest_memo_avoids_rehash(figure1_file, monkeypatch):
    from sssp_common import digest as filehash
    digest = file_digest(figure1_file)
    monkeypatch.setattr(filehash, "_hash_bytes", lambda path: pytest.fail("rehashed"))
    assert file_digest(figure1_file) == digest


def _cli(*args, env_dir):
    import os
    env = dict(os.environ, SSSP_CACHE_DIR=str(env_dir))
    return subprocess.run([sys.executable, "-m", "reference", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


def test_cli_writes_output_file(tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text("0 1 4\n0 2 2\n1 2 5\n1 3 10\n2 4 3\n3 5 11\n4 3 4\n7 6 1\n")
    out = tmp_path / "ref.txt"
    done = _cli(graph, "-o", out, env_dir=tmp_path / "c")
    assert done.returncode == 0, done.stderr
    assert out.read_text() == "0:0\n1:4\n2:2\n3:9\n4:5\n5:20\n6:INF\n7:INF\n"
    assert "8 vertices, 6 reachable" in done.stdout and "computed" in done.stdout
    again = _cli(graph, env_dir=tmp_path / "c")
    assert "cached" in again.stdout


@pytest.mark.parametrize("content", [None, "0 1\nnot numbers here\n", "0 -1 5\n"])
def test_cli_bad_input_is_one_line(tmp_path, content):
    path = tmp_path / "bad.txt"
    if content is not None:
        path.write_text(content)
    done = _cli(path, "-o", tmp_path / "out.txt", env_dir=tmp_path / "c")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("reference: error:")
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out.txt").exists()


def test_cli_refuses_to_write_over_its_input(tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text("0 1 4\n1 2 5\n")
    done = _cli(graph, "-o", tmp_path / "." / "g.txt", env_dir=tmp_path / "c")
    assert done.returncode == 1 and "is the input file" in done.stderr
    assert graph.read_text() == "0 1 4\n1 2 5\n"
