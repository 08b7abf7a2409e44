"""The built tree copied AS THE BUILD'S UID (never root), for the grader to keep read-only:
measured first against caps on files, inodes (files, folders and links) and apparent bytes
(a sparse file counts at its apparent size: 1 GB of holes would be 1 GB on the host's disk),
then copied, by descriptors only (grader.grading.student_files' terms: a forked child of
grader.jail.boundary, links copied as links and never followed; FIFOs, sockets and devices a
build left behind are skipped). Standard library and student_files only.
"""
from __future__ import annotations

import os
import stat

from grader.grading.student_files import CHUNK, Refused, serving


def measure(fd: int, caps: dict) -> dict:
    """Files, inodes and apparent bytes of a tree (lstat only, links not followed), stopping at
    the first cap passed: sparse files count at their apparent size."""
    counts = {"files": 0, "inodes": 0, "bytes": 0}
    queue = [""]
    while queue:
        folder = queue.pop()
        for name, mode, size in _sized_entries(fd, folder):
            counts["inodes"] += 1
            path = f"{folder}/{name}" if folder else name
            if stat.S_ISDIR(mode):
                queue.append(path)
            elif stat.S_ISREG(mode):
                counts["files"] += 1
                counts["bytes"] += size
            for key, word in (("files", "files"), ("inodes", "files, folders and links"), ("bytes", "bytes")):
                if counts[key] > caps[key]:
                    shown = f"{caps[key] >> 20} MiB (sizes as they appear: sparse files too)" if key == "bytes" \
                        else f"{caps[key]} {word}"
                    raise Refused(f"the built tree holds more than {shown}: not copied")
    return counts


def _sized_entries(fd: int, rel: str) -> list[tuple[str, int, int]]:
    target = os.open(rel or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
    try:
        found = []
        for entry in os.scandir(target):
            info = entry.stat(follow_symlinks=False)
            found.append((entry.name, info.st_mode, info.st_size))
        return found
    finally:
        os.close(target)


def copy_tree(request: dict) -> dict:
    """The built tree (src_fd) into dest_fd: measured against the caps first, then copied
    (files, folders and links only; FIFOs, sockets and devices a build left are skipped)."""
    src, dest = request["src_fd"], request["dest_fd"]
    counts = measure(src, request["caps"])
    queue = [""]
    while queue:
        folder = queue.pop()
        for name, mode, _ in _sized_entries(src, folder):
            path = f"{folder}/{name}" if folder else name
            if stat.S_ISDIR(mode):
                os.mkdir(path, 0o755, dir_fd=dest)
                queue.append(path)
            elif stat.S_ISLNK(mode):
                os.symlink(os.readlink(path, dir_fd=src), path, dir_fd=dest)
            elif stat.S_ISREG(mode):
                _copy_file(src, dest, path, mode)
    return counts


def _copy_file(src: int, dest: int, path: str, mode: int) -> None:
    fd_in = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=src)
    with open(fd_in, "rb") as reader:
        if not stat.S_ISREG(os.fstat(reader.fileno()).st_mode):
            return
        fd_out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                         dir_fd=dest)
        with open(fd_out, "wb") as writer:
            while chunk := reader.read(CHUNK):
                writer.write(chunk)
            os.fchmod(writer.fileno(), 0o755 if mode & 0o111 else 0o644)


serve = serving(copy_tree)
