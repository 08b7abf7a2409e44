"""grader.grading.gradebook: what a student and the class read after grading. results.json's
one rounding, the student's page, gradebook.csv rebuilt from every folder (damaged ones too),
and the leaderboard of times that may be true (and why the others are refused)."""
from __future__ import annotations

import csv
import io
import json
from fractions import Fraction
from pathlib import Path

import pytest

from grader.grading import gradebook
from grader.grading.gradebook import (class_results, leaderboard, refused_time, results_json, students_rows,
                                      write_gradebook, write_leaderboard, write_page, write_results)
from grader.grading.spreadsheet import plain


def a_test(name, score, max_score, **extra) -> dict:
    return {"name": name, "score": score, "max_score": max_score, "output": f"{name} output", "visibility": "visible",
            **extra}


REPORT_PENDING = a_test("Report", 0, 40, extra_data={"manual": True, "entered": False})


def test_results_json_sums_exactly_and_rounds_each_number_once():
    tests = [a_test(f"t{i}", Fraction(10, 3), Fraction(10, 3)) for i in range(3)] + [REPORT_PENDING]
    data = results_json(tests, output="graded", extra={"student": "ann", "program_id": "p1"})
    assert (data["score"], data["max_score"], data["decimals"]) == (10.0, 50.0, 2)
    assert [t["score"] for t in data["tests"]] == [3.33, 3.33, 3.33, 0.0]
    assert data["tests"][0]["output"] == "t0 output" and data["tests"][3]["extra_data"]["entered"] is False
    assert (data["output"], data["visibility"], data["stdout_visibility"]) == ("graded", "visible", "hidden")
    assert (data["student"], data["program_id"]) == ("ann", "p1")
    assert data["tests"][0]["max_score"] == 3.33 and data["tests"][3]["max_score"] == 40.0
    one = results_json(tests, decimals=0)
    assert one["tests"][0]["score"] == 3 and one["score"] == 10 and one["decimals"] == 0
    odd = results_json([a_test("t", Fraction(7, 3), Fraction(10, 3))], decimals=0)
    assert (odd["score"], odd["max_score"], odd["output"]) == (2, 3, "")
    assert (odd["tests"][0]["score"], odd["tests"][0]["max_score"]) == (2, 3)
    assert results_json([])["score"] == 0 and results_json([])["max_score"] == 0 and "student" not in results_json([])


def test_results_are_written_whole_as_json_with_non_ascii_names(tmp_path):
    data = results_json([a_test("Zoë's build", 5, 5)], extra={"student": "zoë"})
    path = write_results(tmp_path / "zoë" / "deep", data)
    assert path == tmp_path / "zoë" / "deep" / "results.json"
    assert json.loads(path.read_text()) == data and "Zoë" in path.read_text() and path.read_text().endswith("}\n")
    assert list(path.parent.iterdir()) == [path]                  # no temporary file left beside it
    # a value JSON has no type for (a report's path) is written as its text, never a failed write
    write_results(tmp_path, {**data, "report": tmp_path / "r.pdf"})
    assert json.loads((tmp_path / "results.json").read_text())["report"] == str(tmp_path / "r.pdf")


def graded(out: Path, student: str, score, tests=None, program_id="", decimals=2) -> dict:
    data = results_json(tests if tests is not None else [a_test("Build", score, 5)], decimals=decimals,
                        extra={"student": student, "program_id": program_id})
    write_results(out / student, data)
    return data


def test_the_class_is_every_folder_with_a_results_file_and_damaged_ones_are_skipped(tmp_path):
    (tmp_path / "aaa-broken").mkdir()                     # sorted before the good ones
    (tmp_path / "aaa-broken" / "results.json").write_text("{")
    graded(tmp_path, "ann", 5)
    graded(tmp_path, "bob", 0)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "results.json").write_text("{not json")
    (tmp_path / "list").mkdir()
    (tmp_path / "list" / "results.json").write_text("[1, 2]")
    (tmp_path / "nameless").mkdir()
    (tmp_path / "nameless" / "results.json").write_text(json.dumps({"student": 3, "tests": []}))
    (tmp_path / "testless").mkdir()
    (tmp_path / "testless" / "results.json").write_text(json.dumps({"student": "t", "tests": "all"}))
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "results.json").mkdir()
    (tmp_path / "deeper" / "x").mkdir(parents=True)
    (tmp_path / "deeper" / "x" / "results.json").write_text(json.dumps({"student": "d", "tests": []}))
    found = class_results(tmp_path)
    assert sorted(found) == ["ann", "bob"] and found["ann"]["score"] == 5


def test_the_gradebook_has_a_column_per_test_and_leaves_a_pending_report_empty(tmp_path):
    students = {
        "bob": graded(tmp_path, "bob", None, [a_test("Build", 5, 5), a_test("bmf", Fraction(7, 3), 9), REPORT_PENDING],
                      program_id="pb"),
        "=cmd": graded(tmp_path, "=cmd", None, [a_test("Build", 0, 5), a_test("tpe", 6, 6),
                                                 a_test("Report", Fraction(67, 2), 40, extra_data={"entered": True})]),
        "ann": graded(tmp_path, "ann", None, [a_test("Build", Fraction(7, 3), Fraction(10, 3))], decimals=4),
    }
    del students["ann"]["program_id"]              # results written before program ids existed
    path = write_gradebook(tmp_path, students)
    assert path == tmp_path / "gradebook.csv"
    table = list(csv.reader(io.StringIO(path.read_text())))
    assert table[0] == ["student", "score", "max_score", "program_id", "Build", "bmf", "Report", "tpe"]
    rows = {plain(r[0]): r for r in table[1:]}
    assert [plain(r[0]) for r in table[1:]] == ["=cmd", "ann", "bob"]          # sorted by student
    assert rows["bob"] == ["bob", "7.33", "54", "pb", "5", "2.33", "", ""]
    assert rows["=cmd"] == ["'=cmd", "39.5", "51", "", "0", "", "33.5", "6"]
    assert rows["ann"] == ["ann", "2.3333", "3.3333", "", "2.3333", "", "", ""]      # its own decimals: 4


# --- the leaderboard -------------------------------------------------------------------------------

def run(student, ms, *, graph="g", method="bmf", sync="incore", status="ok", filtering=0.5, wall_s=10.0, rep=0,
        device="H100", flag="") -> dict:
    return {"program": student, "graph": graph, "method": method, "sync": sync, "status": status, "rep": rep,
            "computation_ms": ms, "filtering_ms": filtering, "wall_s": wall_s, "device": device, "time_flag": flag,
            "run_id": f"{student}-{ms}"}


def test_the_board_ranks_each_students_median_kernel_time_fastest_first_per_graph_method_and_sync():
    rows = [run("ann", 10), run("ann", 30), run("ann", 20), run("bob", 5, filtering=None), run("bob", 7),
            run("cat", 1, method="tpe"), run("cat", 2, sync="outcore")]
    board, flagged = leaderboard(rows)
    assert flagged == []
    assert board == [
        {"graph": "g", "method": "bmf", "sync": "incore", "rank": 1, "student": "bob", "median_kernel_ms": 6.25,
         "correct_runs": 2},
        {"graph": "g", "method": "bmf", "sync": "incore", "rank": 2, "student": "ann", "median_kernel_ms": 20.5,
         "correct_runs": 3},
        {"graph": "g", "method": "bmf", "sync": "outcore", "rank": 1, "student": "cat", "median_kernel_ms": 2.5,
         "correct_runs": 1},
        {"graph": "g", "method": "tpe", "sync": "incore", "rank": 1, "student": "cat", "median_kernel_ms": 1.5,
         "correct_runs": 1},
    ]


def test_wrong_runs_warm_ups_and_runs_without_a_time_are_not_on_the_board():
    rows = [run("ann", 1, status="wrong"), run("bob", 1, rep=-1), run("cat", None), run("dan", 4, rep=2)]
    board, flagged = leaderboard(rows)
    assert [b["student"] for b in board] == ["dan"] and flagged == []


@pytest.mark.parametrize("row, why", [
    (run("ann", 500, wall_s=0.1), "self-reported kernel time 500.500 ms exceeds the run's wall time 100.0 ms"),
    (run("ann", -5), "self-reported computation time -5 ms is negative"),
    (run("ann", 0.0001), "self-reported computation time 0.0001 ms is below what one kernel launch takes (2 us)"),
    (run("ann", 3, flag="recorded when the run was judged"), "recorded when the run was judged"),
    (run("ann", None), "no kernel time printed"),
    (run("ann", 0.0001, device="CPU (numpy)"), ""),
    (run("ann", 3, wall_s=None), ""),
    ({**run("ann", 0.0001), "device": None}, "self-reported computation time 0.0001 ms is below what one kernel "
                                             "launch takes (2 us)"),
])
def test_a_time_that_cannot_be_true_is_refused_saying_why(row, why):
    assert refused_time(row) == why


def test_refused_times_are_listed_apart_with_why(tmp_path):
    rows = [run("ann", 500, wall_s=0.1), run("bob", 3)]
    board, flagged = leaderboard(rows)
    assert [b["student"] for b in board] == ["bob"]
    assert flagged == [{"graph": "g", "method": "bmf", "sync": "incore", "student": "ann", "run_id": "ann-500",
                        "kernel_ms": 500.5, "why": "self-reported kernel time 500.500 ms exceeds the run's wall "
                                                   "time 100.0 ms"}]
    assert write_leaderboard(tmp_path, rows) == tmp_path / "leaderboard.csv"
    assert (tmp_path / "leaderboard.csv").read_text().splitlines() == [
        "graph,method,sync,rank,student,median_kernel_ms,correct_runs", "g,bmf,incore,1,bob,3.5,1"]
    assert (tmp_path / "leaderboard_flagged.csv").read_text().splitlines() == [
        "graph,method,sync,student,run_id,kernel_ms,why",
        "g,bmf,incore,ann,ann-500,500.5,self-reported kernel time 500.500 ms exceeds the run's wall time 100.0 ms"]


def test_a_flagged_run_without_a_filtering_time_shows_its_computation_time():
    assert leaderboard([run("ann", 500, filtering=None, wall_s=0.1)])[1][0]["kernel_ms"] == 500


def test_a_flagged_row_written_before_run_ids_existed_has_an_empty_run_id():
    row = run("ann", -1)
    del row["run_id"]
    assert leaderboard([row])[1][0]["run_id"] == ""


def test_the_median_is_shown_to_the_microsecond():
    assert leaderboard([run("ann", 1.23456, filtering=0)])[0][0]["median_kernel_ms"] == 1.235


def test_students_who_handed_in_the_same_program_share_its_runs_and_a_student_without_one_has_none():
    students = {"bob": {"program_id": "p"}, "ann": {"program_id": "p"}, "cat": {"program_id": ""},
                "dan": {"program_id": "q"}, "eve": {"program_id": "r"}}     # eve's program has no runs yet
    rows = [{"program_id": "p", "x": 1}, {"program_id": "q", "x": 2}, {"program_id": "", "x": 3},
            {"program_id": "-", "x": 4}, {"x": 5}]
    labelled = students_rows(students, rows)
    assert labelled == [{"program_id": "p", "x": 1, "program": "ann"}, {"program_id": "p", "x": 1, "program": "bob"},
                        {"program_id": "-", "x": 4, "program": "cat"}, {"program_id": "q", "x": 2, "program": "dan"}]


# --- the student's page ----------------------------------------------------------------------------

def page(tmp_path, **changes) -> str:
    data = results_json([a_test("Build: make sssp produces ./sssp", 5, 5), a_test("bmf correct on g", Fraction(7, 3), 9),
                         REPORT_PENDING], extra={"program_id": "prog-1", "build_options": {}})
    options = {"student": "ann", "data": data, "rows": [], "build_log": "cc -O2 sssp.c", "rewrites": []}
    options.update(changes)
    path = write_page(tmp_path, **options)
    assert path == tmp_path / "index.html"
    return path.read_text()


def test_the_page_shows_the_scores_as_the_gradebook_writes_them_and_what_is_pending(tmp_path):
    html = page(tmp_path)
    assert "<title>ann: 7.33 / 54</title>" in html and '<span id="score">7.33</span> / 54' in html
    assert "(pending: 40 points staff have not entered yet)" in html
    assert '<tr class="pending"><td>Report</td>\n<td class="n">pending</td><td class="n">40</td>' in html
    assert '<tr class="bad"><td>bmf correct on g</td>\n<td class="n">2.33</td><td class="n">9</td>' in html
    assert '<tr class="ok"><td>Build: make sssp produces ./sssp</td>\n<td class="n">5</td>' in html
    assert "<code>prog-1</code>." in html and "<pre>cc -O2 sssp.c</pre>" in html
    assert "<p>None.</p>" in html and "Submission refused" not in html and "Makefile changes" not in html
    assert "Smallest failing graphs" not in html


def test_the_page_lists_failed_runs_the_refusal_rewrites_and_escapes_what_students_wrote(tmp_path):
    rows = [{"graph": "g", "ordering": "src", "bsize": 256, "bcount": 8, "method": "bmf", "sync": "incore",
             "status": "wrong", "distances": "wrong", "detail": "<script>alert(1)</script>", "computation_ms": 1.5,
             "filtering_ms": None, "wall_s": 0.25, "times_source": {"computation": "spec", "filtering": None},
             "time_flag": ""},
            {"graph": "h", "ordering": "dst", "bsize": 64, "bcount": 2, "method": "tpe", "sync": "outcore",
             "status": "ok", "distances": "ok", "detail": "", "computation_ms": None, "filtering_ms": 2.0,
             "wall_s": None, "time_flag": "odd"}]
    data = results_json([a_test("Build", 5, 5)], extra={"program_id": "p", "build_options": {"nvcc": "nvcc-12"}})
    html = page(tmp_path, data=data, rows=rows, refused="too big", rewrites=["-arch=sm_35 -> -arch=sm_90"],
                student="<b>x</b>")
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>" not in html
    assert '<p class="bad">Submission refused: too big</p>' in html
    assert "<pre>-arch=sm_35 -&gt; -arch=sm_90</pre>" in html
    assert "built with staff compatibility options: nvcc nvcc-12, arch as written" in html
    assert html.count('<tr class="bad"><td>g</td>') == 1 and '<tr class="bad"><td>h</td>' not in html
    assert '<td class="n">1.5</td>\n<td class="n"></td>\n<td class="n">0.25</td>\n<td>spec</td><td></td>' in html
    assert '<td class="n"></td>\n<td class="n">2.0</td>\n<td class="n"></td>\n<td></td><td>odd</td>' in html


def counterexample(**changes) -> dict:
    entry = {"method": "bmf", "sync": "incore", "kind": "wrong", "edges": 2, "vertices": 3, "origin": "g",
             "failed": 1, "tried": 1, "runs": 4, "seconds": 1.25, "stopped": "smallest", "command": "./sssp %INPUT%",
             "expected": [0, 1, None], "got": [0, 2, None], "differing": [1], "edge_list": [[0, 1, 1], [1, 2, 1]],
             "not_shrunk": False, "flaky": False, "race": False, "triage": "", "picture": ""}
    entry.update(changes)
    return entry


def test_the_page_shows_this_builds_counterexamples_only(tmp_path):
    record = {"program_id": "prog-1", "shrunk": [counterexample()],
              "search": [counterexample(method="tpe", edge_list=[]), counterexample(method="segscan")]}
    (tmp_path / "counterexamples.json").write_text(json.dumps(record))
    html = page(tmp_path)
    assert "Smallest failing graphs" in html and "bmf -sync incore: wrong on 2 edges" in html
    assert "segscan -sync incore" in html and "tpe -sync incore" not in html
    assert "<pre>./sssp bmf-incore.txt</pre>" in html and "0 1 1; 1 2 1" in html
    (tmp_path / "counterexamples.json").write_text(json.dumps({**record, "program_id": "older"}))
    assert "Smallest failing graphs" not in page(tmp_path)
    for damaged in ("{", "[]", json.dumps({"program_id": "prog-1"})):
        (tmp_path / "counterexamples.json").write_text(damaged)
        assert "Smallest failing graphs" not in page(tmp_path)


def test_a_page_rounds_to_the_decimals_its_results_were_rounded_to(tmp_path):
    data = results_json([a_test("bmf", Fraction(7, 3), 9)], decimals=4, extra={"program_id": ""})
    assert '<span id="score">2.3333</span> / 9' in page(tmp_path, data=data)
    assert gradebook.environment(4).filters["points"](Fraction(7, 3)) == "2.3333"


def test_a_page_for_results_without_a_program_id(tmp_path):
    data = results_json([a_test("Build", 5, 5)])                   # written before program ids existed
    (tmp_path / "counterexamples.json").write_text(json.dumps({"program_id": "", "shrunk": [counterexample()]}))
    html = page(tmp_path, data=data)
    assert "Program identity <code></code>." in html and "Smallest failing graphs" in html
