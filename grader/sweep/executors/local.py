"""Cells on this machine: one worker process per GPU (each seeing only its GPU), or in-process.

Why one single-process pool per worker rather than one pool of N: when a worker dies,
concurrent.futures breaks its whole pool and every run in flight with it; with a pool per
worker the death is charged to the one cell that was running there, which runs again on
the next free worker, and the other workers' runs (and timings) are untouched. A thread
per worker hands it one cell at a time, so runs on one GPU never overlap.
"""
from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import socket
import threading
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Iterator

from grader.sweep.executors.worker import inline_call, init_local_worker, local_call
from grader.sweep.executors.outcome import Outcome

MAX_ATTEMPTS = 3          # a cell whose worker dies this often is recorded as failed, not retried forever
STOP_GRACE_S = 5.0


class InlineExecutor:
    """One worker: the cells run in this process, one after another, exactly as a plain sweep."""
    kind = "local"

    def __init__(self, fn: Callable, gpu: str | None = None, name: str = "local-0"):
        self._fn = fn
        self._gpu = gpu
        self._worker = f"{name}@{socket.gethostname()}"
        self._todo: deque = deque()
        self._saved = None
        self.workers = 1
        if gpu is not None:   # the programs inherit this process's environment
            self._saved = os.environ.get("CUDA_VISIBLE_DEVICES")
            os.environ["CUDA_VISIBLE_DEVICES"] = gpu

    def describe(self) -> str:
        return f"1 worker in this process ({'GPU ' + self._gpu if self._gpu is not None else 'CPU'})"

    def submit(self, key: str, task) -> None:
        self._todo.append((key, task))

    def drain(self, wait: bool = True) -> Iterator[Outcome]:
        """Runs what was submitted (wait or not: there is nobody else to run it)."""
        while self._todo:
            key, task = self._todo.popleft()
            try:
                row, overhead = inline_call(self._fn, task, self._worker, self._gpu or "")
                yield Outcome(key, row, "", overhead)
            except Exception as error:   # KeyboardInterrupt passes: the sweep stops
                yield Outcome(key, None, f"{type(error).__name__}: {error}")

    def close(self, cancel: bool = False) -> None:
        self._todo.clear()
        if self._gpu is not None:
            if self._saved is None:
                os.environ.pop("CUDA_VISIBLE_DEVICES", None)
            else:
                os.environ["CUDA_VISIBLE_DEVICES"] = self._saved


class _Slot:
    """One worker process (a ProcessPoolExecutor of one), restarted when it dies."""

    def __init__(self, name: str, gpu: str | None, context):
        self.name, self.gpu, self._context = name, gpu, context
        self.pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=1, mp_context=self._context, initializer=init_local_worker,
                                   initargs=(self.name, self.gpu, os.getpid()))

    def restart(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.pool = self._new_pool()

    def pids(self) -> list[int]:
        processes = getattr(self.pool, "_processes", None) or {}
        return [process.pid for process in list(processes.values()) if process.pid]

    def stop(self) -> list[int]:
        """SIGTERM the worker (it kills its program, then exits); returns the pids to wait for."""
        pids = self.pids()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        self.pool.shutdown(wait=False, cancel_futures=True)
        return pids


class LocalExecutor:
    """N worker processes on this machine; each takes the next cell when it is free."""
    kind = "local"

    def __init__(self, fn: Callable, slots: list[tuple[str, str | None]], max_attempts: int = MAX_ATTEMPTS):
        self._fn = fn
        self._max_attempts = max_attempts
        context = multiprocessing.get_context("spawn")   # no inherited threads, no CUDA state
        self._slots = [_Slot(name, gpu, context) for name, gpu in slots]
        self._todo: queue.SimpleQueue = queue.SimpleQueue()
        self._done: queue.SimpleQueue = queue.SimpleQueue()
        self._outstanding = 0
        self._stopping = threading.Event()
        self.workers = len(self._slots)
        self._threads = [threading.Thread(target=self._drive, args=(slot,), daemon=True, name=f"drive-{slot.name}")
                         for slot in self._slots]
        for thread in self._threads:
            thread.start()

    def describe(self) -> str:
        gpus = [slot.gpu for slot in self._slots if slot.gpu is not None]
        where = f"GPUs {', '.join(gpus)}" if gpus else "CPU"
        return f"{len(self._slots)} local worker processes ({where})"

    def worker_pids(self) -> list[int]:
        return [pid for slot in self._slots for pid in slot.pids()]

    def submit(self, key: str, task) -> None:
        self._outstanding += 1
        self._todo.put((key, task, 1))

    def drain(self, wait: bool = True) -> Iterator[Outcome]:
        """Outcomes as they arrive: all that are ready (wait=False), or until none is outstanding."""
        while self._outstanding:
            try:
                outcome = self._done.get(timeout=0.25) if wait else self._done.get_nowait()
            except queue.Empty:
                if wait:
                    continue   # short waits: Ctrl-C and SIGTERM are handled between them
                return
            self._outstanding -= 1
            yield outcome

    def _drive(self, slot: _Slot) -> None:
        """One cell at a time on this slot's worker; a dead worker is replaced and its cell requeued."""
        while True:
            item = self._todo.get()
            if item is None or self._stopping.is_set():
                return
            key, task, attempt = item
            try:
                row, overhead = slot.pool.submit(local_call, self._fn, task).result()
                outcome = Outcome(key, row, "", overhead, attempt)
            except BrokenProcessPool:
                if self._stopping.is_set():
                    return
                slot.restart()
                if attempt < self._max_attempts:
                    self._todo.put((key, task, attempt + 1))
                    continue
                outcome = Outcome(key, None, f"the worker process running it died {attempt} times "
                                             f"(killed, out of memory, killed by the program, or could not start: see the grader's stderr)", None, attempt)
            except Exception as error:
                outcome = Outcome(key, None, f"{type(error).__name__}: {error}", None, attempt)
            self._done.put(outcome)

    def close(self, cancel: bool = False) -> None:
        """Stop every worker; with cancel, also the runs in flight (their programs are killed)."""
        self._stopping.set()
        for _ in self._slots:
            self._todo.put(None)
        pids = []
        for slot in self._slots:
            if cancel:
                pids += slot.stop()
            else:
                slot.pool.shutdown(wait=True)
        deadline = time.monotonic() + STOP_GRACE_S
        for pid in pids:
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if _alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:   # a zombie (exited, not yet reaped) counts as gone
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return True
