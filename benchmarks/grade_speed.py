"""How long `grader grade` takes for a class, one run at a time and with --jobs N, and whether
the leaderboard's times moved (they come from runs that had the GPU alone in both).

    python -m benchmarks.grade_speed tests/fixtures/class_gpu --jobs 8 [--nvcc /usr/local/cuda/bin/nvcc]

Each setting grades the class from scratch into its own folder (no run reused), diagnosis
off for the comparison, then once more with --jobs N and diagnosis on (what it adds). Prints
the wall times and, per leaderboard row, the serial and concurrent median kernel times.
"""
from __future__ import annotations

import argparse
import csv
import io
import shutil
import sys
import tempfile
import time
from pathlib import Path

from grader.commands import grade


def graded(submissions: Path, out: Path, jobs: int, nvcc: str | None, diagnose: bool, config: str | None) -> float:
    shutil.rmtree(out, ignore_errors=True)
    began = time.monotonic()
    code = grade.run([submissions], out=out, config=config, quiet=True, nvcc=nvcc, jobs=jobs, diagnose=diagnose,
                     stdout=io.StringIO())
    seconds = time.monotonic() - began
    if code not in (0, 1):
        raise SystemExit(f"grade_speed: grader grade exited {code} for --jobs {jobs}")
    return seconds


def board(out: Path) -> dict[tuple, float]:
    with open(out / "leaderboard.csv", newline="") as handle:
        return {(r["graph"], r["method"], r["sync"], r["student"]): float(r["median_kernel_ms"])
                for r in csv.DictReader(handle)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submissions", type=Path)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--nvcc")
    parser.add_argument("--config", help="a grading config (default configs/grading.toml)")
    args = parser.parse_args(argv)
    top = Path(tempfile.mkdtemp(prefix="grade-speed-"))
    serial = graded(args.submissions, top / "serial", 1, args.nvcc, False, args.config)
    jobs = graded(args.submissions, top / "jobs", args.jobs, args.nvcc, False, args.config)
    diagnosed = graded(args.submissions, top / "jobs-diagnosed", args.jobs, args.nvcc, True, args.config)
    print(f"grader grade {args.submissions}: --jobs 1 {serial:.1f} s; --jobs {args.jobs} {jobs:.1f} s "
          f"({serial / jobs:.2f}x); --jobs {args.jobs} with compute-sanitizer diagnosis {diagnosed:.1f} s "
          f"(+{(diagnosed - jobs) / jobs:.0%})")
    before, after = board(top / "serial"), board(top / "jobs")
    print("leaderboard (runs that had the GPU alone): graph method sync student: serial ms -> --jobs ms")
    for key in sorted(set(before) & set(after)):
        print(f"  {' '.join(key)}: {before[key]:.3f} -> {after[key]:.3f} ({after[key] / before[key] - 1:+.1%})"
              if before[key] else f"  {' '.join(key)}: {before[key]} -> {after[key]}")
    print(f"folders: {top} (class page: {top}/jobs-diagnosed/index.html)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
