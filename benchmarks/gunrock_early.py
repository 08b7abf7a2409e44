"""Gunrock's loading moved out of the versus table: each process starts while the graphs are
prepared and parses its ``.mtx`` then, in the background; only its GPU part waits for its turn.

The staged build reads Matrix Market text only, one ``fscanf`` per edge (~130 MB/s on the dev
machine, LiveJournal's 1.2 GB in ~9 s; slower on the GPU host), and it touches neither the
driver nor the GPU before the whole file is read (strace: ``libcuda`` is looked up after the
file). So a :class:`Held` process reads the ``.mtx`` through a named pipe: everything but the
last line as soon as the file exists, then it sits blocked in ``fscanf`` until :meth:`Held.finish`
hands over the last line. What follows (its CSR, the CUDA context, the runs it times with CUDA
events) happens at the graph's turn in the versus table, alone on the GPU as before. The file's
bytes are the ones a plain ``-m file.mtx`` reads, and its reported size is checked the same way.
The harness waits for every load before the wall table (nothing timed on the host overlaps them).
"""
from __future__ import annotations

import errno
import fcntl
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from . import tools

CHUNK = 1 << 22


def tail_start(path: Path) -> int:
    """Where the file's last line begins (the file ends with a newline)."""
    size = Path(path).stat().st_size
    with open(path, "rb") as stream:
        back = min(size, 1 << 16)
        stream.seek(size - back)
        block = stream.read()
    return size - back + block.rfind(b"\n", 0, len(block) - 1) + 1


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class Held:
    """One Gunrock process reading ``mtx`` through a pipe, held before the last line."""

    def __init__(self, binary: Path, mtx: Path, runs: int, vertices: int | None = None, edges: int | None = None):
        self.mtx, self.vertices, self.edges = Path(mtx), vertices, edges
        self.scratch = Path(tempfile.mkdtemp(prefix="gunrock-early-"))
        self.pipe = self.scratch / self.mtx.name  # the binary wants a name ending in .mtx
        os.mkfifo(self.pipe)
        (self.scratch / "out").mkdir()
        self._said = open(self.scratch / "output.txt", "w+b")
        self.started = time.perf_counter()
        self.process = subprocess.Popen(tools.gunrock_command(binary, self.pipe, runs, self.scratch / "out"),
                                        stdout=self._said, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.loaded = threading.Event()  # set when all but the last line is read, or the feeding ended
        self.load_s: float | None = None
        self.error = ""
        self._release = threading.Event()
        self._thread = threading.Thread(target=self._feed, name=f"gunrock-{self.mtx.stem}", daemon=True)
        self._thread.start()

    def _open_writer(self) -> int | None:
        """The pipe's write end, once Gunrock opened it for reading; None if it ended first."""
        while True:
            try:
                fd = os.open(self.pipe, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as err:
                if err.errno != errno.ENXIO:
                    raise
                if self.process.poll() is not None:
                    return None
                time.sleep(0.01)
                continue
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
            return fd

    def _feed(self) -> None:
        try:
            fd = self._open_writer()
            if fd is None:
                return
            try:
                with open(self.mtx, "rb") as source:
                    left = tail_start(self.mtx)
                    while left:
                        block = source.read(min(CHUNK, left))
                        if not block:
                            raise OSError(f"{self.mtx.name} shrank while it was read")
                        _write_all(fd, block)
                        left -= len(block)
                    # the pipe holds 64 KiB: Gunrock has parsed all but the last few thousand lines
                    self.load_s = time.perf_counter() - self.started
                    self.loaded.set()
                    self._release.wait()
                    _write_all(fd, source.read())
            finally:
                os.close(fd)
        except OSError as err:  # a broken pipe: Gunrock stopped reading (its output says why)
            self.error = f"{type(err).__name__}: {err}"
        finally:
            self.loaded.set()

    def finish(self, timeout: float = 300) -> tools.Outcome:
        """Hand over the last line and wait (``timeout`` from now) for Gunrock's time."""
        self._release.set()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.close()
            return tools.Outcome(None, f"timed out {timeout:.0f} s after its load")
        self._thread.join()
        self._said.seek(0)
        said = self._said.read().decode(errors="replace") + (f" ({self.error})" if self.error else "")
        outcome = tools.gunrock_result(self.process.returncode, said, self.scratch / "out", self.mtx.name,
                                       self.vertices, self.edges)
        self.close()
        return outcome

    def close(self) -> None:
        """End the process if it still runs, and remove the pipe and its output."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._release.set()
        self._thread.join(timeout=10)
        self._said.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


class Early:
    """A :class:`Held` Gunrock for each of ``keys`` whose ``.mtx`` the preparation has written
    (``path(key)`` exists: files are written atomically), ended at once if ``wanted(key)`` says
    no (its time is cached)."""

    def __init__(self, binary: Path, keys, path, size, wanted, runs: int, log=print):
        self.binary, self.runs, self.log = binary, runs, log
        self.held: dict[str, Held] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._start_each, args=(list(keys), path, size, wanted),
                                        name="gunrock-early", daemon=True)
        self._thread.start()

    def _start_each(self, pending, path, size, wanted) -> None:
        while pending and not self._stop.is_set():
            for key in [k for k in pending if path(k).is_file()]:
                pending.remove(key)
                held = None
                try:  # started first, kept unless its time is cached (the file's digest may take a second)
                    vertices, edges = size(key)
                    held = Held(self.binary, path(key), self.runs, vertices, edges)
                    if wanted(key):
                        self.held[key], held = held, None
                except Exception as err:  # the versus table runs this one plainly
                    self.log(f"  Gunrock on {key}: not started early ({type(err).__name__}: {err})", flush=True)
                finally:
                    if held is not None:
                        held.close()
            self._stop.wait(0.1)

    def wait_loaded(self) -> float:
        """Wait until every started process has read all but its last line; the seconds waited."""
        began = time.perf_counter()
        self._thread.join()
        for held in list(self.held.values()):
            held.loaded.wait()
        return time.perf_counter() - began

    def take(self, key: str) -> Held | None:
        return self.held.pop(key, None)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        for key in list(self.held):
            self.held.pop(key).close()
