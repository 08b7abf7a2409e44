"""vbf's numpy rounds on one mid-sized graph: CPU seconds (min of --repeats) per method and sync.

    python3 -m benchmarks.vbf_cpu                 # 150² grid, weights 1..100 (seed 1)
    python3 -m benchmarks.vbf_cpu --graph road    # the roadNet-CA stand-in at 1/64

CPU time of this process (``time.process_time``), so a loaded machine's waiting is not
counted; each line carries the rounds, the edges relaxed and a digest of the distances, so a
before/after comparison shows the same work and the same answer.
"""
from __future__ import annotations

import argparse
import hashlib
import time

import numpy as np


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks.vbf_cpu", description=__doc__.splitlines()[0])
    parser.add_argument("--graph", choices=("grid", "road"), default="grid")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)

    from grader.data import synth
    from sssp_gpu.methods import vbf
    from sssp_gpu.methods.common import Run

    graph = (synth.standin("roadNet-CA", scale=1 / 64, seed=0) if args.graph == "road"
             else synth.grid(150, 150, weights=(1, 100), seed=1))
    print(f"{args.graph}: n={graph.n} m={graph.m}, CPU seconds, min of {args.repeats}")
    for method in ("vbf", "vbf-flag"):
        for sync in ("incore", "outcore"):
            run = Run(method, sync, False, 256, 4)
            best, result = None, None
            for _ in range(max(args.repeats, 1)):
                started = time.process_time()
                result = vbf.run_cpu(graph, run)
                seconds = time.process_time() - started
                best = seconds if best is None else min(best, seconds)
            digest = hashlib.sha256(np.ascontiguousarray(result.dist).tobytes()).hexdigest()[:12]
            print(f"  {method:8s} {sync:7s} rounds {result.rounds:4d} relaxed {result.edges_processed:10d} "
                  f"{best:7.3f} s  dist {digest}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
