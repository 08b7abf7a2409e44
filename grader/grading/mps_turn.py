"""A student's turn on their GPU under MPS (`grade --mps`, or `[grading] mps = true`), and the
loop that brings their runs' rows back (with or without MPS).

Why: CUDA contexts start mostly one after another on a host (~0.31 s each alone, ~0.14 s as MPS
clients: ../shared/DESIGN.md), and MPS serves one uid at a time while every student has a uid of
their own. So in MPS mode a GPU takes one student at a time: the student's thread waits for the
GPU's turn lock, leases a uid for the whole turn (grader.jail.uids), starts an MPS daemon as that
uid (grader.jail.mps), and sends every run as its client (Sandbox.mps: the same uid, the daemon's
folders bound into each jail): correctness runs --jobs at a time, timing runs alone (the pool's
rule), every row `"mps": true`. After the last row the daemon is stopped and checked (nothing of
the uid may survive) before the uid and the GPU go to the next student. Builds, reference answers
and output checks of the next students go on meanwhile (their threads, schedule.each_student).
Without MPS every row says `"mps": false`, so timings are labelled alike in both modes.

When the server dies (or a client fails with an MPS error: mps.ERROR_WORDS) during a turn, each
run it cost (not right, and MPS named, or its daemon gone or restarted since the run was sent) is
run once more: after restarting the daemon (at most MAX_RESTARTS times a turn), else without MPS
for the rest of the turn; the row says so (`mps_rerun`), and a right row is never run again. A run
the harness could not judge is run once more too (its second row counts: rubric.grader_failure).
"""
from __future__ import annotations

import dataclasses
import threading
from contextlib import contextmanager
from typing import Callable, Iterator

from grader.grading.rubric import grader_failure
from grader.jail import mps, uids
from grader.jail.sandbox import session_root
from grader.sweep.executors.celltask import failure_row

MAX_RESTARTS = 2


class Turn:
    """One student's way to the GPU: plain runs, or as clients of their MPS daemon."""

    def __init__(self, runner, daemon: mps.Daemon | None = None, student: str = "", say: Callable = print):
        self.plain = dataclasses.replace(runner, record_extra={**runner.record_extra, "mps": False}) \
            if runner is not None else None
        self.daemon, self.student, self.say = daemon, student, say
        self.generation = 0          # +1 each time the daemon is found dead
        self.fallen_back = False     # the daemon could not be started again: the rest runs without MPS
        self.notes: list[str] = []

    @property
    def mps(self) -> bool:
        return self.daemon is not None and not self.fallen_back

    def runner(self):
        """The runner for runs sent now."""
        if not self.mps:
            return self.plain
        sandbox = dataclasses.replace(self.plain.sandbox, mps=self.daemon.client)
        return dataclasses.replace(self.plain, sandbox=sandbox, record_extra={**self.plain.record_extra, "mps": True})

    def _lost(self, generation: int) -> bool:
        return generation != self.generation or not self.daemon.alive()

    def affected(self, row: dict, generation: int) -> str:
        """Why this row's failure is MPS's ('' when it is not): a client's row, not right, with an
        MPS error in what it said, or its daemon gone or restarted since it was sent."""
        if self.daemon is None or row.get("mps") is not True or row.get("status") == "ok":
            return ""
        if mps.mps_error(str(row.get("detail", ""))):
            return "it failed with an MPS error"
        return "its MPS daemon stopped during the run" if self._lost(generation) else ""

    def label(self, row: dict, generation: int) -> dict:
        """A kept client's row whose daemon did not outlive it is not labelled an MPS client's."""
        if self.daemon is not None and row.get("mps") is True and self._lost(generation):
            return {**row, "mps": False, "mps_note": "its MPS daemon stopped during the run"}
        return row

    def recover(self) -> None:
        """The daemon dead: start it again (bounded), else go on without MPS. Its server alone
        dead: nothing (the daemon starts a new server for the next client)."""
        if self.daemon is None or self.fallen_back or self.daemon.alive():
            return
        self.generation += 1
        left = self.daemon.stop(clients_running=True)   # the student's runs in flight are left alone
        if left:
            self._note(f"what was left of the MPS daemon ({len(left)} processes) would not end; started anew beside it")
        if self.daemon.starts <= MAX_RESTARTS:
            try:
                self.daemon.start()
                self._note(f"the MPS daemon stopped during the runs; started again (start {self.daemon.starts})")
                return
            except mps.MpsError as error:
                self._note(f"the MPS daemon stopped and could not be started again ({error})")
        self.fallen_back = True
        self._note("the rest of this student's runs go without MPS")

    def _note(self, line: str) -> None:
        self.notes.append(line)
        self.say(f"grader grade: {self.student}: {line}")


@contextmanager
def turn(classrun, runner, student: str, base_uid: int, say: Callable = print) -> Iterator[Turn]:
    """The student's turn: without MPS, at once and plain; with it, the GPU's turn lock, a uid
    leased for the turn, its daemon started (or, failing that, plain runs, said), then stopped and
    checked when the block ends."""
    if not getattr(classrun, "mps", False):
        yield Turn(runner, student=student, say=say)
        return
    gpu = classrun.pool.gpu_for_caller() if hasattr(classrun.pool, "gpu_for_caller") else None
    with classrun.turns.lock(gpu), uids.lease() as slot:
        uid = base_uid + slot
        try:
            daemon = mps.start(uid, uid, session_root(), devices=mps.gpu_uuid(gpu))
        except (mps.MpsError, OSError) as error:    # never the student's loss: their runs go plainly
            plain = Turn(runner, student=student, say=say)
            plain._note(f"no MPS daemon for this student ({error}); their runs go without MPS")
            yield plain
            return
        current = Turn(runner, daemon, student, say)
        try:
            yield current
        finally:
            try:
                left = daemon.stop()
                daemon.remove()
            except OSError as error:
                left = []
                current._note(f"the MPS daemon could not be stopped and removed cleanly ({error})")
            if left:   # the uid's slot is given back only by the lease: say loudly what survived
                current._note(f"uid {uid} still ran {len(left)} processes after its MPS daemon stopped "
                              f"(pids {left[:5]})")


def rows_of(pool, make_tasks: Callable | None, cells: list, turn: Turn, after: Callable = lambda cell, row: [],
            sent: dict | None = None) -> Iterator:
    """(task, row) for each run sent, as each comes back: make_tasks(cells, runner) -> {key: task}
    sends cells; after(cell, row) names cells to send once a row is final (reruns = first-right);
    sent: tasks the caller already submitted (key -> task), emptied as their rows come."""
    tasks: dict = sent if sent is not None else {}
    sent_at: dict = dict.fromkeys(tasks, turn.generation)
    mps_why: dict = {}
    harness_retried: set = set()

    def send(chosen: list) -> None:
        made = make_tasks(chosen, turn.runner()) if chosen else {}
        for key, task in made.items():
            tasks[key], sent_at[key] = task, turn.generation
            pool.submit(key, task)

    def again(key) -> None:
        task = tasks[key] = dataclasses.replace(tasks[key], sweep=turn.runner()) \
            if dataclasses.is_dataclass(tasks[key]) else tasks[key]
        sent_at[key] = turn.generation
        pool.submit(key, task)

    send(cells)
    for outcome in pool.drain(wait=True):
        task = tasks.get(outcome.key)
        if task is None:
            continue
        key = outcome.key
        row = outcome.row if outcome.row is not None else failure_row(task, outcome.error)
        why = turn.affected(row, sent_at[key])
        if why and key not in mps_why:
            mps_why[key] = f"{why} ({str(row.get('detail', ''))[:200]})"
            turn.recover()
            again(key)
            continue
        if why:
            mps_why[key] += f"; its second run failed too ({why}), and counts"
            turn.recover()
        if grader_failure(row) and key not in harness_retried:
            harness_retried.add(key)
            again(key)
            continue
        if grader_failure(row):
            row = {**row, "detail": f"{row['detail']} (run twice, failed both times)"}
        row = turn.label(row, sent_at[key])
        if key in mps_why:
            row = {**row, "mps_rerun": f"run again: its first run's failure was MPS's: {mps_why[key]}"}
        del tasks[key]
        yield task, row
        send(list(after(task.cell, row)))


class GpuTurns:
    """One lock per GPU: in MPS mode a GPU serves one student's uid at a time."""

    def __init__(self):
        self._locks: dict = {}
        self._guard = threading.Lock()

    def lock(self, gpu) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(gpu, threading.Lock())
