"""The first launch of opt's persistent kernels is paid in setup, on a tiny input, once per
process, before the events that time the solve (issue 40; sssp_gpu/methods/launching.py)."""
from __future__ import annotations

import numpy as np
import pytest

from sssp_gpu.device import CPU, select_device
from sssp_gpu.engine import solve
from sssp_gpu.methods import launching
from sssp_gpu.methods.common import Run


class FakeKernel:
    """Stands for a CuPy RawKernel: ``.kernel.ptr`` names the function; calls are recorded."""

    def __init__(self, ptr: int):
        self.kernel = type("Function", (), {"ptr": ptr})()
        self.calls = []

    def __call__(self, grid, block, args, shared_mem=0):
        self.calls.append((grid, block, args, shared_mem))


@pytest.fixture
def fresh_process(monkeypatch):
    monkeypatch.setattr(launching, "_launched", set())


def test_a_kernel_is_launched_on_the_tiny_input_once_per_configuration(fresh_process):
    kernel, other = FakeKernel(0xA), FakeKernel(0xB)
    made = []

    def tiny_args():
        made.append(1)
        return ("tiny",)

    assert launching.launch_once_tiny(kernel, 264, 1024, 12296, tiny_args)
    assert kernel.calls == [((264,), (1024,), ("tiny",), 12296)]
    assert not launching.launch_once_tiny(kernel, 264, 1024, 12296, tiny_args)
    assert len(kernel.calls) == 1 and len(made) == 1  # nothing launched or built the second time
    # another grid, block size, shared memory or function is another first launch
    for args in ((kernel, 132, 1024, 12296), (kernel, 264, 512, 12296), (kernel, 264, 1024, 0),
                 (other, 264, 1024, 12296)):
        assert launching.launch_once_tiny(*args, tiny_args)
    assert len(kernel.calls) == 4 and len(other.calls) == 1 and len(made) == 5
    assert launching.launch_key(kernel, 264, 1024, 12296) in launching.launched_keys()


@pytest.mark.parametrize("run", [Run("opt", "incore", tile=1024), Run("opt", "incore", tile=0)])
def test_the_tiny_input_is_a_graph_opt_solves(run):
    assert launching.TINY.n == 2 and launching.TINY.m == 1
    assert solve(launching.TINY, run, CPU).dist.tolist() == [0, 1]


# ---------------------------------------------------------------- on the GPU

def _record_order(monkeypatch):
    """Record, in order, each tiny first launch asked for and each timed region entered."""
    from sssp_gpu.methods import opt

    order = []
    real_once = opt.launch_once_tiny

    def once(kernel, blocks, bsize, shared, tiny_args):
        order.append(("tiny", launching.launch_key(kernel, blocks, bsize, shared)))
        return real_once(kernel, blocks, bsize, shared, tiny_args)

    class Timer(opt.GpuTimer):
        def region(self):
            order.append(("timed", frozenset(launching.launched_keys())))
            return super().region()

    monkeypatch.setattr(opt, "launch_once_tiny", once)
    monkeypatch.setattr(opt, "GpuTimer", Timer)
    return order


@pytest.mark.gpu
@pytest.mark.parametrize("tile", [None, 0])  # None: a grid, where opt takes tiles by itself
def test_the_first_launch_is_paid_before_the_timed_region(monkeypatch, tile):
    from grader.data import synth

    graph = synth.grid(60, 60, weights=(1, 100), seed=1)
    order = _record_order(monkeypatch)
    for _ in range(2):
        result = solve(graph, Run("opt", "incore", tile=tile), select_device("gpu"))
    assert [what for what, _ in order] == ["tiny", "timed", "tiny", "timed"]
    (_, key), (_, launched_by_then) = order[0], order[1]
    assert key in launched_by_then  # the kernel the region launches had had its first launch
    assert result.dist[0] == 0


@pytest.mark.gpu
@pytest.mark.parametrize("tile", [1024, 0])
def test_the_tiny_launch_solves_the_tiny_graph_on_the_gpu(tile):
    result = solve(launching.TINY, Run("opt", "incore", tile=tile), select_device("gpu"))
    assert np.asarray(result.dist).tolist() == [0, 1]
