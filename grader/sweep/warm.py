"""This checkout's own ./sssp, kept running per worker: a cell costs its work, not a process.

Why: on a GPU machine a fresh ./sssp spends ~1 s on Python, CuPy and the CUDA context and a
few milliseconds on kernels (issue 25); a sweep of 624 cells is almost all start-up. So each
worker keeps one ``./sssp --serve-cells`` (sssp_gpu/serve.py), started through the same
launcher, and sends it one command line per cell.

Only for the project's own program, recognised by what it is, not by what it is called: the
template's first word is ``{sssp}``, no submission's build replaces it, the cell's identity is
``project@<commit>`` and the path run resolves to this checkout's ``./sssp``. Anything else
(a ``--program``, a graded submission) is untrusted and keeps one jailed process per run
(grader.jail.runner): a kept process would let one run see, or tamper with, the next.

Nothing is taken on the server's word: like a fresh process, it leaves an output file and
stdout/stderr files, which the grader reads back and judges (grader.sweep.check) exactly as
it judges a jailed run. A cell that outlives its timeout kills the server (the next cell
starts a new one); so does a server that says its CUDA context failed.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import sys
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Callable, Iterator

from grader.jail import sandbox as sb
from grader.jail.runner import (STDERR_TAIL_BYTES, STDOUT_HEAD_BYTES, STDOUT_TAIL_BYTES, RunResult,
                                read_figure_lines, read_head, read_tail)
from grader.sweep.cells import PROJECT_SSSP

SERVE_FLAG = "--serve-cells"     # sssp.py's word for the kept process
START_TIMEOUT_S = 180.0          # imports, CuPy and the CUDA context, on a cold file cache
STOP_GRACE_S = 2.0


class ServerFailed(Exception):
    """The kept process could not start or take a cell; the cell runs as a fresh process instead."""


def eligible(sweep, cell, program: Path) -> bool:
    """True only for this checkout's own ./sssp, by identity (see the module docstring)."""
    if KEEPER.broken or not getattr(sweep, "warm", True) or getattr(sweep, "sandbox", None) is not None:
        return False
    if getattr(sweep, "program_path", None) is not None:
        return False
    if not str(getattr(cell, "program_id", "")).startswith("project@"):
        return False
    try:
        if shlex.split(sweep.command)[0] != "{sssp}":
            return False
    except (ValueError, IndexError):
        return False
    try:
        return os.path.realpath(program) == os.path.realpath(PROJECT_SSSP) and PROJECT_SSSP.is_file()
    except OSError:
        return False


class Server:
    """One ``./sssp --serve-cells`` child and its two pipes."""

    def __init__(self, launcher: Path, env: dict, log_dir: Path):
        began = time.perf_counter()
        self.log = log_dir / "server-stderr.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen([str(launcher), SERVE_FLAG], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=log, env=env, cwd=log_dir,
                                            bufsize=0,                # select() sees every byte unread
                                            start_new_session=True)   # our own group: killed whole
        try:
            hello = self._reply(START_TIMEOUT_S)
        except ServerFailed:
            self.kill()
            raise
        if not hello or not hello.get("ready"):
            self.kill()
            raise ServerFailed(f"the kept ./sssp did not start: {self._why()}")
        self.device = str(hello.get("device", ""))
        self.start_s = time.perf_counter() - began
        self.cells = 0
        self.in_flight = False        # a request sent and not yet answered

    def run(self, argv: list[str], cwd: Path, stdout: Path, stderr: Path, timeout_s: float) -> tuple[int | None, bool]:
        """(exit status, or None after the timeout killed it; whether to start afresh next time)."""
        request = {"argv": argv, "cwd": str(cwd), "stdout": str(stdout), "stderr": str(stderr)}
        try:
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()
        except OSError as error:
            raise ServerFailed(f"the kept ./sssp stopped taking cells ({error}): {self._why()}") from None
        self.cells += 1
        self.in_flight = True
        answer = self._reply(timeout_s)
        self.in_flight = False
        if answer is None:           # timed out: the cell's verdict is a timeout, as in the jail
            self.kill()
            return None, True
        if "exit" not in answer:
            self.kill()
            raise ServerFailed(f"the kept ./sssp answered {answer!r}")
        return int(answer["exit"]), bool(answer.get("restart"))

    def died_with(self) -> int | None:
        """The status a dead server's process ended with (negative: the signal), else None."""
        return self.process.poll()

    def _reply(self, timeout_s: float) -> dict | None:
        """The next reply line; None when timeout_s passes first; ServerFailed when it is gone."""
        stream = self.process.stdout
        ready, _, _ = select.select([stream], [], [], timeout_s)
        if not ready:
            return None
        line = stream.readline()
        if not line:
            self.process.wait()
            raise ServerFailed(f"the kept ./sssp ended: {self._why()}")
        try:
            return json.loads(line)
        except ValueError:
            raise ServerFailed(f"the kept ./sssp wrote {line[:200]!r}") from None

    def _why(self) -> str:
        code = self.process.poll()
        tail = read_tail(self.log, 600).strip().replace("\n", " | ")
        return f"status {code}" + (f"; stderr: {tail}" if tail else "")

    def kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass

    def stop(self) -> None:
        """EOF on its requests: it finishes and exits; killed if it does not."""
        try:
            self.process.stdin.close()
            self.process.wait(STOP_GRACE_S)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.kill()


class Keeper:
    """This process's one server, started on first use and again after a failure."""

    def __init__(self):
        self.server: Server | None = None
        self.broken = ""             # why warm runs were given up in this process ('' while they work)
        self.starts = 0
        self.start_s = 0.0           # seconds spent starting servers (process start-up of the warm path)
        self._folder: Path | None = None
        self._pid = os.getpid()

    def get(self, env: dict) -> Server:
        if self.server is not None and self.server.died_with() is None:
            return self.server
        self.drop()
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="warm-", dir=sb.session_root()))
        try:
            self.server = Server(PROJECT_SSSP, env, self._folder)
        except ServerFailed as why:   # not again in this process: every cell would wait for it
            self.broken = str(why)
            raise
        self.starts += 1
        self.start_s += self.server.start_s
        return self.server

    def drop(self, kill: bool = False) -> None:
        if self.server is not None:
            self.server.kill() if kill else self.server.stop()
            self.server = None

    def close(self) -> None:
        if os.getpid() != self._pid:    # a forked child never stops its parent's server
            return
        self.drop()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


KEEPER = Keeper()
atexit.register(KEEPER.close)


@contextmanager
def run_warm(make_argv: Callable[[Path], list[str]], timeout_s: float, env: dict) -> Iterator[RunResult]:
    """run_program's twin for the kept ./sssp: the same private folder, output name and result
    (read back from files), so grader.sweep.check judges it the same way. Raises ServerFailed
    (before the cell ran) when no server can be had."""
    server = KEEPER.get(env)
    started_new = server.cells == 0
    top = Path(tempfile.mkdtemp(prefix="run-", dir=sb.session_root()))
    try:
        workdir = top / "work"
        workdir.mkdir(mode=0o700)
        output_path = workdir / "output.txt"
        argv = make_argv(output_path)
        stdout_file, stderr_file = top / "stdout.log", top / "stderr.log"
        began = time.perf_counter()
        try:
            code, restart = server.run(argv[1:], workdir, stdout_file, stderr_file, timeout_s)
        except ServerFailed:
            died = server.died_with()
            KEEPER.drop(kill=True)
            if died is None or not server.in_flight:
                raise
            code, restart = died, True    # it died in the cell (a signal): that run's crash
        except BaseException:             # interrupted: the cell in flight goes with its server
            KEEPER.drop(kill=True)
            raise
        wall = time.perf_counter() - began
        if restart:
            KEEPER.drop(kill=code is None)
        size = stdout_file.stat().st_size if stdout_file.exists() else 0
        yield RunResult(
            argv=argv, exit_code=code, stdout_head=read_head(stdout_file, STDOUT_HEAD_BYTES),
            stderr_tail=read_tail(stderr_file, STDERR_TAIL_BYTES), output_path=output_path, wall_s=wall,
            timeout_s=timeout_s, stdout_bytes=size,
            stdout_tail=read_tail(stdout_file, STDOUT_TAIL_BYTES) if size > STDOUT_HEAD_BYTES else "",
            stdout_middle=(read_figure_lines(stdout_file, STDOUT_HEAD_BYTES, size - STDOUT_TAIL_BYTES)
                           if size > STDOUT_HEAD_BYTES + STDOUT_TAIL_BYTES else ""),
            protections={"warm": {"server_pid": server.process.pid, "cell": server.cells,
                                  "server_start_s": round(server.start_s, 4) if started_new else 0.0},
                         "user": f"uid {os.geteuid()} (the grader's)", "env": "inherited",
                         "not_in_force": {"jail": "this checkout's own ./sssp, kept running (trusted: "
                                                  "identified by its commit); see grader/sweep/warm.py"}})
    finally:
        shutil.rmtree(top, ignore_errors=True)


@contextmanager
def kept_or_fresh(make_argv: Callable[[Path], list[str]], timeout_s: float, sandbox, fresh) -> Iterator[RunResult]:
    """run_warm with the environment a fresh run of ``sandbox`` would get; ``fresh()`` (a
    run_program context) when no server can be had, said once on stderr."""
    with ExitStack() as stack:
        try:
            result = stack.enter_context(run_warm(make_argv, timeout_s, sb.environment(sandbox, Path.home(), False)))
        except ServerFailed as why:
            after = "from here on" if KEEPER.broken else "for this run"
            print(f"grader: {why}; this checkout's ./sssp runs as a fresh process {after}", file=sys.stderr)
            result = stack.enter_context(fresh())
        yield result
