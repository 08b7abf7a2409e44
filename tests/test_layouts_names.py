"""grader.grading.layouts: who a submission belongs to when the export's metadata is odd (a
submitter with only a name, or nothing; quoted ids; bytes that are not UTF-8; fields before any
submission) and which of one student's uploads is the latest (time, Canvas number, name)."""
from __future__ import annotations

import os
from pathlib import Path

from grader.grading.layouts import discover


def package(path: Path) -> Path:
    """An upload: only its name, time and kind matter here (nothing is unpacked)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x1f\x8b")
    return path


def export(tmp_path: Path, metadata: bytes, folders=("submission_1",)) -> Path:
    root = tmp_path / "export"
    root.mkdir()
    (root / "submission_metadata.yml").write_bytes(metadata)
    for folder in folders:
        package(root / folder / "sssp_gpu.tgz")
    return root


def students(paths) -> list[str]:
    return sorted(s.student for s in discover(paths))


def test_a_submitter_with_only_a_name_is_named_by_it(tmp_path):
    root = export(tmp_path, b"submission_1:\n  :submitters:\n  - :name: Jane Smith\n")
    assert students([root]) == ["Jane_Smith"]


def test_a_submitter_with_nothing_usable_leaves_the_submissions_own_name(tmp_path):
    root = export(tmp_path, b"submission_1:\n  :submitters:\n  - :name: ''\n    :sid: \"\"\n    :email: ''\n")
    assert students([root]) == ["submission_1"]


def test_ids_are_unquoted_and_kept_whole(tmp_path):
    root = export(tmp_path, b"submission_1:\n  :submitters:\n  - :sid: 'X12X'\n"
                            b"submission_2:\n  :submitters:\n  - :sid: \"77\"\n",
                  folders=("submission_1", "submission_2"))
    assert students([root]) == ["77", "X12X"]


def test_an_email_gives_its_local_part(tmp_path):
    root = export(tmp_path, b"submission_1:\n  :submitters:\n  - :name: J\n    :email: jdoe@school.edu\n")
    assert students([root]) == ["jdoe"]


def test_metadata_that_is_not_utf8_is_read_with_its_bad_bytes_replaced(tmp_path):
    root = export(tmp_path, b"submission_1:\n  :submitters:\n  - :name: Jos\xe9 Garc\xeda\n    :sid: '42'\n")
    assert students([root]) == ["42"]


def test_fields_before_any_submission_are_ignored(tmp_path):
    root = export(tmp_path, b":name: stray\n:sid: '9'\nsubmission_1:\n  :submitters:\n  - :sid: '5'\n")
    assert students([root]) == ["5"]


def test_the_newer_upload_of_one_student_is_graded_whatever_the_names_order(tmp_path):
    folder = tmp_path / "moodle" / "Jane Smith_12345_assignsubmission_file_"
    newer, older = package(folder / "a.tgz"), package(folder / "b.tgz")
    os.utime(newer, ns=(2_000_000_000 * 10**9,) * 2)
    os.utime(older, ns=(1_000_000_000 * 10**9,) * 2)
    (only,) = discover([tmp_path / "moodle"])
    assert only.source == newer and only.notes == (
        "2 uploads for Jane_Smith_12345: graded the latest, a.tgz (not b.tgz)",)


def test_a_canvas_numbered_upload_is_later_than_an_unnumbered_one_of_the_same_student(tmp_path):
    numbered = package(tmp_path / "c" / "smithjane_12345_0_sssp_gpu.tgz")
    plain = package(tmp_path / "c" / "smithjane_12345.tgz")
    os.utime(numbered, ns=(1_000_000_000 * 10**9,) * 2)       # older by time: the number decides first
    os.utime(plain, ns=(2_000_000_000 * 10**9,) * 2)
    (only,) = discover([tmp_path / "c"])
    assert only.student == "smithjane_12345" and only.source == numbered
