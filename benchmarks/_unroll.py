"""Development A/B behind BENCHMARKS.md's bmf unroll table: bmf on the 700x700 weighted grid,
source-sorted, every spec configuration. Run with SSSP_KERNEL_DEFINES="UNROLL_OUTCORE=4 UNROLL_INCORE=8" etc.

Not part of `make bench` (benchmarks/run.py); kept so the recorded numbers can be reproduced.
"""
import os, sys
sys.path.insert(0, '.')
import numpy as np
from grader import synth
from sssp_gpu.device import select_device
from sssp_gpu.engine import solve
from sssp_gpu.methods.common import Run, SPEC_CONFIGS
dev = select_device()
g = synth.grid(700, 700, weights=(1, 100), seed=1)
g = g.reordered(np.argsort(g.src, kind="stable"))
for bsize, bcount in SPEC_CONFIGS:
    for sync in ("outcore", "incore"):
        solve(g, Run("bmf", sync, False, bsize, bcount), dev)
        rs = [solve(g, Run("bmf", sync, False, bsize, bcount), dev) for _ in range(3)]
        t = sorted(r.computation_ms for r in rs)[1]
        print(f"defines={os.environ.get('SSSP_KERNEL_DEFINES')} ({bsize},{bcount}) {sync}: {t:.1f} ms {rs[0].rounds} rounds {t/rs[0].rounds*1e3:.0f} us/round", flush=True)
