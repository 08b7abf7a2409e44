"""The shared-GPU pool (grader.sweep.executors.shared): correctness runs side by side, timing runs
alone. Fake runs in real worker processes record when they started and ended (wall clock,
from inside the worker); the intervals prove no timing run overlapped anything."""
from __future__ import annotations

import threading
import time

import pytest

from grader.sweep.executors.shared import CORRECTNESS, TIMING, SharedGpuPool, admit


def fake_run(task):
    """A stand-in for one graded run: sleep, and say when it ran (seen from the worker)."""
    key, seconds = task
    start = time.time()
    time.sleep(seconds)
    return {"key": key, "start": start, "end": time.time()}, 0.0


def overlaps(a, b) -> bool:
    return a["start"] < b["end"] and b["start"] < a["end"]


@pytest.mark.parametrize("kind,running,timing_waiting,correctness_waiting,free,memory_ok,expected", [
    (TIMING, {}, True, False, 2, True, True),                     # an empty GPU: a timing run goes
    (TIMING, {CORRECTNESS: 1}, True, False, 1, True, False),        # never beside a correctness run
    (TIMING, {TIMING: 1}, True, False, 1, True, False),             # nor beside another timing run
    (TIMING, {}, True, True, 2, True, False),                       # correctness runs queued go first
    (CORRECTNESS, {TIMING: 1}, False, True, 1, True, False),        # nothing beside a timing run
    (CORRECTNESS, {CORRECTNESS: 2}, False, True, 1, True, True),
    (CORRECTNESS, {CORRECTNESS: 2}, False, True, 1, False, False),  # GPU memory short: wait
    (CORRECTNESS, {}, False, True, 3, False, True),                 # alone, memory is not asked
    (CORRECTNESS, {CORRECTNESS: 3}, False, True, 0, True, False),   # no free worker
])
def test_admission_rule(kind, running, timing_waiting, correctness_waiting, free, memory_ok, expected):
    assert admit(kind, running, timing_waiting, correctness_waiting, free, memory_ok) is expected


def test_timing_runs_never_overlap_anything():
    pool = SharedGpuPool(fake_run, jobs=4, gpu=None, is_timing=lambda task: task[0].startswith("t"))
    results = {}

    def student(name: str):
        # a student's runs as grade submits them: correctness and timing runs interleaved
        for index in range(6):
            pool.submit(f"{name}-c{index}", (f"c-{name}-{index}", 0.15))
            if index % 2:
                pool.submit(f"{name}-t{index}", (f"t-{name}-{index}", 0.1))
        for outcome in pool.drain(wait=True):
            results[outcome.key] = outcome.row

    try:
        threads = [threading.Thread(target=student, args=(name,)) for name in ("ann", "bob", "cat")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    finally:
        pool.close()
    assert len(results) == 3 * 9 and all(results.values())
    timing = [r for r in results.values() if r["key"].startswith("t")]
    others = [r for r in results.values() if r["key"].startswith("c")]
    assert len(timing) == 9
    for run in timing:
        clashes = [o["key"] for o in results.values() if o is not run and overlaps(run, o)]
        assert not clashes, f"timing run {run['key']} overlapped {clashes}"
    # and correctness runs did run side by side (the point of the pool)
    assert any(overlaps(a, b) for i, a in enumerate(others) for b in others[i + 1:])
    # the pool's own record agrees: every run accounted for, each kind as submitted
    assert sorted(kind for _, kind, _, _ in pool.history).count(TIMING) == 9


def test_each_thread_drains_only_its_own_runs():
    pool = SharedGpuPool(fake_run, jobs=2, gpu=None)
    seen: dict[str, list[str]] = {}

    def student(name):
        for index in range(3):
            pool.submit(f"{name}{index}", (f"c{name}{index}", 0.05))
        seen[name] = sorted(o.key for o in pool.drain(wait=True))

    try:
        threads = [threading.Thread(target=student, args=(n,)) for n in ("x", "y")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    finally:
        pool.close()
    assert seen == {"x": ["x0", "x1", "x2"], "y": ["y0", "y1", "y2"]}


def test_gpu_memory_holds_back_a_second_run():
    # free memory always under the threshold: correctness runs still go, one at a time
    pool = SharedGpuPool(fake_run, jobs=3, gpu="0", free_mb=lambda: 100, min_free_mb=2048)
    try:
        for index in range(4):
            pool.submit(f"c{index}", (f"c{index}", 0.1))
        rows = [o.row for o in pool.drain(wait=True)]
    finally:
        pool.close()
    assert len(rows) == 4
    assert not any(overlaps(a, b) for i, a in enumerate(rows) for b in rows[i + 1:])


def test_close_stops_runs_in_flight_and_wakes_drain():
    pool = SharedGpuPool(fake_run, jobs=2, gpu=None)
    drained = []

    def student():
        pool.submit("long", ("c-long", 60))
        drained.extend(pool.drain(wait=True))

    thread = threading.Thread(target=student)
    thread.start()
    time.sleep(1.0)                      # the run has started in a worker
    began = time.monotonic()
    pool.close(cancel=True)
    thread.join(timeout=30)
    assert not thread.is_alive() and time.monotonic() - began < 30


def test_every_gpu_takes_students_each_student_stays_on_one():
    """SpreadPool: with two GPUs each student's runs all go to one of them, the students spread
    evenly; a timing run overlaps nothing on its own GPU (other GPUs go on)."""
    from grader.sweep.executors.shared import SpreadPool
    pool = SpreadPool(fake_run, 2, ["0", "1"], is_timing=lambda task: task[0].startswith("t"),
                      free_mb=lambda: 100_000)
    rows: dict[str, list[dict]] = {}

    def student(name):
        for index in range(3):
            pool.submit(f"{name}{index}", (f"c{name}{index}", 0.05))
        pool.submit(f"{name}t", (f"t{name}", 0.1))
        rows[name] = [o.row for o in pool.drain(wait=True)]

    try:
        threads = [threading.Thread(target=student, args=(n,)) for n in "abcd"]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    finally:
        pool.close()
    gpu_of = {name: {r["gpu"] for r in found} for name, found in rows.items()}
    assert all(len(g) == 1 for g in gpu_of.values()), gpu_of
    per_gpu = [sum(1 for g in gpu_of.values() if g == {gpu}) for gpu in ("0", "1")]
    assert per_gpu == [2, 2]
    for gpu in ("0", "1"):
        mine = [r for found in rows.values() for r in found if r["gpu"] == gpu]
        for timing in (r for r in mine if r["key"].startswith("t")):
            assert not any(overlaps(timing, other) for other in mine if other is not timing)
