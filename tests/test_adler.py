"""sssp_common.adler: pieces summed apart and joined give zlib's Adler-32 of the whole."""
import zlib

import numpy as np
import pytest

from sssp_common import adler


@pytest.mark.parametrize("sizes", [[0], [1], [5, 0, 7], [65521, 65522, 3], [1 << 20, 12345]])
def test_join_equals_zlib_on_the_concatenation(sizes):
    rng = np.random.default_rng(len(sizes) * 1000 + sum(sizes))
    buffers = [rng.integers(0, 256, size, dtype=np.uint8).tobytes() for size in sizes]
    whole = b"".join(buffers)
    assert adler.adler32_of(buffers) == zlib.adler32(whole)
    assert adler.adler32_of(buffers, threads=1) == zlib.adler32(whole)
    assert adler.adler32_of(buffers, value=zlib.adler32(b"head")) == zlib.adler32(b"head" + whole)


def test_many_pieces_on_threads_equal_zlib(monkeypatch):
    monkeypatch.setattr(adler, "PIECE", 4099)  # dozens of pieces, odd boundaries, several threads
    rng = np.random.default_rng(7)
    arrays = [rng.integers(-2**31, 2**31 - 1, n, dtype=np.int32) for n in (100_003, 50_000, 1)]
    expected = zlib.adler32(b"".join(a.tobytes() for a in arrays))
    assert adler.adler32_of(arrays, threads=4) == expected


def test_join_of_all_ones_bytes_wraps_the_modulus():
    # bytes of 255 push both sums past 65521 within a few hundred bytes
    first, second = b"\xff" * 70_000, b"\xff" * 131_071
    assert adler.join(zlib.adler32(first), zlib.adler32(second), len(second)) == zlib.adler32(first + second)
