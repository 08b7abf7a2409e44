#!/usr/bin/env python3
"""CS 515 Project 2: single-source shortest paths on the GPU. See ``./sssp --help``."""
import time

STARTED = time.perf_counter()  # before any other import: the wall line's start-up counts them

import os  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402

SERVE_FLAG = "--serve-cells"   # the grader's kept process (sssp_gpu/serve.py), not a user option


def _device_early(argv: list) -> None:
    """CuPy's import, the CUDA context (~0.4-0.8 s on a GPU machine) and the method's kernel
    modules while the main thread imports and loads the graph; the run's own calls wait for
    these (device.ready_device and kernels.module hold locks) and report any failure in their
    words, so this one stays silent."""
    try:
        from sssp_gpu.device import ready_device
        if ready_device().is_gpu:
            from sssp_gpu.kernels import preload
            preload(*method_and_sync(argv))
    except BaseException:
        pass


def method_and_sync(argv: list) -> tuple:
    """A first guess at the method word and sync from the command line, without parsing it
    (the real parse, sssp_gpu.cli, comes later and has the last word)."""
    words = [word.lower() for word in argv]
    sync = next((b for a, b in zip(words, words[1:]) if a.lstrip("-") == "sync"), "")
    named = [b for a, b in zip(words, words[1:]) if a.lstrip("-") == "method"]
    bare = [w for i, w in enumerate(words) if not w.startswith("-")
            and (i == 0 or not words[i - 1].startswith("-") or words[i - 1].lstrip("-").isdigit())]
    return ((named or bare or [""])[0], sync)


def _wants_device(argv: list) -> bool:
    """A run, not --help, a bare usage line or the kept process (which makes its own)."""
    return bool(argv) and SERVE_FLAG not in argv and not any(a.lstrip("-") in ("h", "help") for a in argv)


if __name__ == "__main__":
    if _wants_device(sys.argv[1:]):
        from sssp_gpu import early_context  # ctypes only: the context is made while CuPy imports
        early_context.start()
        threading.Thread(target=_device_early, args=(sys.argv[1:],), daemon=True, name="device").start()
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
