"""Scores are exact where people read them (issue 38 item 4), a pending report reads as pending,
and no CSV cell the grader writes is a formula (issue 37 item 5).

The class graded here reproduces the issue's numbers: a submission right on one graph of three
with opt as extra credit scores 10 + 12 + 7/3 + 7/3 + 10/3 = 30 exactly, which per-test rounding
to 4 places in floats made 29.9999 in gradebook.csv and the page, 30 on the console and a bar
in the 20-30 bin. Its classmate's folder is named `-1+1`, a formula to a spreadsheet."""
from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from grader.commands import grade
from grader.grading import classpage, gradebook, manual
from grader.grading.points import bin_index, exact, rounded, shown
from grader.grading.rubric import Rubric, RubricError, load_rubric, score
from grader.grading.spreadsheet import FORMULA_STARTS, csv_text, plain, safe_cell

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "class"
FIGURE1 = ROOT / "tests" / "data" / "figure1.txt"
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the jail needs root")
needs_cc = pytest.mark.skipif(shutil.which("cc") is None or shutil.which("make") is None, reason="needs cc and make")
INJECTED = "-1+1"        # a folder name a spreadsheet would evaluate to 0


# --- the arithmetic (pure) -------------------------------------------------------------------

def test_rounding_is_once_half_up_and_idempotent():
    assert rounded(Fraction(89999, 3000)) == 30.0 and rounded(Fraction(7, 3)) == 2.33
    assert rounded(Fraction(1, 200)) == 0.01 and rounded(0.125, 2) == 0.13     # half up, not to even
    assert rounded(2.675, 2) == 2.68                # read as the decimal it prints as, not the binary 2.67499...
    assert shown(30.0) == "30" and shown(2.5) == "2.5" and shown(Fraction(7, 3)) == "2.33" and shown(None) == ""
    assert shown(Fraction(7, 3), 0) == "2" and shown(Fraction(7, 3), 4) == "2.3333"
    for value in (Fraction(7, 3), Fraction(10, 3), Fraction(89999, 3000), 29.9999, 0.005):
        assert shown(rounded(value)) == shown(value) and rounded(rounded(value)) == rounded(value)
    # the histogram's bin, exactly: 30 of 100 is 30-40 (float 0.3 * 10 is 3.0000000000000004, 0.7 * 10 ok,
    # but 29.9999 would be 20-30); the maximum is in the last bin
    assert bin_index(30, 100, 10) == 3 and bin_index(29.99, 100, 10) == 2 and bin_index(100, 100, 10) == 9
    assert bin_index(Fraction(3, 10), 1, 10) == 3 and bin_index(110, 100, 10) == 9
    assert [b["count"] for b in classpage.histogram([30.0, 60.0, 100.0], 100)][3] == 1


class Cell:
    def __init__(self, method, graph, n):
        self.method, self.graph, self.run_id = method, graph, f"{method}-{graph}-{n}"


def test_right_on_one_graph_of_three_totals_exactly_30():
    """The issue's wrong_one: bmf right on figure1 only, opt likewise, three graphs."""
    cells = [Cell(m, g, 0) for g in ("figure1", "a", "b") for m in ("bmf", "opt")]
    rows = {c.run_id: {"status": "ok" if c.graph == "figure1" else "wrong", "output_deviations": [],
                       "stdout_format": "ok", "ordering": "given", "bsize": 256, "bcount": 8, "sync": "outcore",
                       "distances": "ok" if c.graph == "figure1" else "wrong"} for c in cells}
    tests = score(Rubric(), {"built": True, "cleaned": True}, cells, rows)
    assert sum(t["score"] for t in tests) == 30                       # exact: Fractions all the way
    data = gradebook.results_json(tests)
    assert data["score"] == 30.0 and data["decimals"] == 2
    shares = {t["name"].split(" (")[0]: t["score"] for t in data["tests"]}
    assert shares["Output file format"] == 2.33 and shares["Timing lines on stdout"] == 2.33
    assert shares["Extra credit: opt correct"] == 3.33 and data["tests"][-1]["score"] == 0   # the report: pending
    assert gradebook.results_json(tests, decimals=1)["tests"][-2]["score"] == 3.3


def test_the_rubric_states_its_decimals(tmp_path):
    assert load_rubric(ROOT / "configs" / "rubric.toml").decimals == 2
    for bad in ("-1", "7", "1.5", "true", '"2"'):
        path = tmp_path / "rubric.toml"
        path.write_text(f"decimals = {bad}\n")
        with pytest.raises(RubricError, match=r"rubric.toml: decimals must be a whole number in 0..6"):
            load_rubric(path)
    (tmp_path / "rubric.toml").write_text("decimals = 0\n")
    assert load_rubric(tmp_path / "rubric.toml").decimals == 0


# --- CSV cells (pure) ---------------------------------------------------------------------------

def test_cells_a_spreadsheet_would_evaluate_are_defused_and_read_back():
    for text in ("=1+1", "+1", "-1+1", "@SUM(A1)", "\tx", "\r=1", " =1", "=HYPERLINK(\"http://x\")"):
        assert safe_cell(text) == "'" + text and plain(safe_cell(text)) == text
    for text in ("alice", "'quoted", "1.5", "a=b", ""):
        assert safe_cell(text) == text and plain(text) == text
    assert safe_cell(-1.5) == -1.5 and safe_cell(None) == ""          # the grader's own numbers stay numbers
    rows = list(csv.reader(io.StringIO(csv_text(["student", "=x"], [["-1+1", 3], ['@a,"b"\n', 4]]))))
    assert rows == [["student", "'=x"], ["'-1+1", "3"], ["'@a,\"b\"\n", "4"]]


def formula_cells(path: Path) -> list[str]:
    """Cells of a CSV file that a spreadsheet would evaluate."""
    return [cell for row in csv.reader(io.StringIO(path.read_text())) for cell in row
            if cell[:1] in FORMULA_STARTS or cell.lstrip(" \n")[:1] in FORMULA_STARTS]


# --- through `grade`: one number everywhere ------------------------------------------------------

def chain_graph(folder: Path, hops: int = 30) -> Path:
    """0 -> hops -> hops-1 -> ... -> 1, listed from its far end: a program that stops after 10
    rounds (examples/class/wrong) gets it wrong in every ordering."""
    order = [0, *range(hops, 0, -1)]
    lines = [f"{a} {b} {1 + (a % 3)}\n" for a, b in zip(order, order[1:])][::-1]
    path = folder / "chain.txt"
    path.write_text("".join(lines))
    return path


def three_graph_config(folder: Path) -> Path:
    """figure1 (wrong is right there), detour and a chain (wrong is wrong): bmf and opt, one run each."""
    path = folder / "grading.toml"
    path.write_text(f"""
graphs = [{json.dumps(str(FIGURE1))}, {json.dumps(str(ROOT / "examples" / "graphs" / "detour.txt"))}, {json.dumps(str(chain_graph(folder)))}]
configs = [[256, 8]]
timeout_s = 10
[program]
command = "{{sssp}} --input {{input}} --output {{output}} --method {{method}} --sync {{sync}}"
[methods.bmf]
orderings = ["given"]
syncs = ["outcore"]
[methods.opt]
orderings = ["given"]
syncs = ["outcore"]
[grading]
rubric = {json.dumps(str(ROOT / "configs" / "rubric.toml"))}
build_timeout_s = 60
[grading.counterexamples]
floor_s = 0
floor_runs = 0
search_graphs = 0
""")
    return path


@needs_cc
@ROOT_ONLY
def test_one_rounded_number_in_results_gradebook_console_pages_and_histogram(tmp_path, capsys):
    subs = tmp_path / "subs"
    shutil.copytree(EXAMPLES / "wrong", subs / "wrong")
    shutil.copytree(EXAMPLES / "right", subs / INJECTED)
    out = tmp_path / "graded"
    config = three_graph_config(tmp_path)
    assert grade.run([subs], out=out, config=config, quiet=True, diagnose=False) == 0
    console = capsys.readouterr().out
    data = json.loads((out / "wrong" / "results.json").read_text())
    assert data["score"] == 30.0 and data["max_score"] == 100.0 and data["decimals"] == 2
    tests = {t["name"]: t for t in data["tests"]}
    fmt = next(t for n, t in tests.items() if n.startswith("Output file format"))
    assert fmt["score"] == 2.33
    # gradebook.csv: the same texts
    book = {plain(r["student"]): r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}
    assert book["wrong"]["score"] == "30" and book["wrong"][fmt["name"]] == "2.33"
    assert book["wrong"][next(n for n in tests if n.startswith("Report"))] == ""          # pending: empty
    # the console's closing table
    assert re.search(r"^wrong\s+30 / 100\s+build ok", console, re.M), console
    # the student's page: the total, the line, and the report pending (not 0, not red)
    page = (out / "wrong" / "index.html").read_text()
    assert '<span id="score">30</span> / 100' in page and "<title>wrong: 30 / 100</title>" in page
    assert '<td class="n">2.33</td><td class="n">7</td>' in page
    report_row = next(r for r in page.split("<tr") if "graded by staff" in r)
    assert 'class="pending"' in report_row and '<td class="n">pending</td>' in report_row
    assert "bad" not in report_row.split(">")[0] and '<td class="n">0</td>' not in report_row
    # the class page: the total, the pending cell, and the histogram's 30-40 bar holding it
    book_page = (out / "index.html").read_text()
    assert '<td class="n" data-v="30.0">30 / 100</td>' in book_page
    assert 'data-v="-0.5">pending</td>' in book_page and "pending: staff have not entered it" in book_page
    assert "1 students: 30 to 40</title>" in book_page and "0 students: 20 to 30</title>" in book_page
    # no CSV the grader wrote holds a formula, though a student is called -1+1
    assert (out / "leaderboard.csv").exists() and (out / manual.FILE).exists()
    for path in sorted(out.glob("*.csv")):
        assert formula_cells(path) == [], path
    assert "'-1+1" in (out / "gradebook.csv").read_text() and "'-1+1" in (out / manual.FILE).read_text()
    # staff enter the report score on the row as written ('-1+1): it reaches that student's total
    sheet = (out / manual.FILE).read_text().replace("'-1+1,,", "'-1+1,33.333,")
    (out / manual.FILE).write_text(sheet)
    assert grade.run([subs], out=out, config=config, quiet=True, diagnose=False) == 0
    again = capsys.readouterr().out
    right = json.loads((out / INJECTED / "results.json").read_text())
    assert right["score"] == 103.33 and re.search(r"^-1\+1\s+103.33 / 100", again, re.M), again
    book = {plain(r["student"]): r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}
    assert book[INJECTED]["score"] == "103.33"
    assert "<title>-1+1: 103.33 / 100</title>" in (out / INJECTED / "index.html").read_text()
