"""sssp_gpu.early_context: the CUDA context made beside ./sssp's imports, and never on the CPU."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import FIGURE1_DIST, FIGURE1_EDGES, ROOT
from sssp_gpu import early_context


def test_no_context_thread_for_a_cpu_run_or_when_turned_off(monkeypatch):
    monkeypatch.setenv("SSSP_DEVICE", "cpu")
    assert early_context.start() is None
    monkeypatch.setenv("SSSP_DEVICE", "auto")
    monkeypatch.setenv("SSSP_EARLY_CONTEXT", "0")
    assert early_context.start() is None


def test_without_a_driver_the_thread_ends_quietly(monkeypatch):
    monkeypatch.delenv("SSSP_EARLY_CONTEXT", raising=False)
    monkeypatch.setenv("SSSP_DEVICE", "auto")
    real = early_context.ctypes.CDLL

    def no_driver(name, *args, **kwargs):
        if name == "libcuda.so.1":
            raise OSError("libcuda.so.1: cannot open shared object file")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(early_context.ctypes, "CDLL", no_driver)
    thread = early_context.start()
    thread.join(10)
    assert not thread.is_alive()


@pytest.mark.parametrize("device", ["auto", pytest.param("gpu", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("early", ["1", "0"])
def test_sssp_gives_the_same_answer_with_and_without_the_early_context(tmp_path, early, device):
    """Figure 1 through sssp.py as a fresh process (on a GPU machine: the context made early, then
    used by CuPy; here: the numpy fallback, the thread finding no driver or no device)."""
    graph = tmp_path / "figure1.txt"
    graph.write_text(FIGURE1_EDGES)
    out = tmp_path / "out.txt"
    done = subprocess.run([sys.executable, str(ROOT / "sssp.py"), "-input", str(graph), "-bsize", "256",
                           "-bcount", "8", "-output", str(out), "opt", "-sync", "incore"],
                          capture_output=True, text=True, env={**os.environ, "SSSP_EARLY_CONTEXT": early, "SSSP_DEVICE": device})
    assert done.returncode == 0, done.stderr
    got = [int(line.split(":")[1]) for line in out.read_text().split()]
    np.testing.assert_array_equal(got, FIGURE1_DIST)
