"""How long `grader grade` takes for a class, one run at a time and with --jobs N, what diagnosis
and counterexamples add, and whether the leaderboard's times moved (they come from runs that had
the GPU alone in every setting).

    python -m benchmarks.grade_speed tests/fixtures/class_gpu --jobs 8 [--nvcc /usr/local/cuda/bin/nvcc]
    python -m benchmarks.grade_speed tests/fixtures/class_gpu --settings jobs,diagnosed,shrunk
    python -m benchmarks.grade_speed tests/fixtures/class_gpu --students 15 --mps --jobs 8 [--out DIR]

Each setting grades the class from scratch into its own folder (no run reused):
- serial: --jobs 1, no diagnosis, no counterexamples (the "before");
- jobs: --jobs N, no diagnosis, no counterexamples (concurrency alone);
- diagnosed: --jobs N with compute-sanitizer diagnosis (issue 24's whole grade but for shrinking);
- shrunk: --jobs N with diagnosis and counterexamples (the default grade; issue 29's cost is
  shrunk - diagnosed);
- mps: --jobs N --mps, no diagnosis, no counterexamples (issue 42: each student's runs as clients
  of their own MPS daemon, one student at a time on the GPU); `--mps` means `--settings jobs,mps`.
--students N copies the class round-robin to N students (s000-ana, s001-ben, ...) first. With
--out DIR the settings' folders are kept there (DIR/<setting>), and a setting graded earlier into
DIR is compared too, so the plain and MPS grades of a big class can be two calls. Wherever two
of jobs/mps/serial exist, their gradebooks and every run's verdict (status, distances) must be
identical, or the benchmark exits 1.
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

SETTINGS = {   # name -> (jobs is N?, diagnose, shrink, mps)
    "serial": (False, False, False, False),
    "jobs": (True, False, False, False),
    "diagnosed": (True, True, False, False),
    "shrunk": (True, True, True, False),
    "mps": (True, False, False, True),
}
COMPARED = ("serial", "jobs", "mps")    # same diagnosis and counterexamples (none): same verdicts


def graded(submissions: Path, out: Path, jobs: int, nvcc: str | None, diagnose: bool, shrink: bool,
           config: str | None, mps: bool = False) -> float:
    shutil.rmtree(out, ignore_errors=True)
    began = time.monotonic()
    code = grade.run([submissions], out=out, config=config, quiet=True, nvcc=nvcc, jobs=jobs, diagnose=diagnose,
                     shrink=shrink, stdout=io.StringIO(), mps=mps)
    seconds = time.monotonic() - began
    if code not in (0, 1):
        raise SystemExit(f"grade_speed: grader grade exited {code} for --jobs {jobs}")
    return seconds


def board(out: Path) -> dict[tuple, float]:
    with open(out / "leaderboard.csv", newline="") as handle:
        return {(r["graph"], r["method"], r["sync"], r["student"]): float(r["median_kernel_ms"])
                for r in csv.DictReader(handle)}


def copied_class(source: Path, students: int, top: Path) -> Path:
    """The class's submissions copied round-robin to `students` folders (s000-ana, s001-ben, ...),
    each made distinct by a comment line in its Makefile."""
    originals = sorted(p for p in source.iterdir() if p.is_dir())
    if not originals:
        raise SystemExit(f"grade_speed: no submission folders in {source}")
    folder = top / f"class-{students}"
    shutil.rmtree(folder, ignore_errors=True)
    for index in range(students):
        original = originals[index % len(originals)]
        copy = folder / f"s{index:03d}-{original.name}"
        shutil.copytree(original, copy)
        # a copy of the same content would reuse the first's runs (grade keys runs by content): a line of its own
        with open(copy / "Makefile", "a") as makefile:
            makefile.write(f"\n# grade_speed copy {index}\n")
    return folder


def verdicts(out: Path) -> dict:
    """(student, graph, ordering, method, sync, bsize, bcount, rep) -> (status, distances): each run's latest row."""
    found = {}
    for line in (out / "runs.jsonl").read_text().splitlines():
        row = json.loads(line)
        key = tuple(row.get(k) for k in ("student", "graph", "ordering", "method", "sync", "bsize", "bcount", "rep"))
        found[key] = (row.get("status"), row.get("distances"))
    return found


def differences(a: Path, b: Path) -> list[str]:
    """What differs between two grades of the same class ([] when the gradebook and every verdict agree)."""
    found = []
    if (a / "gradebook.csv").read_text() != (b / "gradebook.csv").read_text():
        found.append("gradebook.csv differs")
    left, right = verdicts(a), verdicts(b)
    for key in sorted(set(left) | set(right), key=str):
        if left.get(key) != right.get(key):
            found.append(f"{' '.join(map(str, key))}: {left.get(key)} vs {right.get(key)}")
    return found


def counterexample_lines(out: Path) -> list[str]:
    """Where each student's counterexample runs went (their counterexamples.json): the runs the
    class's budget gave and used, and each case's size, runs and seconds."""
    lines = []
    for path in sorted(out.glob("*/counterexamples.json")):
        record = json.loads(path.read_text())
        cases = [f"{s['method']} {s['sync']}: {s['edges']} edges, {s.get('case_runs', s.get('runs'))} runs, "
                 f"{s.get('seconds', 0):.1f} s ({s.get('triage') or s.get('stopped', '')})"
                 for s in record.get("shrunk", [])]
        cases += [f"{s['method']} {s['sync']}: rejected ({s['line']})" for s in record.get("rejected", [])]
        found = [f"{s['method']} {s['sync']}: {s['edges']} edges (random search)" for s in record.get("search", [])
                 if s.get("edges") is not None]
        tried = sum(s.get("graphs_tried", 0) for s in record.get("search", []))
        lines.append(f"  counterexamples {path.parent.name}: {record.get('runs', 0)} of {record.get('allowance_runs', 0)} "
                     f"runs, {record.get('seconds', 0):.1f} s; {'; '.join(cases + found) or 'none found'} "
                     f"({tried} random graphs tried)")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submissions", type=Path)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--nvcc")
    parser.add_argument("--config", help="a grading config (default configs/grading.toml)")
    parser.add_argument("--settings", default=None,
                        help=f"comma-separated, in order, from {', '.join(SETTINGS)} (default serial,jobs,diagnosed,"
                             f"shrunk; with --mps: jobs,mps)")
    parser.add_argument("--students", type=int, help="copy the class round-robin to this many students first")
    parser.add_argument("--mps", action="store_true", help="grade with and without MPS (--settings jobs,mps)")
    parser.add_argument("--out", type=Path, help="keep each setting's folder in OUT/<setting> (compared across calls)")
    args = parser.parse_args(argv)
    args.settings = args.settings or ("jobs,mps" if args.mps else "serial,jobs,diagnosed,shrunk")
    names = [name.strip() for name in args.settings.split(",") if name.strip()]
    unknown = [name for name in names if name not in SETTINGS]
    if unknown:
        parser.error(f"--settings: unknown {', '.join(unknown)} (known: {', '.join(SETTINGS)})")
    top = args.out or Path(tempfile.mkdtemp(prefix="grade-speed-"))
    top.mkdir(parents=True, exist_ok=True)
    submissions = copied_class(args.submissions, args.students, top) if args.students else args.submissions
    seconds = {}
    for name in names:
        concurrent, diagnose, shrink, mps = SETTINGS[name]
        jobs = args.jobs if concurrent else 1
        seconds[name] = graded(submissions, top / name, jobs, args.nvcc, diagnose, shrink, args.config, mps)
        extra = ""
        if name != "serial" and "serial" in seconds:
            extra = f" ({seconds['serial'] / seconds[name]:.2f}x faster than serial)"
        if name == "diagnosed" and "jobs" in seconds:
            extra += f"; diagnosis adds {(seconds[name] - seconds['jobs']) / seconds['jobs']:+.0%}"
        if name == "mps" and "jobs" in seconds:
            extra += f" ({seconds['jobs'] / seconds[name]:.2f}x faster than --jobs {args.jobs} without MPS)"
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
    if all((top / name / "leaderboard.csv").exists() for name in ("jobs", "mps")):   # kernel times: plain vs MPS clients
        before, after = board(top / "jobs"), board(top / "mps")
        ratios = sorted(after[k] / before[k] for k in set(before) & set(after) if before[k])
        if ratios:
            print(f"leaderboard kernel times, MPS / plain over {len(ratios)} rows: median {ratios[len(ratios) // 2]:.3f}, "
                  f"range {ratios[0]:.3f}-{ratios[-1]:.3f}")
    kept = [name for name in COMPARED if (top / name / "runs.jsonl").exists() and (top / name / "gradebook.csv").exists()]
    problems = []
    for other in kept[1:]:
        found = differences(top / kept[0], top / other)
        print(f"{kept[0]} vs {other}: " + ("gradebook and every verdict identical" if not found else
                                           f"{len(found)} differences: " + "; ".join(found[:10])), flush=True)
        problems += found
    last = names[-1]
    print(f"folders: {top} (class page: {top}/{last}/index.html)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
