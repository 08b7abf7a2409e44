"""How long `grader grade` takes for a class, one run at a time and with --jobs N, what diagnosis
and counterexamples add, and whether the leaderboard's times moved (they come from runs that had
the GPU alone in every setting).

    python -m benchmarks.grade_speed tests/fixtures/class_gpu --jobs 8 [--nvcc /usr/local/cuda/bin/nvcc]
    python -m benchmarks.grade_speed tests/fixtures/class_gpu --settings jobs,diagnosed,shrunk

Each setting grades the class from scratch into its own folder (no run reused):
- serial: --jobs 1, no diagnosis, no counterexamples (the "before");
- jobs: --jobs N, no diagnosis, no counterexamples (concurrency alone);
- diagnosed: --jobs N with compute-sanitizer diagnosis (issue 24's whole grade but for shrinking);
- shrunk: --jobs N with diagnosis and counterexamples (the default grade; issue 29's cost is
  shrunk - diagnosed).
Each line is printed as soon as its setting is done; the leaderboard comparison (serial vs jobs,
per row the median kernel time) last.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from grader.commands import grade

SETTINGS = {   # name -> (jobs is N?, diagnose, shrink)
    "serial": (False, False, False),
    "jobs": (True, False, False),
    "diagnosed": (True, True, False),
    "shrunk": (True, True, True),
}


def graded(submissions: Path, out: Path, jobs: int, nvcc: str | None, diagnose: bool, shrink: bool,
           config: str | None) -> float:
    shutil.rmtree(out, ignore_errors=True)
    began = time.monotonic()
    code = grade.run([submissions], out=out, config=config, quiet=True, nvcc=nvcc, jobs=jobs, diagnose=diagnose,
                     shrink=shrink, stdout=io.StringIO())
    seconds = time.monotonic() - began
    if code not in (0, 1):
        raise SystemExit(f"grade_speed: grader grade exited {code} for --jobs {jobs}")
    return seconds


def board(out: Path) -> dict[tuple, float]:
    with open(out / "leaderboard.csv", newline="") as handle:
        return {(r["graph"], r["method"], r["sync"], r["student"]): float(r["median_kernel_ms"])
                for r in csv.DictReader(handle)}


def counterexample_lines(out: Path) -> list[str]:
    """Where each student's counterexample time went (their counterexamples.json)."""
    lines = []
    for path in sorted(out.glob("*/counterexamples.json")):
        record = json.loads(path.read_text())
        found = [f"{s['method']} {s['sync']}: {s['edges']} edges" for s in record.get("shrunk", []) + record.get("search", [])
                 if s.get("edges") is not None]
        tried = sum(s.get("graphs_tried", 0) for s in record.get("search", []))
        lines.append(f"  counterexamples {path.parent.name}: budget {record.get('budget_s', 0):.1f} s, handed over in "
                     f"{record.get('handed_over_s', 0):.1f} s, worked {record.get('seconds', 0):.1f} s; "
                     f"{'; '.join(found) or 'none found'} ({tried} random graphs tried)")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submissions", type=Path)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--nvcc")
    parser.add_argument("--config", help="a grading config (default configs/grading.toml)")
    parser.add_argument("--settings", default="serial,jobs,diagnosed,shrunk",
                        help=f"comma-separated, in order, from {', '.join(SETTINGS)}")
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.settings.split(",") if name.strip()]
    unknown = [name for name in names if name not in SETTINGS]
    if unknown:
        parser.error(f"--settings: unknown {', '.join(unknown)} (known: {', '.join(SETTINGS)})")
    top = Path(tempfile.mkdtemp(prefix="grade-speed-"))
    seconds = {}
    for name in names:
        concurrent, diagnose, shrink = SETTINGS[name]
        jobs = args.jobs if concurrent else 1
        seconds[name] = graded(args.submissions, top / name, jobs, args.nvcc, diagnose, shrink, args.config)
        extra = ""
        if name != "serial" and "serial" in seconds:
            extra = f" ({seconds['serial'] / seconds[name]:.2f}x faster than serial)"
        if name == "diagnosed" and "jobs" in seconds:
            extra += f"; diagnosis adds {(seconds[name] - seconds['jobs']) / seconds['jobs']:+.0%}"
        if name == "shrunk" and "diagnosed" in seconds:
            extra += f"; counterexamples add {(seconds[name] - seconds['diagnosed']) / seconds['diagnosed']:+.0%}"
        if name == "shrunk" and "diagnosed" not in seconds and "jobs" in seconds:
            extra += f"; diagnosis and counterexamples add {(seconds[name] - seconds['jobs']) / seconds['jobs']:+.0%}"
        print(f"grade_speed: {name:9s} --jobs {jobs}: {seconds[name]:.1f} s{extra}", flush=True)
        if shrink:
            for line in counterexample_lines(top / name):
                print(line, flush=True)
    if "serial" in seconds and "jobs" in seconds:
        before, after = board(top / "serial"), board(top / "jobs")
        print("leaderboard (runs that had the GPU alone): graph method sync student: serial ms -> --jobs ms")
        for key in sorted(set(before) & set(after)):
            print(f"  {' '.join(key)}: {before[key]:.3f} -> {after[key]:.3f} ({after[key] / before[key] - 1:+.1%})"
                  if before[key] else f"  {' '.join(key)}: {before[key]} -> {after[key]}")
    last = names[-1]
    print(f"folders: {top} (class page: {top}/{last}/index.html)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
