"""grader.grading.mps_turn.Turn without a daemon process: which rows an MPS failure cost, how a dead
daemon is restarted (bounded) and when the runs go on without MPS, and how rows are labelled."""
from __future__ import annotations

from pathlib import Path

from grader.grading import mps_turn
from grader.grading.config import GradeRun
from grader.jail import mps
from grader.jail.sandbox import Sandbox


class FakeDaemon:
    def __init__(self, starts_fail: bool = False):
        self.up, self.starts, self.starts_fail, self.stops = True, 1, starts_fail, []
        self.client = mps.Client(64200, 64200, "/p", "/l", "/s")

    def alive(self):
        return self.up

    def stop(self, clients_running=False):
        self.stops.append(clients_running)
        self.up = False
        return []

    def start(self):
        self.starts += 1
        if self.starts_fail:
            raise mps.MpsError("the binary is gone")
        self.up = True


RUNNER = GradeRun(name="g", command="{sssp}", config_dir=Path("."), timeout_s=5, sentinels=(), sandbox=Sandbox(),
                  patterns=(), program_path=Path("/p/sssp"), record_extra={"student": "ana"})


def test_rows_say_whether_they_were_mps_clients_and_which_failures_were_mps():
    daemon = FakeDaemon()
    turn = mps_turn.Turn(RUNNER, daemon, "ana", say=lambda line: None)
    runner = turn.runner()
    assert runner.sandbox.mps == daemon.client and runner.record_extra == {"student": "ana", "mps": True}
    assert mps_turn.Turn(RUNNER).runner().record_extra == {"student": "ana", "mps": False}
    wrong = {"mps": True, "status": "wrong", "detail": "vertex 3: 7 instead of 5"}
    assert turn.affected(wrong, 0) == ""                                  # the student's own failure
    said = {**wrong, "status": "crash", "detail": "stderr: CUDA error: MPS client failed to connect"}
    assert turn.affected(said, 0) == "it failed with an MPS error"
    assert turn.affected({**said, "status": "ok"}, 0) == ""              # a right row is never run again
    assert turn.affected(wrong, -1) == "its MPS daemon stopped during the run"    # restarted since it was sent
    assert turn.label({"mps": True, "status": "ok"}, 0) == {"mps": True, "status": "ok"}
    daemon.up = False
    assert turn.label({"mps": True, "status": "ok"}, 0)["mps"] is False


def test_a_dead_daemon_restarts_a_bounded_number_of_times_then_runs_go_plain():
    daemon, lines = FakeDaemon(), []
    turn = mps_turn.Turn(RUNNER, daemon, "ana", say=lines.append)
    turn.recover()                       # alive: only its server may have ended; nothing to do
    assert daemon.starts == 1 and turn.generation == 0
    for expected in range(2, mps_turn.MAX_RESTARTS + 2):
        daemon.up = False
        turn.recover()
        assert daemon.starts == expected and turn.mps and daemon.stops[-1] is True   # runs in flight spared
    daemon.up = False
    turn.recover()
    assert not turn.mps and turn.runner().record_extra["mps"] is False and turn.runner().sandbox.mps is None
    assert turn.generation == mps_turn.MAX_RESTARTS + 1 and "without MPS" in lines[-1]


def test_a_daemon_that_cannot_start_again_sends_the_rest_plainly():
    daemon, lines = FakeDaemon(starts_fail=True), []
    turn = mps_turn.Turn(RUNNER, daemon, "ana", say=lines.append)
    daemon.up = False
    turn.recover()
    assert not turn.mps and any("could not be started again" in line for line in lines)
