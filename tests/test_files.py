"""The one atomic writer: whole-or-absent regular files, modes kept, and never a device,
FIFO or link replaced (every special file here is made in tmp_path)."""
from __future__ import annotations

import os
import stat
import threading

import pytest

from sssp_common.files import atomic_writer, same_file, write_text_atomically


def read_fifo_in_thread(path, sink: list):
    def reader():
        with open(path, "rb") as stream:
            sink.append(stream.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    return thread


def test_regular_file_is_whole_or_absent(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_writer(target) as stream:
            stream.write("half")
            raise RuntimeError("stop")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]
    write_text_atomically(target, "new")
    assert target.read_text() == "new"


def test_new_file_gets_the_umask_mode(tmp_path):
    old = os.umask(0o027)
    try:
        write_text_atomically(tmp_path / "new.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640


def test_existing_file_keeps_its_mode(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    os.chmod(target, 0o604)
    write_text_atomically(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o604 and target.read_text() == "new"


def test_fifo_is_written_in_place(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    thread = read_fifo_in_thread(fifo, got)
    with atomic_writer(fifo, "wb") as stream:
        stream.write(b"0:0\n1:INF\n")
    thread.join(5)
    assert got == [b"0:0\n1:INF\n"]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_symlink_to_a_fifo_like_dev_stdout(tmp_path):
    """/dev/stdout is a link to the process's stream: the link stays, the stream gets the bytes."""
    fifo = tmp_path / "stream"
    os.mkfifo(fifo)
    link = tmp_path / "stdout"
    link.symlink_to(fifo)
    got = []
    thread = read_fifo_in_thread(fifo, got)
    write_text_atomically(link, "hello\n")
    thread.join(5)
    assert got == [b"hello\n"] and link.is_symlink() and stat.S_ISFIFO(fifo.lstat().st_mode)


def test_symlink_to_a_file_updates_the_target(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("old")
    os.chmod(target, 0o644)
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_text_atomically(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o644


def test_character_device_node_is_written_in_place(tmp_path):
    """A node made here with the null device's numbers (root only): written, not replaced."""
    node = tmp_path / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError):
        pytest.skip("cannot make a device node here (not root)")
    try:
        write_text_atomically(node, "discarded")
    except OSError:
        pytest.skip("device nodes are not usable on this file system (nodev)")
    assert stat.S_ISCHR(node.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]


def test_longest_legal_name_works(tmp_path):
    name = "d" * 240 + ".txt"  # 244 characters: the temporary name must not push past NAME_MAX
    write_text_atomically(tmp_path / name, "x")
    assert (tmp_path / name).read_text() == "x"
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_same_file(tmp_path):
    a = tmp_path / "a"
    a.write_text("x")
    (tmp_path / "b").symlink_to(a)
    assert same_file(a, tmp_path / "b") and same_file(a, a)
    assert not same_file(a, tmp_path / "absent") and not same_file(a, tmp_path)
