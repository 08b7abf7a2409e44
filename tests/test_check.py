"""grader.sweep.check: timing lines, output files, and the verdict of each kind of run."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from grader.sweep.check import MalformedOutput, classify, judge_file, parse_output
from grader.sweep.timings import parse_extras, parse_timing
from grader.jail.runner import RunResult

SPEC_STDOUT = ("The total computation kernel time on GPU NVIDIA H100 80GB HBM3 is 12.345 milli-seconds\n"
               "The total filtering kernel time on GPU NVIDIA H100 80GB HBM3 is 0 milli-seconds\n"
               "rounds: 1486\nedges processed: 2908259200 (1486.00 per graph edge)\n"
               "edges scanned by filtering: 7\nlaunch: 4 blocks x 512 threads (64 warps)\n")


@pytest.mark.parametrize("text, expected", [
    (SPEC_STDOUT, (12.345, 0.0, "NVIDIA H100 80GB HBM3")),
    ("The total computation kernel time on CPU (numpy) is 0.270 milli-seconds\n"
     "The total filtering kernel time on CPU (numpy) is 0 milli-seconds\n", (0.27, 0.0, "CPU (numpy)")),
    ("The total computation kernel time on GPU is 1.2 milli-seconds\n"
     "The total filtering kernel time on GPU is 3 milli-seconds\n", (1.2, 3.0, "")),
    ("the TOTAL computation kernel time on GPU  Tesla K80   is   7.5   milliseconds\r\n"
     "The total filtering kernel time on GPU Tesla K80 is 2.25ms\r\n", (7.5, 2.25, "Tesla K80")),
    ("The total computation kernel time is 4 ms\nThe total filtering kernel time is 1e-3 milli-seconds\n",
     (4.0, 0.001, "")),
    ("The total computation kernel time on GPU X is 0.5 seconds\n", (500.0, None, "X")),
    ("nothing to see\n", (None, None, "")),
])
def test_parse_timing_variants(text, expected):
    computation, filtering, device = parse_timing(text)
    assert device == expected[2]
    assert computation == pytest.approx(expected[0]) if expected[0] is not None else computation is None
    assert filtering == pytest.approx(expected[1]) if expected[1] is not None else filtering is None


def test_parse_extras_by_key_and_absent():
    assert parse_extras(SPEC_STDOUT) == {"rounds": 1486, "edges_processed": 2908259200, "edges_filtered": 7}
    assert parse_extras("Rounds : 3\n") == {"rounds": 3, "edges_processed": None, "edges_filtered": None}


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "output.txt"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


@pytest.mark.parametrize("text", [
    "0:0\n1:4\n2:INF\n3:9\n",
    "0: 0\n1: 4\n2: inf\n3: 9",                     # no final newline
    "0:\t0\r\n1:\t4\r\n2:\tInf\r\n3:\t9\r\n",       # tabs, CRLF
    "0:0  \n1 : 4 \n2:infinity\n\n3:9\n\n",          # trailing spaces, blank lines
    "0:0\n1:4\n2:2147483647\n3:9\n",                # configured sentinel
    "0:0\n1:4\n2:1073741824\n3:9\n",
    "3:9\n1:4\n0:0\n2:INFINITY\n",                  # out of order is fine
])
def test_parse_output_variants(tmp_path, text):
    got = parse_output(write(tmp_path, text), 4, sentinels=(1073741824, 2147483647))
    assert got.dtype == np.int64
    assert got.tolist() == [0, 4, -1, 9]


def test_sentinels_only_when_configured(tmp_path):
    assert parse_output(write(tmp_path, "0:0\n1:2147483647\n"), 2).tolist() == [0, 2147483647]


@pytest.mark.parametrize("text, where", [
    ("0:0\n1:4\n3:9\n", "1 of 4 vertices missing \\(first: 2\\)"),
    ("0:0\n1:4\n1:5\n2:3\n3:9\n", "appear more than once \\(first: 1\\)"),
    ("0:0\n1:4\n2:3\n3:9\n4:1\n", "vertices that do not exist \\(first: 4"),
    ("0:0\n1:4\nhello\n3:9\n", "line 3"),
    ("0:0\n1:\n2:3\n3:9\n", "line 2"),
    ("0:0\n1:4:5\n2:3\n3:9\n", "line 2"),
    ("0:0\n1:4.5\n2:3\n3:9\n", "line 2"),
    ("", "empty"),
    ("0:0\n1:99999999999999999999999\n2:3\n3:9\n", "line 2"),
])
def test_parse_output_malformed_says_where(tmp_path, text, where):
    with pytest.raises(MalformedOutput, match=where):
        parse_output(write(tmp_path, text), 4)


def test_parse_output_is_fast_for_millions_of_lines(tmp_path):
    n = 2_000_000
    dist = np.arange(n, dtype=np.int64) * 3
    lines = np.char.add(np.char.add(np.arange(n).astype(str), ":"), dist.astype(str))
    path = tmp_path / "big.txt"
    path.write_text("\n".join(lines.tolist()) + "\n")
    began = time.perf_counter()
    got = parse_output(path, n)
    assert time.perf_counter() - began < 5.0   # ~1 s alone; the bound allows a busy 2-core machine
    assert np.array_equal(got, dist)


def result(tmp_path, *, exit_code=0, stdout=SPEC_STDOUT, stderr="", output=None, launch_error=""):
    path = tmp_path / "output.txt"
    if output is not None:
        path.write_text(output)
    return RunResult(argv=["x"], exit_code=exit_code, stdout_head=stdout, stderr_tail=stderr,
                     output_path=path, wall_s=0.1, timeout_s=5.0, launch_error=launch_error)


REFERENCE = np.array([0, 4, 2, 9, 5, 20, -1], dtype=np.int64)
GOOD = "".join(f"{v}:{'INF' if d < 0 else d}\n" for v, d in enumerate(REFERENCE))


def test_classify_ok(tmp_path):
    record = classify(result(tmp_path, output=GOOD), REFERENCE)
    assert record["status"] == "ok" and record["detail"] == "" and record["mismatches"] is None
    assert record["computation_ms"] == 12.345 and record["rounds"] == 1486
    assert record["device"] == "NVIDIA H100 80GB HBM3"


def test_classify_wrong_counts_and_shows_first_vertices(tmp_path):
    bad = GOOD.replace("3:9", "3:8").replace("6:INF", "6:7")
    record = classify(result(tmp_path, output=bad), REFERENCE)
    assert record["status"] == "wrong" and record["mismatches"] == 2
    assert "3: expected 9 got 8" in record["detail"] and "6: expected INF got 7" in record["detail"]


def test_classify_wrong_lists_at_most_five(tmp_path):
    bad = "".join(f"{v}:{100 + v}\n" for v in range(7))
    record = classify(result(tmp_path, output=bad), REFERENCE)
    assert record["mismatches"] == 7 and "(2 more)" in record["detail"]
    assert record["detail"].count("expected") == 5


def test_classify_timeout(tmp_path):
    assert classify(result(tmp_path, exit_code=None, stdout="", output=GOOD), REFERENCE)["status"] == "timeout"


def test_classify_crash_even_with_a_file(tmp_path):
    record = classify(result(tmp_path, exit_code=3, stderr="boom\nsssp: device failed\n", output=GOOD), REFERENCE)
    assert record["status"] == "crash"
    assert "exit code 3" in record["detail"] and "device failed" in record["detail"]
    assert classify(result(tmp_path, exit_code=-9), REFERENCE)["detail"].startswith("killed by SIGKILL")
    assert classify(result(tmp_path, exit_code=None, launch_error="cannot start x"), REFERENCE)["status"] == "crash"


def test_classify_no_output(tmp_path):
    assert classify(result(tmp_path), REFERENCE)["status"] == "no_output"


def test_classify_malformed_is_an_unparsable_file_and_stdout_is_judged_apart(tmp_path):
    record = classify(result(tmp_path, stdout="hello\n", output=GOOD), REFERENCE)
    assert record["status"] == "ok" and record["distances"] == "ok"
    assert record["stdout_format"] == "deviates" and len(record["stdout_problems"]) == 2
    record = classify(result(tmp_path, output=GOOD.replace("2:2", "2:two")), REFERENCE)
    assert record["status"] == "malformed" and record["distances"] == "unparsable" and "line 3" in record["detail"]


# --- strict numbers, separate dimensions, and the edges earlier suites let slip ---------------

@pytest.mark.parametrize("line", ["5:2 0", "5:2e1", "5:1.0", "5:-2", "5:-1-1", "5:+3", "5:0x10", "5:INF5", "5:IN F",
                                  "INF:5", "5:abc", "5:", ":5", "5:1:2", "5:99999999999999999999999"])
def test_strict_numbers(tmp_path, line):
    text = "".join(f"{v}:{d}\n" for v, d in enumerate([0, 4, 2, 9, 5])) + line.replace("5:", "5:", 1) + "\n"
    with pytest.raises(MalformedOutput, match="line 6"):
        parse_output(write(tmp_path, text), 6)


def test_format_deviations_are_named_and_do_not_change_the_distance_verdict(tmp_path):
    reference = np.array([0, 4, -1], dtype=np.int64)
    verdict = judge_file(write(tmp_path, "0: 0\r\n1: 4\r\n2: 1073741824\r\n"), reference, sentinels=(1073741824,))
    assert verdict["distances"] == "ok"
    assert verdict["deviations"] == ["a space after ':' ('v: d')", "CRLF line ends",
                                     "unreachable written as 1073741824 (the spec: INF)"]
    verdict = judge_file(write(tmp_path, "2:inf\n0:0\n1:4\n"), reference)
    assert verdict["distances"] == "ok" and "vertices not in order 0..n-1" in verdict["deviations"]
    assert "unreachable written as 'inf' (the spec: INF)" in verdict["deviations"]
    assert judge_file(write(tmp_path, "0:0\n1:4\n2:INF\n"), reference)["deviations"] == []


def test_a_sentinel_that_is_the_right_distance_stays_a_distance(tmp_path):
    reference = np.array([0, 1073741824], dtype=np.int64)
    verdict = judge_file(write(tmp_path, "0:0\n1:1073741824\n"), reference, sentinels=(1073741824,))
    assert verdict["distances"] == "ok" and verdict["deviations"] == []


def test_pin_exactly_one_wrong_vertex(tmp_path):
    bad = GOOD.replace("5:20", "5:21")
    record = classify(result(tmp_path, output=bad), REFERENCE)
    assert record["status"] == "wrong" and record["mismatches"] == 1
    assert record["detail"] == "1 of 7 vertices differ: 5: expected 20 got 21"


def test_pin_ids_numbered_from_1_are_incomplete_not_ok(tmp_path):
    shifted = "".join(f"{v + 1}:{'INF' if d < 0 else d}\n" for v, d in enumerate(REFERENCE))
    record = classify(result(tmp_path, output=shifted), REFERENCE)
    assert record["status"] == "wrong" and record["distances"] == "incomplete"
    assert "vertices that do not exist (first: 7" in record["detail"] and "(first: 0)" in record["detail"]


def test_pin_timings_in_microseconds_and_a_time_longer_than_the_run(tmp_path):
    stdout = ("The total computation kernel time on GPU X is 1500 micro-seconds\n"
              "The total filtering kernel time on GPU X is 250 us\n")
    record = classify(result(tmp_path, stdout=stdout, output=GOOD), REFERENCE)
    assert record["computation_ms"] == 1.5 and record["filtering_ms"] == 0.25 and record["time_flag"] == ""
    assert record["stdout_format"] == "deviates"          # the spec says milli-seconds
    # microseconds printed as milli-seconds: 1500 s of kernel in a 0.1 s run
    lying = "The total computation kernel time on GPU X is 1500000 milli-seconds\n"
    record = classify(result(tmp_path, stdout=lying, output=GOOD), REFERENCE)
    assert "exceeds the run's wall time" in record["time_flag"]


def test_pin_exit_code_1_with_a_correct_file_is_a_crash_that_says_the_distances_were_right(tmp_path):
    record = classify(result(tmp_path, exit_code=1, output=GOOD), REFERENCE)
    assert record["status"] == "crash" and record["distances"] == "crash" and record["file_distances"] == "ok"
    assert record["detail"].startswith("exit code 1") and "distances were right" in record["detail"]


@pytest.mark.parametrize("stdout, recovered", [
    ("Took 1773.1ms.\n", (1773.1, None, "recovered:took")),
    ("Computation Time: 118.658000 ms\nFiltering Time: 12.5 ms\n", (118.658, 12.5, "recovered:computation-time")),
    ("Compute Time: 1548.68\n", (1548.68, None, "recovered:compute-time")),
])
def test_times_are_recovered_from_real_submissions_forms_and_marked(tmp_path, stdout, recovered):
    record = classify(result(tmp_path, stdout=stdout, output=GOOD), REFERENCE)
    assert record["status"] == "ok"
    assert record["computation_ms"] == pytest.approx(recovered[0])
    assert record["filtering_ms"] == (pytest.approx(recovered[1]) if recovered[1] else None)
    assert record["times_source"]["computation"] == recovered[2]


def test_the_missing_filtering_line_message_quotes_the_filtering_line(tmp_path):
    stdout = "The total computation kernel time on GPU X is 3 milli-seconds\n"
    record = classify(result(tmp_path, stdout=stdout, output=GOOD), REFERENCE)
    assert record["stdout_problems"] == ["no filtering line (expected 'The total filtering kernel time on GPU "
                                         "<name> is <x> milli-seconds')"]


def test_a_checker_failure_is_the_runs_failure(tmp_path, monkeypatch):
    from grader.sweep import outfile

    def explode(data):
        raise MemoryError("no room")
    monkeypatch.setattr(outfile, "parse", explode)
    record = classify(result(tmp_path, output=GOOD), REFERENCE)
    assert record["status"] == "malformed" and "MemoryError" in record["detail"]


def test_minus_one_is_unreachable_and_v_d_lines_are_read_both_noted(tmp_path):
    reference = np.array([0, 4, -1], dtype=np.int64)
    verdict = judge_file(write(tmp_path, "0:0\n1:4\n2:-1\n"), reference)
    assert verdict["distances"] == "ok" and verdict["deviations"] == ["unreachable written as '-1' (the spec: INF)"]
    verdict = judge_file(write(tmp_path, "0 0\n1 4\n2 INF\n"), reference)
    assert verdict["distances"] == "ok"
    assert verdict["deviations"] == ["no ':' between vertex and distance ('v d' lines; the spec: '<vertex>:<distance>')"]
    assert judge_file(write(tmp_path, "0:0\n1:-1\n2:-1\n"), reference)["distances"] == "wrong"   # 1 is reachable
    verdict = judge_file(write(tmp_path, "0:0\n1 4\n2:INF\n"), reference)     # some lines with ':' and some without
    assert verdict["distances"] == "unparsable" and "line 2" in verdict["detail"]
