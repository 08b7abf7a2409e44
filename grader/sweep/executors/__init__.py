"""Where cells run: `local` (worker processes on this machine, one per GPU) or `dask` (a cluster).

Every executor has the same four calls: ``submit(key, task)``; ``drain(wait)``, yielding an
:class:`Outcome` per task as it finishes (``wait=False``: only those already finished);
``close(cancel)``; ``describe()``. The work function runs on the worker and returns a row
(or ``(row, harness seconds)``); the caller, the only writer of the results file, appends
the rows as they arrive. A worker that dies mid-run makes its task run again elsewhere;
a task that keeps killing its workers comes back as an Outcome with no row and an error.
"""
from __future__ import annotations

import os
import subprocess
from typing import Callable, Mapping

from grader.sweep.executors.cluster import ExecutorUnavailable, import_distributed
from grader.sweep.executors.outcome import Outcome

EXECUTORS = ("local", "dask")
CPU_WORKER_LIMIT = 2    # more CPU workers than that share the cores and spoil the timings

__all__ = ["EXECUTORS", "ExecutorUnavailable", "Outcome", "open_executor", "open_pool_or_say",
           "visible_gpus", "import_distributed"]


def visible_gpus(environ: Mapping[str, str] | None = None, probe: Callable[[], list[str]] | None = None) -> list[str]:
    """The GPUs this machine lets us use, as CUDA_VISIBLE_DEVICES values: that variable's list
    when it is set (CUDA ignores everything from the first negative entry on), else one per
    `nvidia-smi -L` line; none when SSSP_DEVICE=cpu or there is no NVIDIA driver."""
    environ = os.environ if environ is None else environ
    if environ.get("SSSP_DEVICE", "").strip().lower() == "cpu":
        return []
    listed = environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        gpus = []
        for entry in (part.strip() for part in listed.split(",")):
            if not entry or entry.startswith("-"):
                break
            gpus.append(entry)
        return gpus
    return (probe or _nvidia_smi)()


def _nvidia_smi() -> list[str]:
    try:
        listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return []
    if listing.returncode != 0:
        return []
    count = sum(1 for line in listing.stdout.splitlines() if line.startswith("GPU "))
    return [str(index) for index in range(count)]


def open_executor(kind: str, fn: Callable, *, workers: int | None = None, scheduler=None,
                  gpus: list[str] | None = None):
    """An executor running ``fn`` (a module-level function: it is pickled by name) on each task.

    local: ``workers`` defaults to one per visible GPU, or 1 on a CPU-only machine; no more
    workers than GPUs (runs on one GPU must not overlap), at most CPU_WORKER_LIMIT on the CPU.
    One worker runs in this process. dask: ``scheduler`` is an address or a connected Client.
    Raises ExecutorUnavailable (one line) when the choice cannot work here."""
    if kind == "dask":
        from grader.sweep.executors.cluster import DaskExecutor
        return DaskExecutor(fn, scheduler)
    if kind != "local":
        raise ExecutorUnavailable(f"--executor: unknown executor {kind!r} (choose from {', '.join(EXECUTORS)})")
    from grader.sweep.executors.local import InlineExecutor, LocalExecutor
    gpus = visible_gpus() if gpus is None else list(gpus)
    if workers is not None and workers < 1:
        raise ExecutorUnavailable(f"--workers: must be at least 1, got {workers}")
    if gpus:
        count = len(gpus) if workers is None else workers
        if count > len(gpus):
            raise ExecutorUnavailable(f"--workers {count}: only {len(gpus)} GPU(s) visible ({', '.join(gpus)}); "
                                      f"runs sharing a GPU would spoil each other's timings")
        slots = [(f"local-{i}", gpu) for i, gpu in enumerate(gpus[:count])]
    else:
        count = workers or 1
        if count > CPU_WORKER_LIMIT:
            raise ExecutorUnavailable(f"--workers {count}: no GPU here, and more than {CPU_WORKER_LIMIT} CPU "
                                      f"workers would share the cores and spoil the timings")
        slots = [(f"local-{i}", None) for i in range(count)]
    if len(slots) == 1:
        return InlineExecutor(fn, gpu=slots[0][1])
    return LocalExecutor(fn, slots)


def open_pool_or_say(fn: Callable, settings, *, executor=None, workers=None, scheduler=None, command: str, err):
    """open_executor with the command line's choices (None: not given) over the config's
    (``settings``: anything with executor, workers and scheduler); None, after one line
    "COMMAND: why" on ``err``, when the choice cannot work here."""
    try:
        return open_executor(executor or settings.executor, fn, workers=workers or settings.workers,
                             scheduler=scheduler or settings.scheduler)
    except ExecutorUnavailable as error:
        print(f"{command}: {error}", file=err)
        return None
