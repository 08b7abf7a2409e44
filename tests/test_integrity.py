"""grader/integrity.py: the decompressed-size cap (gzip bombs), corrupt gzip, size/sha256/record checks, bounds."""
from __future__ import annotations

import gzip
import hashlib
import time
import zlib

import pytest

from grader.data import integrity
from grader.data.datasets import Dataset, load_catalogue
from grader.data.download import FetchError

EDGES = "".join(f"{i}\t{(i * 7 + 1) % 500}\n" for i in range(5000)).encode()


def _entry(**fields):
    settings = dict(name="toy", kind="snap", url="http://x/toy.txt.gz", filename="toy.txt.gz",
                    vertices=5000, nodes=5000, edges=5000)
    settings.update(fields)
    return Dataset(**settings)


def _bomb(megabytes: int) -> bytes:
    """gzip of ``megabytes`` MB of zeros, made without holding them."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = b"\0" * (1 << 20)
    return b"".join([packer.compress(zeros) for _ in range(megabytes)] + [packer.flush()])


def test_a_gzip_bomb_stops_at_the_content_bound(tmp_path):
    path = tmp_path / "toy.txt.gz"
    # 128 MiB of zeros in ~130 kB, then bytes that are no gzip: reading to the end would
    # say "not a valid gzip", so the message proves the pass stopped at the cap
    path.write_bytes(_bomb(128) + b"\xff" * 100)
    cap = integrity.max_content_bytes(_entry())
    assert cap < 300_000
    started = time.monotonic()
    with pytest.raises(FetchError, match=f"decompresses to more than {cap:,} bytes"):
        integrity.inspect(path, _entry())
    assert time.monotonic() - started < 1.0


def test_inspect_counts_hashes_and_lines(tmp_path):
    path = tmp_path / "toy.txt.gz"
    packed = gzip.compress(EDGES, mtime=0)
    path.write_bytes(packed)
    found = integrity.inspect(path, _entry())
    assert found.size == len(packed) and found.sha256 == hashlib.sha256(packed).hexdigest()
    assert found.content_bytes == len(EDGES) and found.lines == 5000
    assert found.content_sha256 == hashlib.sha256(EDGES).hexdigest()


def test_several_gzip_members_and_a_last_line_without_newline(tmp_path):
    path = tmp_path / "toy.txt.gz"
    body = EDGES[:-1]
    path.write_bytes(gzip.compress(body[:1000]) + gzip.compress(body[1000:]))
    found = integrity.inspect(path, _entry())
    assert found.content_bytes == len(body) and found.lines == 5000


def test_corrupt_and_truncated_gzip_are_one_line_errors(tmp_path):
    packed = bytearray(gzip.compress(EDGES, mtime=0))
    path = tmp_path / "toy.txt.gz"
    path.write_bytes(bytes(packed[: len(packed) // 2]))
    with pytest.raises(FetchError, match="truncated"):
        integrity.inspect(path, _entry())
    packed[40:60] = b"\xff" * 20
    path.write_bytes(bytes(packed))
    with pytest.raises(FetchError, match="not a valid gzip"):
        integrity.inspect(path, _entry())


def test_check_bytes_catalogue_then_record():
    found = integrity.Inspection(10, "a" * 64, 20, 2, "c" * 64)
    assert "catalogue" in integrity.check_bytes(_entry(sha256="a" * 64), found, None)
    with pytest.raises(FetchError, match="sha256 mismatch"):
        integrity.check_bytes(_entry(sha256="b" * 64), found, None)
    with pytest.raises(FetchError, match="size 10 bytes, the catalogue says 11"):
        integrity.check_bytes(_entry(size=11), found, None)
    assert "first download" in integrity.check_bytes(_entry(), found, "a" * 64)
    with pytest.raises(FetchError, match="recorded by the first download"):
        integrity.check_bytes(_entry(), found, "b" * 64)
    assert integrity.check_bytes(_entry(), found, None) == ""  # nothing vouches: the caller records it
    with pytest.raises(FetchError, match="content sha256"):
        integrity.check_bytes(_entry(content_sha256="d" * 64), found, None)


def test_lines_before_parsing():
    integrity.check_lines(_entry(), integrity.Inspection(1, "", 1, 5004, ""))
    with pytest.raises(FetchError, match="4,999 lines, fewer than the 5,000 edges"):
        integrity.check_lines(_entry(), integrity.Inspection(1, "", 1, 4999, ""))


def test_records_round_trip_and_refuse_garbage(tmp_path):
    target = tmp_path / "toy.txt.gz"
    assert integrity.read_record(target) is None
    record = integrity.write_record(target, "ab" * 32)
    assert record == tmp_path / "toy.txt.gz.sha256"
    assert record.read_text() == f"{'ab' * 32}  toy.txt.gz\n"  # sha256sum -c format
    assert integrity.read_record(target) == "ab" * 32
    record.write_text("not a hash\n")
    with pytest.raises(FetchError, match="not a sha256 record"):
        integrity.read_record(target)


def test_bounds_for_the_real_catalogue():
    catalogue = load_catalogue()
    road = catalogue["roadNet-CA"]
    assert integrity.max_download_bytes(road) == road.size + road.size // 100
    # uncompressed roadNet-CA is ~84 MB; the bound allows it and not much more
    assert 90e6 < integrity.max_content_bytes(road) < 200e6
    for name in ("soc-LiveJournal1", "soc-pokec", "higgs-twitter", "web-Google", "amazon0312"):
        entry = catalogue[name]
        assert not entry.size and integrity.max_download_bytes(entry) > integrity.max_content_bytes(entry)
    assert integrity.max_content_bytes(_entry(edges=0, lines=0)) is None
