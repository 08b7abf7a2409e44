"""The benchmarks' cold preparation (issue 26 item 3): the fast paths write the same bytes and
fill the same caches as the straightforward ones, keyed by what decides them. CPU only."""
from __future__ import annotations

import io
import json
import sys

import numpy as np
import pytest

from benchmarks import baselines, formats, graphs, tools
from sssp_common.edgelist import parsed_form, write_edge_list
from sssp_common.graph import Graph
from sssp_common.loader import load_graph, remember_parsed
from sssp_common.textio import write_rows

BIG = 2**31 - 2  # the largest vertex id the loader accepts


def _reference_lines(columns, separator: str) -> bytes:
    """One Python string per line: slow, and obviously right."""
    return "".join(separator.join(str(int(v)) for v in row) + "\n" for row in zip(*columns)).encode()


def _random_graph(rng, m: int, n: int, w_max: int, sorted_by_source: bool = False) -> Graph:
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    src[:3], dst[:3] = [0, n - 1, 9], [n - 1, 0, 9]  # the extremes, and a self-loop
    if sorted_by_source:
        src = np.sort(src)
    w = rng.integers(0, w_max + 1, m)
    w[:2] = [0, w_max]
    dup = rng.integers(0, m, m // 10)  # duplicate edges with other weights
    dst[dup[1:]] = dst[dup[:-1]]
    src[dup[1:]] = src[dup[:-1]] if not sorted_by_source else src[dup[1:]]
    return Graph.from_arrays(src, dst, w, n=n)


@pytest.mark.parametrize("seed,n,w_max", [(1, 50, 1), (2, 100_000, 100), (3, BIG + 1, 2**31 - 1), (4, 2**20, 9)])
@pytest.mark.parametrize("workers", [1, 3])
def test_threaded_rows_equal_a_line_by_line_writer(seed, n, w_max, workers):
    rng = np.random.default_rng(seed)
    graph = _random_graph(rng, 5_000 + seed, n, w_max)
    columns = [graph.src, graph.dst, graph.w]
    stream = io.BytesIO()
    write_rows(stream, columns, b" ", chunk=777, workers=workers)  # many chunks, a short last one
    assert stream.getvalue() == _reference_lines(columns, " ")


def test_edge_list_written_in_threads_is_byte_identical(tmp_path):
    rng = np.random.default_rng(5)
    graph = _random_graph(rng, 20_000, BIG + 1, 1)
    graph = Graph(graph.n, graph.src, graph.dst, np.ones_like(graph.src))  # SNAP: no weight column
    one, four = tmp_path / "one.txt", tmp_path / "four.txt"
    write_edge_list(one, graph, header="h", workers=1)
    write_edge_list(four, graph, header="h", workers=4)
    body = _reference_lines([graph.src, graph.dst], "\t")
    assert one.read_bytes() == four.read_bytes() and four.read_bytes().endswith(body)


@pytest.mark.parametrize("w_max", [1, 100, 2**31 - 1])
def test_the_parse_cache_written_from_arrays_is_what_parsing_gives(tmp_path, monkeypatch, w_max):
    monkeypatch.setenv("SSSP_CACHE_DIR", str(tmp_path / "cache"))
    rng = np.random.default_rng(w_max)
    graph = _random_graph(rng, 3_000, BIG + 1, w_max)
    graph = Graph(graph.n + 5, graph.src, graph.dst, graph.w)  # isolated top ids: the loader's n is smaller
    target = tmp_path / "g.txt"
    write_edge_list(target, graph, header="x")
    remember_parsed(target, parsed_form(graph))
    parsed = load_graph(target, cache=False)
    cached = load_graph(target)
    for got in (cached, parsed_form(graph)):
        assert got.n == parsed.n == graph.n - 5
        for name in ("src", "dst", "w"):
            assert np.array_equal(getattr(got, name), getattr(parsed, name))
            assert getattr(got, name).dtype == getattr(parsed, name).dtype


def test_the_parse_cache_is_keyed_by_the_file_identity(tmp_path, monkeypatch):
    """An entry remembered for one file is never served for a rewritten one."""
    monkeypatch.setenv("SSSP_CACHE_DIR", str(tmp_path / "cache"))
    first = Graph.from_arrays([0, 1], [1, 2])
    target = tmp_path / "g.txt"
    write_edge_list(target, first)
    remember_parsed(target, parsed_form(first))
    second = Graph.from_arrays([0, 2, 1], [2, 1, 0])
    write_edge_list(target, second)  # a new file (atomic replace): another identity
    assert load_graph(target).src.tolist() == [0, 2, 1]


@pytest.mark.parametrize("sorted_by_source", [True, False])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_destination_order_is_the_stable_argsort(seed, sorted_by_source):
    rng = np.random.default_rng(seed)
    graph = _random_graph(rng, 4_000, 300 * seed, 50, sorted_by_source)
    fast = formats.by_destination(graph)
    slow = graph.reordered(np.argsort(graph.dst, kind="stable"))
    for name in ("src", "dst", "w"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name))


def test_gunrock_must_report_the_graphs_size(tmp_path):
    """A misread file shows in Gunrock's own counts: then it has no time."""
    script = ("#!/bin/sh\nwhile [ $# -gt 0 ]; do case $1 in -d) d=$2;; -f) f=$2;; esac; shift; done\n"
              "echo '{\"num_vertices\": 5, \"num_edges\": 7, \"process_times\": [2.0, 1.0, 3.0]}' > $d/$f\n")
    binary = tmp_path / "sssp"
    binary.write_text(script)
    binary.chmod(0o755)
    graph_file = tmp_path / "g.mtx"
    graph_file.write_bytes(b"x")
    assert tools.gunrock(binary, graph_file, vertices=5, edges=7).ms == 2.0
    assert tools.gunrock(binary, graph_file).ms == 2.0
    wrong = tools.gunrock(binary, graph_file, vertices=5, edges=8)
    assert wrong.ms is None and "7 edges (the graph has 8)" in wrong.detail


def test_baseline_keys_name_the_gunrock_file(tmp_path):
    binary = tmp_path / "sssp"
    binary.write_bytes(b"gunrock")
    one, other = tmp_path / "one.mtx", tmp_path / "other.mtx"
    one.write_bytes(b"text graph")
    other.write_bytes(b"another text graph")
    keys = {baselines.key("Gunrock", binary, f, "H100", {"runs": 7, "source": 0}) for f in (one, other)}
    assert len(keys) == 2
    same = baselines.key("Gunrock", binary, one, "H100", {"runs": 7, "source": 0})
    assert same in keys and json.loads(same)["graph"] == baselines.file_digest(one)


@pytest.mark.skipif(sys.platform != "linux", reason="fork-based preparation")
def test_prepared_stand_in_files_are_the_straightforward_ones(tmp_path, monkeypatch):
    """The stand-ins' SNAP texts (both orders) and parse caches, as the slow path made them."""
    monkeypatch.setenv("SSSP_CACHE_DIR", str(tmp_path / "cache"))
    graphs.prepare("ci", keys=["road", "lj"], root=tmp_path, workers=2, log=lambda *a, **k: None)
    for key in ("road", "lj"):
        graph = graphs.load("ci", key, tmp_path)
        for suffix, order in (("txt", None), ("dst.txt", np.argsort(graph.dst, kind="stable"))):
            made = graphs.path("ci", key, suffix, tmp_path)
            want = graph if order is None else graph.reordered(order)
            assert made.read_bytes().split(b"ToNodeId\n", 1)[1] == _reference_lines([want.src, want.dst], "\t")
            cached, parsed = load_graph(made), load_graph(made, cache=False)
            assert cached.n == parsed.n and np.array_equal(cached.src, parsed.src)
            assert np.array_equal(cached.dst, parsed.dst) and np.array_equal(cached.w, parsed.w)
        assert graphs.path("ci", key, "mtx", tmp_path).is_file()


def test_the_harness_compiles_kernels_beside_preparation_only_for_a_gpu(monkeypatch):
    from benchmarks import run

    monkeypatch.setenv("SSSP_DEVICE", "cpu")
    assert run._start_warm() is None
    # the order of the quick tables: fw first (it overlaps the preparation), then wall, then versus
    assert [name for name, _ in run.QUICK] == ["fw", "wall", "versus"]


@pytest.mark.parametrize("levels", [9, 10])
def test_rmat_ids_are_the_same_in_threads(levels):
    """The generator's look-ups run in threads chunk by chunk; its draws stay in order."""
    from grader.data import synth

    one = synth._rmat_ids(np.random.default_rng(4), 50_001, levels, 0.57, 0.19, 0.19, chunk=4_096, workers=1)
    three = synth._rmat_ids(np.random.default_rng(4), 50_001, levels, 0.57, 0.19, 0.19, chunk=4_096, workers=3)
    assert np.array_equal(one[0], three[0]) and np.array_equal(one[1], three[1])
    assert int(one[0].max()) < 2**levels and int(one[1].min()) >= 0


def test_the_fw_table_runs_apart_while_gunrock_processes_are_held(tmp_path):
    """The fw table's spawned process gets the settings pickled: held Gunrock processes (locks,
    pipes) must stay behind. On the H100 this stopped the whole bench ("cannot pickle
    '_thread.lock' object") before any table ran."""
    import threading
    from benchmarks import run as bench_run
    from benchmarks.common import Recorder
    settings = bench_run.Settings(scale="ci", quick=True, gapbs_format="wsg", threads=1, out_dir=tmp_path,
                                  early=threading.Lock())
    record = Recorder(tmp_path / "results.jsonl")
    # starting the spawned child pickles the settings: it must do so without the held processes
    assert bench_run._fw_apart(settings, record) in (0, 1)
    assert settings.early is not None          # the caller's settings keep them for the versus table
