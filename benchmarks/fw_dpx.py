"""fw-blocked on int16 pairs (DPX) against int32, on p2p-Gnutella04 and p2p-Gnutella31 (issue 26).

    python -m benchmarks.fw_dpx                  # g04 both ways, g31 int16 (~1 min on an H100)
    python -m benchmarks.fw_dpx --g31-int32      # also g31 in int32 (+~25 s)

``make bench-quick`` and ``make bench`` run :func:`bench`: fw-blocked as ./apsp runs it (int16
when proven exact) on both graphs, checked against scipy's rows, with the goals' verdicts.

Kernel time (CUDA events around the kernels, as ./apsp prints it), the best of ``--repeats``
on g04 and one run on g31. Checks: on g04 the int16 and int32 matrices must be equal entry by
entry, and on both graphs sampled rows must equal scipy's Dijkstra from those sources
(``--rows``). Goals: g04 <= 0.1 s, g31 <= 10 s.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

import numpy as np  # noqa: E402

from benchmarks.classics import data_file, reference_rows  # noqa: E402
from benchmarks.common import goal_text, print_table  # noqa: E402

GOALS_S = {"p2p-Gnutella04": 0.1, "p2p-Gnutella31": 10.0}


def _timed(graph, narrow: str, repeats: int):
    from sssp_gpu.allpairs.methods import solve
    best = None
    for _ in range(repeats):
        result = solve(graph, "fw-blocked", True, narrow=narrow)
        if best is None or result.computation_ms < best.computation_ms:
            best = result
        else:
            del result
    return best


def _rows_ok(result, graph, count: int) -> bool:
    rows = np.unique(np.r_[0, np.random.default_rng(7).integers(0, graph.n, count - 1)])
    got = np.concatenate([result.rows(int(r), int(r) + 1, np.int64) for r in rows])
    return bool(np.array_equal(got, reference_rows(graph, rows)))


def _same_matrix(a, b) -> bool:
    """Entry by entry, each side's unreachable mapped to -1 (their INF values differ by type)."""
    import cupy
    for (_, x), (_, y) in zip(a.row_chunks(), b.row_chunks()):
        x = cupy.where(x < a.inf, x.astype(cupy.int64), -1)
        y = cupy.where(y < b.inf, y.astype(cupy.int64), -1)
        if not bool(cupy.array_equal(x, y)):
            return False
    return True


FW_SECONDS = 15.0  # bench's cost on the H100: g31 ~10 s of wall (9.1 s of kernels), g04 ~1 s, checks


def bench(settings, budget, record, device) -> int:
    """The harness's fw table; returns the number of runs whose rows differ from scipy's."""
    from sssp_common.loader import load_graph
    from sssp_gpu.allpairs.methods import solve
    from grader.data.synth import rmat

    rows, wrong = [], 0
    if settings.scale == "ci" or not device.is_gpu:  # numpy cannot do Gnutella's 10^12 steps
        cases = [("R-MAT 2^8 (ci stand-in)", rmat(8, 4, weights=(1, 9), seed=3), None)]
    else:
        cases = [(name, None, GOALS_S[name]) for name in GOALS_S]
    for name, graph, goal in cases:
        if graph is None:
            path = data_file(name)
            if path is None:
                rows.append([name, "not measured (no data file: carry .device-data)", None, None,
                             "unknown" if goal else "—", "—"])
                continue
            graph = load_graph(path)
        repeats = 3 if graph.n < 20_000 else 1
        started = time.perf_counter()
        result = min((solve(graph, "fw-blocked", device.is_gpu) for _ in range(repeats)),
                     key=lambda r: r.computation_ms)
        wall = time.perf_counter() - started
        ok = _rows_ok(result, graph, min(50, graph.n))
        wrong += not ok
        seconds = result.computation_ms / 1e3
        record("fw", graph=name, vertices=graph.n, entries=result.matrix.dtype.name, kernel_s=seconds,
               wall_s=wall, exact=ok, notes=result.notes, device=device.name)
        rows.append([name, result.matrix.dtype.name, round(seconds, 4), round(wall, 1),
                     goal_text(seconds, goal, "s") if goal else "—", "ok" if ok else "WRONG"])
        print(f"  {name}: {seconds:.4f} s ({result.matrix.dtype.name})", flush=True)
        del result
        if device.is_gpu:
            import cupy
            cupy.get_default_memory_pool().free_all_blocks()
    print_table(f"fw-blocked as ./apsp runs it ({device.timing_label})",
                ["graph", "entries", "kernel s", "wall s", "goal", "check"], rows,
                ["kernel time (CUDA events), best of 3 under 20k vertices, else one run; 50 sampled rows "
                 "checked against scipy's Dijkstra; int16 = two entries per DPX add-min, kept only when "
                 "proven exact (sssp_gpu/allpairs/narrow.py)"])
    return wrong


def main(argv: list[str] | None = None) -> int:
    import cupy
    from sssp_common.loader import load_graph
    from sssp_gpu.device import select_device

    parser = argparse.ArgumentParser(prog="python -m benchmarks.fw_dpx", description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", type=int, default=200, help="rows checked against scipy per graph")
    parser.add_argument("--g31-int32", action="store_true", help="also time p2p-Gnutella31 in int32")
    args = parser.parse_args(argv)
    device = select_device("gpu")
    table, wrong = [], 0
    for name in ("p2p-Gnutella04", "p2p-Gnutella31"):
        path = data_file(name)
        if path is None:
            table.append([name, "not measured (no data file)"] + [None] * 5)
            continue
        graph = load_graph(path)
        runs = [("auto", args.repeats if name.endswith("04") else 1)]
        if name.endswith("04") or args.g31_int32:
            runs.append(("never", args.repeats if name.endswith("04") else 1))
        results = {}
        for narrow, repeats in runs:
            started = time.perf_counter()
            result = _timed(graph, narrow, repeats)
            wall = time.perf_counter() - started
            ok = _rows_ok(result, graph, args.rows)
            seconds = result.computation_ms / 1e3
            table.append([name, result.matrix.dtype.name, round(seconds, 4), round(wall, 1),
                          goal_text(seconds, GOALS_S[name], "s") if narrow == "auto" else "(int32 baseline)",
                          "ok" if ok else "WRONG", "; ".join(result.notes) or "-"])
            wrong += not ok
            print(f"  {name} {narrow}: {seconds:.4f} s kernel, {wall:.1f} s wall, rows {'ok' if ok else 'WRONG'}",
                  flush=True)
            results[narrow] = result
        if len(results) == 2:
            same = _same_matrix(results["auto"], results["never"])
            wrong += not same
            table.append([name, "int16 vs int32", None, None, None, "equal" if same else "DIFFER", "whole matrix"])
        results.clear()
        cupy.get_default_memory_pool().free_all_blocks()
    print_table(f"fw-blocked: int16 pairs (DPX) and int32 ({device.timing_label})",
                ["graph", "entries", "kernel s", "wall s", "goal", "check", "notes"], table,
                [f"check: {args.rows} sampled rows against scipy's Dijkstra per run; g04's two matrices compared "
                 "entry by entry"])
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
