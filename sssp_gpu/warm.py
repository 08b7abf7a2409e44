"""``python -m sssp_gpu.warm``: compile every CUDA module once (``make sssp`` runs it).

Our modules are not all a run compiles: CuPy builds its own kernels (fills, casts, copies,
reductions, scans) at their first use and keeps them in the same on-disk cache. On a fresh
H100 the first ``./sssp`` of the road stand-in spent 4.3 s of its setup doing that (the next
run 0.11 s; BENCHMARKS.md, issue 26), so the warm-up also solves tiny graphs with every method,
sync and option, on both distance types, and derives their predecessors (``-paths``).
"""
import sys

import numpy as np

from .device import gpu_available


def tiny_graphs():
    """(label, graph): a 40 x 40 grid with weights (opt takes tiles there), the same with unit
    weights, and a path whose distances need int64."""
    from sssp_common.graph import Graph

    side = 40
    ids = np.arange(side * side).reshape(side, side)
    right = np.stack([ids[:, :-1].ravel(), ids[:, 1:].ravel()])
    down = np.stack([ids[:-1, :].ravel(), ids[1:, :].ravel()])
    pairs = np.concatenate([right, down, right[::-1], down[::-1]], axis=1)
    src, dst = (pairs[0].astype(np.int32), pairs[1].astype(np.int32))
    weights = (np.arange(src.shape[0]) % 97 + 1).astype(np.int32)
    far = np.arange(5, dtype=np.int32)
    return [("grid", Graph(side * side, src, dst, weights)),
            ("unit grid", Graph(side * side, src, dst, np.ones_like(weights))),
            ("int64 path", Graph(5, far[:-1], far[1:], np.full(4, 2**30, dtype=np.int32)))]


def warm_solves(device=None) -> int:
    """Every method, sync and option once per tiny graph on the GPU; returns the solves run.
    A method that refuses a graph (a ValueError or InputError, as harish and dijkstra refuse
    weights that large) is skipped: the warm-up is not a test."""
    from sssp_common.errors import InputError
    from sssp_common.vocabulary import METHODS
    from .device import select_device
    from .engine import solve
    from .methods.common import Run
    from .paths import predecessors

    device = device or select_device("gpu")
    runs = [Run(method, sync) for method in METHODS for sync in ("incore", "outcore")]
    runs += [Run("bmf", "outcore", True), Run("opt", "incore", tile=0), Run("opt", "outcore", tile=0)]
    done = 0
    for _, graph in tiny_graphs():
        result = None
        for run in runs:
            try:
                result = solve(graph, run, device)
            except (ValueError, InputError):
                continue
            done += 1
        if result is not None:
            predecessors(graph, result, on_gpu=device.is_gpu)
    return done


def main() -> int:
    if not gpu_available():
        print("sssp: no CUDA GPU here: the numpy fallback will run; nothing to compile")
        return 0
    from . import kernels

    names = kernels.warm_all()
    solves = warm_solves()
    print(f"sssp: compiled CUDA modules: {', '.join(names)}; CuPy's own kernels warmed by {solves} tiny solves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
