"""Run one program under test, safely: own temp folder, own process group, capped capture.

Why so careful: the program may hang, fork, print megabytes or leave files behind;
none of that may stop or swamp the sweep. stdout and stderr go to files (no pipe can
fill up), only a capped part of them is read back, and a timeout kills the whole group.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

STDOUT_HEAD_BYTES = 64 * 1024
STDERR_TAIL_BYTES = 8 * 1024
KILL_GRACE_S = 1.0


@dataclass(frozen=True)
class RunResult:
    argv: list[str]
    exit_code: int | None        # None: killed by the timeout
    stdout_head: str
    stderr_tail: str
    output_path: Path            # may not exist; only valid inside the `with`
    wall_s: float
    timeout_s: float
    stdout_bytes: int = 0
    launch_error: str = ""       # the program could not be started at all

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None and not self.launch_error


@contextmanager
def run_program(make_argv: Callable[[Path], list[str]], timeout_s: float, *, env: dict | None = None,
                output_name: str = "output.txt", tmp_root: Path | None = None) -> Iterator[RunResult]:
    """Run make_argv(output_path) in a fresh temp folder; yield the result; remove the folder.

    Use as `with run_program(...) as result: check(result)` so the output file is read
    before it is cleaned away.
    """
    top = Path(tempfile.mkdtemp(prefix="grader-run-", dir=tmp_root))
    try:
        workdir = top / "work"
        workdir.mkdir()
        output_path = workdir / output_name
        argv = make_argv(output_path)
        stdout_file, stderr_file = top / "stdout.log", top / "stderr.log"
        exit_code, wall_s, launch_error = _run(argv, workdir, stdout_file, stderr_file, timeout_s, env)
        yield RunResult(argv=argv, exit_code=exit_code,
                        stdout_head=_head(stdout_file, STDOUT_HEAD_BYTES),
                        stderr_tail=launch_error or _tail(stderr_file, STDERR_TAIL_BYTES),
                        output_path=output_path, wall_s=wall_s, timeout_s=timeout_s,
                        stdout_bytes=stdout_file.stat().st_size if stdout_file.exists() else 0,
                        launch_error=launch_error)
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _run(argv, workdir, stdout_file, stderr_file, timeout_s, env):
    with open(stdout_file, "wb") as out, open(stderr_file, "wb") as err:
        start = time.perf_counter()
        try:
            process = subprocess.Popen(argv, cwd=workdir, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                       env=env, start_new_session=True)
        except OSError as error:
            return None, time.perf_counter() - start, f"cannot start {argv[0] if argv else '(empty command)'}: {error}"
        try:
            exit_code = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            wall_s = time.perf_counter() - start
            kill_group(process)
            return None, wall_s, ""
        except BaseException:  # KeyboardInterrupt: never leave the program running
            kill_group(process)
            raise
        return exit_code, time.perf_counter() - start, ""


def kill_group(process: subprocess.Popen, grace_s: float = KILL_GRACE_S) -> None:
    """SIGTERM the program's whole process group, then SIGKILL what is left after a grace."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            process.wait(timeout=wait)
            if sig == signal.SIGTERM:
                # the leader is gone; its children may not be
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            return
        except subprocess.TimeoutExpired:
            continue


def _head(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError:
        return ""
    text = data[:limit].decode("utf-8", errors="replace")
    return text + ("\n[... stdout cut]" if len(data) > limit else "")


def _tail(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - limit))
            data = handle.read(limit)
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    return ("[...] " if size > limit else "") + text
