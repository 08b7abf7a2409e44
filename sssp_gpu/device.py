"""Pick the engine: CuPy on a CUDA GPU, or the numpy fallback on the CPU.

``SSSP_DEVICE=cpu`` forces the fallback; ``SSSP_DEVICE=gpu`` makes a missing GPU an error
(the GPU test suite sets it, so that a machine without a GPU fails instead of skipping).
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from functools import lru_cache

from sssp_common.errors import DeviceError


@dataclass(frozen=True)
class Device:
    is_gpu: bool
    name: str  # "NVIDIA H100 80GB HBM3", or "(numpy)" on the CPU

    @property
    def timing_label(self) -> str:
        """The words after "kernel time on" in the spec's timing lines."""
        return f"GPU {self.name}" if self.is_gpu else f"CPU {self.name}"


CPU = Device(False, "(numpy)")


def gpu_available() -> bool:
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver, or no device: all mean "no GPU here"
        return False


@lru_cache(maxsize=None)
def select_device(choice: str | None = None) -> Device:
    choice = (choice or os.environ.get("SSSP_DEVICE") or "auto").lower()
    if choice not in ("auto", "cpu", "gpu"):
        raise DeviceError(f"SSSP_DEVICE must be auto, cpu or gpu, not {choice!r}")
    if choice == "cpu":
        return CPU
    if gpu_available():
        import cupy
        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        name = props["name"]
        return Device(True, name.decode() if isinstance(name, bytes) else str(name))
    if choice == "gpu":
        raise DeviceError("SSSP_DEVICE=gpu but no CUDA device is usable (CuPy missing or no GPU)")
    return CPU


_READYING = threading.Lock()   # sssp.py starts one call early; the run's own call waits for it


def ready_device() -> Device:
    """:func:`select_device`, with the CUDA context created too (``cudaFree(0)``), so that a
    thread can pay for CuPy's import and the context (~0.4 s) while the graph loads."""
    with _READYING:
        device = select_device()
        if device.is_gpu:
            import cupy
            cupy.cuda.runtime.free(0)
        return device
