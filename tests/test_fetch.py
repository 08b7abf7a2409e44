"""fetch against a local HTTP server: checksum, truncation + resume, wrong checksum, no server; nothing
unverified ever under the final name (corrupt body, bad counts, gzip bomb, endless body); trust on
first use; redirects; the CLI's limits; the synth command."""
from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import socket


from grader.commands import fetch
from grader.commands import synth as synth_command
from sssp_common.loader import load_graph
from tests import http_server

EDGES = "".join(f"{i}\t{(i * 7 + 1) % 500}\n" for i in range(5000))


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
    assert fetch.run(["toy"], data_dir=data_dir, catalogue=catalogue, out=out, limits=fetch.Limits(retries=0)) == 1
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
    assert fetch.run(["toy"], data_dir=tmp_path / "d", catalogue=_catalogue(tmp_path, port), out=out,
                     limits=fetch.Limits(retries=0)) == 1
    text = out.getvalue()
    assert text.count("\n") == 1 and "cannot reach" in text and "Traceback" not in text


def test_unknown_name_lists_the_graphs(tmp_path):
    out = io.StringIO()
    assert fetch.run(["nope"], data_dir=tmp_path, out=out) == 2
    assert "roadNet-CA" in out.getvalue() and "soc-LiveJournal1" in out.getvalue()
    out = io.StringIO()
    assert fetch.run(["rome"], data_dir=tmp_path, out=out) == 2
    assert "did you mean 'rome99'?" in out.getvalue() and out.getvalue().count("\n") == 1


def test_real_catalogue_urls_are_snap_or_dimacs():
    from grader.data.datasets import load_catalogue
    real = {e.name: e.url for e in load_catalogue().values() if e.kind in ("snap", "dimacs")}
    assert all(real.values()) and len(real) == 12
    assert real["higgs-twitter"] == "https://snap.stanford.edu/data/higgs-social_network.edgelist.gz"
    assert real["rome99"].endswith("/challenge9/data/rome/rome99.gr")
    assert all(url.startswith("https://snap.stanford.edu/data/") for name, url in real.items() if name != "rome99")


# ---------------------------------------------------------------- nothing unverified counts

def _fails_then_nothing_is_present(server, tmp_path, body, message, **catalogue):
    """A failing fetch leaves nothing a later fetch would accept: the rerun downloads again."""
    server.files["toy.txt.gz"] = body
    catalogue = _catalogue(tmp_path, server.server_port, **catalogue)
    data_dir = tmp_path / "data"
    out = io.StringIO()
    assert fetch.run(["toy"], data_dir=data_dir, catalogue=catalogue, out=out) == 1
    assert message in out.getvalue() and "Traceback" not in out.getvalue()
    assert sorted(p.name for p in data_dir.iterdir()) == []  # no file, no .part, no staging, no record
    before = len(server.requests)
    again = io.StringIO()
    assert fetch.run(["toy"], data_dir=data_dir, catalogue=catalogue, out=again) == 1
    assert "already present" not in again.getvalue() and len(server.requests) == before + 1
    return out.getvalue()


def test_a_corrupt_body_is_never_present(server, tmp_path):
    data, _ = _payload()
    corrupt = bytearray(data)
    corrupt[len(corrupt) // 2] ^= 0xFF
    _fails_then_nothing_is_present(server, tmp_path, bytes(corrupt), "the download was deleted")


def test_failed_counts_are_never_present(server, tmp_path):
    data, _ = _payload()
    _fails_then_nothing_is_present(server, tmp_path, data, "5,000 edges, expected 4,999", edges=4999)


def test_a_gzip_bomb_leaves_no_file_and_no_cache_entry(server, tmp_path):
    import zlib
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = b"".join([packer.compress(b"\0" * (1 << 20)) for _ in range(64)] + [packer.flush()])
    text = _fails_then_nothing_is_present(server, tmp_path, bomb, "gzip bomb")
    assert "decompresses to more than" in text
    cache = tmp_path / "cache" / "graphs"
    assert not cache.exists() or not any(cache.iterdir())


def test_an_endless_body_is_capped_and_deleted(server, tmp_path):
    data, _ = _payload()
    server.behaviours["toy.txt.gz"] = ("endless", None)
    out = io.StringIO()
    data_dir = tmp_path / "data"
    catalogue = _catalogue(tmp_path, server.server_port, size=len(data))
    assert fetch.run(["toy"], data_dir=data_dir, catalogue=catalogue, out=out) == 1
    assert f"more than the {len(data) + 65536:,} bytes expected" in out.getvalue()
    assert list(data_dir.iterdir()) == []


def test_a_stalled_server_keeps_the_prefix_for_resuming(server, tmp_path):
    server.behaviours["toy.txt.gz"] = ("trickle", 10.0)
    out = io.StringIO()
    data_dir = tmp_path / "data"
    limits = fetch.Limits(idle_s=1)
    assert fetch.run(["toy"], data_dir=data_dir, catalogue=_catalogue(tmp_path, server.server_port), out=out,
                     limits=limits) == 1
    assert "no data for 1 s" in out.getvalue()
    assert [p.name for p in data_dir.iterdir()] == ["toy.txt.gz.part"]


# ---------------------------------------------------------------- trust on first use

def test_trust_on_first_use(server, tmp_path):
    data, digest = _payload()
    server.files["toy.txt.gz"] = data
    catalogue = _catalogue(tmp_path, server.server_port)  # no published sha256
    data_dir = tmp_path / "data"
    out = io.StringIO()
    assert fetch.run(["toy"], data_dir=data_dir, catalogue=catalogue, out=out) == 0
    record = data_dir / "toy.txt.gz.sha256"
    assert record.read_text() == f"{digest}  toy.txt.gz\n"
    assert "trust on first use" in out.getvalue() and str(record) in out.getvalue()
    out = io.StringIO()
    assert fetch.run(["toy"], data_dir=data_dir, catalogue=catalogue, out=out) == 0
    assert "already present, sha256 matches the one recorded" in out.getvalue()
    # the server's file changes: a forced fetch refuses it and keeps the trusted copy
    server.files["toy.txt.gz"] = gzip.compress(EDGES.encode(), mtime=1)
    out = io.StringIO()
    assert fetch.run(["toy"], data_dir=data_dir, catalogue=catalogue, force=True, out=out) == 1
    assert "recorded by the first download" in out.getvalue()
    assert (data_dir / "toy.txt.gz").read_bytes() == data and not (data_dir / "toy.txt.gz.part").exists()
    # the local copy changes: found, not deleted
    (data_dir / "toy.txt.gz").write_bytes(server.files["toy.txt.gz"])
    out = io.StringIO()
    assert fetch.run(["toy"], data_dir=data_dir, catalogue=catalogue, out=out) == 1
    assert "is not the one recorded" in out.getvalue() and (data_dir / "toy.txt.gz").exists()


def test_a_present_file_without_any_checksum_is_verified_first(server, tmp_path):
    data, digest = _payload()
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "toy.txt.gz").write_bytes(data[:-100])  # e.g. left by an older fetch
    out = io.StringIO()
    assert fetch.run(["toy"], data_dir=data_dir, catalogue=_catalogue(tmp_path, server.server_port), out=out) == 1
    assert "exists but fails verification" in out.getvalue() and "truncated" in out.getvalue()
    (data_dir / "toy.txt.gz").write_bytes(data)
    out = io.StringIO()
    assert fetch.run(["toy"], data_dir=data_dir, catalogue=_catalogue(tmp_path, server.server_port), out=out) == 0
    assert "already present, verified" in out.getvalue() and server.requests == []
    assert (data_dir / "toy.txt.gz.sha256").read_text().split()[0] == digest


def test_a_garbled_record_stops_before_downloading(server, tmp_path):
    data, _ = _payload()
    server.files["toy.txt.gz"] = data
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "toy.txt.gz.sha256").write_text("garbage\n")
    out = io.StringIO()
    assert fetch.run(["toy"], data_dir=data_dir, catalogue=_catalogue(tmp_path, server.server_port), out=out) == 1
    assert "not a sha256 record" in out.getvalue() and server.requests == []


# ---------------------------------------------------------------- redirects and the command line

def test_cross_host_redirect_needs_the_flag(server, tmp_path):
    data, digest = _payload()
    server.files["real.txt.gz"] = data
    server.behaviours["toy.txt.gz"] = ("redirect", http_server.url(server, "real.txt.gz", host="localhost"))
    catalogue = _catalogue(tmp_path, server.server_port, digest)
    out = io.StringIO()
    assert fetch.run(["toy"], data_dir=tmp_path / "d", catalogue=catalogue, out=out) == 1
    assert "--allow-redirect-host" in out.getvalue()
    allowed = fetch.Limits(allow_redirect_host=True)
    assert fetch.run(["toy"], data_dir=tmp_path / "d", catalogue=catalogue, out=io.StringIO(), limits=allowed) == 0


def test_command_line_limits():
    parser = argparse.ArgumentParser()
    fetch.add_arguments(parser)
    args = parser.parse_args(["roadNet-CA", "--deadline", "90", "--idle-timeout", "5", "--min-rate", "1000",
                              "--allow-redirect-host"])
    seen = {}
    original = fetch.run
    try:
        fetch.run = lambda **kwargs: seen.update(kwargs) or 0
        assert fetch.run_from_args(args) == 0
    finally:
        fetch.run = original
    assert seen["limits"] == fetch.Limits(deadline_s=90, idle_s=5, min_rate=1000, allow_redirect_host=True)
    defaults = parser.parse_args(["roadNet-CA"])
    assert (defaults.deadline, defaults.idle_timeout, defaults.allow_redirect_host) == (3600, 60, False)


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
