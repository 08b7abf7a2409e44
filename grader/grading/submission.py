"""Find students' submissions and unpack them safely.

A submission is a folder, a `.tgz`/`.tar.gz`/`.tar`/`.zip` (the spec's `sssp_gpu.tgz`), or a
folder holding one such per student. Layouts read (grader.grading.layouts): a folder per
student holding the package (and the report, `sssp_report.pdf`); Gradescope's submission
export (`submission_metadata.yml` and `submission_<id>/` folders); the file and folder names
of Canvas, Moodle and Blackboard downloads, grouped by student. The student id is always a
safe folder name that cannot be one of the grader's own files. Unpacking refuses, for the
whole submission, anything that could reach outside its folder or the machine: absolute
paths, `..`, links pointing outside (or anywhere absolute), device files, FIFOs and sockets;
and it stops past a total size or a file count. tarfile's `data` filter is applied as well
where Python has it; zipfile has no filter, so every zip member is checked here and copied
through a byte counter. A package holding only another package (a zip of `sssp_gpu.tgz`) is
unpacked once more.
"""
from __future__ import annotations

import os
import posixpath
import shutil
import stat
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

ARCHIVES = (".tar.gz", ".tgz", ".tar", ".zip")
MAKEFILES = ("Makefile", "makefile", "GNUmakefile")


class Refused(Exception):
    """The submission cannot be unpacked safely; the message says which member and why."""


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 200 << 20
    max_files: int = 20000


@dataclass(frozen=True)
class Submission:
    student: str
    source: Path
    kind: str                      # dir, tar, zip, or file (something that is no package, kept to say so)
    report: Path | None = None     # the report handed in beside the package, if any


def _archive_kind(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(".zip"):
        return "zip"
    if name.endswith((".tar.gz", ".tgz", ".tar")):
        return "tar"
    return None


def student_id(path: Path) -> str:
    name = path.name
    for suffix in ARCHIVES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def looks_like_one(folder: Path) -> bool:
    """A folder that is itself a submission: a Makefile at its top or in its only subfolder."""
    if any((folder / m).is_file() for m in MAKEFILES):
        return True
    children = [c for c in folder.iterdir() if not c.name.startswith(".")]
    return len(children) == 1 and children[0].is_dir() and any((children[0] / m).is_file() for m in MAKEFILES)


# --- unpacking -----------------------------------------------------------------------

def _safe_name(name: str) -> str:
    """A member name as a relative path inside the folder, or Refused."""
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise Refused(f"member {name!r} has an absolute path")
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise Refused(f"member {name!r} climbs out with '..'")
    return "/".join(parts)


def _safe_link(name: str, target: str) -> None:
    if target.startswith("/"):
        raise Refused(f"link {name!r} points to an absolute path {target!r}")
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    if resolved == ".." or resolved.startswith("../"):
        raise Refused(f"link {name!r} points outside the submission ({target!r})")


class _Budget:
    def __init__(self, limits: Limits):
        self.limits, self.bytes, self.files = limits, 0, 0

    def add(self, size: int, name: str) -> None:
        self.files += 1
        self.bytes += max(0, size)
        if self.files > self.limits.max_files:
            raise Refused(f"more than {self.limits.max_files} files (at {name!r})")
        if self.bytes > self.limits.max_bytes:
            raise Refused(f"more than {self.limits.max_bytes >> 20} MiB unpacked (at {name!r})")


def unpack(submission: Submission, dest: Path, limits: Limits = Limits()) -> Path:
    """Unpack (or copy) into dest (created); returns the folder holding the Makefile."""
    dest.mkdir(parents=True, exist_ok=False)
    if submission.kind == "tar":
        _untar(submission.source, dest, limits)
    elif submission.kind == "zip":
        _unzip(submission.source, dest, limits)
    elif submission.kind == "file":
        _copy_file(submission.source, dest, limits)
    else:
        _copy_tree(submission.source, dest, limits)
    top = top_folder(dest)
    inner = _only_package(top)
    if inner is not None:       # an upload that wraps the package (Gradescope and LMS zips do)
        nested = dest / ".package"
        nested.mkdir()
        (_untar if _archive_kind(inner) == "tar" else _unzip)(inner, nested, limits)
        return top_folder(nested)
    return top


def _only_package(top: Path) -> Path | None:
    """The one archive at the top of a tree with no Makefile (reports and READMEs beside it)."""
    if has_makefile(top):
        return None
    archives = [c for c in top.iterdir() if _archive_kind(c) and c.is_file() and not c.is_symlink()]
    return archives[0] if len(archives) == 1 else None


def has_makefile(folder: Path) -> bool:
    return any((folder / m).is_file() for m in MAKEFILES)


def what_was_found(top: Path) -> str:
    """One line for a submission with no Makefile at its top: what is there instead."""
    deeper = sorted((p for p in top.rglob("*") if p.name in MAKEFILES and p.is_file()), key=lambda p: len(p.parts))
    entries = sorted(c.name + ("/" if c.is_dir() else "") for c in top.iterdir() if c.name != ".package")
    shown = ", ".join(entries[:12]) + (f", ... ({len(entries) - 12} more)" if len(entries) > 12 else "")
    line = f"no Makefile at the top of the submission; found {shown or 'nothing'}"
    if deeper:
        line += f"; a Makefile at {deeper[0].relative_to(top)} (the spec: the grader runs make sssp at the top)"
    return line


def top_folder(dest: Path) -> Path:
    """The folder with the Makefile: dest, or its only subfolder (archives of `sssp_gpu/`)."""
    if has_makefile(dest):
        return dest
    children = [c for c in dest.iterdir() if not c.name.startswith(".") and c.name != "__MACOSX"]
    if len(children) == 1 and children[0].is_dir() and not children[0].is_symlink():
        return children[0]
    return dest


def _untar(source: Path, dest: Path, limits: Limits) -> None:
    budget = _Budget(limits)
    try:
        with tarfile.open(source) as archive:
            members = archive.getmembers()
            for member in members:
                name = _safe_name(member.name)
                if member.issym():
                    _safe_link(name, member.linkname)
                elif member.islnk():
                    _safe_name(member.linkname)
                elif member.isdev() or member.isfifo() or not (member.isfile() or member.isdir()):
                    raise Refused(f"member {member.name!r} is a device, FIFO or other special file")
                budget.add(member.size if member.isfile() else 0, member.name)
            if hasattr(tarfile, "data_filter"):
                archive.extractall(dest, members=members, filter="data")
            else:  # older Pythons: everything above was checked by hand already
                archive.extractall(dest, members=members)
    except (tarfile.TarError, EOFError, OSError) as error:
        if isinstance(error, tarfile.FilterError):
            raise Refused(f"tarfile's data filter refused it: {error}") from None
        raise Refused(f"not a readable tar archive: {error}") from None


def _unzip(source: Path, dest: Path, limits: Limits) -> None:
    budget = _Budget(limits)
    try:
        with zipfile.ZipFile(source) as archive:
            for info in archive.infolist():
                name = _safe_name(info.filename)
                mode = info.external_attr >> 16
                if name == "":
                    continue
                if stat.S_ISLNK(mode):
                    target = archive.read(info)[:4096].decode("utf-8", "replace")
                    _safe_link(name, target)
                    budget.add(0, info.filename)
                    (dest / name).parent.mkdir(parents=True, exist_ok=True)
                    os.symlink(target, dest / name)
                    continue
                if stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):   # 0: no type recorded (a file)
                    raise Refused(f"member {info.filename!r} is a device, FIFO or other special file")
                if info.is_dir():
                    (dest / name).mkdir(parents=True, exist_ok=True)
                    continue
                budget.add(0, info.filename)       # bytes are counted as they are copied
                target = dest / name
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as stream, open(target, "xb") as out:
                    _copy_counted(stream, out, budget, info.filename)
                os.chmod(target, 0o755 if mode & 0o111 else 0o644)
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise Refused(f"not a readable zip archive: {error}") from None


def _copy_counted(stream, out, budget: _Budget, name: str) -> None:
    """Copy counting real bytes (a zip's stated sizes may lie)."""
    while chunk := stream.read(1 << 20):
        budget.bytes += len(chunk)
        if budget.bytes > budget.limits.max_bytes:
            raise Refused(f"more than {budget.limits.max_bytes >> 20} MiB unpacked (at {name!r})")
        out.write(chunk)


def _copy_file(source: Path, dest: Path, limits: Limits) -> None:
    info = source.lstat()
    if not stat.S_ISREG(info.st_mode):
        raise Refused(f"{source.name!r} is not a regular file")
    _Budget(limits).add(info.st_size, source.name)
    shutil.copyfile(source, dest / source.name, follow_symlinks=False)


def _copy_tree(source: Path, dest: Path, limits: Limits) -> None:
    budget = _Budget(limits)
    for folder, dirs, files in os.walk(source):
        rel = os.path.relpath(folder, source)
        target_dir = dest if rel == "." else dest / rel
        for name in sorted(dirs + files):
            path = Path(folder) / name
            relative = name if rel == "." else f"{rel}/{name}"
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                _safe_link(relative, os.readlink(path))
                budget.add(0, relative)
                os.symlink(os.readlink(path), target_dir / name)
                if name in dirs:
                    dirs.remove(name)     # not walked into: it is a link
            elif stat.S_ISDIR(info.st_mode):
                (target_dir / name).mkdir()
            elif stat.S_ISREG(info.st_mode):
                budget.add(info.st_size, relative)
                shutil.copyfile(path, target_dir / name, follow_symlinks=False)
                os.chmod(target_dir / name, 0o755 if info.st_mode & 0o111 else 0o644)
            else:
                raise Refused(f"{relative!r} is a device, FIFO or other special file")
