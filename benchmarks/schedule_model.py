"""Issue 30's model: what grading's scheduler alone would give on 1, 2 and 4 GPUs.

    python -m benchmarks.schedule_model            # ~1 minute on the CPU, no GPU needed
    python -m benchmarks.schedule_model --predict 60 --runs 130 --run-s 0.44 --build-s 6 --jobs 8 --scale 0.01

--predict N (issue 42): a class of N students on one GPU, without and with MPS, from per-step costs
(--build-s, --run-s a run's wall alone, --runs per student, --timing-share of them alone, the
host-wide serial start --serial-start without MPS (0.22-0.31 s) and --mps-serial-start with it
(0.14 s), --mps-turn-s the daemon's start and stop per student). With --mps a GPU serves one
student at a time (grader.grading.mps_turn's GpuTurns lock, the real one), their correctness runs
--jobs at a time, timing runs alone; the next students build meanwhile (lanes = max(2, jobs)).

The real SharedGpuPool / SpreadPool and `schedule.each_student` grade a class of sleep tasks,
with fake GPU ids, at 1/SCALE of the H100's times: each student builds (BUILD_S), then submits
its runs at once: half correctness runs (RUN_S, side by side), half timing runs (alone on the
student's GPU); one student hangs on every run (TIMEOUT_S, status timeout, so its later timing
runs are reclassified as `note_row` does). Sleeps overlap freely unless `--serial-start S`: then
the first S seconds of every run hold one host-wide lock, as the H100 hosts' CUDA context
creation does (~0.22 s a start whatever the GPU count: benchmarks.context_starts).
"""
from __future__ import annotations

import argparse
import fcntl
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.grading import schedule  # noqa: E402
from grader.grading.mps_turn import GpuTurns  # noqa: E402
from grader.sweep.executors.shared import SharedGpuPool, SpreadPool  # noqa: E402

SCALE = 0.1
RUN_S, TIMEOUT_S, BUILD_S = 0.4, 5.0, 6.0
PAIRS, CONFIGS = 9, 2          # benchmarks/grading-multigpu.toml: 9 (method, ordering, sync) x 2 configurations


def sleep_run(task):
    """A graded run's stand-in: (student, kind, pair, config, seconds, serial seconds, lock file)."""
    student, kind, pair, config, seconds, serial_s, lock = task
    began = time.time()
    if serial_s > 0:
        with open(lock, "a") as handle:      # the host-wide part of a start: one at a time
            fcntl.flock(handle, fcntl.LOCK_EX)
            time.sleep(serial_s)
            fcntl.flock(handle, fcntl.LOCK_UN)
    time.sleep(max(0.0, seconds - serial_s))
    return {"key": f"{student}:{kind}:{pair}:{config}", "start": began, "end": time.time(),
            "status": "timeout" if student == "hang" else "ok"}, 0.0


def grade_class(gpus: int, jobs: int, students: int, hang: bool, serial_s: float = 0.0) -> float:
    """Model seconds to grade the class (wall / SCALE)."""
    hung: set = set()
    is_timing = lambda task: task[1] == "timing" and (task[0], task[2]) not in hung  # noqa: E731

    def observe(task, row):
        if row["status"] == "timeout":
            hung.add((task[0], task[2]))

    options = dict(is_timing=is_timing, observe=observe, free_mb=lambda: 80_000)
    pool = SpreadPool(sleep_run, jobs, [str(g) for g in range(gpus)], **options) if gpus > 1 else \
        SharedGpuPool(sleep_run, jobs, gpu="0", **options)
    names = [f"s{i}" for i in range(students)] + (["hang"] if hang else []) + ["crash", "wrong"]
    lock = tempfile.NamedTemporaryFile(prefix="schedule-model-", suffix=".lock")

    def grade_one(name):
        time.sleep(BUILD_S * SCALE)
        seconds = (TIMEOUT_S if name == "hang" else RUN_S) * SCALE
        for pair in range(PAIRS):
            for config in range(CONFIGS):
                for kind in ("correctness", "timing"):
                    pool.submit(f"{name}:{kind}:{pair}:{config}",
                                (name, kind, pair, config, seconds, serial_s * SCALE, lock.name))
        return sum(1 for _ in pool.drain(wait=True))

    began = time.monotonic()
    try:
        for _ in schedule.each_student(names, grade_one, jobs * gpus):
            pass
    finally:
        pool.close()
        lock.close()
    return (time.monotonic() - began) / SCALE


def predict(students: int, jobs: int, runs: int, timing_share: float, run_s: float, build_s: float,
            serial_s: float, mps: bool, turn_s: float, scale: float) -> float:
    """Model seconds for a class of `students` on one GPU (wall / scale): plain or under MPS."""
    pool = SharedGpuPool(sleep_run, jobs, gpu="0", is_timing=lambda task: task[1] == "timing",
                         free_mb=lambda: 80_000)
    turns = GpuTurns()
    lock = tempfile.NamedTemporaryFile(prefix="schedule-model-", suffix=".lock")
    timing = round(runs * timing_share)

    def grade_one(name):
        time.sleep(build_s * scale)
        with turns.lock("0") if mps else _nothing():
            if mps:
                time.sleep(turn_s * scale)       # the student's daemon started and stopped
            for index in range(runs):
                kind = "timing" if index < timing else "correctness"
                pool.submit(f"{name}:{index}", (name, kind, index, 0, run_s * scale, serial_s * scale, lock.name))
            return sum(1 for _ in pool.drain(wait=True))

    lanes = max(2, jobs) if mps else jobs
    began = time.monotonic()
    try:
        for _ in schedule.each_student([f"s{i}" for i in range(students)], grade_one, lanes):
            pass
    finally:
        pool.close()
        lock.close()
    return (time.monotonic() - began) / scale


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="1,2,4")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--students", type=int, default=16, help="CUDA students, beside a crashing, a wrong and "
                                                                  "(unless --no-hang) a hanging one")
    parser.add_argument("--serial-start", type=float, default=0.0, metavar="S",
                        help="seconds of each run's start that the whole host does one at a time (H100: ~0.22)")
    parser.add_argument("--predict", type=int, metavar="N", help="a class of N students on one GPU, plain and MPS")
    parser.add_argument("--runs", type=int, default=130, help="--predict: runs per student")
    parser.add_argument("--timing-share", type=float, default=0.2, help="--predict: share of them run alone")
    parser.add_argument("--run-s", type=float, default=0.44, help="--predict: a run's wall alone (s)")
    parser.add_argument("--build-s", type=float, default=6.0, help="--predict: a student's build (s)")
    parser.add_argument("--mps-serial-start", type=float, default=0.14, help="--predict: the serial start under MPS")
    parser.add_argument("--mps-turn-s", type=float, default=0.5, help="--predict: a daemon's start + stop (s)")
    parser.add_argument("--scale", type=float, default=SCALE, help="model seconds per real second (smaller: faster)")
    args = parser.parse_args(argv)
    if args.predict:
        serial = args.serial_start or 0.22
        common = dict(students=args.predict, jobs=args.jobs, runs=args.runs, timing_share=args.timing_share,
                      run_s=args.run_s, build_s=args.build_s, turn_s=args.mps_turn_s, scale=args.scale)
        plain = predict(serial_s=serial, mps=False, **common)
        # an MPS client's run is shorter by what its context start saves (run_s includes the serial start)
        with_mps = predict(serial_s=args.mps_serial_start, mps=True,
                           **{**common, "run_s": max(args.mps_serial_start, args.run_s - serial + args.mps_serial_start)})
        print(f"| {args.predict} students x {args.runs} runs, --jobs {args.jobs} | plain (serial start {serial} s) "
              f"| MPS (serial start {args.mps_serial_start} s) |\n|---|---|---|\n"
              f"| predicted | {plain / 60:.1f} min | {with_mps / 60:.1f} min ({plain / with_mps:.2f}x) |", flush=True)
        return 0
    counts = [int(c) for c in args.counts.split(",")]
    print("| hanging student | " + " | ".join(f"{c} GPU{'s' if c > 1 else ''}" for c in counts) + " |")
    print("|---|" + "---|" * len(counts))
    for hang in (True, False):
        walls = [grade_class(c, args.jobs, args.students, hang, args.serial_start) for c in counts]
        cells = [f"{w:.0f} s" + (f" ({walls[0] / w:.2f}x)" if i else "") for i, w in enumerate(walls)]
        print(f"| {'yes' if hang else 'no'} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
