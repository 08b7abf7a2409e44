"""Grading a class on one GPU, concurrently, and what comes after the last student.

`grader grade --jobs N`: a thread per student in flight (up to N + 1, so the next student's
build overlaps the runs), builds in worker processes (each its own sandbox uid: concurrent
builds never share one), and runs in a SharedGpuPool of N worker processes: correctness runs
of different students side by side, admitted by the GPU's free memory, timing runs alone. The
timing runs are those whose times feed the leaderboard: every run on the largest graph (most
edges) of the session. The others' rows carry `ran_alone: false` and stay out of the
leaderboard (the pool marks every row it returns). A student whose program timed out on a run
of a (method, sync) has that pair's remaining timing runs run beside the others, not alone: a
hanging program would otherwise hold the GPU alone for its whole timeout, run after run, while
the class waits; those runs are judged as always and stay out of the leaderboard only.
`--jobs 1` (the default) grades as before: one run at a time, every time counts.

After the runs of a student: compute-sanitizer diagnosis (grader.grading.diagnosis), within
BUDGET_SHARE of that student's grading time. After the last student's runs: counterexamples
(grader.grading.counterexamples), the class's candidate runs shared out among the students who
have something to shrink, each student's candidates as correctness jobs of the pool (with --jobs):
run beside the class's runs, a student's search would keep every classmate's timing runs waiting
(on the H100 it added 120 % to a class of four instead of 25 %). Then: similarity of every pair of sources
(grader.grading.similarity) and the class page (grader.grading.classpage).
"""
from __future__ import annotations

import json
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Callable, Iterator

from grader.grading import counterexamples, diagnosis, similarity
from grader.grading.build import build as plain_build
from grader.grading.mps_turn import GpuTurns
from grader.sweep.executors import visible_gpus
from grader.sweep.executors.shared import CORRECTNESS, SharedGpuPool, SpreadPool
from sssp_common.files import write_text_atomically


@dataclass
class ClassRun:
    """What grade's per-student code needs of the class-wide machinery (one per `grade` call)."""
    jobs: int = 1
    lanes: int = 1                             # runs at once in the whole pool: jobs x GPUs (1 without --jobs)
    session: diagnosis.Setup = field(default_factory=lambda: diagnosis.Setup(None, "not set up"))
    pool: object = None                        # the SharedGpuPool when jobs > 1
    builds: ProcessPoolExecutor | None = None
    timed: set = field(default_factory=set)    # graphs whose runs are timing runs
    hung: set = field(default_factory=set)     # (program_id, method, sync) that timed out on some run
    force: bool = False
    store_lock: threading.Lock = field(default_factory=threading.Lock)
    build_lock: threading.Lock = field(default_factory=threading.Lock)
    lineinfo: dict = field(default_factory=dict)   # tree -> Future of its -lineinfo build (--jobs > 1)
    later: list = field(default_factory=list)      # (student, finish(spent_s) -> summary): counterexamples to come
    mps: bool = False                              # grade --mps: a GPU serves one student's MPS daemon at a time
    turns: GpuTurns = field(default_factory=GpuTurns)   # (grader.grading.mps_turn)

    def build(self, tree, area, options, sandbox):
        """The student's build: in a worker process when grading concurrently."""
        if self.builds is not None:
            try:
                result = self.builds.submit(plain_build, tree, area, options, sandbox).result()
                if result.built and self.session.sanitizer:
                    # the -lineinfo build diagnosis may want, started now so it is ready when the runs end
                    self.lineinfo[str(tree)] = self.builds.submit(diagnosis.lineinfo_build, tree, area / "diagnosis",
                                                                  options, sandbox)
                return result
            except BrokenProcessPool:   # the build worker died (killed, out of memory): build here instead
                pass
        with self.build_lock:           # in this process builds share its sandbox uid: one at a time
            return plain_build(tree, area, options, sandbox)

    def close(self) -> None:
        if self.builds is not None:
            self.builds.shutdown(wait=False, cancel_futures=True)


def start(jobs: int, sanitizer: str | None = None, diagnose: bool = True, force: bool = False,
          mps: bool = False) -> ClassRun:
    """mps: one student at a time per GPU, their runs clients of their own MPS daemon (the shared
    pool is used whatever --jobs, so timing runs still run alone)."""
    gpus = visible_gpus()
    run = ClassRun(jobs=max(1, jobs), session=diagnosis.setup(sanitizer, gpus, diagnose), force=force, mps=mps)
    if run.jobs > 1 or mps:
        # students in flight and builds at once: --jobs per GPU (with jobs alone, 4 GPUs had 5
        # students in flight for 16 workers: 2 GPUs graded 19 students only 1.2x faster than 1)
        run.lanes = (max(2, run.jobs) if mps else run.jobs) * max(1, len(gpus))   # MPS: the next student builds meanwhile
        run.builds = ProcessPoolExecutor(max_workers=run.lanes, mp_context=get_context("spawn"))
    return run


def open_pool(run: ClassRun, fn: Callable) -> SharedGpuPool:
    """N workers on each visible GPU (or on the CPU); timing runs: those on run.timed graphs."""
    gpus = visible_gpus()
    timing = lambda task: is_timing_run(run, task.cell)  # noqa: E731
    observe = lambda task, row: note_row(run, getattr(task, "cell", None), row)  # noqa: E731
    if len(gpus) > 1:      # every GPU: each student's runs on one of them, students spread evenly
        run.pool = SpreadPool(fn, run.jobs, gpus, is_timing=timing, observe=observe)
    else:
        run.pool = SharedGpuPool(fn, run.jobs, gpu=gpus[0] if gpus else None, is_timing=timing, observe=observe)
    return run.pool


def is_timing_run(run: ClassRun, cell) -> bool:
    """A run on the timed graph, unless its program already hung on this (method, sync)."""
    return cell.graph in run.timed and (cell.program_id, cell.method, cell.sync) not in run.hung


def note_row(run: ClassRun, cell, row: dict) -> None:
    """Remember a graded run that timed out (other jobs in the pool, diagnosis's, have no cell)."""
    if cell is not None and row.get("status") == "timeout":
        run.hung.add((cell.program_id, cell.method, cell.sync))


def correctness_job(run: ClassRun, fn: Callable) -> Callable | None:
    """With --jobs: a function handing one job to the shared pool as a correctness run (admitted
    like one, on the calling student's GPU); None without a shared pool."""
    if run.pool is None:
        return None
    return lambda job: run.pool.submit_future(job, fn=fn, kind=CORRECTNESS)


def timed_graphs(graphs: dict) -> set[str]:
    """The largest prepared graph (most edges, then vertices): its runs' times are the ones reported."""
    if not graphs:
        return set()
    size = lambda name: (getattr(graphs[name], "edges", 0) or 0, getattr(graphs[name], "vertices", 0) or 0)  # noqa: E731
    return {max(sorted(graphs), key=size)}


def each_student(found: list, grade_one: Callable, jobs: int) -> Iterator[tuple[object, dict]]:
    """(submission, its summary) as each finishes: in order with jobs 1, else jobs + 1 at a time."""
    if jobs <= 1:
        for submission in found:
            yield submission, grade_one(submission)
        return
    from concurrent.futures import ThreadPoolExecutor
    threads = ThreadPoolExecutor(max_workers=jobs + 1, thread_name_prefix="student")
    pending = {threads.submit(grade_one, submission): submission for submission in found}
    try:
        while pending:
            done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for future in done:
                yield pending.pop(future), future.result()
    finally:
        # interrupted: students not started never start; those running end when grade closes the pool
        threads.shutdown(wait=not pending, cancel_futures=True)


def counterexamples_after_class(run: ClassRun, class_s: float) -> dict:
    """Every student's deferred counterexamples (run.later: (student, finish, demand)), as many at
    once as the pool has lanes. The class's candidate runs are shared out first
    (counterexamples.share_runs: in runs, never seconds, so the same class gets the same
    counterexamples on any machine; a student with nothing to shrink leaves their share to the
    others); each student's candidates run up to --jobs at once. Returns student -> summary, as
    grade_one's. (class_s: kept for the caller; the budget no longer depends on time.)"""
    if not run.later:
        return {}
    later, run.later = run.later, []
    shares = counterexamples.share_runs({student: wants for student, _, wants in later})
    lanes = max(1, min(len(later), run.lanes))
    from concurrent.futures import ThreadPoolExecutor
    threads = ThreadPoolExecutor(max_workers=lanes, thread_name_prefix="counterexamples")
    futures = {student: threads.submit(finish, counterexamples.Allowance(runs=shares[student], jobs=run.jobs))
               for student, finish, _ in later}
    try:
        return {student: future.result() for student, future in futures.items()}
    finally:
        # interrupted: return at once (grade then stops the pool, which ends the jobs in flight);
        # waiting here for threads that wait on the pool would never end
        threads.shutdown(wait=False, cancel_futures=True)


class LockedStore:
    """The results file appended to by several student threads."""
    def __init__(self, store, lock: threading.Lock):
        self._store, self._lock = store, lock
        self.path = store.path

    def append(self, row) -> None:
        with self._lock:
            self._store.append(row)


def diagnose(run: ClassRun, student: str, folder: Path, tree: Path, area: Path, program_id: str, rows: dict,
             cells: list, graphs: dict, grading, built: dict, began: float) -> dict:
    """compute-sanitizer for one student after their runs, within BUDGET_SHARE of their time so far."""
    budget = diagnosis.BUDGET_SHARE * (time.monotonic() - began)
    submit = None
    if run.pool is not None:
        submit = lambda job: run.pool.submit_future(job, fn=diagnosis.run_target, kind=CORRECTNESS)  # noqa: E731
    return diagnosis.diagnose_student(student, folder, tree, area / "diagnosis", program_id, list(rows.values()),
                                      cells, graphs, grading, built.get("program"), budget_s=budget,
                                      session=run.session, submit=submit, jobs=run.jobs, force=run.force,
                                      builder=run.build, prebuilt=run.lineinfo.pop(str(tree), None))


FINGERPRINTS = "fingerprints.json"
SAMPLE_FINGERPRINTS = "sample_fingerprints.json"


def after_class(out: Path, work: Path, students: list[str], sample_code: Path | None, top: int = 30) -> dict:
    """Similarity of every pair of the class's sources, written to DIR/similarity.json and returned.

    This session's sources (unpacked under work/<student>/unpacked) are fingerprinted and the
    fingerprints kept in DIR/<student>/fingerprints.json, so grading a late student compares
    them with the whole class; --sample-code's are kept too (DIR/sample_fingerprints.json) and
    used again when a later session does not name it."""
    began = time.monotonic()
    for student in students:
        tree = work / student / "unpacked"
        if tree.is_dir() and (out / student).is_dir():
            write_text_atomically(out / student / FINGERPRINTS,
                                  json.dumps(similarity.to_json(similarity.fingerprint_tree(tree))))
    if sample_code is not None:
        write_text_atomically(out / SAMPLE_FINGERPRINTS,
                              json.dumps(similarity.to_json(similarity.fingerprint_tree(Path(sample_code)))))
    prints = {}
    for folder in sorted(p for p in out.iterdir() if p.is_dir()):
        data = _read_json(folder / FINGERPRINTS)
        if data is not None and (folder / "results.json").exists():
            prints[folder.name] = similarity.from_json(data)
    sample = _read_json(out / SAMPLE_FINGERPRINTS)
    excluded = similarity.from_json(sample).hashes() if sample else set()
    pairs = similarity.rank(prints, excluded, top) if len(prints) >= 2 else []
    result = {"students": sorted(prints), "sample_code": str(sample_code) if sample_code else
              ("as given to an earlier session" if sample else None),
              "k": similarity.K, "window": similarity.WINDOW, "seconds": round(time.monotonic() - began, 2),
              "capped": {name: found.capped for name, found in prints.items() if found.capped},
              "pairs": [p.as_dict() for p in pairs]}
    write_text_atomically(out / "similarity.json", json.dumps(result, indent=2) + "\n")
    return result


def _read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None
