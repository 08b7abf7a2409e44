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


def fake_graded_run(task):
    """A stand-in whose row says how it went: keys starting "h" hang (status timeout)."""
    key, seconds = task
    start = time.time()
    time.sleep(seconds)
    return {"key": key, "start": start, "end": time.time(), "status": "timeout" if key.startswith("h") else "ok"}, 0.0


def test_a_program_that_hung_has_its_later_timing_runs_run_beside_others():
    """Once a (program, method) timed out, its queued timing runs are correctness runs: they run
    beside other runs instead of holding the GPU alone, and their rows say ran_alone false."""
    hung: set[str] = set()
    pool = SharedGpuPool(fake_graded_run, jobs=3, gpu=None,
                         is_timing=lambda task: task[0].startswith(("t", "ht")) and task[0][0] not in hung,
                         observe=lambda task, row: hung.add(task[0][0]) if row["status"] == "timeout" else None)
    results = {}
    try:
        # one student whose method hangs: a correctness run that times out, then its timing runs
        pool.submit("h-c0", ("h-c0", 0.2))
        for index in range(3):
            pool.submit(f"h-t{index}", (f"ht-{index}", 0.3))
        # a classmate whose runs are fine, submitted alongside
        for index in range(4):
            pool.submit(f"ok-c{index}", (f"c-{index}", 0.3))
        for outcome in pool.drain(wait=True):
            results[outcome.key] = outcome.row
    finally:
        pool.close()
    assert len(results) == 8 and all(results.values())
    assert "h" in hung
    hung_timing = [results[f"h-t{i}"] for i in range(3)]
    assert all(row["ran_alone"] is False for row in hung_timing), "a hung program's timing runs held the GPU alone"
    kinds = {key: kind for key, kind, _, _ in pool.history}
    assert all(kinds[f"h-t{i}"] == CORRECTNESS for i in range(3))
    # they did run side by side with something (they would have waited for an empty GPU before)
    others = [r for k, r in results.items() if not k.startswith("h-t")]
    assert any(overlaps(run, other) for run in hung_timing for other in others + hung_timing if other is not run)


def test_timing_runs_named_by_the_caller_are_never_reclassified():
    pool = SharedGpuPool(fake_run, jobs=2, gpu=None, is_timing=lambda task: False)
    try:
        first = pool.submit_future(("t-a", 0.05), kind=TIMING)
        second = pool.submit_future(("t-b", 0.05), kind=TIMING)
        assert first.result(timeout=60)[0]["ran_alone"] is True and second.result(timeout=60)[0]["ran_alone"] is True
    finally:
        pool.close()
    assert [kind for _, kind, _, _ in pool.history] == [TIMING, TIMING]


def test_the_class_run_stops_timing_a_method_once_it_hung():
    from types import SimpleNamespace
    from grader.grading.schedule import ClassRun, is_timing_run, note_row
    run = ClassRun(timed={"big"})
    cell = lambda graph, method="tpe", sync="incore", program="p1": SimpleNamespace(  # noqa: E731
        graph=graph, method=method, sync=sync, program_id=program)
    assert is_timing_run(run, cell("big")) and not is_timing_run(run, cell("small"))
    note_row(run, cell("small"), {"status": "wrong"})
    assert is_timing_run(run, cell("big"))
    note_row(run, cell("small"), {"status": "timeout"})
    assert not is_timing_run(run, cell("big"))
    # only that program's (method, sync): its other methods and classmates keep their timing runs
    assert is_timing_run(run, cell("big", sync="outcore")) and is_timing_run(run, cell("big", method="bmf"))
    assert is_timing_run(run, cell("big", program="p2"))


def test_an_observer_that_fails_loses_no_row(capsys):
    def broken(task, row):
        raise AttributeError("no cell")
    pool = SharedGpuPool(fake_run, jobs=1, gpu=None, observe=broken)
    try:
        row, _ = pool.submit_future(("c-x", 0.01), kind=CORRECTNESS).result(timeout=60)
    finally:
        pool.close()
    assert row["key"] == "c-x"
    assert "observer failed" in capsys.readouterr().err


def test_students_in_flight_and_builds_grow_with_the_gpus(monkeypatch):
    """--jobs is per GPU: with 4 GPUs visible, 4 x jobs students are graded at once and as many
    build at once (jobs alone left 3 of 4 GPUs mostly idle)."""
    from grader.grading import schedule
    monkeypatch.delenv("SSSP_DEVICE", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
    run = schedule.start(3, diagnose=False)
    try:
        assert run.lanes == 12 and run.builds._max_workers == 12
    finally:
        run.close()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    one = schedule.start(3, diagnose=False)
    try:
        assert one.lanes == 3
    finally:
        one.close()
    assert schedule.start(1, diagnose=False).lanes == 1


def test_each_student_keeps_lanes_plus_one_in_flight():
    from grader.grading import schedule
    live, most = [0], [0]
    lock = threading.Lock()

    def grade_one(student):
        with lock:
            live[0] += 1
            most[0] = max(most[0], live[0])
        time.sleep(0.2)
        with lock:
            live[0] -= 1
        return {"student": student}

    done = list(schedule.each_student(list(range(20)), grade_one, 8))
    assert len(done) == 20 and most[0] == 9


def test_on_every_gpu_a_hung_program_stops_holding_its_gpu_alone():
    """SpreadPool hands is_timing and observe to each GPU's pool: the rule for hung programs
    holds with several GPUs too."""
    from grader.sweep.executors.shared import SpreadPool
    hung: set[str] = set()
    pool = SpreadPool(fake_graded_run, 2, ["0", "1"], free_mb=lambda: 100_000,
                      is_timing=lambda task: task[0].startswith("ht") and "h" not in hung,
                      observe=lambda task, row: hung.add("h") if row["status"] == "timeout" else None)
    try:
        pool.submit("h-c0", ("h-c0", 0.1))
        for index in range(3):
            pool.submit(f"h-t{index}", (f"ht-{index}", 0.1))
        rows = {o.key: o.row for o in pool.drain(wait=True)}
    finally:
        pool.close()
    assert hung == {"h"} and len(rows) == 4
    assert all(rows[f"h-t{i}"]["ran_alone"] is False for i in range(3))
