"""Issue 25's figures in one call: sweeps with the kept ./sssp (warm) and one process per cell
(cold), and one ./sssp's wall time from outside.

    python3 -m benchmarks.sweep_speed                 # everything (~7-8 min on the H100 machine)
    python3 -m benchmarks.sweep_speed --only default,wall
    make bench-sweep

Steps (each with a time limit, so the whole fits one device call):
- prepare each config's graphs, orderings and references first (cached on disk; timed apart);
- `python -m grader sweep` warm, then `--cold`, into fresh results files; a sweep still
  running at its limit is stopped with SIGTERM (its rows are kept, as for Ctrl-C) and the
  whole sweep is projected from the cells done (the time to its first cell + seconds per cell
  after it x cells; `started_at` is to the second);
- from the rows: ok count, kernels' share of the time, start-up, and whether every cell both
  modes ran got the same verdict (status, distances) and the same round count (which an
  in-place method may change from run to run: its relaxation order is the threads' timing);
- `python3 -m benchmarks.run --quick --only wall`: ./sssp per method on the road and
  LiveJournal stand-ins (goals <= 1.0 s and <= 2.0 s).
"""
from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.commands.sweep import format_table  # noqa: E402
from sssp_common.record import latest, read_rows  # noqa: E402

# name -> (config, extra sweep options, preparation limit s, warm limit s, cold limit s)
PLANS = {
    "default": ("configs/sweep.toml", [], 60, 110, 40),
    "gpu": ("configs/gpu.toml", [], 60, 60, 25),
    "full": ("configs/full.toml", ["--graphs", "roadNet-CA~synth,soc-LiveJournal1~synth"], 120, 60, 25),
}
WALL_BUDGET_S = 45
VERDICT = ("status", "distances")


def total_cells(config: Path, extra: list[str]) -> int:
    from grader.sweep.cells import expand
    from grader.sweep.config import load_config
    graphs = extra[extra.index("--graphs") + 1] if "--graphs" in extra else None
    return len(expand(load_config(config, graphs=graphs)))


def prepare(config: Path, extra: list[str], limit_s: float) -> str:
    graphs = extra[extra.index("--graphs") + 1] if "--graphs" in extra else None
    code = (f"from benchmarks.scaleout import prepare; from pathlib import Path; "
            f"print(round(prepare(Path({str(config)!r}), {graphs!r}, None), 1))")
    try:
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=limit_s)
    except subprocess.TimeoutExpired:
        return f"graphs not ready after {limit_s:.0f} s (the first sweep below pays the rest: its figures are upper bounds)"
    return f"graphs ready in {done.stdout.strip() or '?'} s" + (f" ({done.stderr.strip()[-200:]})" if done.returncode else "")


def sweep(config: Path, extra: list[str], cold: bool, results: Path, limit_s: float) -> tuple[float, bool, float]:
    """(seconds, stopped at the limit, when it was launched: time.time())."""
    argv = [sys.executable, "-m", "grader", "sweep", "--config", str(config), "--results", str(results),
            "--force", "-q", *extra, *(["--cold"] if cold else [])]
    print(f"sweep_speed: {' '.join(argv[1:])} (limit {limit_s:.0f} s)", file=sys.stderr, flush=True)
    began, launched = time.perf_counter(), time.time()
    process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = process.communicate(timeout=limit_s)
        stopped = False
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGTERM)   # the sweep stops as on Ctrl-C; its rows stay
        output, _ = process.communicate()
        stopped = True
    seconds = time.perf_counter() - began
    if not stopped and process.returncode not in (0, 1):
        print(f"sweep_speed: the sweep failed (exit {process.returncode}):\n{output[-2000:]}", file=sys.stderr)
    split = [line for line in output.splitlines() if line.startswith(("where the time went", "  kernels"))]
    for line in split:
        print(f"  {line.strip()}", file=sys.stderr)
    return seconds, stopped, launched


def figures(rows: list[dict], seconds: float, cells: int, launched: float) -> dict:
    """Seconds a cell: the time after the first row started (the grader's own start and the
    graphs' loading come before it, once) over the rows; projected = that start + cells x it."""
    done = len(rows)
    first = min((_epoch(r["started_at"]) for r in rows if r.get("started_at")), default=launched)
    lead = min(max(0.0, first - launched), seconds)
    per_cell = (seconds - lead) / done if done else float("nan")
    busy = sum(r.get("wall_s") or 0.0 for r in rows)
    kernels = sum(((r.get("computation_ms") or 0.0) + (r.get("filtering_ms") or 0.0)) / 1000 for r in rows)
    startup = [r["startup_s"] for r in rows if r.get("startup_s") is not None]
    return {"done": done, "ok": sum(r.get("status") == "ok" for r in rows), "per_cell": per_cell,
            "projected": lead + per_cell * cells if done else float("nan"), "kernels": kernels,
            "kernel_share": kernels / busy if busy else float("nan"),
            "startup_median": sorted(startup)[len(startup) // 2] if startup else None}


def _epoch(stamp: str) -> float:
    from datetime import datetime, timezone
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()


def same_verdicts(warm: list[dict], cold: list[dict]) -> str:
    """"K of N same" over the cells both modes ran, then the cells whose rounds differ (by method
    and sync); every cell whose verdict differs is printed on stderr."""
    cell = ("graph", "ordering", "method", "sync", "bsize", "bcount", "rep")
    by_cell = {tuple(r[k] for k in cell): r for r in warm}
    common = [(by_cell[key], r) for r in cold if (key := tuple(r[k] for k in cell)) in by_cell]
    differ = [(a, b) for a, b in common if tuple(a.get(k) for k in VERDICT) != tuple(b.get(k) for k in VERDICT)]
    for a, b in differ:
        print(f"sweep_speed: warm and cold differ on {' '.join(str(a[k]) for k in cell)}: "
              f"{[a.get(k) for k in VERDICT]} against {[b.get(k) for k in VERDICT]}", file=sys.stderr)
    text = f"{len(common) - len(differ)} of {len(common)} same"
    rounds = sorted({f"{a['method']} {a['sync']}" for a, b in common if a.get("rounds") != b.get("rounds")})
    moved = sum(a.get("rounds") != b.get("rounds") for a, b in common)
    return text + (f" (rounds differ on {moved}: {', '.join(rounds)})" if moved else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="default,gpu,full,wall", metavar="A,B",
                        help="default, gpu, full (the sweeps), wall (./sssp from outside)")
    parser.add_argument("--scale-limits", type=float, default=1.0, metavar="X", help="multiply every time limit")
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.only.split(",") if name.strip()]
    folder = Path(tempfile.mkdtemp(prefix="sweep-speed-"))
    table = []
    for name in [n for n in chosen if n in PLANS]:
        config, extra, prep_s, warm_s, cold_s = PLANS[name]
        config = ROOT / config
        cells = total_cells(config, extra)
        ready = prepare(config, extra, prep_s * args.scale_limits)
        print(f"sweep_speed: {name}: {cells} cells; {ready}", file=sys.stderr, flush=True)
        rows = {}
        for mode, limit in (("warm", warm_s), ("cold", cold_s)):
            results = folder / f"{name}-{mode}.jsonl"
            seconds, stopped, launched = sweep(config, extra, mode == "cold", results, limit * args.scale_limits)
            rows[mode] = latest(read_rows(results)) if results.exists() else []
            got = figures(rows[mode], seconds, cells, launched)
            table.append([name, mode, f"{got['done']}/{cells}", got["ok"], f"{seconds:.1f}" + (" (limit)" if stopped else ""),
                          f"{got['per_cell'] * 1000:.0f}", f"{got['projected']:.0f}", f"{got['kernels']:.2f}",
                          f"{100 * got['kernel_share']:.1f} %",
                          "-" if got["startup_median"] is None else f"{got['startup_median']:.3f}"])
        table[-1].append(same_verdicts(rows["warm"], rows["cold"]))
        table[-2].append("")
        print(format_table(["sweep", "mode", "cells run", "ok", "seconds", "ms/cell", "projected s", "kernels s",
                            "kernels/programs", "start-up s (median)", "verdicts warm=cold"], table, align_left=2),
              file=sys.stderr, flush=True)
    if table:
        print(f"\nsweeps (graphs prepared beforehand; results in {folder}):")
        print(format_table(["sweep", "mode", "cells run", "ok", "seconds", "ms/cell", "projected s", "kernels s",
                            "kernels/programs", "start-up s (median)", "verdicts warm=cold"], table, align_left=2))
    if "wall" in chosen:
        print("\n./sssp from outside (benchmarks.run --quick --only wall):", flush=True)
        subprocess.run([sys.executable, "-m", "benchmarks.run", "--quick", "--only", "wall", "--budget",
                        str(WALL_BUDGET_S * args.scale_limits)], cwd=ROOT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
