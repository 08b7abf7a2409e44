"""Which submissions `grade` finds in the layouts staff download (grader.grading.layouts), the
report's pages (grader.grading.reportpdf) and the rubric's checks, without building anything."""
from __future__ import annotations

import io
import sys
import tarfile
import os
import zipfile
from pathlib import Path

import pytest

from grader.grading import layouts, reportpdf
from grader.grading.layouts import discover, safe_student
from grader.grading.rubric import RubricError, load_rubric
from grader.grading.submission import Refused, Submission, unpack, what_was_found
from pdf_fixtures import paper, pdf_bytes


def package(path: Path, top: str = "sssp_gpu") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as archive:
        for name, text in (("Makefile", "sssp:\n\ttouch sssp\n"), ("sssp.cu", "int main() {}\n")):
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(text)
            archive.addfile(info, io.BytesIO(text.encode()))
    return path


def found(paths) -> dict[str, tuple[str, str, str | None]]:
    return {s.student: (s.kind, s.source.name, s.report.name if s.report else None) for s in discover(paths)}


def test_a_folder_per_student_holding_the_spec_package_and_report(tmp_path):
    for student in ("alice", "bob"):
        package(tmp_path / "class" / student / "sssp_gpu.tgz")
    (tmp_path / "class" / "alice" / "sssp_report.pdf").write_bytes(b"%PDF-1.4\n")
    assert found([tmp_path / "class"]) == {"alice": ("tar", "sssp_gpu.tgz", "sssp_report.pdf"),
                                           "bob": ("tar", "sssp_gpu.tgz", None)}
    # one student's folder named alone is that student
    assert found([tmp_path / "class" / "bob"]) == {"bob": ("tar", "sssp_gpu.tgz", None)}


def test_canvas_moodle_and_blackboard_download_names(tmp_path):
    canvas = tmp_path / "canvas"
    package(canvas / "smithjane_12345_67890_sssp_gpu.tgz")
    package(canvas / "doejohn_LATE_23456_78901_sssp_gpu.tgz")
    (canvas / "smithjane_12345_67891_sssp_report.pdf").write_bytes(b"%PDF-1.4\n")
    assert found([canvas]) == {"smithjane_12345": ("tar", "smithjane_12345_67890_sssp_gpu.tgz",
                                                   "smithjane_12345_67891_sssp_report.pdf"),
                               "doejohn_23456": ("tar", "doejohn_LATE_23456_78901_sssp_gpu.tgz", None)}
    moodle = tmp_path / "moodle"
    package(moodle / "Jane Smith_12345_assignsubmission_file_" / "sssp_gpu.tgz")
    (moodle / "Jane Smith_12345_assignsubmission_onlinetext_").mkdir()
    (moodle / "Jane Smith_12345_assignsubmission_onlinetext_" / "onlinetext.html").write_text("hi")
    package(moodle / "John Doe_777_assignsubmission_file_sssp_gpu.tgz")
    assert found([moodle]) == {"Jane_Smith_12345": ("tar", "sssp_gpu.tgz", None),
                               "John_Doe_777": ("tar", "John Doe_777_assignsubmission_file_sssp_gpu.tgz", None)}
    blackboard = tmp_path / "blackboard"
    package(blackboard / "Project 2_jsmith_attempt_2017-11-20-23-59-59_sssp_gpu.tgz")
    package(blackboard / "Project 2_jsmith_attempt_2017-11-21-10-00-00_sssp_gpu.tgz")    # a later attempt
    (blackboard / "Project 2_jsmith_attempt_2017-11-21-10-00-00.txt").write_text("Name: Jane Smith\n")
    package(blackboard / "Project 2_jdoe_attempt_2017-11-19-08-00-00_sssp_gpu.tgz")
    assert found([blackboard]) == {"jsmith": ("tar", "Project 2_jsmith_attempt_2017-11-21-10-00-00_sssp_gpu.tgz", None),
                                   "jdoe": ("tar", "Project 2_jdoe_attempt_2017-11-19-08-00-00_sssp_gpu.tgz", None)}


def test_gradescope_export_is_named_by_its_submitters(tmp_path):
    export = tmp_path / "export"
    export.mkdir()
    (export / "submission_metadata.yml").write_text(
        "submission_101:\n  :submitters:\n  - :name: Jane Smith\n    :sid: '12345'\n    :email: jane@school.edu\n"
        "  :created_at: 2017-11-20 23:00:00.000000000 -05:00\n"
        "submission_102:\n  :submitters:\n  - :name: John Doe\n    :email: jdoe@school.edu\n"
        "  - :name: Ann Lee\n    :sid: '999'\n    :email: ann@school.edu\n")
    package(export / "submission_101" / "sssp_gpu.tgz")
    (export / "submission_101" / "sssp_report.pdf").write_bytes(b"%PDF-1.4\n")
    package(export / "submission_102" / "sssp_gpu.tgz")
    package(export / "submission_103" / "sssp_gpu.tgz")                          # not in the metadata
    assert found([export]) == {"12345": ("tar", "sssp_gpu.tgz", "sssp_report.pdf"),
                               "jdoe+999": ("tar", "sssp_gpu.tgz", None),
                               "submission_103": ("tar", "sssp_gpu.tgz", None)}


def test_student_names_never_collide_with_the_graders_files(tmp_path):
    for name in ("gradebook.csv.tgz", "runs.jsonl.tgz", "index.html.tgz", ".hidden.tgz", "alice.tgz"):
        package(tmp_path / "class" / name)
    students = set(found([tmp_path / "class"]))
    assert students == {"gradebook.csv-student", "runs.jsonl-student", "index.html-student", "alice"}
    assert safe_student(".secret") == "secret-student" and safe_student("a b/c") == "a_b_c"
    assert safe_student("report_scores.csv") == "report_scores.csv-student"
    for student in students:
        assert not student.endswith(layouts.GRADER_SUFFIXES) and "/" not in student


def test_a_report_without_a_package_is_a_student_whose_build_says_why(tmp_path):
    canvas = tmp_path / "canvas"
    package(canvas / "smithjane_12345_67890_sssp_gpu.tgz")
    (canvas / "doejohn_23456_78901_sssp_report.pdf").write_bytes(b"%PDF-1.4\n")
    subs = {s.student: s for s in discover([canvas])}
    assert subs["doejohn_23456"].kind == "file"
    tree = unpack(subs["doejohn_23456"], tmp_path / "unpacked")
    assert what_was_found(tree) == "no Makefile at the top of the submission; found doejohn_23456_78901_sssp_report.pdf"


def test_a_zip_wrapping_the_package_is_unpacked_once_more_and_a_deep_makefile_is_named(tmp_path):
    inner = package(tmp_path / "sssp_gpu.tgz")
    wrapper = tmp_path / "upload.zip"
    with zipfile.ZipFile(wrapper, "w") as archive:
        archive.write(inner, "sssp_gpu.tgz")
        archive.writestr("sssp_report.pdf", "%PDF-1.4\n")
    tree = unpack(Submission("x", wrapper, "zip"), tmp_path / "x")
    assert (tree / "Makefile").is_file() and tree.name == "sssp_gpu"
    deep = tmp_path / "deep"
    (deep / "code" / "src").mkdir(parents=True)
    (deep / "code" / "src" / "Makefile").write_text("sssp:\n")
    (deep / "README").write_text("see code/\n")
    line = what_was_found(deep)
    assert line == ("no Makefile at the top of the submission; found README, code/; a Makefile at "
                    "code/src/Makefile (the spec: the grader runs make sssp at the top)")


def test_two_packages_for_one_student_grade_the_latest_and_say_so(tmp_path):
    later = package(tmp_path / "c" / "smithjane_12345_67899_sssp_gpu.zip")
    package(tmp_path / "c" / "smithjane_12345_67890_sssp_gpu.tgz")     # written last, but Canvas numbered it first
    (only,) = discover([tmp_path / "c"])
    assert only.student == "smithjane_12345" and only.source == later
    assert only.notes == ("2 uploads for smithjane_12345: graded the latest, smithjane_12345_67899_sssp_gpu.zip "
                          "(not smithjane_12345_67890_sssp_gpu.tgz)",)
    folder = tmp_path / "moodle" / "Jane Smith_12345_assignsubmission_file_"
    first = package(folder / "sssp_gpu.tgz")
    second = package(folder / "sssp_gpu (1).tgz")
    os.utime(first, ns=(2_000_000_000 * 10**9,) * 2)       # the newer file by time, whatever its name
    os.utime(second, ns=(1_000_000_000 * 10**9,) * 2)
    (only,) = discover([tmp_path / "moodle"])
    assert only.source == first and "graded the latest, sssp_gpu.tgz" in only.notes[0]


# --- the report ----------------------------------------------------------------------------

def test_pages_before_the_references():
    assert reportpdf.pages_before_references(["a\nb", "c", "References\n[1] x"]) == (2.0, 3)
    half = "x" * 100 + "\nREFERENCES\n" + "y" * 90
    assert reportpdf.pages_before_references(["a", half]) == (1.5, 2)
    contents = "Contents\n1 Introduction\n7 References\n"          # a table of contents names it too
    assert reportpdf.pages_before_references([contents, "b", "c", "7 References\n[1]"]) == (3.0, 4)
    assert reportpdf.pages_before_references(["a", "b"]) == (2.0, None)


def test_the_report_is_found_counted_and_described(tmp_path):
    pytest.importorskip("pypdf")
    (tmp_path / "sssp_gpu").mkdir()
    (tmp_path / "sssp_gpu" / "My Report.pdf").write_bytes(paper(7, references_partway=True))
    path, how = reportpdf.find(tmp_path, None, "sssp_report.pdf")
    assert path.name == "My Report.pdf" and "not sssp_report.pdf" in how
    facts = reportpdf.describe(path, how, "sssp_report.pdf", 6)
    assert facts["pages"] == 8 and facts["body_pages"] == pytest.approx(7.9, abs=0.1)
    assert "references start on page 8" in facts["found"] and "fewer" not in facts["found"]
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.4\nnot really\n")
    bad = reportpdf.describe(tmp_path / "bad.pdf", "", "sssp_report.pdf", 6)
    assert bad["pages"] is None and "pages not counted" in bad["found"]
    blank = tmp_path / "scan.pdf"
    blank.write_bytes(pdf_bytes(["", "", ""]))
    assert "no text could be read" in reportpdf.describe(blank, "", "sssp_report.pdf", 6)["found"]
    assert reportpdf.describe(None, "", "sssp_report.pdf", 6)["found"] == "no sssp_report.pdf found"


def test_the_pages_are_counted_once_per_pdf_content(tmp_path, monkeypatch):
    pytest.importorskip("pypdf")
    report, memo = tmp_path / "sssp_report.pdf", tmp_path / "report.json"
    report.write_bytes(paper(6))
    first = reportpdf.describe(report, "", "sssp_report.pdf", 6, memo=memo)
    monkeypatch.setattr(reportpdf, "_count_in_child", lambda path: pytest.fail("read again"))
    assert reportpdf.describe(report, "", "sssp_report.pdf", 6, memo=memo) == first
    report.write_bytes(paper(3))                                  # a new report is read again
    monkeypatch.undo()
    assert reportpdf.describe(report, "", "sssp_report.pdf", 6, memo=memo)["pages"] == 4


def test_without_pypdf_the_report_is_found_and_the_note_says_why_it_was_not_counted(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pypdf", None)        # import pypdf now raises ImportError
    assert "pypdf is not installed" in reportpdf._read(str(tmp_path / "any.pdf"))["error"]


# --- the rubric's own checks ---------------------------------------------------------------

def test_the_shipped_rubrics_are_the_spec_weights(tmp_path):
    root = Path(__file__).resolve().parents[1] / "configs"
    default, gate = load_rubric(root / "rubric.toml"), load_rubric(root / "rubric-gate.toml")
    assert (default.code_total, default.report, default.total, default.extra_credit) == (60, 40, 100, 10)
    assert default.extra_methods == ("opt",) and default.weight("opt") == 0 and not default.gate
    assert gate.gate and gate.total == 100 and gate.method_weights == default.method_weights
    bad = tmp_path / "rubric.toml"
    bad.write_text("[correctness.methods]\nopt = 1\n")
    with pytest.raises(RubricError, match="opt is both required"):
        load_rubric(bad)
    bad.write_text("[report]\npages = 6\n")
    with pytest.raises(RubricError, match=r"unknown key\(s\) report.pages"):
        load_rubric(bad)


def test_the_leaderboard_keeps_times_that_cannot_be_true_off_the_board():
    from grader.grading.gradebook import leaderboard

    def row(student, ms, wall_s=0.5, status="ok", **extra):
        return {"graph": "g", "method": "bmf", "sync": "outcore", "program": student, "status": status,
                "computation_ms": ms, "filtering_ms": 0.0, "wall_s": wall_s, "device": "NVIDIA H100", **extra}

    rows = [row("fair", 3.0), row("fair", 5.0), row("fair", 4.0), row("quick", 1.0),
            row("negative", -5.0), row("zero", 0.0), row("nan", float("nan")), row("infinite", float("inf")),
            row("too_long", 900.0, wall_s=0.5), row("sub_launch", 0.0005), row("wrong", 0.5, status="wrong"),
            row("old_flag", 2.0, time_flag="flagged when it ran")]
    board, flagged = leaderboard(rows)
    assert [(b["student"], b["rank"], b["median_kernel_ms"]) for b in board] == [("quick", 1, 1.0), ("fair", 2, 4.0)]
    why = {f["student"]: f["why"] for f in flagged}
    assert set(why) == {"negative", "zero", "nan", "infinite", "too_long", "sub_launch", "old_flag"}
    assert "negative" in why["negative"] and "not a finite number" in why["nan"] and "not a finite" in why["infinite"]
    assert "exceeds the run's wall time" in why["too_long"] and "kernel launch" in why["zero"]
