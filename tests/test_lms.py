"""LMS exports (grader.grading.lms; issue 38 item 5): a roster CSV maps folder names to Canvas's
or Moodle's student ids; the export has those id columns and one assignment column holding the
total as gradebook.csv writes it; a roster that cannot be used stops `grade` with one line
naming the file and line (exit 2), before anything is built. The export through a real
`python -m grader grade` is checked in tests/test_example_class.py."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from grader.commands import grade
from grader.grading.lms import RosterError, export, read_roster, write_export

CANVAS_HEADER = "Student,ID,SIS User ID,SIS Login ID,Section,folder\n"


def graded(score: float, pending: bool = False) -> dict:
    report = {"name": "Report", "score": 0.0, "max_score": 40.0, "extra_data": {"manual": True, "entered": not pending}}
    return {"score": score, "max_score": 100.0, "decimals": 2, "tests": [report]}


def roster(tmp_path: Path, text: str, name: str = "roster.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_canvas_export_has_canvas_columns_and_the_gradebook_numbers(tmp_path):
    path = roster(tmp_path, "\ufeff" + CANVAS_HEADER +           # Excel's BOM, as Canvas's own export
                  '"Smith, Jane",12345,S001,jsmith,CS 515 A,smithjane_12345\n'
                  '"Doe, John",23456,,,CS 515 A,doejohn_23456\n'
                  '"Ghost, Gus",34567,,,CS 515 A,ghost\n'
                  '"Minus, Max",45678,,,CS 515 A,\'-1+1\n')
    class_roster = read_roster(path, "canvas")
    students = {"smithjane_12345": graded(30.0), "doejohn_23456": graded(103.33, pending=True), "-1+1": graded(70),
                "late_student": graded(60)}
    out, notes = write_export(tmp_path, class_roster, students, "SSSP GPU (98765)")
    assert out.name == "gradebook-canvas.csv"
    rows = list(csv.reader(io.StringIO(out.read_text())))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "SSSP GPU (98765)"]
    assert rows[1:] == [["Smith, Jane", "12345", "S001", "jsmith", "CS 515 A", "30"],
                        ["Doe, John", "23456", "", "", "CS 515 A", "103.33"],
                        ["Minus, Max", "45678", "", "", "CS 515 A", "70"]]
    assert notes == [f"{path}: 1 roster folders were not graded (left out of the export): ghost",
                     f"{path}: 1 graded students are not in the roster (left out of the export): late_student",
                     "1 exported totals leave out the report, its score pending (report_scores.csv): doejohn_23456"]


def test_a_moodle_export_has_its_identifier_column_and_one_grade_column(tmp_path):
    path = roster(tmp_path, "folder,Email address,First name\nalice,alice@example.edu,Alice\n"
                            "=cmd,@evil.example,Eve\n")
    header, rows, notes = export(read_roster(path, "moodle"), {"alice": graded(2 / 3 * 100), "=cmd": graded(5)}, "SSSP")
    assert header == ["Email address", "SSSP"]
    assert rows == [["alice@example.edu", "66.67"], ["@evil.example", "5"]] and notes == []
    written, _ = write_export(tmp_path, read_roster(path, "moodle"), {"alice": graded(66.67), "=cmd": graded(5)})
    assert written.name == "gradebook-moodle.csv"
    assert written.read_text().splitlines()[1:] == ["alice@example.edu,66.67", "'@evil.example,5"]


@pytest.mark.parametrize("lms, text, message", [
    ("canvas", "Student,ID\nJane,1\n", r"roster.csv: line 1: needs a 'folder' column"),
    ("canvas", "folder,Student,Section\njane,Jane,A\n", r"roster.csv: line 1: a canvas roster needs one of the columns ID"),
    ("moodle", "folder,ID\njane,1\n", r"roster.csv: line 1: a moodle roster needs one of the columns ID number"),
    ("canvas", "folder,ID\njane,1\n,2\n", r"roster.csv: line 3: the 'folder' cell is empty"),
    ("canvas", "folder,ID\njane,1\njane,2\n", r"roster.csv: line 3: folder 'jane' appears twice"),
    ("canvas", "folder,ID\njane,1\n\njohn,\n", r"roster.csv: line 4: 'john' has no ID: canvas cannot match"),
    ("canvas", "folder,ID\njane,1\njohn,1\n", r"roster.csv: line 3: ID '1' is given to folder 'jane' too"),
    ("moodle", 'folder,Username\njane,"unclosed\n', r"roster.csv: line \d+: not CSV"),
])
def test_a_roster_that_cannot_be_used_is_one_line_naming_file_and_line(tmp_path, lms, text, message):
    with pytest.raises(RosterError, match=message):
        read_roster(roster(tmp_path, text), lms)


def test_a_roster_that_is_not_text_or_not_there(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_bytes(b"folder,ID\njane,1\n\xff\xfe\n")
    with pytest.raises(RosterError, match=r"roster.csv: line 3: not UTF-8 text"):
        read_roster(path, "canvas")
    with pytest.raises(RosterError, match=r"nope.csv: cannot be read"):
        read_roster(tmp_path / "nope.csv", "canvas")


def test_grade_stops_on_a_bad_roster_before_building_anything(tmp_path, capsys):
    subs = tmp_path / "subs" / "alice"
    subs.mkdir(parents=True)
    (subs / "Makefile").write_text("sssp:\n\ttouch built-it\n")
    bad = roster(tmp_path, "Student,ID\nAlice,1\n")
    out = tmp_path / "out"
    assert grade.run([subs], out=out, lms="canvas", roster=bad) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"grader grade: {bad}: line 1: needs a 'folder' column (the student's "
                                        "folder name under DIR); has: Student, ID"]
    assert not out.exists() and not (subs / "built-it").exists()
    assert grade.run([subs], out=out, lms="canvas") == 2                      # --lms without --roster
    assert "--lms and --roster go together" in capsys.readouterr().err
