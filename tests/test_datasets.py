"""The catalogue, resolve (real, stand-in, project files) and the cached edge orderings (grader.data.inputs)."""
from __future__ import annotations

import gzip
import shutil

import numpy as np
import pytest

from sssp_common.edgelist import write_edge_list
from grader.data import catalogue, datasets, inputs, integrity
from sssp_common.graph import Graph
from sssp_common.loader import load_graph
from tests.conftest import FIGURE1_EDGES, ROOT


@pytest.fixture(autouse=True)
def _private_caches(tmp_path, monkeypatch):
    monkeypatch.delenv("SSSP_DATA_DIR", raising=False)


def test_catalogue_entries_have_what_they_need():
    catalogue_ = datasets.load_catalogue()
    spec = ["roadNet-CA", "soc-LiveJournal1", "soc-pokec", "higgs-twitter", "web-Google", "amazon0312"]
    for name in spec:
        entry = catalogue_[name]
        assert entry.kind == "snap" and entry.url.startswith("https://snap.stanford.edu/data/")
        assert entry.url.endswith(entry.filename) and entry.edges > 0 and entry.nodes > 0
        standin = catalogue_[f"{name}~synth"]
        assert standin.kind == "synth" and standin.standin_of == name and 0 < standin.ci_scale < 0.01
        assert standin.edges == entry.edges
    assert catalogue_["roadNet-CA"].sha256.startswith("383f7b14")
    for entry in catalogue_.values():
        assert not entry.sha256 or len(entry.sha256) == 64
        if entry.kind in catalogue.REAL_KINDS:
            assert entry.url.startswith(("https://snap.stanford.edu/data/", "http://www.diag.uniroma1.it/challenge9/"))
    for name in ("p2p-Gnutella04", "p2p-Gnutella08", "p2p-Gnutella24", "p2p-Gnutella31", "Email-Enron", "rome99"):
        entry = catalogue_[name]
        assert len(entry.content_sha256) == 64 and entry.content_size > 0 and entry.edges > 0
    assert catalogue_["figure1"].kind == "project"


def test_every_graph_a_shipped_config_names_is_in_the_catalogue_with_its_source():
    import tomllib
    entries = datasets.load_catalogue()
    named = set()
    for config in sorted((ROOT / "configs").glob("*.toml")) + sorted((ROOT / "benchmarks").glob("*.toml")):
        named |= {g for g in tomllib.loads(config.read_text()).get("graphs", []) if "/" not in g}
    assert {"rome99", "p2p-Gnutella04", "figure1", "roadNet-CA~synth"} <= named
    for name in named:
        entry = entries[name]
        real = entries.get(entry.standin_of, entry)
        if real.kind in catalogue.REAL_KINDS:
            assert real.url and real.filename, name
    fetchable = [e for e in entries.values() if e.kind in catalogue.REAL_KINDS]
    unpinned = sorted(e.name for e in fetchable if not e.pinned)
    assert unpinned == ["amazon0312", "higgs-twitter", "soc-LiveJournal1", "soc-pokec", "web-Google"]


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
    entry = datasets.load_catalogue()["amazon0312"]
    plain = tmp_path / "amazon0312.txt"
    plain.write_text("0 1\n")
    assert catalogue.find_real(entry, [tmp_path]) == plain
    other = tmp_path / "other"
    other.mkdir()
    with gzip.open(other / "amazon0312.txt.gz", "wt") as stream:
        stream.write("0 1\n")
    assert catalogue.find_real(entry, [other]) == other / "amazon0312.txt.gz"


def test_an_unpinned_copy_with_no_record_is_not_used(tmp_path):
    (tmp_path / "amazon0312.txt").write_text("0 1\n")
    with pytest.raises(datasets.DatasetError, match="pins no hash this copy.*python -m grader fetch amazon0312 --data-dir"):
        datasets.resolve("amazon0312", data_dirs=[tmp_path])


@pytest.mark.parametrize("name", ["p2p-Gnutella04", "rome99"])
def test_the_carried_graphs_resolve_and_verify(fresh_clone, name):
    entry = datasets.load_catalogue()[name]
    path = datasets.resolve(name)
    assert path.parent == catalogue.CARRIED_DIR
    found = integrity.inspect(path, entry)
    assert (found.content_sha256, found.content_bytes, found.lines) == \
        (entry.content_sha256, entry.content_size, entry.lines)
    graph = load_graph(path)
    assert (graph.n, graph.m) == (entry.vertices, entry.edges)


@pytest.mark.parametrize("config", ["grading.toml", "sweep.toml"])
def test_the_default_configs_resolve_every_graph_on_a_fresh_clone(fresh_clone, config):
    from grader.grading.config import load_grading
    from grader.sweep.config import load_matrix
    from grader.sweep.graphs import check_available
    path = ROOT / "configs" / config
    matrix = load_grading(path).matrix if config == "grading.toml" else load_matrix(path)
    check_available(matrix)   # raises, naming the graph, when one cannot be had
    real = [g for g in matrix.graphs if datasets.load_catalogue()[g].kind in catalogue.REAL_KINDS]
    assert real, "the default config names no real graph: this test would prove nothing"
    for name in real:
        assert datasets.resolve(name).parent == catalogue.CARRIED_DIR


def test_a_corrupt_copy_is_refused_not_passed_over(fresh_clone):
    """A copy in the data folder that is not the pinned content is named, even though the carried
    copy would do: the user's folder says which file they meant."""
    data = gzip.decompress((catalogue.CARRIED_DIR / "rome99.gr.gz").read_bytes())
    bad = fresh_clone / "rome99.gr"
    assert b"\na 1 2 " in data
    bad.write_bytes(data.replace(b"\na 1 2 ", b"\na 1 3 ", 1))   # one arc moved, the same length
    with pytest.raises(datasets.DatasetError, match=r"rome99.gr fails verification: content .*fetch rome99"):
        datasets.resolve("rome99")
    bad.write_bytes(data)   # the same text, uncompressed: any form of the content verifies
    assert datasets.resolve("rome99") == bad


def test_a_verified_copy_changed_later_is_checked_again(fresh_clone):
    data = (catalogue.CARRIED_DIR / "p2p-Gnutella04.txt.gz").read_bytes()
    copy = fresh_clone / "p2p-Gnutella04.txt.gz"
    copy.write_bytes(data)
    assert datasets.resolve("p2p-Gnutella04") == copy
    assert datasets.resolve("p2p-Gnutella04") == copy   # remembered by identity
    text = gzip.decompress(data)
    copy.write_bytes(gzip.compress(text[:-1] + (b"5" if text[-1:] != b"5" else b"6"), mtime=0))  # one digit
    with pytest.raises(datasets.DatasetError, match="content"):
        datasets.resolve("p2p-Gnutella04")


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
