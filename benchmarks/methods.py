"""Kernel time of the spec's methods per block configuration (``make bench`` only).

Table 1: bmf on the weighted grid, source-sorted, every configuration x sync (issue 2's bar:
a student's compiled bmf at 0.55 ms per round, (512,4) out-of-core). Table 2: where bmf,
segscan and tpe spend their time on the road stand-in and the unit R-MAT (bmf and tpe
source-sorted, segscan destination-sorted). Median of ``settings.kernel_repeats`` after a
warm-up per method and graph; every cell is checked against scipy's distances.
"""
from __future__ import annotations

import time

import numpy as np

from .common import median, print_table
from .versus import mismatches

STUDENT_MS_PER_ROUND = 0.55
CASES = [("bmf", "outcore", False, "source"), ("bmf", "incore", False, "source"),
         ("segscan", "outcore", True, "destination"), ("tpe", "outcore", False, "source"),
         ("tpe", "incore", False, "source")]
BMF_GRAPHS = ("grid-w",)               # the graphs (benchmarks.graphs keys) each table reads
BREAKDOWN_GRAPHS = ("road", "rmat-u")


def ordered(graph, by: str):
    return graph.reordered(np.argsort(graph.src if by == "source" else graph.dst, kind="stable"))


def measure(graph, run, device, repeats: int, expected, budget, what: str, warm: bool) -> dict | None:
    from sssp_gpu.engine import solve

    started = time.perf_counter()
    first = solve(graph, run, device)
    per_run = time.perf_counter() - started
    results = [] if warm else [first]
    if warm or repeats > 1:
        count = repeats if warm else repeats - 1
        if budget.allows(per_run * count, f"{what}: {count} more run(s)"):
            results += [solve(graph, run, device) for _ in range(count)]
    results = results or [first]
    return {"computation_ms": median(r.computation_ms for r in results),
            "filtering_ms": median(r.filtering_ms for r in results), "rounds": results[0].rounds,
            "edges_processed": results[0].edges_processed, "runs": len(results),
            "wrong_vertices": sum(mismatches(r.dist, expected) for r in results + [first])}


def bmf_configs(settings, budget, record, device, measured: dict) -> int:
    from sssp_common.vocabulary import SPEC_CONFIGS
    from sssp_gpu.methods.common import Run

    key, = BMF_GRAPHS
    m = measured[key]
    graph, label = ordered(m["graph"], "source"), m.get("label", "grid, weights 1..100")
    rows, failures = [], 0
    for index, (bsize, bcount) in enumerate(SPEC_CONFIGS):
        for sync in ("outcore", "incore"):
            what = f"bmf ({bsize},{bcount}) {sync}"
            if index and not budget.allows(_estimate(rows, sync), what):
                continue
            cell = measure(graph, Run("bmf", sync, False, bsize, bcount), device, settings.kernel_repeats,
                           m["expected"], budget, what, warm=index == 0)
            failures += cell["wrong_vertices"] > 0
            per_round = cell["computation_ms"] / max(cell["rounds"], 1)
            record("bmf-configs", graph=key, device=device.name, bsize=bsize, bcount=bcount, sync=sync, **cell)
            rows.append([f"({bsize},{bcount})", sync, cell["computation_ms"], cell["rounds"], per_round,
                         f"{STUDENT_MS_PER_ROUND / per_round:.2f}x" if per_round else "—", cell["runs"],
                         "ok" if not cell["wrong_vertices"] else "WRONG"])
    print_table(f"bmf per configuration on the {label}, source-sorted ({device.timing_label})",
                ["config", "sync", "computation ms", "rounds", "ms/round", "vs student 0.55 ms/round", "runs",
                 "check"], rows)
    return failures


def breakdown(settings, budget, record, device, measured: dict) -> int:
    from sssp_common.vocabulary import SPEC_CONFIGS
    from sssp_gpu.methods.common import Run

    rows, failures = [], 0
    for key in BREAKDOWN_GRAPHS:
        m = measured[key]
        copies = {by: ordered(m["graph"], by) for by in ("source", "destination")}
        for name, sync, usesmem, by in CASES:
            for index, (bsize, bcount) in enumerate(SPEC_CONFIGS):
                what = f"{key}: {name} {sync} ({bsize},{bcount})"
                previous = [r for r in rows if r[0] == key and r[2] == name and r[3] == sync]
                if previous and not budget.allows(previous[-1][-1] * settings.kernel_repeats / 1e3 * 1.5 + 0.2, what):
                    continue
                method = "bmf" if name == "segscan" else name
                cell = measure(copies[by], Run(method, sync, usesmem, bsize, bcount), device,
                               settings.kernel_repeats, m["expected"], budget, what, warm=index == 0)
                failures += cell["wrong_vertices"] > 0
                record("breakdown", graph=key, device=device.name, method=name, sync=sync, ordering=by,
                       bsize=bsize, bcount=bcount, **cell)
                per_edge = cell["edges_processed"] / max(m["graph"].m, 1)
                rows.append([key, f"({bsize},{bcount})", name, sync, by, cell["computation_ms"],
                             cell["filtering_ms"], cell["rounds"], f"{per_edge:.2f}",
                             "ok" if not cell["wrong_vertices"] else "WRONG",
                             cell["computation_ms"] + cell["filtering_ms"]])
            print(f"  {key}: {name} {sync} done", flush=True)
    print_table(f"bmf / segscan / tpe: computation and filtering ms ({device.timing_label})",
                ["graph", "config", "method", "sync", "order", "computation", "filtering", "rounds", "edges/|E|",
                 "check"], [r[:-1] for r in rows])
    return failures


def _estimate(rows, sync: str) -> float:
    same = [r for r in rows if r[1] == sync]
    return (same[-1][2] / 1e3 * 4 + 0.3) if same else 2.0
