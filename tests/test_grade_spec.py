"""grader grade scores as the spec says (issue 23), end to end on the CPU: stand-in student
programs (tests/fixtures/spec_variants/sssp.c, one behaviour changed each, built by a real
Makefile) on Figure 1 and a 46-vertex graph with unreachable vertices.

The matrix: bmf given x (outcore, incore) and tpe source x (outcore, incore) are the required
runs (4 per graph); opt given outcore is the extra credit (1 per graph). With the default
rubric, correctness 36 splits bmf 3 : tpe 2, so per graph bmf 10.8 and tpe 7.2."""
from __future__ import annotations

import csv
import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest

from grader.commands import grade
from test_grade import FIGURE1, ROOT, needs_cc, results, rows_of, tiny_graph

VARIANTS = ROOT / "tests" / "fixtures" / "spec_variants" / "sssp.c"
GATE = ROOT / "configs" / "rubric-gate.toml"
BUILD, CLEAN = "Build: make sssp produces ./sssp", "make clean removes ./sssp"
FORMAT = "Output file format (<vertex>:<distance> lines from 0:0, in order)"
TIMING = "Timing lines on stdout (the spec's two lines)"
EXTRA = "Extra credit: opt correct (up to 10 points above the maximum)"


def spec_config(folder: Path, timeout: float = 1.0) -> Path:
    path = folder / "grading.toml"
    path.write_text(f"""
graphs = [{json.dumps(str(FIGURE1))}, {json.dumps(str(tiny_graph(folder)))}]
configs = [[256, 8]]
timeout_s = {timeout}
[program]
command = "{{sssp}} --input {{input}} --bsize {{bsize}} --bcount {{bcount}} --output {{output}} --method {{method}} --sync {{sync}}"
sentinels = [1073741824, 2147483647]
[methods.bmf]
orderings = ["given"]
syncs = ["outcore", "incore"]
[methods.tpe]
orderings = ["source"]
syncs = ["outcore", "incore"]
[methods.opt]
orderings = ["given"]
syncs = ["outcore"]
[grading]
rubric = {json.dumps(str(ROOT / "configs" / "rubric.toml"))}
build_timeout_s = 60
[grading.counterexamples]        # tests/test_shrink_programs.py covers them: here, as little as can be
floor_s = 0
floor_runs = 0
search_graphs = 0
""")
    return path


def variant(folder: Path, name: str, as_name: str | None = None) -> Path:
    """A submission folder: the variants' source and a Makefile that picks `name`."""
    target = folder / (as_name or name)
    target.mkdir(parents=True)
    shutil.copy(VARIANTS, target / "sssp.c")
    (target / "Makefile").write_text(f"sssp: sssp.c\n\tcc -O1 -DVARIANT='\"{name}\"' -o sssp sssp.c\n\n"
                                     "clean:\n\trm -f sssp *.o\n")
    return target


def scores_of(out: Path, student: str) -> dict:
    return {t["name"]: t["score"] for t in results(out, student)["tests"]}


def earned(out: Path, student: str) -> dict:
    """The tests that earned points (the report's line is staff's and stays 0 here)."""
    return {name: score for name, score in scores_of(out, student).items() if score}


def grade_class(tmp_path: Path, names: list[str], capsys, **options) -> tuple[int, Path]:
    subs = tmp_path / "subs"
    for name in names:
        variant(subs, name)
    out = options.pop("out", tmp_path / "graded")
    code = grade.run([subs], out=out, config=spec_config(tmp_path, options.pop("timeout", 1.0)), quiet=True, **options)
    capsys.readouterr()
    return code, out


@needs_cc
def test_the_measured_rows_earn_build_and_clean_only_and_the_gate_rubric_is_the_spec_literally(tmp_path, capsys):
    names = ["spec", "zeros", "no_file", "empty_file", "hang_after", "hang_big"]
    code, out = grade_class(tmp_path, names, capsys)
    assert code == 0
    assert results(out, "spec")["score"] == pytest.approx(70) and results(out, "spec")["max_score"] == 100
    assert scores_of(out, "spec")[EXTRA] == 10
    # no correct distance: build and clean, nothing else (perfect format and timing lines or not)
    for name in ("zeros", "no_file", "empty_file", "hang_after"):
        assert earned(out, name) == {BUILD: 5, CLEAN: 5}, name
        assert results(out, name)["score"] == 10 and results(out, name)["max_score"] == 100
    assert {r["status"] for r in rows_of(out, "hang_after")} == {"timeout"}
    # right on figure1, hangs on the rest: half of everything that needs right distances
    big = scores_of(out, "hang_big")
    assert big[FORMAT] == pytest.approx(3.5) and big[TIMING] == pytest.approx(3.5) and big[EXTRA] == 5
    assert results(out, "hang_big")["score"] == pytest.approx(5 + 5 + 18 + 3.5 + 3.5 + 5)
    # the same runs under the spec's literal rule: nothing runs again, the failing ones get 0
    runs_before = (out / "runs.jsonl").read_text()
    assert grade.run([tmp_path / "subs"], out=out, config=tmp_path / "grading.toml", quiet=True, rubric=GATE) == 0
    capsys.readouterr()
    assert (out / "runs.jsonl").read_text() == runs_before
    assert results(out, "spec")["score"] == pytest.approx(70)
    for name in ("zeros", "no_file", "empty_file", "hang_after", "hang_big"):
        assert results(out, name)["score"] == 0 and results(out, name)["max_score"] == 100, name
    assert "0 credit if" in results(out, "hang_big")["tests"][0]["output"]


@needs_cc
def test_what_the_spec_does_not_ask_for_costs_nothing(tmp_path, capsys):
    silent = ["no_newline", "crlf", "spaces", "inf_lower", "sample_inf", "int_max", "minus_one"]
    code, out = grade_class(tmp_path, silent + ["no_colon", "no_opt"], capsys)
    assert code == 0
    for name in silent:
        assert results(out, name)["score"] == pytest.approx(70), (name, results(out, name)["tests"])
        assert {r["status"] for r in rows_of(out, name)} == {"ok"}
        notes = next(t["output"] for t in results(out, name)["tests"] if t["name"] == FORMAT)
        assert "noted, no cost" in notes, name
    tiny = next(r for r in rows_of(out, "minus_one") if r["graph"] == "tiny")
    assert "unreachable written as '-1' (the spec: INF)" in tiny["output_deviations"]
    # `v d`: the distances are read and judged right; only the format line deducts
    assert {r["status"] for r in rows_of(out, "no_colon")} == {"ok"}
    assert scores_of(out, "no_colon")[FORMAT] == 0 and results(out, "no_colon")["score"] == pytest.approx(63)
    # opt not done: nothing lost, nothing added
    no_opt = scores_of(out, "no_opt")
    assert no_opt[EXTRA] == 0 and results(out, "no_opt")["score"] == pytest.approx(60)
    assert no_opt[FORMAT] == 7 and no_opt[TIMING] == 7        # its crashed opt runs count nowhere


@needs_cc
def test_the_leaderboard_ranks_only_believable_times_of_right_runs(tmp_path, capsys):
    code, out = grade_class(tmp_path, ["spec", "negative_time", "fast_lie", "zeros"], capsys)
    assert code == 0
    board = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())))
    assert {row["student"] for row in board} == {"spec"}
    flagged = list(csv.DictReader(io.StringIO((out / "leaderboard_flagged.csv").read_text())))
    why = {row["student"]: row["why"] for row in flagged}
    assert set(why) == {"negative_time", "fast_lie"}
    assert "negative" in why["negative_time"] and "below what one kernel launch takes" in why["fast_lie"]


@needs_cc
def test_a_regrade_or_a_late_student_keeps_the_class(tmp_path, capsys):
    subs = tmp_path / "subs"
    for name in ("spec", "zeros"):
        variant(subs, name)
    out = tmp_path / "graded"
    settings = dict(out=out, config=spec_config(tmp_path), quiet=True, methods=["tpe"])
    assert grade.run([subs], **settings) == 0
    late = variant(tmp_path / "late", "spec", as_name="latecomer")
    assert grade.run([late], **settings) == 0                    # one late student, alone
    assert grade.run([subs / "zeros"], **settings) == 1           # one regrade, alone: no right run at all
    capsys.readouterr()
    book = {row["student"]: row for row in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}
    assert set(book) == {"spec", "zeros", "latecomer"}
    assert float(book["spec"]["score"]) == 60 and float(book["latecomer"]["score"]) == 60
    assert {row["student"] for row in csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text()))} \
        == {"spec", "latecomer"}
    scores = list(csv.DictReader(io.StringIO((out / "report_scores.csv").read_text())))
    assert {row["student"] for row in scores} == {"spec", "zeros", "latecomer"}


@needs_cc
def test_staff_enter_the_report_score_and_a_bad_one_stops_with_one_line(tmp_path, capsys):
    subs = tmp_path / "subs"
    for name in ("spec", "zeros"):
        variant(subs, name)
    out = tmp_path / "graded"
    settings = dict(out=out, config=spec_config(tmp_path), quiet=True, methods=["tpe"])
    assert grade.run([subs], **settings) == 0
    sheet = out / "report_scores.csv"
    rows = list(csv.DictReader(io.StringIO(sheet.read_text())))
    assert [r["score"] for r in rows] == ["", ""] and "no sssp_report.pdf found" in rows[0]["found"]
    sheet.write_text(sheet.read_text().replace("spec,,", "spec,33.5,clear and complete"))
    assert grade.run([subs], **settings) == 0
    report = next(t for t in results(out, "spec")["tests"] if t["name"].startswith("Report"))
    assert report["score"] == 33.5 and report["max_score"] == 40 and "clear and complete" in report["output"]
    assert results(out, "spec")["score"] == pytest.approx(93.5)
    assert "33.5" in (out / "gradebook.csv").read_text()
    sheet.write_text(sheet.read_text().replace("33.5", "45"))
    err = io.StringIO()
    assert grade.run([subs], **settings, err=err) == 2
    assert err.getvalue().count("\n") == 1 and "report_scores.csv: line 2: score 45 is outside 0..40" in err.getvalue()
    capsys.readouterr()


@needs_cc
def test_the_spec_package_in_a_folder_per_student_with_its_report(tmp_path, capsys):
    pytest.importorskip("pypdf")
    from pdf_fixtures import paper
    subs = tmp_path / "submissions"
    source = variant(tmp_path / "src", "spec")
    for student, pages in (("alice", 6), ("bob", 4)):
        (subs / student).mkdir(parents=True)
        with tarfile.open(subs / student / "sssp_gpu.tgz", "w:gz") as archive:
            archive.add(source, arcname="sssp_gpu")
        (subs / student / "sssp_report.pdf").write_bytes(paper(pages))
    (subs / "carol").mkdir()
    (subs / "carol" / "notes.txt").write_text("forgot the package\n")
    (subs / "carol" / "main.cu").write_text("int main() {}\n")
    out = tmp_path / "graded"
    assert grade.run([subs], out=out, config=spec_config(tmp_path), quiet=True, methods=["tpe"]) == 0
    capsys.readouterr()
    assert results(out, "alice")["score"] == 60 and results(out, "bob")["score"] == 60
    report = {s: next(t["output"] for t in results(out, s)["tests"] if t["name"].startswith("Report")) for s in ("alice", "bob")}
    assert "sssp_report.pdf found: 7 pages; the references start on page 7: about 6 pages" in report["alice"]
    assert "fewer than the spec's 6" in report["bob"] and "fewer" not in report["alice"]
    carol = results(out, "carol")
    assert carol["score"] == 0 and carol["max_score"] == 100
    assert carol["tests"][0]["output"] == "no Makefile at the top of the submission; found main.cu, notes.txt"


@needs_cc
def test_a_canvas_download_grades_by_student_with_reports_found(tmp_path, capsys):
    canvas = tmp_path / "canvas"
    canvas.mkdir()
    for name, source_variant in (("smithjane_12345_67890", "spec"), ("doejohn_LATE_23456_78901", "zeros")):
        source = variant(tmp_path / "src", source_variant, as_name=name)
        with tarfile.open(canvas / f"{name}_sssp_gpu.tgz", "w:gz") as archive:
            archive.add(source, arcname="sssp_gpu")
    (canvas / "smithjane_12345_67891_sssp_report.pdf").write_bytes(b"%PDF-1.4\n")
    out = tmp_path / "graded"
    assert grade.run([canvas], out=out, config=spec_config(tmp_path), quiet=True, methods=["tpe"]) == 0
    capsys.readouterr()
    assert results(out, "smithjane_12345")["score"] == 60 and results(out, "doejohn_23456")["score"] == 10
    sheet = {row["student"]: row["found"] for row in csv.DictReader(io.StringIO((out / "report_scores.csv").read_text()))}
    assert sheet["smithjane_12345"].startswith("smithjane_12345_67891_sssp_report.pdf found")
    assert sheet["doejohn_23456"] == "no sssp_report.pdf found"
