"""The CUDA primary context, made through the driver API while Python still imports numpy and CuPy.

Why: a fresh ``./sssp`` waits for its device (CuPy's import ~0.2 s, then the context ~0.3-0.4 s)
before its setup can start; on a small graph nothing else hides that wait (the road stand-in's
"device" stage, BENCHMARKS.md). The context needs no CuPy: ``libcuda`` makes it (``cuInit``,
``cuDevicePrimaryCtxRetain``) in a thread whose foreign calls release the GIL, beside the
imports. CuPy's runtime then finds the device's primary context made and uses it.

Only device 0 as the process sees it (``CUDA_VISIBLE_DEVICES`` applies), the device CuPy
uses; no flags are set, so CuPy's own first call behaves as if it had made the context. Any
failure (no driver, no device) is silent: CuPy's import reports problems in its own words.
``SSSP_EARLY_CONTEXT=0`` turns it off (for measuring what it gains).
"""
from __future__ import annotations

import ctypes
import os
import threading


def _retain_primary_context() -> None:
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return
    if driver.cuInit(0) != 0:
        return
    device = ctypes.c_int()
    if driver.cuDeviceGet(ctypes.byref(device), 0) != 0:
        return
    context = ctypes.c_void_p()
    driver.cuDevicePrimaryCtxRetain(ctypes.byref(context), device)  # kept until the process exits


def start() -> threading.Thread | None:
    """Begin making the context in a daemon thread, unless the run is to stay on the CPU."""
    if os.environ.get("SSSP_DEVICE", "").strip().lower() == "cpu" or os.environ.get("SSSP_EARLY_CONTEXT") == "0":
        return None
    thread = threading.Thread(target=_retain_primary_context, daemon=True, name="cuda-context")
    thread.start()
    return thread
