#!/usr/bin/env python3
"""CS 515 Project 2: single-source shortest paths on the GPU. See ``./sssp --help``."""
import time

STARTED = time.perf_counter()  # before any other import: the wall line's start-up counts them

import os  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402

SERVE_FLAG = "--serve-cells"   # the grader's kept process (sssp_gpu/serve.py), not a user option


def _device_early() -> None:
    """CuPy's import and the CUDA context (~0.4-0.8 s on a GPU machine) while the main thread
    imports and loads the graph; the run's own call waits for this one (device.ready_device
    holds a lock) and reports any failure in its words, so this one stays silent."""
    try:
        from sssp_gpu.device import ready_device
        ready_device()
    except BaseException:
        pass


def _wants_device(argv: list) -> bool:
    """A run, not --help, a bare usage line or the kept process (which makes its own)."""
    return bool(argv) and SERVE_FLAG not in argv and not any(a.lstrip("-") in ("h", "help") for a in argv)


if __name__ == "__main__":
    if _wants_device(sys.argv[1:]):
        threading.Thread(target=_device_early, daemon=True, name="device").start()
    if sys.argv[1:] == [SERVE_FLAG]:
        from sssp_gpu.serve import serve
        sys.exit(serve())
    from sssp_gpu.cli import main
    code = main(started=STARTED)
    sys.stdout.flush()
    sys.stderr.flush()
    # Every file is whole and closed by now: skip the interpreter's and the CUDA context's
    # teardown (~0.2 s of a 1 s run, BENCHMARKS.md). Only here, in a fresh process: the kept
    # one (sssp_gpu.serve) returns from main and goes on to the next cell.
    os._exit(code)
