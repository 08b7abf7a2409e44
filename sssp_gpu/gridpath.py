"""The grid-path demo of seed 003 (Telang): ``python -m sssp_gpu.gridpath [--size N] [--inner K] [--seed S]``.

A cost grid is the product of two random integer matrices (N x K times K x N) computed on
the GPU (numpy on the CPU); its two smallest cells are found by min-reductions (the
smallest, then the smallest with that one set aside, as the paper does); the cheapest
4-neighbour path between them, where stepping into a cell costs the cell's value, is
found by the Harish-Narayanan method (``harish``, which keeps predecessors) and printed
cell by cell with its cost.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numpy as np

from sssp_common.graph import Graph
from .device import select_device
from .engine import solve
from .methods.common import INF, Run


@dataclass
class GridPath:
    cost: np.ndarray           # N x N cell costs
    source: tuple[int, int]    # the smallest cell
    target: tuple[int, int]    # the second smallest
    cells: list[tuple[int, int]]
    length: int                # sum of the costs of the cells entered after the source
    device: str


def cost_grid(size: int, inner: int, seed: int, max_value: int, on_gpu: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.integers(1, max_value + 1, (size, inner), dtype=np.int64)
    b = rng.integers(1, max_value + 1, (inner, size), dtype=np.int64)
    if on_gpu:
        import cupy
        # cuBLAS in float64: exact for these small integers, and every CuPy has it
        return cupy.rint(cupy.asarray(a, dtype=np.float64) @ cupy.asarray(b, dtype=np.float64)).astype(np.int64)
    return a @ b


def two_smallest(cost, xp=np) -> tuple[int, int]:
    """Flat indices of the smallest cell and of the smallest other cell (first on ties)."""
    flat = cost.reshape(-1)
    first = int(xp.argmin(flat))
    kept = flat[first].copy()
    flat[first] = np.iinfo(flat.dtype).max
    second = int(xp.argmin(flat))
    flat[first] = kept
    return first, second


def grid_graph(cost: np.ndarray, source: int) -> Graph:
    """4-neighbour edges of an N x N grid, weight = the cost of the cell entered; ``source`` is vertex 0."""
    size = cost.shape[0]
    ids = np.arange(size * size).reshape(size, size)
    pairs = [(ids[:, :-1], ids[:, 1:]), (ids[:-1, :], ids[1:, :])]
    src = np.concatenate([x.ravel() for a, b in pairs for x in (a, b)])
    dst = np.concatenate([x.ravel() for a, b in pairs for x in (b, a)])
    relabel = np.arange(size * size)
    relabel[[0, source]] = relabel[[source, 0]]  # swap the source with vertex 0
    weight = cost.reshape(-1)[dst]
    return Graph.from_arrays(relabel[src], relabel[dst], weight, n=size * size)


def cheapest_path(size: int = 64, inner: int = 16, seed: int = 0, max_value: int = 9,
                  device=None) -> GridPath:
    device = device or select_device()
    if device.is_gpu:
        import cupy as xp
    else:
        xp = np
    cost_dev = cost_grid(size, inner, seed, max_value, device.is_gpu)
    first, second = two_smallest(cost_dev, xp)
    cost = cost_dev.get() if device.is_gpu else cost_dev
    if int(cost.max()) * size * size >= np.iinfo(np.int32).max:
        raise ValueError("cell costs too large for this grid; lower --max-value or --inner")
    graph = grid_graph(cost, first)
    result = solve(graph, Run("harish", "incore", False, 256, 8), device)
    relabel = np.arange(size * size)
    relabel[[0, first]] = relabel[[first, 0]]
    target = int(relabel[second])
    assert result.dist[target] != INF  # a grid is connected
    walk = [target]
    while walk[-1] != 0:
        walk.append(int(result.pred[walk[-1]]))
    cells = [divmod(int(relabel[v]), size) for v in reversed(walk)]
    return GridPath(cost, divmod(first, size), divmod(second, size), cells, int(result.dist[target]),
                    device.timing_label)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sssp_gpu.gridpath", description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=64, help="grid side N (default 64)")
    parser.add_argument("--inner", type=int, default=16, help="inner dimension K of the product (default 16)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-value", type=int, default=9, help="matrix entries are 1..this (default 9)")
    args = parser.parse_args(argv)
    if not (2 <= args.size <= 4096 and 1 <= args.inner <= 4096 and 1 <= args.max_value <= 1000):
        parser.error("need 2 <= --size <= 4096, 1 <= --inner <= 4096, 1 <= --max-value <= 1000")
    try:
        found = cheapest_path(args.size, args.inner, args.seed, args.max_value)
    except ValueError as err:
        print(f"gridpath: error: {err}", file=sys.stderr)
        return 1
    cost = found.cost
    print(f"grid: {args.size} x {args.size} cells = A ({args.size} x {args.inner}) @ B ({args.inner} x {args.size}), "
          f"entries 1..{args.max_value}, seed {args.seed}, on {found.device}")
    print(f"smallest cells: {found.source} = {cost[found.source]} (source), "
          f"{found.target} = {cost[found.target]} (target)")
    print("path: " + " -> ".join(f"{cell}={cost[cell]}" for cell in found.cells))
    print(f"length: {found.length} over {len(found.cells) - 1} steps (entering a cell costs its value)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
