"""The distance file writer: chunked, threaded, in order, byte-exact."""
from __future__ import annotations

import io

import numpy as np
import pytest

from sssp_common.edgelist import write_distance_rows, write_distances


def expected_text(dist, unreachable) -> bytes:
    return b"".join(b"%d:INF\n" % i if u else b"%d:%d\n" % (i, d)
                    for i, (d, u) in enumerate(zip(dist.tolist(), unreachable.tolist())))


@pytest.mark.parametrize("workers", [1, 2, 4])
@pytest.mark.parametrize("chunk", [1, 7, 1000, 1 << 20])
def test_chunks_and_threads_keep_the_order(workers, chunk):
    rng = np.random.default_rng(chunk + workers)
    dist = rng.integers(0, 2**40, 3001)
    unreachable = rng.random(3001) < 0.2
    out = io.BytesIO()
    write_distance_rows(out, dist, unreachable, chunk=chunk, workers=workers)
    assert out.getvalue() == expected_text(dist, unreachable)


def test_distance_file(tmp_path):
    dist = np.array([0, 4, 2, np.iinfo(np.int64).max, 10**12])
    path = tmp_path / "out.txt"
    write_distances(path, dist, dist == np.iinfo(np.int64).max)
    assert path.read_bytes() == b"0:0\n1:4\n2:2\n3:INF\n4:1000000000000\n"
    write_distances(path, dist[:0], dist[:0] == 0)
    assert path.read_bytes() == b""
