"""Several runs on ONE GPU at a time: correctness runs N at a time, timing runs alone.

Why: a graded run costs ~0.3 s of process and CUDA-context start whatever the graph, and the
GPU idles through most of it; running the correctness runs of several students side by side
keeps it busy. A run whose time is reported (the leaderboard's) must not share the GPU, so a
timing run waits until nothing runs and nothing starts until it ends.

Admission: a correctness run starts when a worker is free, no timing run is running or
waiting for the GPU to empty, and (with others running) the GPU has at least `min_free_mb`
free (nvidia-smi; on a machine without a GPU: at most one run per core). Timing runs go when
no correctness run is queued, so they run back to back at the end of a batch rather than
emptying the GPU between every two correctness runs. Whether a queued run is a timing run is
asked again when it is picked (`is_timing` may change its mind: a program that already hung is
not held alone for its whole timeout again), and `observe(task, row)` sees every row first.

Each worker is its own process (spawned; one sandbox uid each, claimed by the process, so
concurrent runs never share a uid) running one run at a time; the jail and the limits are
per run as always. The same four calls as every executor (submit, drain, close, describe),
plus ``submit_future`` for callers that want a Future, and ``drain`` returns only the
outcomes of the tasks the calling thread submitted, so one pool serves a thread per student.
"""
from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
import time
from collections import deque
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Iterator

from grader.sweep.executors.local import MAX_ATTEMPTS, _Slot
from grader.sweep.executors.outcome import Outcome
from grader.sweep.executors.worker import local_call

TIMING, CORRECTNESS = "timing", "correctness"
DEFAULT_MIN_FREE_MB = 2048
MEMORY_PROBE_TTL_S = 0.5


def gpu_free_mb(gpu: str | None) -> int | None:
    """Free memory of one GPU in MiB (nvidia-smi), None when it cannot be read."""
    command = ["nvidia-smi", "--query-gpu=memory.free", "--format=csv,noheader,nounits"]
    if gpu is not None:
        command += ["-i", str(gpu)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=10)
        return int(done.stdout.split()[0]) if done.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def admit(kind: str, running: dict[str, int], timing_waiting: bool, correctness_waiting: bool,
          free_workers: int, memory_ok: bool) -> bool:
    """May a run of this kind start now? (pure: the whole rule)

    running: kind -> runs in flight. A timing run needs the GPU to itself and goes only when no
    correctness run waits; a correctness run needs a free worker, no timing run running or
    waiting for its turn, and room on the GPU when it would not be alone."""
    busy = sum(running.values())
    if free_workers <= 0 or running.get(TIMING, 0):
        return False
    if kind == TIMING:
        return busy == 0 and not correctness_waiting
    if timing_waiting and not correctness_waiting:
        return False
    return busy == 0 or memory_ok


class SharedGpuPool:
    """`jobs` worker processes sharing one GPU (or the CPU), admitted by `admit`."""
    kind = "local"

    def __init__(self, fn: Callable, jobs: int, gpu: str | None = None, is_timing: Callable = lambda task: False,
                 min_free_mb: int = DEFAULT_MIN_FREE_MB, free_mb: Callable | None = None,
                 observe: Callable | None = None):
        if jobs < 1:
            raise ValueError(f"--jobs: must be at least 1, got {jobs}")
        self._fn, self._gpu, self._is_timing, self._observe = fn, gpu, is_timing, observe
        self._chosen: set[Future] = set()   # futures whose kind the caller named (never re-asked)
        self._min_free_mb = min_free_mb
        self._free_mb = free_mb or (lambda: gpu_free_mb(gpu))
        self._cores = os.cpu_count() or 1
        context = multiprocessing.get_context("spawn")
        self._slots = [_Slot(f"shared-{i}", gpu, context) for i in range(jobs)]
        self._free = deque(self._slots)
        self._queues = {TIMING: deque(), CORRECTNESS: deque()}
        self._running = {TIMING: 0, CORRECTNESS: 0}
        self._lock = threading.Condition()
        self._closed = False
        self._memory = (0.0, None)        # (when probed, free MiB)
        self._outcomes: dict[int, deque] = {}
        self._waiting: dict[int, int] = {}
        self.history: list[tuple[str, str, float, float]] = []   # (key, kind, start, end) of each run
        self.workers = jobs
        self._thread = threading.Thread(target=self._dispatch, daemon=True, name="shared-gpu-dispatch")
        self._thread.start()
        if gpu is not None:
            self._memory = (time.monotonic(), self._free_mb())
            threading.Thread(target=self._watch_memory, daemon=True, name="shared-gpu-memory").start()

    def gpu_for_caller(self) -> str | None:
        """The GPU the calling thread's runs go to (this pool's one)."""
        return self._gpu

    def describe(self) -> str:
        where = f"GPU {self._gpu}" if self._gpu is not None else "CPU"
        return f"{len(self._slots)} worker processes sharing {where} (correctness runs together, timing runs alone)"

    # --- the executor interface ---------------------------------------------------------
    def submit(self, key: str, task, fn: Callable | None = None, kind: str | None = None) -> None:
        me = threading.get_ident()
        with self._lock:
            self._outcomes.setdefault(me, deque())
            self._waiting[me] = self._waiting.get(me, 0) + 1
        future = self.submit_future(task, fn, kind, key=key)
        future.add_done_callback(lambda f, me=me, key=key: self._deliver(me, key, f))

    def drain(self, wait: bool = True) -> Iterator[Outcome]:
        """The outcomes of the tasks this thread submitted, as they finish."""
        me = threading.get_ident()
        while True:
            with self._lock:
                box = self._outcomes.get(me)
                if box:
                    outcome = box.popleft()
                    self._waiting[me] -= 1
                elif not self._waiting.get(me) or not wait or self._closed:
                    return   # closed: what is still in flight is being stopped and will not come back
                else:
                    self._lock.wait(0.25)
                    continue
            yield outcome

    def close(self, cancel: bool = False) -> None:
        """Stop taking runs; with cancel, stop the runs in flight (their programs are killed).
        Threads waiting in drain return."""
        with self._lock:
            self._closed = True
            self._chosen.clear()
            for queue in self._queues.values():
                for _, _, _, future, _ in queue:
                    future.cancel()
                queue.clear()
            self._lock.notify_all()
        for slot in self._slots:
            if cancel:
                slot.stop()
            else:
                slot.pool.shutdown(wait=True)

    # --- futures ------------------------------------------------------------------------
    def submit_future(self, task, fn: Callable | None = None, kind: str | None = None, key: str = "") -> Future:
        """Queue one run; kind: TIMING or CORRECTNESS (default: is_timing(task))."""
        future: Future = Future()
        if kind:
            self._chosen.add(future)
        kind = kind or (TIMING if self._is_timing(task) else CORRECTNESS)
        with self._lock:
            if self._closed:
                future.cancel()
                return future
            self._queues[kind].append((key, task, fn or self._fn, future, 1))
            self._lock.notify_all()
        return future

    def _deliver(self, me: int, key: str, future: Future) -> None:
        if future.cancelled():
            outcome = Outcome(key, None, "cancelled")
        else:
            error = future.exception()
            outcome = Outcome(key, None, f"{type(error).__name__}: {error}") if error else \
                Outcome(key, future.result()[0], "", future.result()[1])
        with self._lock:
            self._outcomes.setdefault(me, deque()).append(outcome)
            self._lock.notify_all()

    def _memory_ok(self) -> bool:
        if self._gpu is None:
            return sum(self._running.values()) < self._cores
        free = self._memory[1]
        return free is None or free >= self._min_free_mb

    def _watch_memory(self) -> None:
        """Free GPU memory, read every MEMORY_PROBE_TTL_S outside the lock (nvidia-smi takes ~0.1 s)."""
        while not self._closed:
            self._memory = (time.monotonic(), self._free_mb())
            time.sleep(MEMORY_PROBE_TTL_S)

    def _dispatch(self) -> None:
        while True:
            with self._lock:
                while True:
                    if self._closed:
                        return
                    picked = self._pick()
                    if picked:
                        break
                    self._lock.wait(0.25)
                kind, item, slot = picked
                self._running[kind] += 1
            self._start(kind, item, slot)

    def _pick(self):
        """Under the lock: the next (kind, item, slot) that `admit` lets start, or None."""
        self._reclassify()
        for kind in (CORRECTNESS, TIMING):
            if not self._queues[kind]:
                continue
            memory_ok = kind == TIMING or sum(self._running.values()) == 0 or self._memory_ok()
            if admit(kind, self._running, bool(self._queues[TIMING]), bool(self._queues[CORRECTNESS]),
                     len(self._free), memory_ok):
                return kind, self._queues[kind].popleft(), self._free.popleft()
        return None

    def _reclassify(self) -> None:
        """Under the lock: queued timing runs that is_timing no longer calls so (their program
        hung on a run of the same method) join the correctness runs, in their order."""
        queue = self._queues[TIMING]
        if not queue:
            return
        kept, moved = [], []
        for item in queue:
            (kept if self._still_timing(item) else moved).append(item)
        if moved:
            queue.clear()
            queue.extend(kept)
            self._queues[CORRECTNESS].extend(moved)

    def _start(self, kind: str, item, slot: _Slot) -> None:
        key, task, fn, future, attempt = item
        began = time.monotonic()
        if not future.running() and not future.set_running_or_notify_cancel():
            self._finish(kind, slot, key, began)
            return
        inner = slot.pool.submit(local_call, fn, task)

        def done(inner_future, kind=kind, slot=slot, item=item, began=began):
            error = inner_future.exception()
            if isinstance(error, BrokenProcessPool) and not self._closed:
                slot.restart()
                if attempt < MAX_ATTEMPTS:
                    self._finish(kind, slot, key, began)
                    with self._lock:
                        self._queues[kind].appendleft((key, task, fn, future, attempt + 1))
                        self._lock.notify_all()
                    return
            self._finish(kind, slot, key, began)
            if error is not None:
                future.set_exception(error)
                return
            row, overhead = inner_future.result()
            if isinstance(row, dict):   # the leaderboard reads only the times of runs that had the GPU alone
                row["ran_alone"] = kind == TIMING
                self._tell_observer(task, row)
            self._chosen.discard(future)
            future.set_result((row, overhead))
        inner.add_done_callback(done)

    def _tell_observer(self, task, row: dict) -> None:
        """observe(task, row), whose failure must never lose the row (this runs in a future's
        callback, where an exception would leave the caller waiting for ever)."""
        if self._observe is None:
            return
        try:
            self._observe(task, row)
        except Exception as error:   # noqa: BLE001 - said, and the run's row still delivered
            print(f"grader: the shared pool's observer failed on a row ({type(error).__name__}: {error}); "
                  "the row is kept", file=sys.stderr)

    def _still_timing(self, item) -> bool:
        if item[3] in self._chosen:
            return True
        try:
            return bool(self._is_timing(item[1]))
        except Exception:   # noqa: BLE001 - in the dispatch thread an exception would stop every run: keep it timed
            return True

    def _finish(self, kind: str, slot: _Slot, key: str, began: float) -> None:
        with self._lock:
            self._running[kind] -= 1
            self._free.append(slot)
            self.history.append((key, kind, began, time.monotonic()))
            self._lock.notify_all()


class SpreadPool:
    """A SharedGpuPool per visible GPU: each calling thread (a student being graded) is given one
    GPU for all its runs, the GPU with the fewest students on it, so a student's correctness runs
    share that GPU with other students' and its timing runs have that GPU alone. Runs on other
    GPUs go on meanwhile (their host work is on other cores)."""
    kind = "local"

    def __init__(self, fn: Callable, jobs: int, gpus: list[str], is_timing: Callable = lambda task: False,
                 **options):
        self._pools = [SharedGpuPool(fn, jobs, gpu=gpu, is_timing=is_timing, **options) for gpu in gpus]
        self._lock = threading.Lock()
        self._assigned: dict[int, SharedGpuPool] = {}
        self._students = [0] * len(self._pools)
        self.workers = jobs * len(self._pools)

    @property
    def history(self) -> list:
        return [entry for pool in self._pools for entry in pool.history]

    def _mine(self) -> SharedGpuPool:
        me = threading.get_ident()
        with self._lock:
            pool = self._assigned.get(me)
            if pool is None:
                index = min(range(len(self._pools)), key=lambda i: (self._students[i], i))
                self._students[index] += 1
                pool = self._assigned[me] = self._pools[index]
            return pool

    def gpu_for_caller(self) -> str | None:
        """The GPU the calling thread (a student) is given, for all its runs."""
        return self._mine().gpu_for_caller()

    def describe(self) -> str:
        return (f"{len(self._pools)} GPUs, {self.workers // len(self._pools)} worker processes each (a student's runs on "
                f"one GPU: correctness runs together, timing runs alone on it)")

    def submit(self, key: str, task, fn: Callable | None = None, kind: str | None = None) -> None:
        self._mine().submit(key, task, fn, kind)

    def submit_future(self, task, fn: Callable | None = None, kind: str | None = None, key: str = "") -> Future:
        return self._mine().submit_future(task, fn, kind, key=key)

    def drain(self, wait: bool = True) -> Iterator[Outcome]:
        return self._mine().drain(wait)

    def close(self, cancel: bool = False) -> None:
        for pool in self._pools:
            pool.close(cancel)
