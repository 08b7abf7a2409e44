"""grader.sweep.store: one grader per results file (the lock), and what a resume skips."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from grader.sweep.store import LockedResults, ResultsLocked, done_ids
from sssp_common.record import read_rows


def test_a_second_grader_on_the_same_file_is_refused_until_the_first_closes(tmp_path):
    path = tmp_path / "two" / "deep" / "runs.jsonl"
    first = LockedResults(path)
    lock = tmp_path / "two" / "deep" / "runs.jsonl.lock"
    assert lock.exists() and stat.S_IMODE(lock.stat().st_mode) == 0o600
    with pytest.raises(ResultsLocked) as refused:
        LockedResults(path)
    message = str(refused.value)
    assert str(path) in message and str(lock) in message and "\n" not in message
    first.append({"run_id": "a", "status": "ok"})
    first.close()
    first.close()                                   # closing twice is harmless
    second = LockedResults(path)                    # free again
    second.append({"run_id": "b", "status": "ok"})
    second.close()
    assert [r["run_id"] for r in read_rows(path)] == ["a", "b"]


def test_the_lock_holds_against_another_process(tmp_path):
    path = tmp_path / "runs.jsonl"
    held = LockedResults(path)
    probe = ("import sys; from grader.sweep.store import LockedResults, ResultsLocked\n"
             "try:\n    LockedResults(sys.argv[1])\nexcept ResultsLocked:\n    sys.exit(3)\n")
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    assert subprocess.run([sys.executable, "-c", probe, str(path)], env=env).returncode == 3
    held.close()
    assert subprocess.run([sys.executable, "-c", probe, str(path)], env=env).returncode == 0


def test_done_ids_skips_everything_recorded_or_only_the_right_runs(tmp_path):
    path = tmp_path / "runs.jsonl"
    rows = [{"run_id": "a", "status": "ok"}, {"run_id": "b", "status": "wrong"},
            {"run_id": "c", "status": "wrong"}, {"run_id": "c", "status": "ok"},
            {"run_id": "d", "status": "ok"}, {"run_id": "d", "status": "crash"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert done_ids(path) == {"a", "b", "c", "d"}
    assert done_ids(path, rerun_failed=True) == {"a", "c"}      # the latest row of each id decides


def test_a_torn_line_is_said_on_stderr_when_no_warn_is_given(tmp_path, capsys):
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps({"run_id": "a", "status": "ok"}) + "\n" + '{"run_id": "b", "sta')
    assert done_ids(path) == {"a"}
    assert "runs.jsonl" in capsys.readouterr().err
