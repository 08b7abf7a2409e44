"""The file reader: both formats, gzip, the cache, and every bad input named by line."""
from __future__ import annotations

import gzip
import os

import numpy as np
import pytest

from conftest import REAL_GRAPH_FILES
from sssp_common.errors import InputError
from sssp_common.loader import cache_root, load_graph


def write(tmp_path, text, name="g.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_snap_text_with_comments_blanks_tabs_crlf(tmp_path):
    path = write(tmp_path, "# header\r\n0\t1\t4\r\n\r\n  2 0 7  \r\n# c\r\n1 3 2\r\n")
    g = load_graph(path)
    assert (g.n, g.src.tolist(), g.dst.tolist(), g.w.tolist()) == (4, [0, 2, 1], [1, 0, 3], [4, 7, 2])
    assert g.src.dtype == np.int32


def test_missing_weight_is_one_and_columns_may_mix(tmp_path):
    assert load_graph(write(tmp_path, "0 1\n1 2\n")).w.tolist() == [1, 1]
    g = load_graph(write(tmp_path, "0 1 5\n1 2\n2 3 9\n", "mixed.txt"))
    assert (g.w.tolist(), g.n) == ([5, 1, 9], 4)


@pytest.mark.parametrize("text,line", [("0 1 5\n1 2\n2 3 9 77\n", 3), ("0 1 5\n1 2 3 4\n", 2),
                                       ("0 1\n1 2 3 4\n", 2), ("# c\n0 1 2 3\n1 2 3 4\n", 2)])
def test_a_line_of_more_than_three_columns_is_an_error_naming_it(tmp_path, text, line):
    """SNAP lines are 'src dst [weight]': a fourth column is not silently dropped, whether the
    first line has 2, 3 or 4 columns (the fast path must not read it as 3)."""
    path = write(tmp_path, text)
    with pytest.raises(InputError, match="found 4 columns") as caught:
        load_graph(path)
    assert caught.value.line == line and caught.value.path == str(path)


def test_indented_comment_in_a_mixed_file(tmp_path):
    """Mixed 2/3 columns take the careful path; a comment may be indented there too."""
    g = load_graph(write(tmp_path, "0 1 5\n   # an indented comment 7 8\n\t#tab\n1 2\n2 3 9\n"))
    assert (g.src.tolist(), g.dst.tolist(), g.w.tolist(), g.n) == ([0, 1, 2], [1, 2, 3], [5, 1, 9], 4)


def test_gzip_and_dimacs(tmp_path):
    text = "c road\np sp 5 3\na 1 2 10\nc mid\na 2 3 20\na 3 1 5\n"
    gz = tmp_path / "r.gr.gz"
    with gzip.open(gz, "wt") as f:
        f.write(text)
    for path in (write(tmp_path, text, "r.gr"), gz):
        g = load_graph(path)
        assert (g.n, g.src.tolist(), g.dst.tolist(), g.w.tolist()) == (5, [0, 1, 2], [1, 2, 0], [10, 20, 5])


def test_cache_is_used_and_invalidated(tmp_path):
    path = write(tmp_path, "0 1 3\n1 2 4\n")
    first = load_graph(path)
    entries = list(cache_root().iterdir())
    assert len(entries) == 1
    assert load_graph(path).w.tolist() == first.w.tolist()
    path.write_text("0 1 3\n1 2 5\n2 3 1\n")
    os.utime(path, ns=(1, 10**18))
    assert load_graph(path).w.tolist() == [3, 5, 1]


@pytest.mark.parametrize("text,line,message", [
    ("", None, "no edges"),
    ("# only comments\n\n", None, "no edges"),
    ("0 1\n5\n", 2, "two vertex ids"),
    ("0 1\n0 x\n", 2, "not an integer: 'x'"),
    ("0 1\n# c\n0 1.5\n", 3, "not an integer: '1.5'"),
    ("0 1\n2 -3\n", 2, "negative vertex id"),
    ("0 1\n0 2147483647\n", 2, "does not fit in int32"),
    ("0 1 2\n1 2 -4\n", 2, "negative weight"),
    ("0 1 2\n1 2 3000000000\n", 2, "weight does not fit"),
    ("0 1\n1 99999999999999999999999\n", 2, "out of range"),
])
def test_bad_snap_input_names_the_line(tmp_path, text, line, message):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as caught:
        load_graph(path)
    assert caught.value.line == line
    assert message in str(caught.value)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize("text,line,message", [
    ("a 1 2 3\n", 1, "problem line"),
    ("p sp 3 1\na 0 1 3\n", 2, "start at 1"),
    ("p sp 3 1\na 1 4 3\n", 2, "above the declared count"),
    ("p sp 3 1\nx 1 2 3\n", 2, "arc line"),
    ("p sp 3 1\na 1 2 -1\n", 2, "negative weight"),
])
def test_bad_dimacs_input_names_the_line(tmp_path, text, line, message):
    with pytest.raises(InputError) as caught:
        load_graph(write(tmp_path, text, "bad.gr"))
    assert (caught.value.line, message in str(caught.value)) == (line, True)


def test_missing_unreadable_and_folder(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_graph(tmp_path / "absent.txt")
    with pytest.raises(InputError, match="folder"):
        load_graph(tmp_path)
    broken = write(tmp_path, b"\x1f\x8b not really gzip", "broken.txt.gz")
    with pytest.raises(InputError, match="corrupt gzip"):
        load_graph(broken)


def test_real_graph_counts_match_their_readme():
    expected = {"p2p-Gnutella04.txt.gz": (10879, 39994), "p2p-Gnutella08.txt.gz": (6301, 20777),
                "p2p-Gnutella24.txt.gz": (26518, 65369), "p2p-Gnutella31.txt.gz": (62586, 147892),
                "Email-Enron.txt.gz": (36692, 367662), "rome99.gr.gz": (3353, 8870)}
    assert {"p2p-Gnutella04.txt.gz", "rome99.gr.gz"} <= set(REAL_GRAPH_FILES)   # carried: always here
    for name, (n, m) in expected.items():
        if name not in REAL_GRAPH_FILES:
            continue   # the others when ../shared/data or .device-data holds them
        g = load_graph(REAL_GRAPH_FILES[name])
        assert (g.n, g.m) == (n, m), name
