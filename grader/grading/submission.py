"""Find students' submissions and unpack them safely.

A submission is a folder, a `.tgz`/`.tar.gz`/`.tar`/`.zip` (the spec's `sssp_gpu.tgz`), or a
folder holding one such per student; the student id is the folder's or archive's name
without its extension. Unpacking refuses, for the whole submission, anything that could
reach outside its folder or the machine: absolute paths, `..`, links pointing outside (or
anywhere absolute), device files, FIFOs and sockets; and it stops past a total size or a
file count. tarfile's `data` filter is applied as well where Python has it; zipfile has no
filter, so every zip member is checked here and copied through a byte counter.
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
    kind: str            # dir, tar or zip


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


def discover(paths: list[Path]) -> list[Submission]:
    """Every submission the arguments name, by student id (a repeated id is an error)."""
    found: list[Submission] = []
    for path in map(Path, paths):
        if path.is_file():
            kind = _archive_kind(path)
            if kind is None:
                raise Refused(f"{path}: not a folder or a .tgz/.tar.gz/.tar/.zip archive")
            found.append(Submission(student_id(path), path, kind))
        elif path.is_dir():
            if looks_like_one(path):
                found.append(Submission(student_id(path), path, "dir"))
                continue
            for child in sorted(path.iterdir()):
                if child.name.startswith("."):
                    continue
                kind = "dir" if child.is_dir() and not child.is_symlink() else _archive_kind(child)
                if kind is not None:
                    found.append(Submission(student_id(child), child, kind))
        else:
            raise Refused(f"{path}: no such file or folder")
    seen: dict[str, Path] = {}
    for item in found:
        if item.student in seen:
            raise Refused(f"two submissions for student {item.student!r}: {seen[item.student]} and {item.source}")
        seen[item.student] = item.source
    return found


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
    else:
        _copy_tree(submission.source, dest, limits)
    return top_folder(dest)


def top_folder(dest: Path) -> Path:
    """The folder with the Makefile: dest, or its only subfolder (archives of `sssp_gpu/`)."""
    if any((dest / m).exists() for m in MAKEFILES):
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
