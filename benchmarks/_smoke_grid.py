"""First smoke timing of bmf on a 700x700 grid (session 1's table in BENCHMARKS.md). GPU only.

Not part of `make bench` (benchmarks/run.py); kept so the recorded numbers can be reproduced.
"""
import sys, time, numpy as np
sys.path.insert(0, '.')
from sssp_gpu.graph import Graph
from sssp_gpu.engine import solve
from sssp_gpu.device import select_device
from sssp_gpu.methods.common import Run, SPEC_CONFIGS
r = c = 700
idx = np.arange(r * c).reshape(r, c)
a = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()]); b = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
src = np.concatenate([a, b]); dst = np.concatenate([b, a])
w = np.random.default_rng(1).integers(1, 101, src.size)
g = Graph.from_arrays(src, dst, w).reordered(np.argsort(src, kind='stable'))
dev = select_device()
print(dev, g.n, g.m)
for bs, bc in SPEC_CONFIGS:
    for sync in ('outcore', 'incore'):
        runs = [solve(g, Run('bmf', sync, False, bs, bc), dev) for _ in range(3)]
        ms = sorted(x.computation_ms for x in runs)[1]
        print(f"({bs},{bc}) {sync}: {ms:.1f} ms, {runs[0].rounds} rounds, {ms/runs[0].rounds:.4f} ms/round", flush=True)
t = time.perf_counter(); x = solve(g, Run('tpe', 'outcore', False, 512, 4), dev); print('tpe', x.computation_ms, x.filtering_ms, x.rounds, time.perf_counter() - t)
