"""Cells as tasks on a Dask distributed cluster, each holding one GPU (a worker resource).

Dask does the scheduling and the fault handling: a task whose worker is lost is run again
on another one (up to the scheduler's allowed-failures, then KilledWorker), and `retries`
covers tasks that raise. Workers are started by staff with one GPU each and
`--resources GPU=1`, so two runs never share a GPU (README: "Running on many GPUs").
"""
from __future__ import annotations

import uuid
from typing import Callable, Iterator

from grader.sweep.executors.outcome import Outcome
from grader.sweep.executors.worker import dask_call

INSTALL_HINT = "pip install 'dask[distributed]>=2024.1' (or pip install -e '.[dask]')"
RETRIES = 1                  # for tasks that raise (a flaky shared folder); lost workers are Dask's own
CONNECT_TIMEOUT_S = 30


class ExecutorUnavailable(Exception):
    """The executor cannot be used here; the message is one line saying what to do."""


def import_distributed():
    try:
        import distributed
    except ImportError as error:
        raise ExecutorUnavailable(f"--executor dask needs Dask distributed, which is not installed "
                                  f"({error.name or error}): {INSTALL_HINT}") from None
    return distributed


class DaskExecutor:
    kind = "dask"

    def __init__(self, fn: Callable, scheduler, retries: int = RETRIES):
        """scheduler: an address (tcp://HOST:8786) or a distributed.Client already connected."""
        distributed = import_distributed()
        self._fn = fn
        self._retries = retries
        self._own_client = not isinstance(scheduler, distributed.Client)
        if self._own_client:
            if not scheduler:
                raise ExecutorUnavailable("--executor dask needs --scheduler tcp://HOST:8786 "
                                          "(or scheduler = ... in the config's [executor] table)")
            try:
                self._client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
            except (OSError, TimeoutError) as error:
                raise ExecutorUnavailable(f"cannot reach the Dask scheduler at {scheduler}: {error}") from None
        else:
            self._client = scheduler
        self._KilledWorker = distributed.KilledWorker
        self._pending = distributed.as_completed([], loop=self._client.loop, with_results=False)
        self._keys: dict = {}                      # future key -> (our key, future)
        self.workers = len(self._client.scheduler_info().get("workers", {}))

    def describe(self) -> str:
        info = self._client.scheduler_info()
        workers = info.get("workers", {})
        gpus = sum(int(w.get("resources", {}).get("GPU", 0)) for w in workers.values())
        text = f"Dask cluster at {info.get('address', '?')}: {len(workers)} workers, {gpus} GPU slots"
        if not gpus:
            text += " (none yet: tasks wait for workers started with --resources GPU=1)"
        return text

    def submit(self, key: str, task) -> None:
        future = self._client.submit(dask_call, self._fn, task, key=f"sssp-cell-{key}-{uuid.uuid4().hex[:8]}",
                                     resources={"GPU": 1}, retries=self._retries, pure=False)
        self._keys[future.key] = (key, future)
        self._pending.add(future)

    def drain(self, wait: bool = True) -> Iterator[Outcome]:
        while not self._pending.is_empty():
            if not wait and not self._pending.has_ready():
                return
            for future in self._pending.next_batch(block=True):
                yield self._outcome(future)

    def _outcome(self, future) -> Outcome:
        key, _ = self._keys.pop(future.key)
        try:
            if future.status == "finished":
                row, overhead = future.result()
                return Outcome(key, row, "", overhead)
            error = future.exception()
        except Exception as raised:   # the result could not be fetched (worker gone with it)
            error = raised
        finally:
            future.release()
        if isinstance(error, self._KilledWorker):
            return Outcome(key, None, "the Dask workers running it kept dying (Dask's allowed-failures "
                                      "reached: killed, out of memory, or killed by the program)")
        return Outcome(key, None, f"{type(error).__name__}: {error}")

    def close(self, cancel: bool = False) -> None:
        """With cancel, tasks not started are dropped; a run in progress on a worker finishes
        (or times out) there, and its row is not kept."""
        try:
            if cancel:
                self._pending.clear()
                self._client.cancel([future for _, future in self._keys.values()])
                self._keys.clear()
        finally:
            if self._own_client:
                self._client.close()
