"""Kernel time of bmf, segscan and tpe per block configuration (GPU; CPU runs a tiny smoke size).

Bounds, written before measuring (H100, 132 SMs; issue 2's bar is a student's compiled
bmf at 0.55 ms per round for (512,4) out-of-core on the 700x700 weighted grid):
- A round reads 12 B of edge + 2 x 4 B of distances per edge: 1.96M edges -> ~39 MB,
  ~13 us at 3 TB/s. With 2048 threads the round is latency-bound instead: each thread
  walks ~956 edges; at ~0.5-0.6 us per dependent load chain that is ~0.55 ms, the bar.
  Loading 4 edges per thread before using them (UNROLL 4) should cut it ~3-4x.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from benchmarks.common import median, print_table, record  # noqa: E402
from grader import synth  # noqa: E402
from sssp_gpu.device import select_device  # noqa: E402
from sssp_gpu.engine import solve  # noqa: E402
from sssp_common.graph import Graph  # noqa: E402
from sssp_gpu.methods.common import SPEC_CONFIGS, Run  # noqa: E402

STUDENT_MS_PER_ROUND = 0.55  # (512,4) outcore, 700x700 weighted grid, source-sorted


def by_source(graph: Graph) -> Graph:
    return graph.reordered(np.argsort(graph.src, kind="stable"))


def by_destination(graph: Graph) -> Graph:
    return graph.reordered(np.argsort(graph.dst, kind="stable"))


def measure(graph: Graph, run: Run, device, repeats: int) -> dict:
    solve(graph, run, device)  # warm-up: module load, allocations
    results = [solve(graph, run, device) for _ in range(repeats)]
    return {
        "computation_ms": median(r.computation_ms for r in results),
        "filtering_ms": median(r.filtering_ms for r in results),
        "rounds": results[0].rounds,
        "edges_processed": results[0].edges_processed,
        "spread_ms": max(r.computation_ms for r in results) - min(r.computation_ms for r in results),
    }


def main(argv: list[str]) -> int:
    device = select_device()
    quick = "--quick" in argv or not device.is_gpu
    repeats = 3 if device.is_gpu else 1
    side = 80 if quick else 700
    grid = by_source(synth.grid(side, side, weights=(1, 100), seed=1))
    road = synth.road_like(scale=1 / 256 if quick else "full")
    power = synth.rmat(12 if quick else 20, 16, weights=None, seed=2)
    print(f"device: {device.timing_label}; grid {grid.n:,} vertices / {grid.m:,} edges; "
          f"road-like {road.n:,} / {road.m:,}; R-MAT {power.n:,} / {power.m:,}")

    rows = []
    for bsize, bcount in SPEC_CONFIGS:
        for sync in ("outcore", "incore"):
            m = measure(grid, Run("bmf", sync, False, bsize, bcount), device, repeats)
            per_round = m["computation_ms"] / m["rounds"]
            record("bmf-grid", device=device.name, bsize=bsize, bcount=bcount, sync=sync, **m)
            rows.append([f"({bsize},{bcount})", sync, m["computation_ms"], m["rounds"], per_round,
                         f"{STUDENT_MS_PER_ROUND / per_round:.2f}x"])
    print_table(f"bmf on the {side}x{side} weighted grid, source-sorted (median of {repeats})",
                ["config", "sync", "computation ms", "rounds", "ms/round", "vs student 0.55 ms/round"], rows)

    rows = []
    for label, graph in (("road-like", road), ("R-MAT", power)):
        cases = [("bmf", "outcore", False, by_source(graph), "source"),
                 ("bmf", "incore", False, by_source(graph), "source"),
                 ("segscan", "outcore", True, by_destination(graph), "destination"),
                 ("tpe", "outcore", False, by_source(graph), "source"),
                 ("tpe", "incore", False, by_source(graph), "source")]
        for bsize, bcount in SPEC_CONFIGS:
            for name, sync, usesmem, ordered, ordering in cases:
                method = "bmf" if name == "segscan" else name
                m = measure(ordered, Run(method, sync, usesmem, bsize, bcount), device, 1 if not quick else repeats)
                record("methods", device=device.name, graph=label, method=name, sync=sync, ordering=ordering,
                       bsize=bsize, bcount=bcount, **m)
                rows.append([label, f"({bsize},{bcount})", name, sync, ordering, m["computation_ms"],
                             m["filtering_ms"], m["rounds"], f"{m['edges_processed'] / graph.m:.2f}"])
    print_table("bmf / segscan / tpe: computation and filtering (ms)",
                ["graph", "config", "method", "sync", "order", "computation", "filtering", "rounds",
                 "edges/|E|"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
