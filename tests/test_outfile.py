"""grader.sweep.outfile on output files as students write them: every spelling the spec does not
forbid (read, and named as a deviation), every one it does (refused, naming the line), and files
that are not files (links, FIFOs, folders, files past the size bound)."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from grader.sweep import outfile
from grader.sweep.outfile import NoOutput, Unparsable, parse, placed, read_capped, size_bound

SPACE_AFTER, SPACE_BEFORE, EDGE_SPACES = "a space after ':' ('v: d')", "a space before ':'", "spaces at a line's start or end"
CRLF, BLANK, NO_NEWLINE = "CRLF line ends", "blank lines", "no newline at the end"
NO_COLON = "no ':' between vertex and distance ('v d' lines; the spec: '<vertex>:<distance>')"
MINUS_ONE = "unreachable written as '-1' (the spec: INF)"


def read(data: bytes, n: int = 3):
    """(distances with -1 for unreachable, deviations) of a file for n vertices."""
    parsed = parse(data)
    values, inf, problem = placed(parsed, n)
    assert problem == ""
    return np.where(inf, -1, values).tolist(), parsed.deviations


@pytest.mark.parametrize("data, deviations", [
    (b"0:0\n1:4\n2:INF\n", []),
    (b"0: 0\n1: 4\n2: INF\n", [SPACE_AFTER]),
    (b"0 :0\n1 :4\n2 :INF\n", [SPACE_BEFORE]),
    (b"0\t:\t0\n1:4\n2:INF\n", [SPACE_AFTER, SPACE_BEFORE]),
    (b" 0:0\n1:4\n2:INF\n", [EDGE_SPACES]),
    (b"0:0 \n1:4\n2:INF\n", [EDGE_SPACES]),
    (b"0:0\n1:4\n2:INF \n", [EDGE_SPACES]),
    (b"0:0\n1:4\n2:INF ", [EDGE_SPACES, NO_NEWLINE]),
    (b"0:0\n1:4\n2:INF\t\r\n", [EDGE_SPACES, CRLF]),
    (b"0:0\r\n1:4\r\n2:INF\r\n", [CRLF]),
    (b"\n0:0\n1:4\n2:INF\n", [BLANK]),
    (b"\r\n0:0\r\n1:4\r\n2:INF\r\n", [CRLF, BLANK]),
    (b"0:0\n\n1:4\n2:INF\n", [BLANK]),
    (b"0:0\r\n\r\n1:4\r\n2:INF\r\n", [CRLF, BLANK]),
    (b"0:0\n1:4\n2:INF\n\n\n", [BLANK]),
    (b"0:0\n 1:4\n2:INF\n", [EDGE_SPACES]),
    (b"0:0\n1:4\n\t2:INF\n", [EDGE_SPACES]),
    (b"0:0\n1:4\n2:INF", [NO_NEWLINE]),
    (b"0:0\n1:4\n2:-1\n", [MINUS_ONE]),
    (b"0:0\n1:4\n2: -1 \r\n", [MINUS_ONE, SPACE_AFTER, EDGE_SPACES, CRLF]),
    (b"0 0\n1 4\n2 INF\n", [NO_COLON]),
    (b"0\t0\n1  4\n2 -1", [NO_COLON, MINUS_ONE, NO_NEWLINE]),
    (b"0:0\n1:4\n2:Inf\n", ["unreachable written as 'Inf' (the spec: INF)"]),
    (b"0:0\n1:4\n2:infinity\n", ["unreachable written as 'infinity' (the spec: INF)"]),
])
def test_a_right_answer_in_any_readable_spelling_is_read_with_its_deviations_named(data, deviations):
    distances, said = read(data)
    assert distances[:2] == [0, 4] and distances[2] in (-1,)
    assert said == deviations


def test_minus_one_and_inf_words_in_one_file_name_each_spelling():
    _, said = read(b"0:0\n1:-1\n2:inf\n")
    assert said == [MINUS_ONE, "unreachable written as 'inf' (the spec: INF)"]
    distances, said = read(b"0:0\n1:INF\n2:infinity\n3:Inf\n", 4)
    assert distances == [0, -1, -1, -1] and said == ["unreachable written as 'INF', 'Inf', 'infinity' (the spec: INF)"]


def test_the_largest_readable_distance_is_exact():
    big = 10 ** 18 - 1
    assert read(f"0:0\n1:{big}\n2:123456789012345678\n".encode()) == ([0, big, 123456789012345678], [])


def test_vertex_numbers_with_leading_zeros_are_numbers():
    assert read(b"00:0\n01:7\n002:5\n")[0] == [0, 7, 5]


@pytest.mark.parametrize("data, line", [
    (b"0:0\n1:4\n2:5 0\n", 3), (b"0:0\n1:4 4\n2:5\n", 2), (b"0:0\n1:2e1\n2:5\n", 2), (b"0:0\n1:1.0\n2:5\n", 2),
    (b"0:0\n1:-2\n2:5\n", 2), (b"0:0\n1:-1-1\n2:5\n", 2), (b"0:0\n1:- 1\n2:5\n", 2), (b"0:0\n1:+3\n2:5\n", 2),
    (b"0:0\n1:0x10\n2:5\n", 2), (b"0:0\n1:INF5\n2:5\n", 2), (b"0:0\n1:5INF\n2:5\n", 2), (b"0:0\n1:IN F\n2:5\n", 2),
    (b"0:0\n1:I NF\n2:5\n", 2), (b"0:0\nINF:5\n2:5\n", 2), (b"0:0\n1:abc\n2:5\n", 2), (b"0:0\n1:infin\n2:5\n", 2),
    (b"0:0\n1:\n2:5\n", 2), (b"0:0\n:5\n2:5\n", 2), (b"0:0\n1:2:3\n2:5\n", 2), (b"0:0\n1::3\n2:5\n", 2),
    (b"0:0\n1:9223372036854775808\n2:5\n", 2), (b"0:0\n9223372036854775808:1\n2:5\n", 2),
    (b"0:0\n1:4\r2:5\n", 2), (b"0:0\n1:4\n2:5\r\r\n", 3), (b"0:0\n1:4;\n2:5\n", 2), (b"0:0\n1:\xff\n2:5\n", 2),
    (b"0:0\n\n\n1:x\n", 4), (b"0:0\n1 4\n2:5\n", 2), (b"0:0\n1:INF:\n2:5\n", 2), (b"0:0\n1:5\n2\n", 3),
    (b"0:0\n1:-1x\n2:5\n", 2), (b"0:0\n1:4\nINF\n", 3), (b"0:0\n1:4\n2:INF INF\n", 3), (b"0\n", 1),
    (b"a 1\nb 2\n", 1), (b"0:0\n1:4\n2:4\n3", 4),
    (b"0:0\n1:", 2), (b"0: 0\n1:", 2), (b"0:0\n1: ", 2), (b"0:0\n\x0b\n2:5\n", 2), (b"0:0\n\x0c\n2:5\n", 2), (b"0:0\nX\n2:5\n", 2),
    (b"0:0\n1:INF\n2:5 0\n", 3), (b"0:0\n1:Infinity\n2:x\n", 3), (b"0:0\n1:-1\n2:5 0\n", 3),
])
def test_a_spelling_the_spec_forbids_is_refused_naming_its_line(data, line):
    with pytest.raises(Unparsable, match=f"^line {line}: not '<vertex>:<distance>'"):
        parse(data)


def test_a_carriage_return_alone_at_the_end_is_refused():
    with pytest.raises(Unparsable) as refused:
        parse(b"0:0\n1:4\r")
    assert str(refused.value) == "not '<vertex>:<distance>' lines"


def test_the_refusal_quotes_the_line_cut_at_60_characters():
    line = "1:" + "x" * 100
    with pytest.raises(Unparsable) as refused:
        parse(f"0:0\n{line}\n".encode())
    assert str(refused.value) == (f"line 2: not '<vertex>:<distance>' (a distance is digits, INF or -1): "
                                  f"{line[:60]!r}")


@pytest.mark.parametrize("data", [b"", b"\n\n", b"  \r\n\t"])
def test_an_empty_or_blank_file_is_refused_as_empty(data):
    with pytest.raises(Unparsable, match="^line 1: the output file is empty$"):
        parse(data)


def test_a_file_of_one_vertex_without_a_colon_is_read():
    assert read(b"0 0\n", 1) == ([0], [NO_COLON])


def test_an_inf_word_is_a_mark_the_distances_never_take():
    parsed = parse(b"0:0\n1:INF\n2:4611686018427387904\n")
    assert parsed.inf.tolist() == [False, True, False] and parsed.values.tolist() == [0, 0, 4611686018427387904]
    assert parsed.inf_words == ["INF"]


# --- placing lines by vertex ---------------------------------------------------------------------

def test_a_single_vertex_answer_is_placed():
    assert placed(parse(b"0:7\n"), 1)[0].tolist() == [7]


def test_lines_in_any_order_are_placed_by_vertex_and_the_order_is_a_deviation():
    parsed = parse(b"2:INF\n0:0\n1:4\n")
    values, inf, problem = placed(parsed, 3)
    assert problem == "" and values.tolist()[:2] == [0, 4] and inf.tolist() == [False, False, True]
    assert parsed.deviations == ["vertices not in order 0..n-1"]


@pytest.mark.parametrize("data, n, problem", [
    (b"0:0\n1:4\n", 3, "1 of 3 vertices missing (first: 2)"),
    (b"0:0\n2:4\n", 4, "2 of 4 vertices missing (first: 1)"),
    (b"0:0\n1:4\n1:4\n2:1\n", 3, "1 vertex(es) appear more than once (first: 1)"),
    (b"0:0\n1:4\n2:5\n3:1\n9:9\n", 3, "2 line(s) for vertices that do not exist (first: 3; the graph has 3: 0..2)"),
    (b"1:1\n2:2\n3:3\n", 3, "1 line(s) for vertices that do not exist (first: 3; the graph has 3: 0..2); "
                            "1 of 3 vertices missing (first: 0)"),
    (b"0:0\n0:0\n2:2\n", 3, "1 vertex(es) appear more than once (first: 0); 1 of 3 vertices missing (first: 1)"),
    (b"0:0\n", 0, "1 line(s) for vertices that do not exist (first: 0; the graph has 0: 0..-1)"),
    (b"5:0\n", 1, "1 line(s) for vertices that do not exist (first: 5; the graph has 1: 0..0); "
                 "1 of 1 vertices missing (first: 0)"),
    (b"0:0\n1:1\n2:2\n3:3\n3:3\n", 3, "2 line(s) for vertices that do not exist (first: 3; the graph has 3: 0..2)"),
])
def test_missing_repeated_and_stray_vertices_are_counted_and_the_first_named(data, n, problem):
    assert placed(parse(data), n)[2] == problem


# --- files that are not plain files, or too big --------------------------------------------------

def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "output.txt"
    path.write_bytes(data)
    return path


def test_a_file_within_the_bound_is_read_whole(tmp_path):
    data = b"0:0\n1:4\n" * 1000
    assert read_capped(write(tmp_path, data), len(data)) == data


def test_a_file_past_the_bound_is_refused_before_reading(tmp_path):
    path = write(tmp_path, b"0:0\n1:4\n")
    with pytest.raises(Unparsable, match="^the output file is 8 bytes, more than the 7 an answer for this graph can "
                                         "need \\(not read\\)$"):
        read_capped(path, 7)


def test_a_missing_file_is_no_output(tmp_path):
    with pytest.raises(NoOutput):
        read_capped(tmp_path / "none", 100)


def test_a_link_is_never_followed(tmp_path):
    write(tmp_path, b"0:0\n")
    os.symlink(tmp_path / "output.txt", tmp_path / "link")
    with pytest.raises(Unparsable, match="^the output file is a symbolic link \\(not followed\\)$"):
        read_capped(tmp_path / "link", 100)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(Unparsable, match="^the output file is not a regular file$"):
        read_capped(tmp_path / "fifo", 100)


def test_a_folder_is_refused(tmp_path):
    with pytest.raises(Unparsable, match="not a regular file|cannot be opened"):
        read_capped(tmp_path, 100)


def test_a_path_through_a_file_cannot_be_opened(tmp_path):
    write(tmp_path, b"0:0\n")
    with pytest.raises(Unparsable, match="^the output file cannot be opened: Not a directory$"):
        read_capped(tmp_path / "output.txt" / "x", 100)


def test_a_file_that_grows_while_read_is_refused(tmp_path, monkeypatch):
    path = write(tmp_path, b"0:0\n")
    real_fstat = os.fstat

    class Smaller:   # the size fstat saw before the program wrote more
        def __init__(self, info):
            self.st_mode, self.st_size = info.st_mode, 1

    monkeypatch.setattr(outfile.os, "fstat", lambda fd: Smaller(real_fstat(fd)))
    with pytest.raises(Unparsable, match="^the output file grew past 3 bytes while being read$"):
        read_capped(path, 3)
    assert read_capped(path, 4) == b"0:0\n"


def test_the_widest_answer_a_program_may_write_fits_the_bound(tmp_path):
    for n in (1, 2, 10, 11, 1000, 100_001):
        width = len(str(n - 1))
        line = f" {'9' * width} : {'9' * 18} \r\n".encode()
        assert len(line) * n <= size_bound(n)
        # and the bound stays a bound: not more than a few lines' worth of slack past that
        assert size_bound(n) <= 65536 + n * (len(line) + 16)


def test_a_file_growing_while_read_is_read_at_most_one_byte_past_the_bound(tmp_path, monkeypatch):
    """read(2) may return less than asked: however the bytes arrive, the checker reads at most
    max_bytes + 1 of a file (enough to know it is too big) and refuses it, never truncates it."""
    path = write(tmp_path, b"0:0\n" * 10_000)                 # 40,000 bytes; fstat will say 1
    real_fstat, real_read, read = os.fstat, os.read, []

    class Smaller:
        def __init__(self, info):
            self.st_mode, self.st_size = info.st_mode, 1

    def short_read(fd, n):
        chunk = real_read(fd, min(n, 1000))
        read.append(len(chunk))
        return chunk

    monkeypatch.setattr(outfile.os, "fstat", lambda fd: Smaller(real_fstat(fd)))
    monkeypatch.setattr(outfile.os, "read", short_read)
    for bound in (999, 1000, 4500):
        read.clear()
        with pytest.raises(Unparsable, match=f"^the output file grew past {bound} bytes while being read$"):
            read_capped(path, bound)
        assert sum(read) == bound + 1
    read.clear()
    assert read_capped(path, 40_000) == b"0:0\n" * 10_000 and sum(read) == 40_000
