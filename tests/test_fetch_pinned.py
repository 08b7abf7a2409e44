"""fetch of the catalogue's pinned graphs from a local HTTP server standing in for SNAP and DIMACS:
the content's sha256 is checked after decompression (any gzip of it, or the plain text, verifies),
a corrupted copy is refused and nothing of it is kept; `fetch --config` fetches what a config
names and finds the carried graphs without a network."""
from __future__ import annotations

import gzip
import io

import pytest

from grader.commands import fetch
from grader.data import catalogue
from tests import http_server
from tests.conftest import ROOT

CARRIED = {name: gzip.decompress((catalogue.CARRIED_DIR / file).read_bytes())
           for name, file in (("rome99", "rome99.gr.gz"), ("p2p-Gnutella04", "p2p-Gnutella04.txt.gz"))}


@pytest.fixture
def local_catalogue(server, tmp_path):
    """The real catalogue, pins and all, with rome99 and p2p-Gnutella04 served from 127.0.0.1."""
    text = catalogue.CATALOGUE.read_text()
    for old, name in (("http://www.diag.uniroma1.it/challenge9/data/rome/rome99.gr", "rome99.gr"),
                      ("https://snap.stanford.edu/data/p2p-Gnutella04.txt.gz", "p2p-Gnutella04.txt.gz")):
        assert old in text
        text = text.replace(old, http_server.url(server, name))
    path = tmp_path / "graphs.toml"
    path.write_text(text)
    return path


def test_a_pinned_graph_is_fetched_and_its_content_verified(server, local_catalogue, tmp_path):
    server.files["rome99.gr"] = CARRIED["rome99"]                       # DIMACS serves the plain .gr
    server.files["p2p-Gnutella04.txt.gz"] = gzip.compress(CARRIED["p2p-Gnutella04"], 6, mtime=123)  # another gzip
    data, out = tmp_path / "data", io.StringIO()
    assert fetch.run(["rome99", "p2p-Gnutella04"], data_dir=data, catalogue=local_catalogue, out=out, force=True) == 0
    assert out.getvalue().count("content sha256 matches the catalogue") == 2, out.getvalue()
    assert (data / "rome99.gr").read_bytes() == CARRIED["rome99"]
    assert gzip.decompress((data / "p2p-Gnutella04.txt.gz").read_bytes()) == CARRIED["p2p-Gnutella04"]
    assert sorted(p.name for p in data.iterdir()) == ["p2p-Gnutella04.txt.gz", "rome99.gr"]   # no record needed


@pytest.mark.parametrize("corrupt", ["one arc moved", "one byte more", "wrongly named gzip"])
def test_a_corrupted_download_is_refused_and_nothing_kept(server, local_catalogue, tmp_path, corrupt):
    body = CARRIED["rome99"]
    if corrupt == "one arc moved":
        body = body.replace(b"\na 1 2 ", b"\na 1 3 ", 1)
    elif corrupt == "one byte more":
        body = body + b"\n"
    else:
        body = gzip.compress(body)          # served where a plain .gr is expected: the loader would misread it
    server.files["rome99.gr"] = body
    data, out = tmp_path / "data", io.StringIO()
    assert fetch.run(["rome99"], data_dir=data, catalogue=local_catalogue, out=out, force=True) == 1
    said = out.getvalue()
    assert "rome99:" in said and "the download was deleted" in said and "Traceback" not in said
    assert ("content sha256 mismatch" in said or "more than the 135,634 bytes the catalogue pins" in said
            or "named rome99.gr" in said), said
    assert list(data.iterdir()) == []


def test_a_corrupted_copy_already_there_is_named_and_kept(local_catalogue, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "rome99.gr").write_bytes(CARRIED["rome99"].replace(b"\na 1 2 ", b"\na 1 3 ", 1))
    out = io.StringIO()
    assert fetch.run(["rome99"], data_dir=data, catalogue=local_catalogue, out=out) == 1
    assert "exists but fails verification: content sha256 mismatch" in out.getvalue()
    assert (data / "rome99.gr").exists()


def test_a_copy_in_the_other_form_is_present_and_not_downloaded(server, local_catalogue, tmp_path):
    """rome99 is published as a plain .gr; a gzip of the same text in the data folder is that graph."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "rome99.gr.gz").write_bytes(gzip.compress(CARRIED["rome99"]))
    out = io.StringIO()
    assert fetch.run(["rome99"], data_dir=data, catalogue=local_catalogue, out=out) == 0
    assert "already present, content sha256 matches the catalogue" in out.getvalue()
    assert server.requests == [] and sorted(p.name for p in data.iterdir()) == ["rome99.gr.gz"]


def test_fetch_config_uses_the_carried_graphs_offline(tmp_path):
    """No server at all: the default grading config's real graphs are carried and verify."""
    out = io.StringIO()
    assert fetch.run([], data_dir=tmp_path / "data", configs=[ROOT / "configs" / "grading.toml"], out=out) == 0
    said = out.getvalue()
    assert said.count("carried in this checkout (content sha256 matches the catalogue)") == 2, said
    assert "roadNet-CA~synth: nothing to fetch (a stand-in" in said and "figure1: nothing to fetch" in said
    assert not (tmp_path / "data").exists()


def test_fetch_config_downloads_what_the_config_names(server, local_catalogue, tmp_path):
    server.files["rome99.gr"] = CARRIED["rome99"]
    server.files["p2p-Gnutella04.txt.gz"] = gzip.compress(CARRIED["p2p-Gnutella04"])
    data, out = tmp_path / "data", io.StringIO()
    assert fetch.run([], data_dir=data, catalogue=local_catalogue, force=True, out=out,
                     configs=[ROOT / "configs" / "grading.toml"]) == 0
    assert sorted(p.name for p in data.iterdir()) == ["p2p-Gnutella04.txt.gz", "rome99.gr"]
    assert {path for path, _ in server.requests} == {"/rome99.gr", "/p2p-Gnutella04.txt.gz"}


def test_fetch_config_with_a_typo_is_refused(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('graphs = ["rome"]\n')
    out = io.StringIO()
    assert fetch.run([], data_dir=tmp_path / "data", configs=[config], out=out) == 2
    assert "did you mean 'rome99'?" in out.getvalue() and out.getvalue().count("\n") == 1
