"""grader.grading.rubric: every point a student can earn or lose, exactly, and every rubric a
staff member can write wrong refused with one line naming the file and key. Pure: cells and
rows in, tests out (no program is built or run here)."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest

from grader.grading.rubric import Rubric, RubricError, grader_failure, load_rubric, score

ROOT = Path(__file__).resolve().parents[1]
SPEC_NOTE = "noted, no cost (the spec does not rule it out)"


@dataclass(frozen=True)
class Cell:
    method: str
    graph: str
    ordering: str = "src"
    bsize: int = 256
    bcount: int = 8
    sync: str = "outcore"

    @property
    def run_id(self) -> str:
        return f"{self.method}/{self.graph}/{self.ordering}/{self.sync}"


def row(cell: Cell, status="ok", deviations=(), stdout="ok", problems=(), detail="") -> dict:
    return {"run_id": cell.run_id, "status": status, "distances": "ok" if status == "ok" else status,
            "ordering": cell.ordering, "bsize": cell.bsize, "bcount": cell.bcount, "sync": cell.sync,
            "output_deviations": list(deviations), "stdout_format": stdout, "stdout_problems": list(problems),
            "detail": detail}


BUILT = {"built": True, "cleaned": True, "detail": ""}


def by_name(tests: list[dict]) -> dict[str, dict]:
    return {t["name"].split(" (")[0].split(":")[0]: t for t in tests}


def matrix(methods=("bmf", "tpe", "segscan"), graphs=("g1", "g2"), orderings=("src", "dst")) -> list[Cell]:
    return [Cell(m, g, o) for m in methods for g in graphs for o in orderings]


def everything_right(cells) -> dict:
    return {c.run_id: row(c) for c in cells}


def code_points(tests) -> Fraction:
    return sum((t["score"] for t in tests if not t["name"].startswith(("Report", "Extra"))), Fraction(0))


# --- a right program, and the shares of one that is partly right ------------------------------

def test_a_right_program_earns_every_code_point_and_the_extra_credit():
    cells = matrix() + [Cell("opt", "g1"), Cell("opt", "g2")]
    tests = score(Rubric(), BUILT, cells, everything_right(cells))
    assert code_points(tests) == 60
    extra = [t for t in tests if t["name"].startswith("Extra")][0]
    assert extra["score"] == 10 and extra["max_score"] == 0
    assert extra["output"] == "2 of 2 runs right"
    assert sum(t["max_score"] for t in tests) == 100


def test_correctness_is_shared_by_method_weight_over_the_pairs():
    cells = matrix()
    tests = by_name(score(Rubric(), BUILT, cells, everything_right(cells)))
    # bmf 3, tpe 2, segscan 1 on two graphs: 36 x 3/12 per bmf pair
    assert tests["bmf correct on g1"]["max_score"] == 9 and tests["tpe correct on g2"]["max_score"] == 6
    assert tests["segscan correct on g1"]["max_score"] == 3
    assert tests["bmf correct on g1"]["output"] == "2 of 2 runs right"


def test_one_wrong_run_of_two_costs_half_its_pair_and_the_format_points_of_that_run():
    cells = matrix()
    rows = everything_right(cells)
    wrong = Cell("bmf", "g1", "dst")
    rows[wrong.run_id] = row(wrong, "wrong", detail="1 of 9 vertices differ: 3: expected 4 got 5")
    tests = by_name(score(Rubric(), BUILT, cells, rows))
    assert tests["bmf correct on g1"]["score"] == Fraction(9, 2)
    assert tests["bmf correct on g1"]["output"] == ("1 of 2 runs right\n- dst 256x8 outcore: wrong: "
                                                     "1 of 9 vertices differ: 3: expected 4 got 5")
    assert tests["bmf correct on g2"]["score"] == 9
    assert tests["Output file format"]["score"] == Fraction(7 * 11, 12)
    assert tests["Output file format"]["output"] == ("11 of 12 runs wrote right distances in the spec's format\n"
                                                      "(only runs with right distances earn these points; "
                                                      "1 of 12 runs did not have them)")
    assert tests["Timing lines on stdout"]["score"] == Fraction(7 * 11, 12)
    assert tests["Timing lines on stdout"]["output"].startswith("11 of 12 runs printed both lines")


def test_a_run_not_yet_done_counts_against_its_pair_and_is_said():
    cells = matrix(methods=("bmf",), graphs=("g1",))
    rows = {cells[0].run_id: row(cells[0])}
    tests = by_name(score(Rubric(), BUILT, cells, rows))
    assert tests["bmf correct on g1"]["score"] == 18
    assert tests["bmf correct on g1"]["output"] == "1 of 2 runs right (1 not run yet)"


def test_a_harness_failure_counts_as_not_right_and_says_it_was_the_graders():
    cells = matrix(methods=("bmf",), graphs=("g1",))
    rows = everything_right(cells)
    rows[cells[1].run_id] = row(cells[1], "crash", detail="harness: OSError: disk full")
    assert grader_failure(rows[cells[1].run_id]) and not grader_failure(row(cells[0], "crash", detail="exit 1"))
    tests = by_name(score(Rubric(), BUILT, cells, rows))
    assert tests["bmf correct on g1"]["score"] == 18
    assert tests["bmf correct on g1"]["output"].endswith(
        "- dst 256x8 outcore: the grader could not judge this run (its failure, not your program's): "
        "harness: OSError: disk full")


def test_a_method_not_in_the_rubric_earns_nothing_and_costs_nothing():
    cells = matrix(methods=("bmf", "dijkstra"))
    rows = everything_right(cells)
    for c in cells:
        if c.method == "dijkstra":
            rows[c.run_id] = row(c, "wrong")
    tests = score(Rubric(), BUILT, cells, rows)
    assert code_points(tests) == 60 and not any("dijkstra" in t["name"] for t in tests)


def test_partial_all_gives_a_pair_all_or_nothing():
    cells = matrix(methods=("bmf",))
    rows = everything_right(cells)
    rows[cells[0].run_id] = row(cells[0], "timeout")
    rubric = Rubric(correctness_partial="all", output_partial="all", stdout_partial="all")
    tests = by_name(score(rubric, BUILT, cells, rows))
    assert tests["bmf correct on g1"]["score"] == 0 and tests["bmf correct on g2"]["score"] == 18
    assert tests["Output file format"]["score"] == 0 and tests["Timing lines on stdout"]["score"] == 0
    assert code_points(score(rubric, BUILT, cells, everything_right(cells))) == 60


def test_extra_credit_partial_all_and_a_missing_optimization_costs_nothing():
    cells = matrix(methods=("bmf",)) + [Cell("opt", "g1"), Cell("opt", "g2")]
    rows = everything_right(cells)
    rows[Cell("opt", "g2").run_id] = row(Cell("opt", "g2"), "crash")
    extra = [t for t in score(Rubric(), BUILT, cells, rows) if t["name"].startswith("Extra")][0]
    assert extra["score"] == 5
    assert extra["output"] == "1 of 2 runs right; a missing or failing optimization costs nothing"
    assert extra["name"] == "Extra credit: opt correct (up to 10 points above the maximum)"
    extra = [t for t in score(Rubric(extra_partial="all"), BUILT, cells, rows) if t["name"].startswith("Extra")][0]
    assert extra["score"] == 0
    assert code_points(score(Rubric(), BUILT, cells, rows)) == 60


def test_no_extra_method_in_the_matrix_is_said_and_scores_zero_of_zero():
    cells = matrix(methods=("bmf",))
    extra = score(Rubric(), BUILT, cells, everything_right(cells))[-2]
    assert (extra["score"], extra["max_score"]) == (0, 0)
    assert extra["output"] == "opt not in the grading matrix: nothing to add, nothing lost"
    extra = score(Rubric(extra_methods=()), BUILT, cells, everything_right(cells))[-2]
    assert extra["name"].startswith("Extra credit: none correct")


# --- build and clean ---------------------------------------------------------------------------

def test_a_program_that_did_not_build_earns_nothing_and_says_why():
    cells = matrix() + [Cell("opt", "g1")]
    rows = everything_right(cells)            # rows of an earlier build do not count
    tests = score(Rubric(), {"built": False, "cleaned": False, "detail": "make: *** no rule"}, cells, rows)
    assert sum(t["score"] for t in tests) == 0
    named = by_name(tests)
    assert named["Build"]["output"] == "make: *** no rule" and named["make clean removes ./sssp"]["output"] == "not built"
    assert named["bmf correct on g1"]["output"] == "not built"
    assert named["Output file format"]["output"].startswith("0 of 0 runs")
    assert score(Rubric(), None, cells, rows)[0]["output"] == "not built"


def test_make_clean_that_leaves_the_program_loses_the_clean_points_only():
    cells = matrix()
    tests = by_name(score(Rubric(), {"built": True, "cleaned": False, "detail": ""}, cells, everything_right(cells)))
    assert tests["make clean removes ./sssp"]["score"] == 0
    assert tests["make clean removes ./sssp"]["output"] == "make clean left ./sssp behind"
    assert tests["Build"]["score"] == 5 and tests["Build"]["output"] == "built"
    assert code_points(list(tests.values())) == 55


# --- format: what the spec rules out costs, what it is silent on is noted -----------------------

def test_a_deviation_the_spec_is_silent_on_is_free_and_noted():
    cells = matrix(methods=("bmf",), graphs=("g1",))
    rows = {c.run_id: row(c, deviations=["CRLF line ends", "unreachable written as 'inf' (the spec: INF)"])
            for c in cells}
    out = by_name(score(Rubric(), BUILT, cells, rows))["Output file format"]
    assert out["score"] == 7
    assert out["output"] == ("2 of 2 runs wrote right distances in the spec's format"
                             f"\n- {SPEC_NOTE}: CRLF line ends"
                             f"\n- {SPEC_NOTE}: unreachable written as 'inf' (the spec: INF)")


def test_a_deviation_the_spec_rules_out_costs_its_runs_share():
    cells = matrix(methods=("bmf",), graphs=("g1",))
    rows = everything_right(cells)
    rows[cells[0].run_id] = row(cells[0], deviations=["vertices not in order 0..n-1", "blank lines"])
    out = by_name(score(Rubric(), BUILT, cells, rows))["Output file format"]
    assert out["score"] == Fraction(7, 2)
    assert out["output"] == ("1 of 2 runs wrote right distances in the spec's format"
                             "\n- vertices not in order 0..n-1"
                             f"\n- {SPEC_NOTE}: blank lines")


def test_a_run_whose_file_was_never_judged_earns_no_format_points():
    cells = matrix(methods=("bmf",), graphs=("g1",))
    rows = everything_right(cells)
    rows[cells[0].run_id] = {**row(cells[0]), "output_deviations": None}
    assert by_name(score(Rubric(), BUILT, cells, rows))["Output file format"]["score"] == Fraction(7, 2)


def test_a_rubric_that_accepts_nothing_charges_every_deviation():
    cells = matrix(methods=("bmf",), graphs=("g1",))
    rows = {c.run_id: row(c, deviations=["CRLF line ends"]) for c in cells}
    assert by_name(score(Rubric(accepted_deviations=()), BUILT, cells, rows))["Output file format"]["score"] == 0


def test_timing_lines_off_the_spec_cost_their_share_and_are_listed_once():
    cells = matrix(methods=("bmf",), graphs=("g1",))
    problem = "no filtering line (expected 'The total filtering kernel time on GPU <name> is <x> milli-seconds')"
    rows = {c.run_id: row(c, stdout="deviates", problems=[problem]) for c in cells}
    rows[cells[1].run_id] = row(cells[1])
    out = by_name(score(Rubric(), BUILT, cells, rows))["Timing lines on stdout"]
    assert out["score"] == Fraction(7, 2)
    assert out["output"] == ("1 of 2 runs printed both lines as the spec words them, with right distances"
                             f"\n- {problem}")


def test_at_most_ten_stdout_problems_are_listed():
    cells = [Cell("bmf", "g1", f"o{i}") for i in range(12)]
    rows = {c.run_id: row(c, stdout="deviates", problems=[f"problem {i:02d}"]) for i, c in enumerate(cells)}
    out = by_name(score(Rubric(), BUILT, cells, rows))["Timing lines on stdout"]["output"]
    assert out.count("\n- problem") == 10 and "problem 09" in out and "problem 10" not in out


def test_a_wrong_run_in_the_spec_format_earns_no_format_or_timing_points():
    cells = matrix(methods=("bmf",), graphs=("g1",))
    rows = {c.run_id: row(c, "wrong") for c in cells}
    tests = by_name(score(Rubric(), BUILT, cells, rows))
    assert tests["Output file format"]["score"] == 0 and tests["Timing lines on stdout"]["score"] == 0
    assert code_points(list(tests.values())) == 10


# --- the spec's gate -----------------------------------------------------------------------------

def test_the_gate_zeroes_the_code_part_and_the_extra_credit_on_any_required_run_not_right():
    cells = matrix() + [Cell("opt", "g1")]
    rows = everything_right(cells)
    rows[cells[3].run_id] = row(cells[3], "timeout")
    tests = score(Rubric(gate=True), BUILT, cells, rows)
    assert sum(t["score"] for t in tests) == 0
    assert tests[0]["output"].startswith("0: the spec's rule (\"0 credit if ... your code fails correctness tests\"): "
                                         "1 of 12 required runs not right\nbuilt")
    extra = [t for t in tests if t["name"].startswith("Extra")][0]
    assert extra["output"] == "1 of 1 runs right; 0 under the spec's gate"
    assert code_points(score(Rubric(gate=True), BUILT, cells, everything_right(cells))) == 60


def test_the_gate_does_not_close_for_a_wrong_run_of_an_unscored_method():
    cells = matrix(methods=("bmf",)) + [Cell("opt", "g1")]
    rows = everything_right(cells)
    rows[Cell("opt", "g1").run_id] = row(Cell("opt", "g1"), "wrong")
    assert code_points(score(Rubric(gate=True), BUILT, cells, rows)) == 60


# --- the report line --------------------------------------------------------------------------

def test_the_report_is_pending_until_staff_enter_it_and_then_counts_exactly():
    cells = matrix(methods=("bmf",), graphs=("g1",))
    pending = score(Rubric(), BUILT, cells, everything_right(cells), {"found": "sssp_report.pdf: 7 pages"})[-1]
    assert pending["name"] == ("Report (sssp_report.pdf, at least 6 pages before the references): graded by staff")
    assert (pending["score"], pending["max_score"]) == (0, 40)
    assert pending["output"] == ("sssp_report.pdf: 7 pages\npending: staff enter this score "
                                 "(README: \"Grading a class\")")
    assert pending["extra_data"] == {"manual": True, "entered": False}
    entered = score(Rubric(), BUILT, cells, everything_right(cells), {"score": 33.5, "comment": "good plots"})[-1]
    assert entered["score"] == Fraction(67, 2) and entered["extra_data"] == {"manual": True, "entered": True}
    assert entered["output"] == ("no sssp_report.pdf found\nstaff: good plots\n"
                                 "score entered by staff: 33.5 of 40")
    zero = score(Rubric(), BUILT, cells, everything_right(cells), {"score": 0})[-1]
    assert zero["extra_data"]["entered"] and zero["output"].endswith("score entered by staff: 0 of 40")


def test_a_rubric_without_a_report_has_no_report_line():
    cells = matrix(methods=("bmf",), graphs=("g1",))
    tests = score(Rubric(report=0), BUILT, cells, everything_right(cells))
    assert not any(t["name"].startswith("Report") for t in tests)


def test_every_test_carries_the_rubrics_visibility():
    cells = matrix(methods=("bmf",), graphs=("g1",))
    tests = score(Rubric(visibility="hidden"), BUILT, cells, everything_right(cells), {})
    assert {t["visibility"] for t in tests} == {"hidden"}


# --- loading: the shipped rubrics, and each mistake refused naming its key ----------------------

def test_the_shipped_rubric_is_the_specs_weights():
    rubric = load_rubric(ROOT / "configs" / "rubric.toml")
    assert rubric == Rubric()
    assert (rubric.total, rubric.code_total) == (100.0, 60.0)
    gate = load_rubric(ROOT / "configs" / "rubric-gate.toml")
    assert gate.gate and gate.total == 100.0


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rubric.toml"
    path.write_text(text)
    return path


def test_every_key_a_rubric_may_set_is_read(tmp_path):
    rubric = load_rubric(write(tmp_path, """
        visibility = "after_due_date"
        decimals = 3
        [build]
        points = 4
        [clean]
        points = 1.5
        [correctness]
        points = 30
        partial = "all"
        gate = true
        methods = {bmf = 1, tpe = 0}
        [output_format]
        points = 6
        partial = "all"
        accept = ["CRLF"]
        [stdout_format]
        points = 8
        partial = "all"
        [extra_credit]
        points = 5
        partial = "all"
        methods = ["opt", "tpe"]
        [report]
        points = 50
        file = "report.pdf"
        min_pages = 0
        [random_search]
        points = 2
        """.replace("\n        ", "\n")))
    assert rubric == Rubric(build=4, clean=1.5, correctness=30, correctness_partial="all", method_weights={"bmf": 1.0,
                            "tpe": 0.0}, gate=True, output_format=6, output_partial="all", accepted_deviations=("CRLF",),
                            stdout_format=8, stdout_partial="all", extra_credit=5, extra_methods=("opt", "tpe"),
                            extra_partial="all", report=50, report_file="report.pdf", report_min_pages=0,
                            visibility="after_due_date", random_search=2, decimals=3)
    assert rubric.weight("tpe") == 0 and rubric.weight("bmf") == 1 and rubric.weight("opt") == 0
    assert rubric.report_test.startswith("Report (report.pdf, at least 0 pages")


def test_an_empty_rubric_is_the_default(tmp_path):
    assert load_rubric(write(tmp_path, "")) == Rubric()


@pytest.mark.parametrize("text, said", [
    ("bogus = 1", "bogus"),
    ("[build]\npoints = -1", "build.points must be a number >= 0, got -1"),
    ("[build]\npoints = true", "build.points must be a number >= 0, got True"),
    ("[clean]\npoints = \"5\"", "clean.points must be a number >= 0, got '5'"),
    ("[report]\npoints = -0.5", "report.points must be a number >= 0"),
    ("[random_search]\npoints = -2", "random_search.points must be a number >= 0"),
    ("[extra_credit]\npoints = -2", "extra_credit.points must be a number >= 0"),
    ("[output_format]\npoints = -2", "output_format.points must be a number >= 0"),
    ("[stdout_format]\npoints = -2", "stdout_format.points must be a number >= 0"),
    ("[correctness]\npoints = -2", "correctness.points must be a number >= 0"),
    ("build = 5", "[build] must be a table"),
    ("[build]\npartial = \"all\"", "partial"),
    ("[correctness]\npartial = \"most\"", "correctness.partial must be one of fraction, all, got 'most'"),
    ("[output_format]\npartial = \"half\"", "output_format.partial must be one of fraction, all"),
    ("[stdout_format]\npartial = \"half\"", "stdout_format.partial must be one of"),
    ("[extra_credit]\npartial = \"half\"", "extra_credit.partial must be one of"),
    ("[correctness]\nmethods = [\"bmf\"]", "correctness.methods must map method names to weights >= 0"),
    ("[correctness]\nmethods = {bmf = -1}", "correctness.methods must map"),
    ("[correctness]\nmethods = {bmf = true}", "correctness.methods must map"),
    ("[correctness]\nmethods = {bmf = \"3\"}", "correctness.methods must map"),
    ("[correctness]\ngate = 1", "correctness.gate must be true or false, got 1"),
    ("[extra_credit]\nmethods = \"opt\"", "extra_credit.methods must be a list of method names"),
    ("[extra_credit]\nmethods = [1]", "extra_credit.methods must be a list"),
    ("[extra_credit]\nmethods = [\"bmf\", \"tpe\"]", "bmf, tpe is both required (correctness.methods) and extra credit"),
    ("[output_format]\naccept = \"CRLF\"", "output_format.accept must be a list of strings"),
    ("[output_format]\naccept = [1]", "output_format.accept must be a list of strings"),
    ("[report]\nfile = \"\"", "report.file must be a file name, got ''"),
    ("[report]\nfile = \"a/b.pdf\"", "report.file must be a file name, got 'a/b.pdf'"),
    ("[report]\nfile = 3", "report.file must be a file name"),
    ("[report]\nmin_pages = -1", "report.min_pages must be a whole number >= 0, got -1"),
    ("[report]\nmin_pages = 2.5", "report.min_pages must be a whole number >= 0"),
    ("[report]\nmin_pages = true", "report.min_pages must be a whole number >= 0"),
    ("decimals = 7", "decimals must be a whole number in 0..6, got 7"),
    ("decimals = -1", "decimals must be a whole number in 0..6"),
    ("decimals = true", "decimals must be a whole number in 0..6"),
    ("decimals = 1.5", "decimals must be a whole number in 0..6"),
    ("visibility = \"public\"", "visibility must be one of visible, hidden, after_due_date, after_published"),
])
def test_a_mistake_is_refused_naming_the_file_and_key(tmp_path, text, said):
    path = write(tmp_path, text)
    with pytest.raises(RubricError) as refused:
        load_rubric(path)
    assert str(refused.value).startswith(f"{path}: ") and said in str(refused.value)


def test_the_edges_of_what_a_rubric_may_say_are_accepted(tmp_path):
    rubric = load_rubric(write(tmp_path, "decimals = 6\n[build]\npoints = 0\n[report]\nmin_pages = 0\n"
                                         "[extra_credit]\nmethods = [\"tpe\"]\n[correctness]\nmethods = {tpe = 0}\n"))
    assert (rubric.decimals, rubric.build, rubric.report_min_pages, rubric.extra_methods) == (6, 0.0, 0, ("tpe",))
    assert load_rubric(write(tmp_path, "decimals = 0\n")).decimals == 0
    assert load_rubric(write(tmp_path, "[build]\npoints = 2\n")).build == 2.0


def test_a_failed_runs_detail_is_quoted_cut_at_300_characters():
    cells = matrix(methods=("bmf",), graphs=("g1",))
    rows = everything_right(cells)
    rows[cells[0].run_id] = row(cells[0], "crash", detail="x" * 400)
    text = by_name(score(Rubric(), BUILT, cells, rows))["bmf correct on g1"]["output"]
    assert text.splitlines()[1] == "- src 256x8 outcore: crash: " + "x" * 300


def test_a_missing_or_malformed_rubric_is_one_rubric_error_naming_the_file(tmp_path):
    with pytest.raises(RubricError, match=f"^{tmp_path / 'none.toml'}: no such rubric$"):
        load_rubric(tmp_path / "none.toml")
    with pytest.raises(RubricError, match="not valid TOML"):
        load_rubric(write(tmp_path, "[build\npoints = 5\n"))


def test_what_each_line_says_of_a_clean_build_and_of_rows_written_before_every_field_existed():
    cells = matrix(methods=("bmf",), graphs=("g1",))
    rows = everything_right(cells)
    rows[cells[0].run_id] = {**row(cells[0], "wrong"), "distances": "incomplete", "detail": "3 of 9 vertices missing"}
    older = {k: v for k, v in row(cells[1], "timeout").items() if k not in ("distances", "detail")}
    rows[cells[1].run_id] = older
    tests = by_name(score(Rubric(), BUILT, cells, rows))
    assert tests["make clean removes ./sssp"]["output"] == "removed"
    assert tests["bmf correct on g1"]["output"].splitlines()[1:] == [
        "- src 256x8 outcore: incomplete: 3 of 9 vertices missing", "- dst 256x8 outcore: timeout: "]


def test_every_costly_deviation_and_stdout_problem_is_its_own_line():
    cells = matrix(methods=("bmf",), graphs=("g1",))
    rows = {c.run_id: row(c, deviations=["vertices not in order 0..n-1", "no ':' between vertex and distance"],
                          stdout="deviates", problems=["no computation line", "no filtering line"]) for c in cells}
    tests = by_name(score(Rubric(), BUILT, cells, rows))
    assert tests["Output file format"]["output"].splitlines()[1:] == [
        "- no ':' between vertex and distance", "- vertices not in order 0..n-1"]
    assert tests["Timing lines on stdout"]["output"].splitlines()[1:] == ["- no computation line", "- no filtering line"]


def test_several_extra_methods_are_named_and_a_program_not_built_earns_none_of_them():
    cells = matrix(methods=("bmf",), graphs=("g1",)) + [Cell("opt", "g1"), Cell("fast", "g1")]
    rubric = Rubric(extra_methods=("opt", "fast"))
    extra = score(rubric, BUILT, cells, everything_right(cells))[-2]
    assert extra["name"] == "Extra credit: opt, fast correct (up to 10 points above the maximum)"
    assert extra["score"] == 10 and extra["output"] == "2 of 2 runs right"
    extra = score(rubric, {"built": False, "cleaned": False, "detail": "no"}, cells, everything_right(cells))[-2]
    assert extra["score"] == 0
    assert extra["output"] == "0 of 2 runs right; a missing or failing optimization costs nothing"


def test_a_matrix_without_a_required_method_scores_build_clean_and_extra_only():
    cells = [Cell("opt", "g1"), Cell("opt", "g2")]
    tests = score(Rubric(), BUILT, cells, everything_right(cells))
    assert not any(" correct on " in t["name"] for t in tests)
    assert code_points(tests) == 10 and tests[-2]["score"] == 10


def test_a_report_worth_one_point_still_has_its_line():
    cells = matrix(methods=("bmf",), graphs=("g1",))
    tests = score(Rubric(report=1), BUILT, cells, everything_right(cells), {"score": 1})
    assert tests[-1]["name"].startswith("Report") and (tests[-1]["score"], tests[-1]["max_score"]) == (1, 1)
