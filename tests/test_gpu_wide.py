"""Inputs wider than the launch: loops of the kernels that run more than once only when the
input outgrows the grid or the block (issue 41, item 4: generated operator mutants survived
because no test reached these bounds). Each GPU test has a CPU twin with the same graph family
and assertions (the numpy fallback has the same semantics).

- opt's mark phase walks the near queue in grid-stride steps: a queue longer than every thread
  of the persistent grid (a star of 2 x SMs x 2048 leaves at one distance) needs the stride;
- opt's hub expansion claims chunk slots with one atomicAdd per hub: several hubs expanded in the
  same round (a fan of hubs at equal distance) claim neighbouring slots, so a hub that writes
  one slot past its claim overwrites a neighbour's first chunk;
- tpe's scan of the per-warp counts is one block of SCAN_THREADS threads, each summing a run of
  warps: more warps than threads (bsize 1024 x bcount 40 = 1280 warps) needs the running sum.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import random_graph
from sssp_common.graph import Graph
from sssp_gpu.methods import opt, tpe
from sssp_gpu.methods.common import Run
from test_gpu_properties import DEVICES, check

THREADS_PER_SM = 2048        # the most resident threads an SM of sm_70..sm_90 holds


def widest_grid(device: str) -> int:
    """More threads than any persistent grid of this device can have (the CPU twin: a fixed width)."""
    if device == "cpu":
        return 20_000
    import cupy
    return cupy.cuda.Device().attributes["MultiProcessorCount"] * THREADS_PER_SM


def star(leaves: int, seed: int = 1) -> Graph:
    """0 -> 1 .. leaves, every edge of weight 1 except a few heavier ones: one bucket holds them all."""
    rng = np.random.default_rng(seed)
    weight = np.ones(leaves, dtype=np.int64)
    weight[rng.choice(leaves, size=min(leaves, 64), replace=False)] = 2
    return Graph.from_arrays(np.zeros(leaves, dtype=np.int64), np.arange(1, leaves + 1), weight, n=leaves + 1)


def fan_of_hubs(hubs: int, degree: int, seed: int = 2) -> Graph:
    """0 -> h_1 .. h_hubs (weight 1 each: expanded in one round), each hub -> `degree` leaves of
    its own (random weights): every chunk of every hub is the only way into its leaves."""
    rng = np.random.default_rng(seed)
    heads = np.arange(1, hubs + 1)
    src, dst, weight = [np.zeros(hubs, dtype=np.int64)], [heads], [np.ones(hubs, dtype=np.int64)]
    next_id = hubs + 1
    for hub in heads:
        src.append(np.full(degree, hub))
        dst.append(np.arange(next_id, next_id + degree))
        weight.append(rng.integers(1, 100, degree))
        next_id += degree
    return Graph.from_arrays(np.concatenate(src), np.concatenate(dst), np.concatenate(weight), n=next_id)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sync", ["outcore", "incore"])
def test_opt_near_queue_longer_than_the_grid(device, sync):
    graph = star(2 * widest_grid(device))
    check(graph, Run("opt", sync, False, 1024, 2), device, "star wider than the grid")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sync", ["outcore", "incore"])
def test_opt_hubs_expanded_in_the_same_round(device, sync):
    degree = 3 * opt.CHUNK + 1                    # four chunks each, the last of one edge
    assert degree > opt.HUB_DEGREE
    for hubs in (2, 8, 64):
        check(fan_of_hubs(hubs, degree), Run("opt", sync, False, 256, 8), device, f"{hubs} hubs")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sync", ["outcore", "incore"])
def test_tpe_with_more_warps_than_its_scan_block(device, sync):
    run = Run("tpe", sync, False, 1024, 40)
    assert run.warps > tpe.SCAN_THREADS
    graph = random_graph(3000, n=3000, m=30_000, max_weight=50, unreachable=3)
    check(graph, run, device, f"{run.warps} warps")
