"""The catalogue, resolve (real, stand-in, project files) and the cached edge orderings (grader.data.inputs)."""
from __future__ import annotations

import gzip
import shutil

import numpy as np
import pytest

from sssp_common.edgelist import write_edge_list
from grader.data import datasets, inputs, synth
from sssp_common.graph import Graph
from sssp_common.loader import load_graph
from tests.conftest import FIGURE1_EDGES, SHARED_DATA


@pytest.fixture(autouse=True)
def _private_caches(tmp_path, monkeypatch):
    monkeypatch.delenv("SSSP_DATA_DIR", raising=False)


def test_catalogue_entries_have_what_they_need():
    catalogue = datasets.load_catalogue()
    spec = ["roadNet-CA", "soc-LiveJournal1", "soc-pokec", "higgs-twitter", "web-Google", "amazon0312"]
    for name in spec:
        entry = catalogue[name]
        assert entry.kind == "snap" and entry.url.startswith("https://snap.stanford.edu/data/")
        assert entry.url.endswith(entry.filename) and entry.edges > 0 and entry.nodes > 0
        standin = catalogue[f"{name}~synth"]
        assert standin.kind == "synth" and standin.standin_of == name and 0 < standin.ci_scale < 0.01
        assert standin.edges == entry.edges
    assert catalogue["roadNet-CA"].sha256.startswith("383f7b14")
    for entry in catalogue.values():
        assert not entry.sha256 or len(entry.sha256) == 64
        if entry.kind == "real-local":
            assert entry.filename.endswith(".gz") and len(entry.content_sha256) == 64 and entry.edges > 0
    assert catalogue["figure1"].kind == "project"


def test_bad_catalogue_is_a_clear_error(tmp_path):
    bad = tmp_path / "graphs.toml"
    bad.write_text('[graphs.x]\nkind = "snap"\nfilename = "x.txt"\ncolour = "red"\n')
    with pytest.raises(datasets.DatasetError, match=r"unknown key\(s\) graphs\.x\.colour"):
        datasets.load_catalogue(bad)
    with pytest.raises(datasets.DatasetError, match="no such catalogue"):
        datasets.load_catalogue(tmp_path / "absent.toml")


def test_figure1_resolves_to_the_project_file():
    path = datasets.resolve("figure1")
    assert path.read_text() == FIGURE1_EDGES


def test_unknown_name_lists_the_catalogue():
    with pytest.raises(datasets.DatasetError, match="roadNet-CA~synth"):
        datasets.resolve("no-such-graph")


def test_missing_real_graph_says_fetch_or_standin(tmp_path):
    with pytest.raises(datasets.DatasetError) as info:
        datasets.resolve("roadNet-CA", data_dirs=[tmp_path])
    message = str(info.value)
    assert "python -m grader fetch roadNet-CA" in message and "roadNet-CA~synth" in message


def test_real_graph_found_gzipped_or_not(tmp_path):
    plain = tmp_path / "amazon0312.txt"
    plain.write_text("0 1\n")
    assert datasets.resolve("amazon0312", data_dirs=[tmp_path]) == plain
    other = tmp_path / "other"
    other.mkdir()
    with gzip.open(other / "amazon0312.txt.gz", "wt") as stream:
        stream.write("0 1\n")
    assert datasets.resolve("amazon0312", data_dirs=[other]) == other / "amazon0312.txt.gz"


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="no ../shared/data here")
@pytest.mark.parametrize("name", ["p2p-Gnutella04", "rome99"])
def test_shared_real_graphs_resolve(name):
    entry = datasets.load_catalogue()[name]
    if not (SHARED_DATA / entry.filename).is_file():
        pytest.skip(f"{entry.filename} is not in {SHARED_DATA}")
    path = datasets.resolve(name, data_dirs=[SHARED_DATA])
    graph = load_graph(path)
    assert (graph.n, graph.m) == (entry.vertices, entry.edges)


def test_synth_resolves_and_caches(tmp_path):
    cache = tmp_path / "mine"
    path = datasets.resolve("web-Google~synth", scale="ci", cache_dir=cache)
    assert path.parent == cache and "1-512" in path.name
    graph = load_graph(path)
    assert graph.n == round(875_713 / 512)
    stamp = path.stat().st_mtime_ns
    assert datasets.resolve("web-Google~synth", scale="ci", cache_dir=cache) == path
    assert path.stat().st_mtime_ns == stamp  # reused, not rewritten
    other = datasets.resolve("web-Google~synth", scale=0.001, cache_dir=cache)
    assert other != path and load_graph(other).n == 876
    assert datasets.resolve("web-Google~synth", scale="ci", cache_dir=cache, seed=1) != path
    with pytest.raises(datasets.DatasetError, match="scale"):
        datasets.resolve("web-Google~synth", scale="huge", cache_dir=cache)


def test_synth_default_cache_follows_environment(tmp_path):
    path = datasets.resolve("amazon0312~synth", scale="ci")
    assert path.parent == tmp_path / "cache" / "synth"


# ---------------------------------------------------------------- orderings

def _graph_file(tmp_path, weighted: bool):
    rng = np.random.default_rng(7)
    src = rng.integers(0, 30, 400)
    dst = rng.integers(0, 30, 400)
    src[:40], dst[:40] = src[40:80], dst[40:80]  # duplicates, so stability is visible through weights
    w = rng.integers(0, 9, 400) if weighted else None
    graph = Graph.from_arrays(src, dst, w, n=30)
    path = tmp_path / ("w.txt" if weighted else "u.txt")
    write_edge_list(path, graph)
    return path, graph


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ordering,major,minor", [("source", "src", "dst"), ("destination", "dst", "src")])
def test_orderings_sorted_stable_and_cached(tmp_path, weighted, ordering, major, minor):
    path, graph = _graph_file(tmp_path, weighted)
    cache = tmp_path / "order-cache"
    out = inputs.spec_input(path, ordering, cache)
    assert out.parent == cache
    got = load_graph(out)
    key = getattr(got, major).astype(np.int64) * 100 + getattr(got, minor)
    assert np.all(np.diff(key) >= 0)
    # stable: ties keep file order, so the weights come out as a stable sort would put them
    expected = np.argsort(getattr(graph, major).astype(np.int64) * 100 + getattr(graph, minor), kind="stable")
    assert np.array_equal(got.w, graph.w[expected])
    assert sorted(zip(got.src.tolist(), got.dst.tolist())) == sorted(zip(graph.src.tolist(), graph.dst.tolist()))
    stamp = out.stat().st_mtime_ns
    assert inputs.spec_input(path, ordering, cache) == out and out.stat().st_mtime_ns == stamp
    copy = tmp_path / "copy.txt"
    shutil.copy(path, copy)
    assert inputs.spec_input(copy, ordering, cache) == out  # keyed by content


def test_an_unknown_ordering_fails(tmp_path, figure1_file):
    with pytest.raises(ValueError, match="destination"):
        inputs.spec_input(figure1_file, "random", tmp_path / "cache")


@pytest.mark.parametrize("name", ["web-Google~synth", "roadNet-CA~synth"])
def test_a_written_stand_in_is_in_the_parse_cache_as_parsing_gives_it(tmp_path, monkeypatch, name):
    """The stand-in's text is put in the parse cache from the arrays it was written from: the
    first load (the orderings' writer's) parses nothing, and gives what parsing gives."""
    monkeypatch.setenv("SSSP_CACHE_DIR", str(tmp_path / "cache"))
    from sssp_common import loader
    path = datasets.resolve(name, scale="ci", cache_dir=tmp_path / "graphs")
    parsed = []
    real = loader._read_cache
    monkeypatch.setattr(loader, "_read_cache", lambda entry, p: parsed.append(p) or real(entry, p))
    cached = load_graph(path)
    assert parsed, "the first load did not come from the parse cache"
    fresh = load_graph(path, cache=False)
    assert cached.n == fresh.n
    for name_ in ("src", "dst", "w"):
        np.testing.assert_array_equal(getattr(cached, name_), getattr(fresh, name_))
