"""grader.sweep.timings on stdout as students print it: the spec's lines exactly and not quite,
times in other units and words, counts, self-reported times no run can have, the `wall:` line
this project's ./sssp prints, and the staff-pattern guard against exponential backtracking."""
from __future__ import annotations

import pytest

from grader.sweep import timings
from grader.sweep.timings import (Pattern, device_name, nested_quantifier, parse_timing, read_extras, stdout_format,
                                  times, to_ms, wall_flag, wall_startup)

SPEC = ("The total computation kernel time on GPU Tesla K80 is 3.25 milli-seconds\n"
        "The total filtering kernel time on GPU Tesla K80 is 1.5 milli-seconds\n")


@pytest.mark.parametrize("value, unit, ms", [
    ("2", "milli-seconds", 2.0), ("2", "milli seconds", 2.0), ("2", "millisecond", 2.0), ("2", "msecs", 2.0),
    ("2", "ms", 2.0), ("2", "MS", 2.0), ("2", None, 2.0),
    ("2500", "micro-seconds", 2.5), ("2500", "usec", 2.5), ("2500", "us", 2.5), ("2500", "µs", 2.5),
    ("2", "seconds", 2000.0), ("2", "sec", 2000.0), ("2", "s", 2000.0), ("2", "S", 2000.0),
])
def test_every_unit_spelling_is_converted_to_milliseconds(value, unit, ms):
    assert to_ms(value, unit) == ms


def test_a_line_without_a_unit_takes_the_patterns_unit():
    assert to_ms("3", None, "s") == 3000.0 and to_ms("3", None, "us") == 0.003 and to_ms("3", "", "s") == 3000.0


@pytest.mark.parametrize("stdout, computation, filtering", [
    ("The total computation kernel time on GPU X is 4 s\nThe total filtering kernel time on GPU X is 7 us\n", 4000.0,
     0.007),
    ("total computation kernel time is: 12.5\ntotal filtering kernel time is .5 msec\n", 12.5, 0.5),
    ("The total computation kernel time on GPU X is 1.5e2 milli-seconds\n", 150.0, None),
    ("The  total  computation  kernel  time  on  GPU  X  is  9  milli-seconds\n", 9.0, None),
])
def test_the_spec_lines_are_read_in_any_spacing_case_and_unit(stdout, computation, filtering):
    got = parse_timing(stdout)
    assert got[0] == pytest.approx(computation) and (got[1] == pytest.approx(filtering) if filtering else got[1] is None)


def test_the_first_spec_line_of_each_stage_counts():
    stdout = SPEC + SPEC.replace("3.25", "99").replace("1.5", "98")
    assert parse_timing(stdout) == (3.25, 1.5, "Tesla K80")


@pytest.mark.parametrize("text, name", [
    ("GPU NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"), ("gpu  A100 ", "A100"), ("GPU", ""), ("gpu", ""),
    (" GPU ", ""), ("CPU (numpy)", "CPU (numpy)"), ("GPUX", "GPUX"), (None, ""), ("", ""),
])
def test_the_device_name_drops_the_word_gpu_only(text, name):
    assert device_name(text) == name


def test_the_device_comes_from_the_first_line_that_names_one():
    stdout = ("The total computation kernel time on GPU is 1 milli-seconds\n"
              "The total filtering kernel time on GPU Quadro P100 is 1 milli-seconds\n")
    assert parse_timing(stdout)[2] == "Quadro P100"
    assert times(stdout)["device"] == "Quadro P100"


def test_the_spec_words_exactly_are_no_stdout_problem():
    assert stdout_format(SPEC) == []
    assert stdout_format(SPEC.replace("\n", "  \r\n")) == []          # trailing blanks or CR aside


@pytest.mark.parametrize("line, problem", [
    ("The total computation kernel time on GPU Tesla K80 is 3.25 ms",
     "the computation line is not in the spec's words: 'The total computation kernel time on GPU Tesla K80 is "
     "3.25 ms' (expected 'The total computation kernel time on GPU <name> is <x> milli-seconds')"),
    ("the total computation kernel time on GPU Tesla K80 is 3.25 milli-seconds", "not in the spec's words"),
    ("The total computation kernel time on GPU Tesla K80 is 3.25 milli-seconds.", "not in the spec's words"),
    ("The total computation kernel time on GPU  is 3.25 milli-seconds", "not in the spec's words"),
    ("The total computation kernel time on GPU Tesla K80 is 3. milli-seconds", "not in the spec's words"),
    ("   The total computation kernel time on GPU K80 is 3 milli-seconds", "not in the spec's words"),
    ("Computation: 3.25 milli-seconds",
     "no computation line (expected 'The total computation kernel time on GPU <name> is <x> milli-seconds')"),
])
def test_a_computation_line_off_the_spec_is_named(line, problem):
    problems = stdout_format(line + "\n" + SPEC.splitlines()[1] + "\n")
    assert len(problems) == 1 and problem in problems[0]


def test_a_long_off_spec_line_is_quoted_cut():
    line = "The total filtering kernel time on GPU " + "X" * 300 + " is 1 ms"
    problem = stdout_format(SPEC.splitlines()[0] + "\n" + line + "\n")[0]
    assert problem == (f"the filtering line is not in the spec's words: {line[:120]!r} "
                       f"(expected 'The total filtering kernel time on GPU <name> is <x> milli-seconds')")


def test_times_say_where_each_came_from():
    assert times(SPEC)["times_source"] == {"computation": "spec", "filtering": "spec"}
    assert times("")["times_source"] == {"computation": None, "filtering": None}
    found = times("Took 2 s\nFiltering Time: 40 us\n")
    assert (found["computation_ms"], found["filtering_ms"]) == (2000.0, 0.04)
    assert found["times_source"] == {"computation": "recovered:took", "filtering": "recovered:filtering-time"}
    # the spec's line wins over a recovered form, whichever comes first
    found = times("Took 9 ms\n" + SPEC)
    assert found["computation_ms"] == 3.25 and found["times_source"]["computation"] == "spec"


def test_a_staff_pattern_without_a_unit_uses_its_own():
    staff = (Pattern("elapsed", r"elapsed=(?P<value>\d+)", "filtering", unit="s"),)
    found = times("elapsed=3\n", staff)
    assert found["filtering_ms"] == 3000.0 and found["times_source"]["filtering"] == "recovered:elapsed"
    assert found["computation_ms"] is None


def test_a_recovered_time_out_of_range_is_unreadable_and_the_next_pattern_does_not_stand_in():
    staff = (Pattern("a", r"A (?P<value>\d+)", "computation"), Pattern("b", r"B (?P<value>\d+)", "computation"))
    found = times("A " + "9" * 12 + "\nB 5\n", staff)
    assert found["computation_ms"] is None and found["times_source"]["computation"] == "unreadable"
    assert found["unreadable"] == [f"computation time unreadable: {'9' * 12!r} is out of range"]


def test_a_spec_time_out_of_range_is_quoted_cut_at_40():
    digits = "9" * 60
    found = times(f"The total computation kernel time on GPU X is {digits} milli-seconds\n")
    assert found["unreadable"] == [f"computation time unreadable: {digits[:40]!r}... is out of range"]
    found = times("The total computation kernel time on GPU X is 2e9 milli-seconds\n")
    assert found["unreadable"] == ["computation time unreadable: '2e9' is out of range"]
    assert times("The total computation kernel time on GPU X is 1e9 milli-seconds\n")["computation_ms"] == 1e9


def test_a_quoted_time_is_cut_at_40_characters_and_marked_only_when_cut():
    for digits, shown in (("9" * 40, repr("9" * 40)), ("9" * 41, repr("9" * 40) + "...")):
        found = times(f"The total computation kernel time on GPU X is {digits} milli-seconds\n")
        assert found["unreadable"] == [f"computation time unreadable: {shown} is out of range"]
    staff = (Pattern("a", r"A (?P<value>\d+)", "computation"),)
    assert times("A " + "9" * 60 + "\n", staff)["unreadable"] == [
        f"computation time unreadable: {'9' * 40!r} is out of range"]


def test_parse_timing_gives_none_for_a_time_out_of_range():
    assert parse_timing("The total computation kernel time on GPU X is 1e999 milli-seconds\n"
                        "The total filtering kernel time on GPU X is 2 milli-seconds\n") == (None, 2.0, "X")


def test_counts_are_read_at_a_lines_start_in_any_case_and_spacing():
    extras, notes = read_extras("Rounds  :  4\nEDGES PROCESSED: 10 (2.5 per edge)\nedges scanned by filtering:3\n")
    assert extras == {"rounds": 4, "edges_processed": 10, "edges_filtered": 3} and notes == []
    assert read_extras("total rounds: 4\n")[0]["rounds"] is None
    assert read_extras("rounds: 4\nrounds: 5\n")[0]["rounds"] == 4


def test_an_unreadable_count_says_how_many_digits_and_that_the_line_was_cut():
    _, notes = read_extras("rounds: " + "7" * 30 + "\n")
    assert notes == ["rounds unreadable: a number of 30 digits (at most 18 are read)"]
    _, notes = read_extras("edges processed: " + "7" * 5000 + "\n")
    assert notes == [f"edges_processed unreadable: a number of {timings.LINE_CAP - 17}+ digits (at most 18 are read)"]


@pytest.mark.parametrize("computation, filtering, wall_s, device, flag", [
    (1.0, 0.5, 0.01, "H100", ""),
    (10.0, 1.5, 0.01, "H100", "self-reported kernel time 11.500 ms exceeds the run's wall time 10.0 ms"),
    (10.0, 1.0, 0.01, "H100", ""),                                 # within a millisecond of the wall time
    (None, 11.5, 0.01, "H100", "self-reported kernel time 11.500 ms exceeds the run's wall time 10.0 ms"),
    (-5.0, 0.0, 1.0, "H100", "self-reported computation time -5 ms is negative"),
    (1.0, -0.5, 1.0, "H100", "self-reported filtering time -0.5 ms is negative"),
    (float("inf"), 0.0, 1.0, "H100", "self-reported computation time inf ms is not a finite number"),
    (1.0, float("nan"), 1.0, "H100", "self-reported filtering time nan ms is not a finite number"),
    (0.0001, 0.0, 1.0, "H100", "self-reported computation time 0.0001 ms is below what one kernel launch takes (2 us)"),
    (0.0, 0.0, 1.0, "", "self-reported computation time 0 ms is below what one kernel launch takes (2 us)"),
    (0.002, 0.0, 1.0, "H100", ""),
    (0.0001, 0.0, 1.0, "CPU (numpy)", ""),
    (5000.0, 0.0, None, "H100", ""),                               # no wall time: nothing to compare with
    (1001.0, 0.5, 1.0, "H100", "self-reported kernel time 1001.500 ms exceeds the run's wall time 1000.0 ms"),
    (None, None, 0.001, "H100", ""),
])
def test_the_time_flag_names_times_no_run_can_have(computation, filtering, wall_s, device, flag):
    assert wall_flag(computation, filtering, wall_s, device) == flag


@pytest.mark.parametrize("stdout, startup", [
    ("wall: total 1.500 s (start-up 0.250, load 0.100, device 0.125, setup 0, kernels 1, output 0)\n", 0.375),
    ("result\nwall: total 1 s (start-up 0.5)\n", 0.5),
    ("wall: total 1 s (load 0.5, device 0.1)\n", None),
    ("wall: total 1 s (start-up x, device 0.1)\n", None),
    ("wall: total 1 s (start-up -2, device 0.1)\n", None),
    ("wall: total 1 s (start-up 999999, device 2)\n", None),
    ("wall: total 1 s (start-up 999999, device 1)\n", 1000000.0),
    ("wall: total 1 s (start-up 0, device 0)\n", 0.0),
    ("wall: total 1 s (start-up 0.25001)\n", 0.25),
    ("  wall: total 1 s (start-up 0.5)\n", None),
    ("no wall line\n", None),
])
def test_the_startup_time_is_read_from_this_projects_wall_line(stdout, startup):
    assert wall_startup(stdout) == startup


def test_this_projects_own_wall_line_reads_back():
    from sssp_gpu.timing import Stages
    stages = Stages(0.0)
    stages.seconds.update({"start-up": 0.75, "device": 0.5})
    assert wall_startup(stages.line() + "\n") == 1.25


@pytest.mark.parametrize("regex, why", [
    (r"(\d+)+ms", "a repeated part holds another repeat"),
    (r"(?:\d*)*", "a repeated part holds another repeat"),
    (r"(?:a|aa)+", "a repeated part holds an alternation"),
    (r"(?:x(?:ab|cd))*", "a repeated part holds an alternation"),
    (r"(?:(?=a+)b)*", "a repeated part holds another repeat"),
    (r"(?:(?!a+)b)*", "a repeated part holds another repeat"),
    (r"(?>(?:a+)+)", "a repeated part holds another repeat"),
    (r"(?:(x)?(?(1)a+|b))*", "a repeated part holds another repeat"),
    (r"(?:(x)?(?(1)b|a+))*", "a repeated part holds another repeat"),
    (r"(?:a++)+", "a repeated part holds another repeat"),
    (r"(?:a+?)+", "a repeated part holds another repeat"),
    (r"(?:a{1,2})+", "a repeated part holds another repeat"),
    (r"(?:a+){2}", "a repeated part holds another repeat"),
    (r"x(?:ab|(?:c+)+)", "a repeated part holds another repeat"),
    (r"(?:(?>a+))+", "a repeated part holds another repeat"),
])
def test_a_pattern_that_can_backtrack_exponentially_is_named(regex, why):
    assert nested_quantifier(regex) == why


@pytest.mark.parametrize("regex", [r"\d+ms", r"(a|b)c+", r"(?:ab?)+", r"(?:a{1}b)+", r"(?:\d+)?x", r"(a)(?(1)b|c)",
                                   r"(?=a+)b", r"Took\s+(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>ms|s|us)\b"])
def test_a_pattern_that_cannot_is_accepted(regex):
    assert nested_quantifier(regex) == ""
