"""The one atomic writer: whole-or-absent regular files, modes kept, and never a device,
FIFO or link replaced (every special file here is made in tmp_path)."""
from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

import pytest

from sssp_common.files import (INTERRUPTING_SIGNALS, atomic_writer, same_file, temporaries_removed_on_signals,
                               write_text_atomically)


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


# -- whole or absent under signals, and never past a file's own mode -----------------------

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_mid_write_leaves_the_old_output_and_no_temporary(tmp_path, signum):
    """./sssp writing 5 million lines gets the signal once its temporary file exists: it
    removes that file, leaves the old output as it was, and exits with 128 + the signal."""
    graph, out = tmp_path / "g.txt", tmp_path / "out.txt"
    graph.write_text("0 5000000 1\n")  # 5,000,001 vertices: a long output to write
    out.write_text("old\n")
    env = dict(os.environ, SSSP_DEVICE="cpu", SSSP_CACHE_DIR=str(tmp_path / "cache"))
    process = subprocess.Popen([sys.executable, str(ROOT / "sssp.py"), "-input", str(graph), "-bsize", "256",
                                "-bcount", "8", "-output", str(out), "bmf", "-sync", "outcore"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".out.txt.*.tmp")):
        assert process.poll() is None, f"finished before its output was being written: {process.stderr.read()}"
        assert time.monotonic() < deadline
        time.sleep(0.002)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + signum, stderr
    assert stderr.strip() == f"sssp: interrupted by {signum.name}"
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "g.txt", "out.txt"]


def test_the_signal_handlers_are_given_back_after_an_in_process_run(tmp_path):
    before = {s: signal.getsignal(s) for s in INTERRUPTING_SIGNALS}
    with temporaries_removed_on_signals("x"):
        assert all(signal.getsignal(s) is not before[s] for s in INTERRUPTING_SIGNALS)
    assert {s: signal.getsignal(s) for s in INTERRUPTING_SIGNALS} == before


def run_as_nobody(folder: Path, action) -> int:
    """``action()`` in a forked child that has become uid/gid 65534 in ``folder`` (entered
    while still root, so the path above it need not be open to that user): its exit status."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 99
        try:
            os.chdir(folder)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            code = action()
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another user")


@needs_root
def test_a_file_the_user_may_not_write_is_refused_as_open_refuses_it(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o777)
    os.chmod(folder, 0o777)  # the user may create files here (rename would allow a replace)
    target = folder / "read-only.txt"
    target.write_text("old\n")
    os.chmod(target, 0o644)

    def attempt() -> int:
        refused = []
        for write in (lambda: open("read-only.txt", "w"), lambda: write_text_atomically("read-only.txt", "new\n")):
            try:
                write()
            except PermissionError as err:
                refused.append(err.errno == errno.EACCES and err.filename == "read-only.txt")
        return 0 if refused == [True, True] else 1

    assert run_as_nobody(folder, attempt) == 0
    assert target.read_text() == "old\n" and target.stat().st_uid == 0
    assert sorted(p.name for p in folder.iterdir()) == ["read-only.txt"]


@needs_root
def test_another_users_writable_file_keeps_its_owner(tmp_path):
    """open() keeps the owner of a file it may write; so does the writer (in place, since
    the temporary could not be given root's ownership)."""
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, 0o777)
    target = folder / "open.txt"
    target.write_text("old\n")
    os.chmod(target, 0o666)
    assert run_as_nobody(folder, lambda: write_text_atomically("open.txt", "new\n") or 0) == 0
    assert target.read_text() == "new\n"
    assert (target.stat().st_uid, stat.S_IMODE(target.stat().st_mode)) == (0, 0o666)
    assert sorted(p.name for p in folder.iterdir()) == ["open.txt"]


def test_a_signal_while_caching_the_graph_leaves_no_staging_folder(tmp_path):
    """The first load of a graph writes its binary cache through a staging folder: a SIGTERM
    then removes that folder too (the graph is loaded again next time)."""
    graph, cache = tmp_path / "g.txt", tmp_path / "cache"
    graph.write_bytes(b"0 1\n1 2\n" * 1_500_000)
    env = dict(os.environ, SSSP_DEVICE="cpu", SSSP_CACHE_DIR=str(cache))
    process = subprocess.Popen([sys.executable, str(ROOT / "sssp.py"), "-input", str(graph), "-bsize", "256",
                                "-bcount", "8", "-output", str(tmp_path / "out.txt"), "bmf", "-sync", "outcore"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not list((cache / "graphs").glob(".tmp-*")) if (cache / "graphs").is_dir() else True:
        assert process.poll() is None, f"finished before it wrote its cache: {process.stderr.read()}"
        assert time.monotonic() < deadline
        time.sleep(0.001)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert list((cache / "graphs").glob(".tmp-*")) == []
    assert not (tmp_path / "out.txt").exists()


@needs_root
def test_a_writable_file_in_a_folder_the_user_may_not_write_is_written_in_place(tmp_path):
    folder = tmp_path / "closed"
    folder.mkdir()
    os.chmod(folder, 0o755)   # root's: no temporary file can be made beside the target
    target = folder / "open.txt"
    target.write_text("old\n")
    os.chmod(target, 0o666)
    assert run_as_nobody(folder, lambda: write_text_atomically("open.txt", "new\n") or 0) == 0
    assert target.read_text() == "new\n" and target.stat().st_uid == 0
    assert sorted(p.name for p in folder.iterdir()) == ["open.txt"]
