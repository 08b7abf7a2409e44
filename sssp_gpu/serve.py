"""``./sssp --serve-cells``: ./sssp kept running, one command line after another, for the
grader's sweeps of this checkout's own program (grader/sweep/warm.py starts it).

Why: a fresh ./sssp spends ~1 s on a GPU machine starting Python, importing CuPy and making
the CUDA context, while a sweep cell's kernels take milliseconds. Here that is paid once.

Each cell runs through the very path a fresh process takes: ``sssp_gpu.cli.main`` parses
the same argv, writes the same output file and prints the same stdout lines (fd 1 and fd 2
are pointed at the cell's own files), and its exit status is what ``sssp.py`` would exit
with (an uncaught exception: traceback on stderr and 1, as Python does). Differences, by
design: the wall line starts when the cell does (no interpreter start-up to count), and
graphs already read are kept (:class:`Shelf`), keyed by the file's identity, read-only.
The grader judges every output file itself; nothing here is taken on trust.

Protocol, one JSON object per line. Requests on stdin:
``{"argv": [...], "cwd": DIR, "stdout": FILE, "stderr": FILE}``. Replies on the stream that
was stdout when the server started: first ``{"ready": true, "pid": N, "device": "..."}``,
then per request ``{"exit": N, "restart": bool}``. After a device error (exit 3), an uncaught
exception or an interrupt the reply says ``restart`` and the server exits: a CUDA context
that failed once is not trusted again. EOF on stdin, or the grader gone, ends it.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
import warnings
from collections import OrderedDict

DEVICE_FAILURE = 3
INTERRUPTED = 130


class Shelf:
    """Graphs already read, newest last, within a byte budget (least recently used go first).

    Keyed by the file's identity (device, inode, size, modification and change times), so a
    file rewritten in place is read again; a pipe or anything not a regular file is never
    kept. Arrays are made read-only: a method that wrote into its input would corrupt the
    next cell, and fails loudly instead. Read-only arrays are also what sssp_gpu.resident keeps
    device copies of, for the graph of the current cell only."""

    def __init__(self, budget_bytes: int, loader=None):
        self.budget = budget_bytes
        self._loader = loader
        self._graphs: OrderedDict = OrderedDict()
        self._last = None

    def load(self, path):
        import stat as stat_module
        from sssp_common.loader import load_graph

        load = self._loader or load_graph
        try:
            info = os.stat(path)
        except OSError:
            return load(path)            # the loader says what is wrong, in its words
        if not stat_module.S_ISREG(info.st_mode) or not os.access(path, os.R_OK):
            return load(path)
        key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        graph = self._graphs.get(key)
        if graph is not None:
            self._graphs.move_to_end(key)
            return self._current(graph)
        graph = load(path)
        for array in (graph.src, graph.dst, graph.w):
            array.flags.writeable = False
        size = graph.src.nbytes + graph.dst.nbytes + graph.w.nbytes
        if size <= self.budget:
            self._graphs[key] = graph
            while self.held_bytes() > self.budget:
                self._graphs.popitem(last=False)
        return self._current(graph)

    def _current(self, graph):
        """The graph this cell uses; another graph's device copies go (sssp_gpu.resident)."""
        if graph is not self._last:
            self._last = graph
            drop_device_copies()
        return graph

    def held_bytes(self) -> int:
        return sum(g.src.nbytes + g.dst.nbytes + g.w.nbytes for g in self._graphs.values())

    def __len__(self) -> int:
        return len(self._graphs)

    def clear(self) -> None:
        self._graphs.clear()
        self._last = None
        drop_device_copies()


def drop_device_copies() -> None:
    from .resident import drop_all
    drop_all()


def default_budget() -> int:
    """A quarter of this machine's memory (the grader and the reference need the rest)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 4
    except (ValueError, OSError):
        return 1 << 30


def exit_status(code) -> int:
    """What the interpreter exits with for ``sys.exit(code)`` (a message goes to stderr, status 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def run_cell(request: dict, shelf: Shelf) -> tuple[int, bool]:
    """One command line, stdout and stderr in the request's files; (exit status, restart?)."""
    from . import cli

    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    out = os.open(request["stdout"], flags, 0o600)
    err = os.open(request["stderr"], flags, 0o600)
    home = os.getcwd()
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.close(out)
    os.close(err)
    restart = False
    try:
        os.chdir(request["cwd"])
        with warnings.catch_warnings():   # "once" warnings show again, as in a fresh process
            started = time.perf_counter()
            try:
                code = cli.main(list(request["argv"]), started=started, fresh=False, load=shelf.load)
            except SystemExit as stop:
                code = exit_status(stop.code)
            except BaseException:   # a bug: the traceback and status 1, as `python sssp.py` ends
                traceback.print_exc()
                code, restart = 1, True
        code = exit_status(code)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.chdir(home)
        for fd, kept in zip((1, 2), saved):
            os.dup2(kept, fd)
            os.close(kept)
    if code != 0:
        shelf.clear()   # a failing cell leaves nothing behind for the next one
    return code, restart or code in (DEVICE_FAILURE, INTERRUPTED)


def serve(stdin=None, budget_bytes: int | None = None) -> int:
    """The loop: ready, then a reply per request until EOF."""
    requests = stdin or os.fdopen(os.dup(0), "r")
    reply = os.fdopen(os.dup(1), "w", buffering=1)
    for fd, mode in ((0, os.O_RDONLY), (1, os.O_WRONLY)):
        quiet = os.open(os.devnull, mode)   # a cell reading stdin reads nothing (as under the
        os.dup2(quiet, fd)                  # jail), not our requests; nothing stray reaches
        os.close(quiet)                     # a reply
    parent = os.getppid()
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="watch-grader").start()
    device = _warm_up()
    shelf = Shelf(default_budget() if budget_bytes is None else budget_bytes)
    reply.write(json.dumps({"ready": True, "pid": os.getpid(), "device": device}) + "\n")
    for line in requests:
        if not line.strip():
            continue
        code, restart = run_cell(json.loads(line), shelf)
        reply.write(json.dumps({"exit": code, "restart": restart}) + "\n")
        if restart:
            break
    return 0


def _warm_up() -> str:
    """Everything a cell would import, and the device with its context, before the first cell."""
    import importlib

    from . import cli, engine, memory, output  # noqa: F401
    from .device import ready_device
    from .methods import common  # noqa: F401
    from sssp_common import loader  # noqa: F401
    from sssp_common.vocabulary import METHODS

    for word in METHODS:
        try:
            engine.method_module(word)
        except ImportError:
            pass
    importlib.import_module(".paths", __package__)
    try:
        return ready_device().timing_label
    except Exception as error:   # each cell meets it again and says so in its own words
        return f"unavailable ({type(error).__name__}: {error})"


def _watch_parent(parent: int) -> None:
    """A grader that died without closing our stdin (SIGKILL mid-cell) must not leave us running."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)
