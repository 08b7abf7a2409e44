"""fetch against a local HTTP server: checksum, truncation + resume, wrong checksum, no server; synth command."""
from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import socket
import threading

import pytest

from grader.commands import fetch
from grader.commands import synth as synth_command
from sssp_common.loader import load_graph

EDGES = "".join(f"{i}\t{(i * 7 + 1) % 500}\n" for i in range(5000))


class Handler(http.server.BaseHTTPRequestHandler):
    """Serves ``server.files``; honours Range unless ``server.ranges`` is off; ``server.cut``
    makes the next full response stop after that many bytes (Content-Length still says all)."""

    def do_GET(self):  # noqa: N802 (http.server's naming)
        data = self.server.files.get(self.path.lstrip("/"))
        self.server.requests.append((self.path, self.headers.get("Range")))
        if data is None:
            self.send_error(404)
            return
        start = 0
        wanted = self.headers.get("Range")
        if wanted and self.server.ranges:
            start = int(wanted.split("=")[1].split("-")[0])
            if start >= len(data):
                self.send_error(416)
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.server.cut is not None:
            body, self.server.cut = body[:self.server.cut], None
        self.wfile.write(body)
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.files, httpd.requests, httpd.ranges, httpd.cut = {}, [], True, None
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _catalogue(tmp_path, port, sha256="", edges=5000, size=0, name="toy"):
    path = tmp_path / "graphs.toml"
    path.write_text(f'[graphs.{name}]\nkind = "snap"\nurl = "http://127.0.0.1:{port}/{name}.txt.gz"\n'
                    f'filename = "{name}.txt.gz"\nvertices = 5000\nnodes = 5000\nedges = {edges}\n'
                    f'size = {size}\nsha256 = "{sha256}"\ndescription = "test graph"\n')
    return path


def _payload():
    data = gzip.compress(EDGES.encode(), mtime=0)
    return data, hashlib.sha256(data).hexdigest()


def test_good_download_with_checksum(server, tmp_path):
    data, digest = _payload()
    server.files["toy.txt.gz"] = data
    out = io.StringIO()
    data_dir = tmp_path / "data"
    code = fetch.run(["toy"], data_dir=data_dir, catalogue=_catalogue(tmp_path, server.server_port, digest,
                                                                     size=len(data)), out=out)
    assert code == 0, out.getvalue()
    assert (data_dir / "toy.txt.gz").read_bytes() == data
    assert not list(data_dir.glob("*.part"))
    assert str(data_dir / "toy.txt.gz") in out.getvalue()
    assert load_graph(data_dir / "toy.txt.gz").m == 5000
    # a second run finds it and downloads nothing
    before = len(server.requests)
    assert fetch.run(["toy"], data_dir=data_dir, catalogue=_catalogue(tmp_path, server.server_port, digest),
                     out=io.StringIO()) == 0
    assert len(server.requests) == before


def test_truncated_download_resumes_on_rerun(server, tmp_path):
    data, digest = _payload()
    server.files["toy.txt.gz"] = data
    server.cut = len(data) // 3
    catalogue = _catalogue(tmp_path, server.server_port, digest)
    out = io.StringIO()
    data_dir = tmp_path / "data"
    assert fetch.run(["toy"], data_dir=data_dir, catalogue=catalogue, out=out) == 1
    assert "run again to resume" in out.getvalue() and "Traceback" not in out.getvalue()
    part = data_dir / "toy.txt.gz.part"
    assert part.is_file() and 0 < part.stat().st_size < len(data)
    assert not (data_dir / "toy.txt.gz").exists()
    assert fetch.run(["toy"], data_dir=data_dir, catalogue=catalogue, out=io.StringIO()) == 0
    assert server.requests[-1][1] == f"bytes={len(data) // 3}-"  # resumed, not restarted
    assert (data_dir / "toy.txt.gz").read_bytes() == data and not part.exists()


def test_server_without_ranges_restarts(server, tmp_path):
    data, digest = _payload()
    server.files["toy.txt.gz"] = data
    server.ranges = False
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "toy.txt.gz.part").write_bytes(b"garbage that is not a prefix")
    assert fetch.run(["toy"], data_dir=data_dir, catalogue=_catalogue(tmp_path, server.server_port, digest),
                     out=io.StringIO()) == 0
    assert (data_dir / "toy.txt.gz").read_bytes() == data


def test_wrong_checksum_leaves_no_file(server, tmp_path):
    data, _ = _payload()
    server.files["toy.txt.gz"] = data
    out = io.StringIO()
    data_dir = tmp_path / "data"
    code = fetch.run(["toy"], data_dir=data_dir, catalogue=_catalogue(tmp_path, server.server_port, "0" * 64),
                     out=out)
    assert code == 1 and "sha256 mismatch" in out.getvalue()
    assert list(data_dir.iterdir()) == []


def test_wrong_counts_leave_no_file(server, tmp_path):
    data, _ = _payload()
    server.files["toy.txt.gz"] = data
    out = io.StringIO()
    data_dir = tmp_path / "data"
    assert fetch.run(["toy"], data_dir=data_dir, catalogue=_catalogue(tmp_path, server.server_port, edges=4999),
                     out=out) == 1
    assert "5,000 edges, expected 4,999" in out.getvalue()
    assert list(data_dir.iterdir()) == []


def test_missing_on_server_is_one_line(server, tmp_path):
    out = io.StringIO()
    assert fetch.run(["toy"], data_dir=tmp_path / "d", catalogue=_catalogue(tmp_path, server.server_port),
                     out=out) == 1
    assert "404" in out.getvalue() and out.getvalue().count("\n") == 1


def test_connection_refused_is_one_clean_line(tmp_path):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = io.StringIO()
    assert fetch.run(["toy"], data_dir=tmp_path / "d", catalogue=_catalogue(tmp_path, port), out=out) == 1
    text = out.getvalue()
    assert text.count("\n") == 1 and "cannot reach" in text and "Traceback" not in text


def test_unknown_name_lists_the_graphs(tmp_path):
    out = io.StringIO()
    assert fetch.run(["nope"], data_dir=tmp_path, out=out) == 1
    assert "roadNet-CA" in out.getvalue() and "soc-LiveJournal1" in out.getvalue()


def test_real_catalogue_urls_are_snap():
    from grader.datasets import load_catalogue
    urls = {e.url for e in load_catalogue().values() if e.url}
    assert "https://snap.stanford.edu/data/higgs-social_network.edgelist.gz" in urls and len(urls) == 6


# ---------------------------------------------------------------- synth command

def test_synth_command_writes_named_files(tmp_path):
    out = io.StringIO()
    assert synth_command.run(["roadNet-CA", "amazon0312~synth"], out_dir=tmp_path, scale="ci", out=out) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["amazon0312~synth.1-512.txt", "roadNet-CA~synth.1-256.txt"]
    assert "vertices" in out.getvalue()
    first = (tmp_path / "roadNet-CA~synth.1-256.txt").read_bytes()
    assert synth_command.run(["roadNet-CA"], out_dir=tmp_path, scale=1 / 256, out=io.StringIO()) == 0
    assert (tmp_path / "roadNet-CA~synth.1-256.txt").read_bytes() == first
    assert synth_command.run(["nope"], out_dir=tmp_path, out=out) == 1 and "known:" in out.getvalue()


def test_synth_command_all(tmp_path):
    assert synth_command.run(["all"], out_dir=tmp_path, scale=0.0005, out=io.StringIO()) == 0
    assert len(list(tmp_path.glob("*~synth.*.txt"))) == 6
