"""grader.grading.submission: what a folder or upload is (a submission itself or a class), the
student id an upload's name gives, and unpacking's results and refusals as a student's tree
arrives (a folder, a package, one too big), links never followed."""
from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path

import pytest

from grader.grading.submission import (Limits, Refused, Submission, has_makefile, looks_like_one, student_id, unpack,
                                       unpack_into, what_was_found)

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="unpacking drops to a student's uid: needs root")


@pytest.mark.parametrize("name, student", [
    ("sssp_gpu.tgz", "sssp_gpu"), ("jane.tar.gz", "jane"), ("jane.TAR.GZ", "jane"), ("jane.tar", "jane"),
    ("jane.Zip", "jane"), ("jane.gz", "jane.gz"), (".tgz", ".tgz"), ("a.tgz.zip", "a.tgz"), ("jane", "jane"),
])
def test_the_student_id_is_the_upload_name_without_its_archive_suffix(name, student):
    assert student_id(Path("/uploads") / name) == student


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.mark.parametrize("files, one", [
    ({"Makefile": "sssp:\n"}, True),
    ({"makefile": "sssp:\n"}, True),
    ({"GNUmakefile": "sssp:\n"}, True),
    ({"sssp_gpu/Makefile": "sssp:\n"}, True),
    ({"sssp_gpu/Makefile": "sssp:\n", ".DS_Store": "", ".git/HEAD": ""}, True),
    ({"sssp_gpu/Makefile": "sssp:\n", "README": ""}, False),
    ({"a/Makefile": "sssp:\n", "b/Makefile": "sssp:\n"}, False),
    ({"a/b/Makefile": "sssp:\n"}, False),
    ({"Makefile.txt": "", "src/sssp.cu": ""}, False),
    ({"sssp_gpu.tgz": ""}, False),
])
def test_a_folder_is_a_submission_when_a_makefile_is_at_its_top_or_in_its_only_subfolder(tmp_path, files, one):
    assert looks_like_one(tree(tmp_path / "sub", files)) is one


def test_a_makefile_or_only_subfolder_that_is_a_link_is_not_followed(tmp_path):
    real = tree(tmp_path / "real", {"Makefile": "sssp:\n"})
    linked = tmp_path / "linked"
    linked.mkdir()
    os.symlink(real / "Makefile", linked / "Makefile")
    assert not has_makefile(linked) and not looks_like_one(linked)
    through = tmp_path / "through"
    through.mkdir()
    os.symlink(real, through / "sssp_gpu")
    assert not looks_like_one(through)
    folder = tmp_path / "folder"
    (folder / "Makefile").mkdir(parents=True)
    assert not has_makefile(folder)


def package(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


@ROOT_ONLY
def test_a_package_unpacks_into_a_root_owned_tree_with_its_counts(tmp_path):
    upload = package(tmp_path / "jane.tgz", {"sssp_gpu/Makefile": b"sssp:\n", "sssp_gpu/sssp.cu": b"int main;\n"})
    got = unpack_into(Submission("jane", upload, "tar"), tmp_path / "out")
    assert got.top == tmp_path / "out" / "sssp_gpu" and got.makefile and got.found == ""
    assert (got.files, got.bytes) == (2, len(b"sssp:\n") + len(b"int main;\n"))
    assert got.peak_bytes > 0 and got.notes == ()
    info = os.lstat(got.top / "sssp.cu")
    assert (info.st_uid, info.st_gid) == (os.geteuid(), os.getegid())
    assert not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    assert (os.stat(tmp_path / "out").st_mode & 0o777) == 0o700          # the tree's top: root's alone
    deep = tmp_path / "graded" / "jane" / "tree"                          # its parents are made too
    assert unpack(Submission("jane", upload, "tar"), deep) == deep / "sssp_gpu"


@ROOT_ONLY
def test_a_folder_submission_is_copied_and_a_tree_without_a_makefile_says_what_it_holds(tmp_path):
    source = tree(tmp_path / "src", {"notes.txt": "hello", "code/sssp.cu": "x"})
    got = unpack_into(Submission("jane", source, "dir"), tmp_path / "out")
    assert got.top == tmp_path / "out" and not got.makefile
    # the folder counts toward the file limit too
    assert (got.top / "notes.txt").read_text() == "hello" and (got.files, got.bytes) == (3, 6)
    assert got.found == what_was_found(got.top) == "no Makefile at the top of the submission; found code/, notes.txt"


@ROOT_ONLY
def test_an_upload_past_the_size_limit_is_refused_unread(tmp_path):
    upload = tmp_path / "big.tgz"
    upload.write_bytes(b"\0" * (3 << 20))
    with pytest.raises(Refused, match="^the upload is 3 MiB, more than 2 MiB$"):
        unpack_into(Submission("jane", upload, "tar"), tmp_path / "out", Limits(max_bytes=2 << 20))
    assert os.listdir(tmp_path / "out") == []


@ROOT_ONLY
def test_an_upload_that_is_a_link_is_refused(tmp_path):
    real = package(tmp_path / "real.tgz", {"Makefile": b"sssp:\n"})
    os.symlink(real, tmp_path / "link.tgz")
    with pytest.raises(Refused):
        unpack_into(Submission("jane", tmp_path / "link.tgz", "tar"), tmp_path / "out")


@ROOT_ONLY
def test_the_destination_must_be_new(tmp_path):
    upload = package(tmp_path / "jane.tgz", {"Makefile": b"sssp:\n"})
    (tmp_path / "out").mkdir()
    with pytest.raises(FileExistsError):
        unpack_into(Submission("jane", upload, "tar"), tmp_path / "out")


@ROOT_ONLY
def test_a_package_with_a_member_outside_its_folder_is_refused(tmp_path):
    upload = package(tmp_path / "jane.tgz", {"Makefile": b"sssp:\n", "../escape": b"x"})
    with pytest.raises(Refused, match="escape"):
        unpack_into(Submission("jane", upload, "tar"), tmp_path / "out")
    assert not (tmp_path / "escape").exists()


@ROOT_ONLY
def test_an_upload_of_exactly_the_limit_and_a_file_near_it_are_unpacked(tmp_path):
    big = bytes(range(256)) * (6 << 12)                                   # 1.5 MiB of one file
    upload = tmp_path / "jane.tar"
    with tarfile.open(upload, "w") as archive:
        for name, data in (("Makefile", b"sssp:\n"), ("graph.bin", big)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    limits = Limits(max_bytes=upload.stat().st_size)                      # the upload is exactly the limit
    got = unpack_into(Submission("jane", upload, "tar"), tmp_path / "out", limits)
    assert got.makefile and (got.top / "graph.bin").read_bytes() == big


@ROOT_ONLY
def test_an_unpacker_that_did_not_drop_to_the_students_uid_is_an_error_not_a_tree(tmp_path, monkeypatch):
    """The child says which uid unpacked; root's answer (the unpacker called without the leased
    ids, as a slip in unpack_into would) stops this student with the grader's error, never a tree."""
    from grader.grading import submission
    real = submission.boundary.run_as
    monkeypatch.setattr(submission.boundary, "run_as", lambda ids, *a, **k: real(None, *a, **k))
    upload = package(tmp_path / "jane.tgz", {"Makefile": b"sssp:\n"})
    with pytest.raises(RuntimeError, match=r"the unpacker ran as uid 0, not the student's \d+"):
        unpack_into(Submission("jane", upload, "tar"), tmp_path / "out")
