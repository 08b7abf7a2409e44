"""The same sweep on 1 and on N GPUs: wall time, speed-up, and whether each cell's timings moved.

    python benchmarks/scaleout.py --config configs/gpu.toml --graphs p2p-Gnutella31,rome99
    python benchmarks/scaleout.py --config configs/gpu.toml --workers 1,2 -- --methods bmf,opt --reps 2

Each sweep runs as `python -m grader sweep --workers W` into a fresh results file in a
temporary folder (nothing is skipped as done). Graphs, orderings and references are prepared
once before either run is timed, so neither pays for them. The per-cell comparison takes
the median computation time of each cell's ok repetitions in both runs: a ratio near 1
means sharing the machine with another GPU's runs did not disturb the timings.
"""
from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.commands.sweep import format_table  # noqa: E402
from sssp_common.record import latest, read_rows  # noqa: E402

CELL = ("graph", "ordering", "method", "sync", "bsize", "bcount")


def prepare(config: Path, graphs: str | None, methods: str | None) -> float:
    """Graphs resolved, orderings written, references computed (all cached on disk)."""
    from grader.sweep.cells import expand, graph_label
    from grader.sweep.graphs import GraphUnavailable, prepare_graph
    from grader.sweep.config import load_config
    sweep = load_config(config, graphs=graphs, methods=methods)
    began = time.perf_counter()
    cells = expand(sweep)
    for entry in sweep.graphs:
        name = graph_label(entry)
        orderings = {cell.ordering for cell in cells if cell.graph == name}
        try:
            prepare_graph(entry, sweep, orderings, sweep.cache_dir)
        except GraphUnavailable as why:
            print(f"scaleout: {name} will be skipped by the sweeps: {why}", file=sys.stderr)
    return time.perf_counter() - began


def sweep_once(config: Path, workers: int, results: Path, passthrough: list[str]) -> float:
    argv = [sys.executable, "-m", "grader", "sweep", "--config", str(config), "--results", str(results),
            "--workers", str(workers), "-q", *passthrough]
    print(f"scaleout: {' '.join(argv[1:])}", file=sys.stderr, flush=True)
    began = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - began
    if done.returncode not in (0, 1):
        sys.exit(f"scaleout: the sweep with {workers} worker(s) failed (exit {done.returncode}):\n"
                 f"{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return wall


def cell_medians(rows: list[dict]) -> dict[tuple, float]:
    """Median computation_ms of each cell's ok runs (warm-up runs, rep < 0, left out)."""
    times: dict[tuple, list[float]] = {}
    for row in rows:
        if row.get("status") == "ok" and row.get("computation_ms") is not None and row.get("rep", 0) >= 0:
            times.setdefault(tuple(row[key] for key in CELL), []).append(float(row["computation_ms"]))
    return {cell: statistics.median(values) for cell, values in times.items()}


def worst(ratios: list[float]) -> float:
    """The ratio farthest from 1 either way (0.5 and 2.0 are equally far)."""
    return max(ratios, key=lambda r: abs(math.log(r)) if r > 0 else math.inf)


def compare(base: dict[tuple, float], other: dict[tuple, float], label: str) -> str:
    """Per graph x method x sync: cells, median ms in each run, ratio median and worst."""
    groups: dict[tuple, list[tuple[float, float]]] = {}
    for cell, one in base.items():
        if cell in other and one > 0:
            groups.setdefault((cell[0], cell[2], cell[3]), []).append((one, other[cell]))
    rows, everything = [], []
    for (graph, method, sync), pairs in sorted(groups.items()):
        ratios = [b / a for a, b in pairs]
        everything += ratios
        rows.append([graph, f"{method} {sync}", len(pairs), f"{statistics.median(a for a, _ in pairs):.3f}",
                     f"{statistics.median(b for _, b in pairs):.3f}", f"{statistics.median(ratios):.3f}",
                     f"{worst(ratios):.3f}"])
    if everything:
        rows.append(["all", "", len(everything), "", "", f"{statistics.median(everything):.3f}",
                     f"{worst(everything):.3f}"])
    header = ["graph", "method", "cells", "1-worker ms", f"{label} ms", "ratio median", "ratio worst"]
    return format_table(header, rows, align_left=2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "gpu.toml")
    parser.add_argument("--graphs", metavar="A,B", help="only these graphs")
    parser.add_argument("--methods", metavar="A,B", help="only these methods")
    parser.add_argument("--workers", default="1,2", metavar="1,N", help="worker counts to compare (first = base)")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the results files here")
    parser.add_argument("passthrough", nargs="*", help="after --: more `grader sweep` options (e.g. --reps 2)")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.workers.split(",")]
    extra = [*(["--graphs", args.graphs] if args.graphs else []), *(["--methods", args.methods] if args.methods else []),
             *args.passthrough]
    prepared = prepare(args.config, args.graphs, args.methods)
    print(f"scaleout: graphs, orderings and references ready in {prepared:.1f} s", file=sys.stderr)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="scaleout-"))
    folder.mkdir(parents=True, exist_ok=True)
    walls, medians, gpus = {}, {}, {}
    for count in counts:
        results = folder / f"workers-{count}.jsonl"
        results.unlink(missing_ok=True)
        walls[count] = sweep_once(args.config, count, results, extra)
        rows = latest(read_rows(results))
        medians[count] = cell_medians(rows)
        where = [r.get("gpu") or str(r.get("worker", "")).split("@")[0] for r in rows]   # the GPU, else the worker
        gpus[count] = {name: where.count(name) for name in sorted(set(where))}
        ok = sum(1 for r in rows if r.get("status") == "ok")
        print(f"scaleout: {count} worker(s): {len(rows)} runs ({ok} ok) in {walls[count]:.1f} s; "
              f"runs per GPU (or worker) {gpus[count]}", file=sys.stderr, flush=True)
    base = counts[0]
    print(f"\nconfig {args.config.name}{' graphs ' + args.graphs if args.graphs else ''}; "
          f"preparation {prepared:.1f} s (not timed below)")
    print(format_table(["workers", "runs", "wall s", "speed-up", "efficiency", "runs per GPU (or worker)"],
                       [[c, sum(gpus[c].values()), f"{walls[c]:.1f}", f"{walls[base] / walls[c]:.2f}x",
                         f"{walls[base] / walls[c] / (c / base):.0%}", " ".join(f"{g}:{n}" for g, n in gpus[c].items())]
                        for c in counts]))
    for count in counts[1:]:
        print(f"\ncomputation_ms per cell, {count} workers / {base} (median of each cell's ok repetitions)")
        print(compare(medians[base], medians[count], f"{count}-worker"))
    print(f"\nresults: {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
