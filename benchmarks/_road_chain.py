"""Development measurement behind BENCHMARKS.md's chain-walk paragraph: opt on the
roadNet-CA-sized stand-in with 0/2/4/16-hop chain walks. GPU only.

Not part of `make bench` (benchmarks/run.py); kept so the recorded numbers can be reproduced.
"""
import os, sys
sys.path.insert(0, '.')
from grader import synth
from reference import distances_for_graph
from sssp_gpu.device import select_device
from sssp_gpu.engine import solve
from sssp_gpu.methods.common import Run
dev = select_device()
g = synth.road_like(scale="full")
ref = distances_for_graph(g)
for chain in ("0", "2", "4", "16"):
    os.environ["SSSP_OPT_CHAIN"] = chain
    rs = [solve(g, Run("opt", "incore", False, 1024, 4), dev) for _ in range(4)]
    ok = all(((r.dist == ref) | ((ref < 0) & (r.dist > 2**62))).all() for r in rs)
    t = sorted(r.computation_ms + r.filtering_ms for r in rs[1:])[1]
    print(f"road chain={chain}: {t:.3f} ms rounds {rs[-1].rounds} relax/edge {rs[-1].edges_processed/g.m:.2f} ok={ok}", flush=True)
