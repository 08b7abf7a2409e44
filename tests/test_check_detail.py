"""grader.sweep.check: the words a student reads about one run (the detail, the stderr summary,
the vertices a wrong run named) and the fields of its record, on runs as students' programs
end: killed, timed out, exit 1 with a file, exit 0 without one, a file that is a link."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from grader.jail.runner import RunResult
from grader.sweep.check import classify, compare, differing_in, judge_file, parse_output, stderr_summary
from grader.sweep.outfile import Unparsable
from grader.sweep.timings import Pattern

REFERENCE = np.array([0, 4, 2, 9, 5, 20, -1], dtype=np.int64)
GOOD = "".join(f"{v}:{'INF' if d < 0 else d}\n" for v, d in enumerate(REFERENCE))
SPEC = ("The total computation kernel time on GPU NVIDIA H100 80GB HBM3 is 12.5 milli-seconds\n"
        "The total filtering kernel time on GPU NVIDIA H100 80GB HBM3 is 0.5 milli-seconds\n")


def run(tmp_path: Path, *, exit_code=0, stdout=SPEC, stderr="", output: str | None = None, wall_s=0.1,
        launch_error="", stderr_head="") -> RunResult:
    path = tmp_path / "output.txt"
    if output is not None:
        path.write_text(output)
    return RunResult(argv=["./sssp"], exit_code=exit_code, stdout_head=stdout, stderr_tail=stderr, output_path=path,
                     wall_s=wall_s, timeout_s=5.0, launch_error=launch_error, stderr_head=stderr_head)


# --- the vertices a wrong run named, read back from its detail ---------------------------------

def test_the_vertices_compare_names_are_read_back_in_order():
    got = REFERENCE.copy()
    got[[1, 3, 6]] = [5, 8, 7]
    count, detail = compare(got, REFERENCE)
    assert count == 3 and differing_in(detail) == [1, 3, 6]


def test_only_the_first_five_shown_vertices_are_read_back():
    got = np.arange(20, dtype=np.int64) + 1
    count, detail = compare(got, np.arange(20, dtype=np.int64))
    assert count == 20 and "(15 more)" in detail
    assert differing_in(detail) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("detail", ["", "exit code 1; stderr empty", "no output file",
                                    "2 of 7 vertices differ: x: expected 1 got 2; 3 expected 9 got 8",
                                    "1 of 7 vertices differ: 123456789012: expected 1 got 2"])
def test_a_detail_that_names_no_vertex_reads_back_none(detail):
    assert differing_in(detail) == []


def test_a_detail_cut_short_still_gives_its_whole_items():
    assert differing_in("3 of 9 vertices differ: 4: expected 1 got 2; 7: expected INF got 3; 8: exp") == [4, 7]


# --- what the record says of a run that did not end well -----------------------------------------

def test_a_timeout_says_how_long_it_ran_and_what_its_file_was(tmp_path):
    record = classify(run(tmp_path, exit_code=None, output=GOOD.replace("3:9", "3:8")), REFERENCE)
    assert record["status"] == "timeout" and record["distances"] == "timeout"
    assert record["file_distances"] == "wrong" and record["mismatches"] == 1
    assert record["detail"] == ("killed after 5 s; the output file was wrong too "
                                "(1 of 7 vertices differ: 3: expected 9 got 8)")


def test_a_crash_without_a_file_says_only_why(tmp_path):
    record = classify(run(tmp_path, exit_code=2, stderr="usage: sssp --input F\n"), REFERENCE)
    assert record["status"] == "crash" and record["file_distances"] == "no_output"
    assert record["mismatches"] is None
    assert record["detail"] == "exit code 2; stderr: usage: sssp --input F"


def test_a_crash_with_an_unparsable_file_says_nothing_of_the_file(tmp_path):
    record = classify(run(tmp_path, exit_code=1, output="hello\n"), REFERENCE)
    assert record["file_distances"] == "unparsable" and record["detail"] == "exit code 1; stderr empty"


@pytest.mark.parametrize("code, said", [(-9, "killed by SIGKILL"), (-11, "killed by SIGSEGV"),
                                        (-200, "killed by signal 200")])
def test_a_killed_run_names_its_signal(tmp_path, code, said):
    assert classify(run(tmp_path, exit_code=code), REFERENCE)["detail"] == f"{said}; stderr empty"


def test_a_launch_failure_is_a_crash_whose_detail_is_the_launch_error(tmp_path):
    record = classify(run(tmp_path, exit_code=None, launch_error="./sssp: not executable", output=GOOD), REFERENCE)
    assert (record["status"], record["distances"], record["detail"]) == ("crash", "crash", "./sssp: not executable")
    assert record["mismatches"] is None and record["file_distances"] is None


def test_exit_0_without_a_file_is_no_output_said_so(tmp_path):
    record = classify(run(tmp_path), REFERENCE)
    assert (record["status"], record["distances"], record["file_distances"]) == ("no_output",) * 3
    assert record["detail"] == "exited 0 but wrote no output file"
    assert record["output_format"] is None and record["output_deviations"] is None


def test_a_right_run_in_the_spec_formats_has_every_dimension_ok(tmp_path):
    record = classify(run(tmp_path, output=GOOD), REFERENCE)
    assert (record["status"], record["distances"], record["file_distances"]) == ("ok", "ok", "ok")
    assert (record["output_format"], record["output_deviations"]) == ("ok", [])
    assert (record["stdout_format"], record["stdout_problems"]) == ("ok", [])
    assert (record["computation_ms"], record["filtering_ms"]) == (12.5, 0.5)
    assert record["times_source"] == {"computation": "spec", "filtering": "spec"}
    assert record["time_flag"] == "" and record["unreadable"] == []
    assert (record["rounds"], record["edges_processed"], record["edges_filtered"]) == (None, None, None)


def test_a_right_file_in_odd_formats_is_ok_with_its_deviations_listed(tmp_path):
    odd = GOOD.replace(":", ": ").replace("\n", "\r\n")
    record = classify(run(tmp_path, output=odd), REFERENCE)
    assert record["status"] == "ok" and record["output_format"] == "deviates"
    assert record["output_deviations"] == ["a space after ':' ('v: d')", "CRLF line ends"]


def test_an_incomplete_file_is_wrong_and_keeps_its_deviations(tmp_path):
    record = classify(run(tmp_path, output=GOOD.replace("3:9\n", "")), REFERENCE)
    assert (record["status"], record["distances"]) == ("wrong", "incomplete")
    assert record["detail"] == "output file incomplete: 1 of 7 vertices missing (first: 3)"
    assert record["output_deviations"] == ["vertices not in order 0..n-1"] and record["output_format"] == "deviates"


def test_the_time_flag_compares_both_reported_times_with_the_wall_time(tmp_path):
    assert classify(run(tmp_path, output=GOOD, wall_s=0.0125), REFERENCE)["time_flag"] == ""
    # 12.5 ms of computation fits 11.8 ms of wall (within its millisecond); with 0.5 ms of filtering it does not
    flagged = classify(run(tmp_path, output=GOOD, wall_s=0.0118), REFERENCE)["time_flag"]
    assert flagged == "self-reported kernel time 13.000 ms exceeds the run's wall time 11.8 ms"


def test_a_cpu_program_may_report_a_time_below_a_kernel_launch(tmp_path):
    stdout = ("The total computation kernel time on CPU (numpy) is 0.0001 milli-seconds\n"
              "The total filtering kernel time on CPU (numpy) is 0 milli-seconds\n")
    assert classify(run(tmp_path, stdout=stdout, output=GOOD), REFERENCE)["time_flag"] == ""
    gpu = stdout.replace("CPU (numpy)", "GPU H100")
    assert "below what one kernel launch takes" in classify(run(tmp_path, stdout=gpu, output=GOOD), REFERENCE)["time_flag"]


def test_staff_patterns_are_the_ones_used_to_recover_times(tmp_path):
    staff = (Pattern("elapsed", r"elapsed (?P<value>\d+)", "computation"),)
    record = classify(run(tmp_path, stdout="elapsed 42\nTook 7 ms\n", output=GOOD), REFERENCE, patterns=staff)
    assert record["computation_ms"] == 42 and record["times_source"]["computation"] == "recovered:elapsed"
    assert classify(run(tmp_path, stdout="elapsed 42\nTook 7 ms\n", output=GOOD), REFERENCE)["computation_ms"] == 7


def test_the_output_bound_given_to_classify_is_the_one_applied(tmp_path):
    record = classify(run(tmp_path, output=GOOD), REFERENCE, max_output_bytes=len(GOOD) - 1)
    assert record["status"] == "malformed" and "more than the" in record["detail"]
    assert classify(run(tmp_path, output=GOOD), REFERENCE, max_output_bytes=len(GOOD))["status"] == "ok"


def test_running_out_of_memory_while_placing_the_lines_is_the_runs_failure(tmp_path, monkeypatch):
    from grader.sweep import outfile

    def exhausted(parsed, n):
        raise MemoryError("placing")
    monkeypatch.setattr(outfile, "placed", exhausted)
    record = classify(run(tmp_path, output=GOOD), REFERENCE)
    assert (record["status"], record["distances"], record["file_distances"]) == ("malformed", "unparsable", "unparsable")
    assert record["detail"] == "output file: checking failed (MemoryError: placing)"
    assert record["mismatches"] is None and record["output_format"] is None and record["output_deviations"] is None


def test_a_result_with_only_the_runners_first_fields_is_judged(tmp_path):
    """What classify needs of a result (older runners had no stdout_text and no stderr_head)."""
    path = tmp_path / "output.txt"
    path.write_text(GOOD)
    bare = SimpleNamespace(stdout_head=SPEC, stderr_tail="[...] cut\noops\n", output_path=path, wall_s=1.0, timeout_s=5.0,
                           launch_error="", exit_code=0)
    record = classify(bare, REFERENCE)
    assert record["status"] == "ok" and record["computation_ms"] == 12.5
    record = classify(SimpleNamespace(**{**vars(bare), "exit_code": 1}), REFERENCE)
    assert record["detail"] == "exit code 1; stderr: ... | oops; the output file's distances were right"


def test_the_timings_are_read_from_the_stdout_tail_too(tmp_path):
    result = dataclasses.replace(run(tmp_path, stdout="progress\n" * 3, output=GOOD), stdout_tail=SPEC + "rounds: 12\n")
    record = classify(result, REFERENCE)
    assert record["computation_ms"] == 12.5 and record["rounds"] == 12 and record["stdout_format"] == "ok"


def test_an_unreadable_count_is_said_beside_the_times(tmp_path):
    record = classify(run(tmp_path, stdout=SPEC + "rounds: " + "7" * 40 + "\n", output=GOOD), REFERENCE)
    assert record["rounds"] is None and record["unreadable"] == ["rounds unreadable: a number of 40 digits "
                                                                  "(at most 18 are read)"]


# --- the output file as the checker meets it -----------------------------------------------------

def test_a_file_that_is_a_link_is_unparsable_and_never_followed(tmp_path):
    target = tmp_path / "right.txt"
    target.write_text(GOOD)
    os.symlink(target, tmp_path / "output.txt")
    verdict = judge_file(tmp_path / "output.txt", REFERENCE)
    assert verdict == {"distances": "unparsable", "mismatches": None, "deviations": None,
                       "detail": "output file: the output file is a symbolic link (not followed)"}
    with pytest.raises(Unparsable, match="symbolic link"):
        parse_output(tmp_path / "output.txt", 7)


def test_a_file_past_the_bound_is_refused_unread(tmp_path):
    path = tmp_path / "output.txt"
    path.write_text(GOOD)
    verdict = judge_file(path, REFERENCE, max_bytes=10)
    assert verdict["distances"] == "unparsable" and verdict["detail"].startswith(
        f"output file: the output file is {len(GOOD)} bytes, more than the 10")
    with pytest.raises(Unparsable, match="more than the 10"):
        parse_output(path, 7, max_bytes=10)
    assert parse_output(path, 7, max_bytes=len(GOOD)).tolist() == REFERENCE.tolist()


def test_a_missing_file_is_no_output(tmp_path):
    assert judge_file(tmp_path / "none.txt", REFERENCE) == {"distances": "no_output", "mismatches": None,
                                                            "detail": "no output file", "deviations": None}


def test_a_read_failure_is_the_runs_unparsable_file(tmp_path):
    os.mkfifo(tmp_path / "output.txt")
    verdict = judge_file(tmp_path / "output.txt", REFERENCE)
    assert verdict["distances"] == "unparsable" and verdict["detail"] == "output file: the output file is not a regular file"


def test_sentinels_used_are_named_once_each_in_order(tmp_path):
    reference = np.array([0, -1, -1, -1], dtype=np.int64)
    path = tmp_path / "output.txt"
    path.write_text("0:0\n1:2147483647\n2:1073741824\n3:2147483647\n")
    verdict = judge_file(path, reference, sentinels=(2147483647, 1073741824))
    assert verdict["distances"] == "ok" and verdict["mismatches"] is None
    assert verdict["deviations"] == ["unreachable written as 1073741824, 2147483647 (the spec: INF)"]
    # a sentinel where the vertex is reachable is a wrong distance, shown as INF
    reference = np.array([0, 7, -1, -1], dtype=np.int64)
    verdict = judge_file(path, reference, sentinels=(2147483647, 1073741824))
    assert verdict["mismatches"] == 1 and verdict["detail"] == "1 of 4 vertices differ: 1: expected 7 got INF"


def test_an_inf_word_is_never_a_sentinel_note(tmp_path):
    path = tmp_path / "output.txt"
    path.write_text("0:0\n1:INF\n")
    verdict = judge_file(path, np.array([0, -1], dtype=np.int64), sentinels=(0,))
    assert verdict["distances"] == "ok" and verdict["deviations"] == []


def test_parse_output_reads_sentinels_and_inf_as_unreachable_and_refuses_incomplete(tmp_path):
    path = tmp_path / "output.txt"
    path.write_text("1:INF\n0:5\n2:99\n")
    assert parse_output(path, 3, sentinels=(99,)).tolist() == [5, -1, -1]
    assert parse_output(path, 3).tolist() == [5, -1, 99]
    with pytest.raises(Unparsable, match="1 line\\(s\\) for vertices that do not exist"):
        parse_output(path, 2)


# --- stderr, as the student reads it -------------------------------------------------------------

def test_a_short_stderr_is_shown_whole():
    assert stderr_summary("", "a\nb\nc\nd\ne\n") == "a | b | c | d | e"
    assert stderr_summary("", "a\nb\nc\nd\ne\nf\n") == "a | b | ... | d | e | f"


def test_a_cut_stderr_shows_its_head_and_tail_with_the_gap_marked():
    # the head's last line may be cut mid-line, the tail's first: both are left out
    said = stderr_summary("cause\nusage: x\nmore\npart", "[...] ial\nend 1\nend 2\nend 3\nend 4\n")
    assert said == "cause | usage: x | ... | end 2 | end 3 | end 4"
    assert stderr_summary("only\npart", "[...] ial\nlast\n") == "only | ... | last"


def test_each_line_is_cut_so_the_summary_stays_within_its_width():
    said = stderr_summary("", "a" * 1000 + "\n" + "b" * 1000 + "\n")
    assert said == "a" * 300 + " | " + "b" * 300
    assert stderr_summary("", "c" * 1000, width=100) == "c" * 100


def test_a_crash_shows_the_stderr_head_the_runner_kept(tmp_path):
    result = run(tmp_path, exit_code=1, stderr_head="unknown method\nusage\ncut", stderr="[...] x\nlast line\n")
    assert classify(result, REFERENCE)["detail"] == "exit code 1; stderr: unknown method | usage | ... | last line"


def test_stderr_lines_at_the_edges_of_what_was_kept():
    assert stderr_summary("", "usage: x\nfatal") == "usage: x | fatal"            # no newline at the end
    assert stderr_summary("cause", "[...] x\nlast\n") == "cause | ... | last"     # a head of one whole line
    assert stderr_summary("h\n", "[...] partial") == "h | ... | partial"           # a tail of one line
    assert stderr_summary("h\n", "[...] x\nlast") == "h | ... | last"             # its cut first line left out


def test_exactly_five_differing_vertices_are_all_shown_with_nothing_more():
    got = REFERENCE.copy()
    got[:5] += 1
    count, detail = compare(got, REFERENCE)
    assert count == 5 and "more" not in detail and detail.count("expected") == 5


def test_each_stderr_line_gets_an_equal_share_of_the_width():
    assert stderr_summary("", "x" * 1000) == "x" * 600
    said = stderr_summary("", "".join(f"{i}" * 200 + "\n" for i in range(6)))
    assert said == " | ".join(["0" * 120, "1" * 120, "...", "3" * 120, "4" * 120, "5" * 120])


def test_the_wrong_file_a_timed_out_run_left_is_quoted_cut_at_200_characters(tmp_path):
    reference = np.full(6, 10 ** 17, dtype=np.int64)
    wrong = "".join(f"{v}:{10 ** 17 + 1}\n" for v in range(6))
    full = judge_file(run(tmp_path, output=wrong).output_path, reference)["detail"]
    assert len(full) > 200
    record = classify(run(tmp_path, exit_code=None, output=wrong), reference)
    assert record["detail"] == f"killed after 5 s; the output file was wrong too ({full[:200]})"
