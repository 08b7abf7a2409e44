"""Development sweep behind BENCHMARKS.md's opt version tables: opt on the grid, R-MAT and the
road stand-in under SSSP_OPT_* settings (edit the variant list to compare). GPU only.

Not part of `make bench` (benchmarks/run.py); kept so the recorded numbers can be reproduced.
"""
import os, sys
sys.path.insert(0, '.'); sys.path.insert(0, 'tests')
import numpy as np
from test_opt import grid
from conftest import scipy_distances
from sssp_gpu.device import select_device
from sssp_gpu.engine import solve
from sssp_gpu.methods.common import Run
from sssp_gpu.graph import Graph
dev = select_device()
print(dev.timing_label)
def rmat(scale, ef, weighted, seed=2):
    rng = np.random.default_rng(seed); m = ef << scale
    src = np.zeros(m, np.int64); dst = np.zeros(m, np.int64)
    for bit in range(scale):
        r = rng.random(m)
        s = r >= 0.57 + 0.19  # c or d quadrant -> src bit
        d = ((r >= 0.57) & (r < 0.76)) | (r >= 0.95)
        src |= s.astype(np.int64) << bit; dst |= d.astype(np.int64) << bit
    perm = rng.permutation(1 << scale); src, dst = perm[src], perm[dst]
    hub = np.bincount(src, minlength=1<<scale).argmax()
    swap = np.arange(1<<scale); swap[0], swap[hub] = hub, 0
    src, dst = swap[src], swap[dst]
    w = rng.integers(1, 101, m) if weighted else None
    return Graph.from_arrays(src, dst, w, n=1<<scale)
def path(n, seed=0):
    rng = np.random.default_rng(seed)
    return Graph.from_arrays(np.arange(n-1), np.arange(1, n), rng.integers(1, 100, n-1))
from grader import synth
graphs = {"grid-w": grid(700, True, 1), "grid-u": grid(700, False, 1), "rmat-w": rmat(20, 16, True), "road": synth.road_like(scale="full"), "rmat-u": rmat(20, 16, False)}
for name, g in graphs.items():
    ref = scipy_distances(g)
    for delta in ["auto"]:
        os.environ["SSSP_OPT_DELTA"] = "" if delta == "auto" else delta
        for sync, chain, fuse in (("incore", "", "0"), ("incore", "", ""), ("outcore", "", "")):
            os.environ["SSSP_OPT_CHAIN"] = chain; os.environ["SSSP_OPT_FUSE"] = fuse
            rs = [solve(g, Run("opt", sync, False, 1024, 4), dev) for _ in range(5)]
            ok = all((r.dist == ref).all() for r in rs)
            c = sorted(r.computation_ms + r.filtering_ms for r in rs[1:])[1]
            r = rs[-1]
            print(f"fuse={fuse} {name} delta={delta} {sync}: total {c:.3f} ms rounds {r.rounds} us/round {c*1e3/r.rounds:.2f} edges/m {r.edges_processed/g.m:.2f} ok={ok} {r.notes[1:]}", flush=True)
