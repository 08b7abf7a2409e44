"""Find students' submissions and unpack them safely.

A submission is a folder, a `.tgz`/`.tar.gz`/`.tar`/`.zip` (the spec's `sssp_gpu.tgz`), or a
folder holding one such per student. Layouts read (grader.grading.layouts): a folder per
student holding the package (and the report, `sssp_report.pdf`); Gradescope's submission
export (`submission_metadata.yml` and `submission_<id>/` folders); the file and folder names
of Canvas, Moodle and Blackboard downloads, grouped by student. The student id is always a
safe folder name that cannot be one of the grader's own files.

Unpacking happens as the student, never as root (grader.jail.boundary runs
grader.grading.student_files as a leased uid; its docstring lists the rules): it refuses, for
the whole submission, anything that could reach outside its folder or the machine (absolute
paths, `..`, links leading outside, alone or through other links, devices, FIFOs, sockets),
encrypted zips and compressions zipfile lacks, and it stops past a total size or a file count,
checked while streaming. A package holding only another package (a zip of `sssp_gpu.tgz`) is
unpacked once more. Root then takes the checked tree back (boundary.own_tree), frozen.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from grader.grading import student_files
from grader.jail import boundary

ARCHIVES, MAKEFILES = student_files.ARCHIVES, student_files.MAKEFILES   # one list of each, the unpacker's


class Refused(Exception):
    """The submission cannot be unpacked safely; the message says which member and why."""


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 200 << 20
    max_files: int = 20000
    memory_mb: int = 512           # the unpacking child's address space
    uid: int = 64123               # the first uid a leased slot is added to (the sandbox's)


@dataclass(frozen=True)
class Submission:
    student: str
    source: Path
    kind: str                      # dir, tar, zip, or file (something that is no package, kept to say so)
    report: Path | None = None     # the report handed in beside the package, if any
    notes: tuple[str, ...] = field(default=(), compare=False)   # what the layout decided (the latest of two uploads)


@dataclass(frozen=True)
class Unpacked:
    top: Path                      # the folder holding the Makefile (or the top, when none)
    makefile: bool
    found: str                     # without a Makefile: one line saying what is there instead
    notes: tuple[str, ...]         # what was changed to unpack it (names renamed), for the student
    files: int = 0
    bytes: int = 0
    peak_bytes: int = 0            # the unpacking child's peak resident memory


def student_id(path: Path) -> str:
    name = path.name
    for suffix in ARCHIVES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def looks_like_one(folder: Path) -> bool:
    """A folder that is itself a submission: a Makefile at its top or in its only subfolder
    (links are not followed: a folder staff downloaded holds what students chose)."""
    if has_makefile(folder):
        return True
    children = [c for c in folder.iterdir() if not c.name.startswith(".")]
    return len(children) == 1 and children[0].is_dir() and not children[0].is_symlink() and has_makefile(children[0])


# --- unpacking -----------------------------------------------------------------------

def unpack(submission: Submission, dest: Path, limits: Limits = Limits()) -> Path:
    """Unpack (or copy) into dest (created); returns the folder holding the Makefile."""
    return unpack_into(submission, dest, limits).top


def unpack_into(submission: Submission, dest: Path, limits: Limits = Limits()) -> Unpacked:
    """dest (created here, given to a leased uid) filled by grader.grading.student_files as
    that uid, then taken back by root: the tree is root's, read-only to others, and checked."""
    dest.mkdir(parents=True, exist_ok=False, mode=0o700)
    source = Path(submission.source)
    fds, feed = [], None
    with boundary.student_ids(limits.uid) as ids:
        try:
            if ids:
                os.chown(dest, *ids)
            fds.append(boundary.open_folder(dest))
            request = {"task": "unpack", "kind": submission.kind, "dest_fd": fds[0], "name": source.name,
                       "max_files": limits.max_files, "max_bytes": limits.max_bytes}
            if submission.kind == "dir":
                feed = lambda writer: boundary.stream_folder(source, writer, limits.max_files, limits.max_bytes)
            else:
                fds.append(boundary.open_upload(source))
                size = os.fstat(fds[1]).st_size
                if size > limits.max_bytes:
                    raise Refused(f"the upload is {size >> 20} MiB, more than {limits.max_bytes >> 20} MiB")
                request["source_fd"] = fds[1]
            answer, peak = boundary.run_as(ids, student_files.serve, request, tuple(fds), feed=feed,
                                           memory_mb=limits.memory_mb, file_bytes=limits.max_bytes + (1 << 20))
        except boundary.Refusal as error:
            raise Refused(str(error)) from None
        finally:
            for fd in fds:
                os.close(fd)
            if ids:
                boundary.own_tree(dest, os.geteuid(), os.getegid())   # back to root before the uid is given back
    if ids and answer.get("uid") != ids[0]:     # the boundary's promise, checked: never root on student bytes
        raise RuntimeError(f"the unpacker ran as uid {answer.get('uid')}, not the student's {ids[0]}")
    return Unpacked(dest / answer["top"] if answer["top"] else dest, answer["makefile"], answer["found"],
                    tuple(answer["notes"]), answer["files"], answer["bytes"], peak)


def _archive_kind(path: Path) -> str | None:
    return student_files.archive_kind(path.name)


def has_makefile(folder: Path) -> bool:
    """A Makefile at the top of a folder staff named (lstat: a link is not followed)."""
    return any(os.path.isfile(folder / m) and not os.path.islink(folder / m) for m in MAKEFILES)


def what_was_found(top: Path) -> str:
    """One line for a folder with no Makefile at its top: what is there instead (lstat only)."""
    fd = boundary.open_folder(top)
    try:
        return student_files.what_was_found(fd, "")
    finally:
        os.close(fd)
