"""What runs inside a worker process: pin it to its GPU, run one task, say who ran it.

Why a wrapper at all: the work function (one cell) knows nothing of workers; the record
must still name the worker and the GPU that produced it, and a worker told to stop must
kill the program it is running before it goes (the runner does that on KeyboardInterrupt).
"""
from __future__ import annotations

import os
import signal
import socket
import threading
import time

# Set once per local worker process by init_local_worker; (worker name, GPU id or "").
_identity: tuple[str, str] = ("", "")
_busy = False
TERMINATED = 143   # exit status of a worker stopped mid-run (128 + SIGTERM)


def normalise(result) -> tuple[dict, float | None]:
    """A work function returns a row, or (row, harness seconds)."""
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], dict):
        return result[0], result[1]
    if isinstance(result, dict):
        return result, None
    raise TypeError(f"a work function must return a row (dict), got {type(result).__name__}")


def tag(row: dict, worker: str, gpu: str) -> dict:
    row["worker"] = worker
    row["gpu"] = gpu
    return row


# --- local workers (grader.sweep.executors.local) ------------------------------------------

def init_local_worker(name: str, gpu: str | None, parent: int) -> None:
    """Pool initializer, before any CUDA use: the GPU this worker may see (its programs inherit
    the environment), Ctrl-C left to the grader, SIGTERM = stop (killing the program first),
    and exit when the grader is gone (a SIGKILLed grader cannot stop its workers)."""
    global _identity
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu
    _identity = (f"{name}@{socket.gethostname()}", gpu or "")
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _on_sigterm)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="watch-grader").start()


def _on_sigterm(signum, frame):
    if _busy:
        raise KeyboardInterrupt   # the runner kills the program's process group on the way out
    _leave(TERMINATED)


def _leave(code: int) -> None:
    """os._exit, which runs no atexit: this worker's session folder is removed first."""
    from grader.jail.sandbox import end_session

    end_session()
    os._exit(code)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os.kill(os.getpid(), signal.SIGTERM)


def local_call(fn, task):
    """Run fn(task) in a local worker; the row comes back tagged with this worker and GPU."""
    global _busy
    _busy = True
    try:
        row, overhead = normalise(fn(task))
    except KeyboardInterrupt:
        # stopped mid-run: the program is dead; dying makes the grader run the cell elsewhere
        _leave(TERMINATED)
    finally:
        _busy = False
    return tag(row, *_identity), overhead


def inline_call(fn, task, worker: str, gpu: str):
    """The same in the grader's own process (one worker: no process to spare)."""
    row, overhead = normalise(fn(task))
    return tag(row, worker, gpu), overhead


# --- Dask workers (grader.sweep.executors.cluster) -----------------------------------------

def dask_call(fn, task):
    """Run fn(task) on a Dask worker, which staff started with one GPU visible
    (CUDA_VISIBLE_DEVICES) and the resource GPU=1."""
    try:
        from distributed import get_worker
        worker = get_worker()
        name = str(worker.name) if str(worker.name) != str(worker.address) else ""
        who = f"{name + ' ' if name else ''}{worker.address}"
    except (ImportError, ValueError):
        who = f"{socket.gethostname()}:{os.getpid()}"
    row, overhead = normalise(fn(task))
    return tag(row, who, os.environ.get("CUDA_VISIBLE_DEVICES", "")), overhead
