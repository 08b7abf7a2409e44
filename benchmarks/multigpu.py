"""Every GPU of a host, measured (issue 30): the warm sweep and class grading on 1 GPU and on all
of them, the verdicts and scores compared cell by cell and student by student, and a worker
killed mid-sweep.

    python -m benchmarks.multigpu                                   # default sweep + a class, 1 vs all
    python -m benchmarks.multigpu --sweeps configs/sweep.toml,configs/full.toml:--graphs=roadNet-CA~synth
    python -m benchmarks.multigpu --class tests/fixtures/class_gpu --copies 4 --nvcc /usr/local/cuda/bin/nvcc

Each measurement is `python -m grader ...` as a user runs it, in a fresh results folder, once
per GPU count of --counts (default "1,all": CUDA_VISIBLE_DEVICES naming the first GPU, then
every GPU; "1,2,4" on a 4-GPU host; one worker per GPU, grading with --jobs J per GPU). Graphs, orderings and references are prepared once
before anything is timed. The fault case SIGKILLs one worker process of the all-GPU sweep a
few seconds in: every cell must still be recorded exactly once, with the verdict it has in
the 1-GPU run, and the grader's stderr must say that the worker died and its cell ran again.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.scaleout import prepare  # noqa: E402
from grader.commands.sweep import format_table  # noqa: E402
from sssp_common.record import latest, read_rows  # noqa: E402

CELL = ("graph", "ordering", "method", "sync", "bsize", "bcount", "rep")
VERDICT = ("status", "distances")


def gpus() -> list[str]:
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [str(i) for i, line in enumerate(listed.splitlines()) if line.startswith("GPU ")]


def environment(devices: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    env["CUDA_VISIBLE_DEVICES"] = ",".join(devices)
    return env


def worker_pids(parent: int) -> list[int]:
    """The grader's spawned worker processes (children of `parent` running multiprocessing's spawn_main)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int(entry.joinpath("stat").read_text().rsplit(")", 1)[1].split()[1])
            if ppid == parent and b"spawn_main" in entry.joinpath("cmdline").read_bytes():
                found.append(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue
    return found


def run_grader(argv: list[str], devices: list[str], kill_after: float | None = None,
               timeout_s: float | None = None) -> tuple[float, str, list[int]]:
    """(wall seconds, stderr, pids killed) of one `python -m grader ...`."""
    began = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "grader", *argv], cwd=ROOT, env=environment(devices),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed: list[int] = []

    def killer():
        deadline = time.monotonic() + kill_after + 60
        time.sleep(kill_after)
        while time.monotonic() < deadline and process.poll() is None:
            pids = worker_pids(process.pid)
            if len(pids) >= 2:
                os.kill(pids[-1], signal.SIGKILL)
                killed.append(pids[-1])
                return
            time.sleep(0.2)

    thread = threading.Thread(target=killer, daemon=True) if kill_after is not None else None
    if thread:
        thread.start()
    try:
        out, err = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        err += f"\nmultigpu: stopped after {timeout_s:.0f} s (the grader had not finished)"
    if thread:
        thread.join(timeout=1)
    wall = time.perf_counter() - began
    if process.returncode not in (0, 1):
        sys.exit(f"multigpu: `grader {' '.join(argv)}` exited {process.returncode}:\n{out[-2000:]}{err[-3000:]}")
    return wall, err, killed


def verdicts(results: Path) -> dict[tuple, tuple]:
    return {tuple(r.get(k) for k in CELL): tuple(r.get(k) for k in VERDICT) for r in latest(read_rows(results))}


def compare_sweep(config: str, extra: list[str], folder: Path, counts: list[list[str]]) -> list:
    path = ROOT / config
    prepared = prepare(path, _option(extra, "--graphs"), _option(extra, "--methods"))
    print(f"multigpu: {config} {' '.join(extra)}: prepared in {prepared:.1f} s", file=sys.stderr, flush=True)
    walls, found = [], []
    for devices in counts:
        results = folder / f"{path.stem}-{len(devices)}.jsonl"
        results.unlink(missing_ok=True)
        wall, _, _ = run_grader(["sweep", "--config", str(path), "--results", str(results), "-q", *extra], devices)
        walls.append(wall)
        found.append(verdicts(results))
        print(f"multigpu: {config} on {len(devices)} GPU(s): {len(found[-1])} cells in {wall:.1f} s", file=sys.stderr,
              flush=True)
    one = found[0]
    same = [sum(1 for cell, verdict in one.items() if every.get(cell) == verdict) for every in found[1:]]
    return [f"{path.name} {' '.join(extra)}".strip(), len(one), *_walls_and_speedups(walls),
            "; ".join(f"{n} of {len(one)}" + ("" if len(every) == len(one) else f" ({len(every)} cells)")
                      for n, every in zip(same, found[1:]))]


def _walls_and_speedups(walls: list[float]) -> list[str]:
    return [f"{walls[0]:.1f}", *(f"{wall:.1f} ({walls[0] / wall:.2f}x)" for wall in walls[1:])]


def fault_case(config: str, folder: Path, all_gpus: list[str], base: dict[tuple, tuple]) -> list[str]:
    path = ROOT / config
    results = folder / f"{path.stem}-killed.jsonl"
    results.unlink(missing_ok=True)
    wall, err, killed = run_grader(["sweep", "--config", str(path), "--results", str(results), "-q"], all_gpus,
                                   kill_after=3.0, timeout_s=120)
    rows = list(read_rows(results))
    cells = [tuple(r.get(k) for k in CELL) for r in rows]
    found = verdicts(results)
    lines = [f"killed worker pid(s) {killed or 'none (the sweep ended first)'} 3 s into the {len(all_gpus)}-GPU sweep "
             f"({wall:.1f} s)",
             f"rows {len(rows)}, distinct cells {len(set(cells))} (every cell once: {len(rows) == len(set(cells))}), "
             f"cells of the 1-GPU run present {sum(1 for c in base if c in found)} of {len(base)}",
             f"verdicts equal to the 1-GPU run: {sum(1 for c, v in base.items() if found.get(c) == v)} of {len(base)}"]
    said = [line for line in err.splitlines() if "died" in line or "stopped after" in line or "again" in line]
    lines.append("the grader said: " + (" | ".join(said[:3]) if said else "nothing about the worker"))
    return lines


def compare_grading(class_dir: Path, copies: int, folder: Path, counts: list[list[str]], jobs: int,
                    nvcc: str | None, config: str | None, graphs: str | None = None, mix: list[Path] = ()) -> list:
    class_copy = folder / "class"
    shutil.rmtree(class_copy, ignore_errors=True)
    class_copy.mkdir(parents=True)
    for copy in range(copies):
        for student in sorted(p for p in class_dir.iterdir() if p.is_dir()):
            shutil.copytree(student, class_copy / f"{student.name}{copy}")
    for student in mix:        # once each; the C fixtures of tests/fixtures/submissions share ../_src/sssp.c
        shutil.copytree(student, class_copy / student.name)
        shared = student.parent / "_src" / "sssp.c"
        if shared.exists() and not (class_copy / student.name / "sssp.c").exists():
            shutil.copy(shared, class_copy / student.name / "sssp.c")
    count = sum(1 for _ in class_copy.iterdir())
    walls, scores = [], []
    for devices in counts:
        out = folder / f"graded-{len(devices)}"
        shutil.rmtree(out, ignore_errors=True)
        argv = ["grade", str(class_copy), "--out", str(out), "-q", "--no-diagnosis", "--no-shrink",
                "--jobs", str(jobs), *(["--nvcc", nvcc] if nvcc else []), *(["--config", config] if config else []),
                *(["--graphs", graphs] if graphs else [])]
        wall, _, _ = run_grader(argv, devices)
        walls.append(wall)
        scores.append({p.parent.name: json.loads(p.read_text())["score"] for p in out.glob("*/results.json")})
        print(f"multigpu: grading {count} students on {len(devices)} GPU(s): {wall:.1f} s", file=sys.stderr,
              flush=True)
    one = scores[0]
    same = [sum(1 for s, v in one.items() if every.get(s) == v) for every in scores[1:]]
    return [f"grade {count} students (--jobs {jobs} per GPU)", count, *_walls_and_speedups(walls),
            "; ".join(f"{n} of {len(one)} scores" for n in same)]


def _option(extra: list[str], name: str):
    for index, item in enumerate(extra):
        if item == name and index + 1 < len(extra):
            return extra[index + 1]
        if item.startswith(name + "="):
            return item.split("=", 1)[1]
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sweeps", default="configs/sweep.toml",
                        help="comma-separated configs, each optionally CONFIG:OPT=VALUE:... (grader sweep options)")
    parser.add_argument("--class", dest="class_dir", type=Path, default=ROOT / "tests" / "fixtures" / "class_gpu")
    parser.add_argument("--copies", type=int, default=4, help="copies of the class (4 students x 4 = 16)")
    parser.add_argument("--jobs", type=int, default=4, help="grade --jobs (students' correctness runs at once per GPU)")
    parser.add_argument("--grade-config", help="grading config (default: the grader's)")
    parser.add_argument("--mix", default="", help="comma-separated extra submissions graded once each beside the "
                        "copies (e.g. tests/fixtures/submissions/crash_some: a crashing and a wrong student)")
    parser.add_argument("--grade-graphs", help="grade on these graphs only (grader grade --graphs)")
    parser.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    parser.add_argument("--counts", default="1,all",
                        help="GPU counts to compare, the first being the baseline (e.g. 1,2,4; 'all': every GPU)")
    parser.add_argument("--no-fault", action="store_true")
    parser.add_argument("--no-grade", action="store_true")
    args = parser.parse_args(argv)
    all_gpus = gpus()
    if len(all_gpus) < 2:
        print(f"multigpu: {len(all_gpus)} GPU(s) visible: nothing to compare", file=sys.stderr)
        return 2
    counts = gpu_counts(args.counts, all_gpus)
    folder = Path(tempfile.mkdtemp(prefix="multigpu-"))
    table = []
    for item in filter(None, args.sweeps.split(",")):      # --sweeps "": grading alone
        config, *options = item.split(":")
        extra = [part for option in options for part in option.split("=", 1)]
        table.append(compare_sweep(config, extra, folder, counts))
        print(format_table(_header(counts), table[-1:]), flush=True)   # each row as soon as it is measured
    print(f"\n{len(all_gpus)} GPUs: {', '.join(_names())}")
    if table:
        print(format_table(_header(counts), table), flush=True)    # printed now: the steps below may run out of time
    if not args.no_grade:
        row = compare_grading(args.class_dir, args.copies, folder, counts, args.jobs, args.nvcc, args.grade_config,
                              args.grade_graphs, [Path(p) for p in args.mix.split(",") if p])
        print(format_table(_header(counts, "students"), [row]), flush=True)
    if not args.no_fault and table:
        base = verdicts(folder / f"{Path(args.sweeps.split(',')[0].split(':')[0]).stem}-1.jsonl")
        fault = fault_case(args.sweeps.split(",")[0].split(":")[0], folder, counts[-1], base)
        print("\nfault case (a worker SIGKILLed mid-sweep):")
        print("\n".join(f"  {line}" for line in fault), flush=True)
    print(f"\nresults: {folder}")
    return 0


def gpu_counts(spec: str, all_gpus: list[str]) -> list[list[str]]:
    """The device lists to compare: "1,2,4" -> [[0], [0, 1], [0, 1, 2, 3]]; "all" is every GPU;
    counts above the GPUs present are dropped with a note."""
    counts = []
    for part in spec.split(","):
        n = len(all_gpus) if part.strip() == "all" else int(part)
        if n > len(all_gpus):
            print(f"multigpu: {n} GPUs asked for, {len(all_gpus)} present: skipped", file=sys.stderr)
        elif n >= 1 and n not in [len(c) for c in counts]:
            counts.append(all_gpus[:n])
    return counts


def _header(counts: list[list[str]], unit: str = "cells") -> list[str]:
    return ["what", unit, *(f"{len(c)} GPU{'s' if len(c) > 1 else ''} s" for c in counts),
            "same verdicts as 1 GPU" if unit == "cells" else "same scores as 1 GPU"]


def _names() -> list[str]:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=30).stdout.split("\n")[:-1]
    except (OSError, subprocess.TimeoutExpired):
        return ["?"]


if __name__ == "__main__":
    sys.exit(main())
