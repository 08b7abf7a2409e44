"""Every temporary folder of the grader and its workers is gone when they finish, are
interrupted, or die (a dead grader's are removed by the next one): counted in a private
TMPDIR after sweeps and a grade. The one thing meant to stay is the shared inputs folder
(sssp-grader/inputs: stable paths, so a program's parse cache keeps hitting)."""
from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_executors import config_with  # noqa: E402
from test_grade import config as grade_config, needs_cc, submission as grade_submission  # noqa: E402
from test_sweep import FIGURE1, tiny_graph  # noqa: E402
from sssp_common.record import read_rows  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# the grader's top folder (sssp-grader, or sssp-grader-<uid> when not root) and its inputs
KEPT = re.compile(r"sssp-grader(-\d+)?(/inputs(/[^/]+)?)?")


def leftovers(tmpdir: Path) -> list[str]:
    """What is under tmpdir besides the grader's top folder and its shared inputs."""
    names = (entry.relative_to(tmpdir).as_posix() for entry in sorted(tmpdir.rglob("*")))
    return [name for name in names if not KEPT.fullmatch(name)]


def grader(tmp_path: Path, *args) -> tuple[list[str], dict]:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmpdir), "PYTHONPATH": str(ROOT), "SSSP_DEVICE": "cpu"}
    return [sys.executable, "-m", "grader", *map(str, args)], env


def sweep_config(tmp_path: Path) -> Path:
    log = tmp_path / "logs"
    log.mkdir(exist_ok=True)
    return config_with(tmp_path, [FIGURE1, tiny_graph(tmp_path)], ["showgpu"],
                       configs="[[256, 8], [384, 5], [512, 4], [768, 2], [1024, 2]]",
                       extra=f"--sleep 0.3 --logdir {shlex.quote(str(log))}")


def test_a_sweep_with_workers_leaves_nothing(tmp_path):
    command, env = grader(tmp_path, "sweep", "--config", sweep_config(tmp_path), "--results",
                          tmp_path / "r.jsonl", "--workers", "2", "-q")
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert leftovers(tmp_path / "tmp") == []


def start_and_stop(tmp_path: Path, stop: signal.Signals) -> subprocess.Popen:
    results = tmp_path / "r.jsonl"
    command, env = grader(tmp_path, "sweep", "--config", sweep_config(tmp_path), "--results", results,
                          "--workers", "2", "-q")
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 90
    while len(read_rows(results, warn=None)) < 2:
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read() if process.stderr else ""
        time.sleep(0.05)
    process.send_signal(stop)
    process.communicate(timeout=60)
    return process


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_sweep_leaves_nothing(tmp_path, stop):
    process = start_and_stop(tmp_path, stop)
    assert process.returncode == 130
    time.sleep(1.5)   # its workers notice within a second that the grader is gone
    assert leftovers(tmp_path / "tmp") == []


def test_a_dead_graders_folders_go_with_the_next_grader(tmp_path):
    process = start_and_stop(tmp_path, signal.SIGKILL)
    assert process.returncode == -signal.SIGKILL
    time.sleep(2.5)   # orphaned workers leave within a second or two
    command, env = grader(tmp_path, "sweep", "--config", sweep_config(tmp_path), "--results",
                          tmp_path / "r.jsonl", "--workers", "2", "-q")
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert leftovers(tmp_path / "tmp") == []


@needs_cc
def test_a_grade_with_workers_leaves_nothing(tmp_path):
    subs = tmp_path / "subs"
    for name in ("spec_ok", "wrong_one"):
        grade_submission(subs, name)
    command, env = grader(tmp_path, "grade", subs, "--out", tmp_path / "out", "--config", grade_config(tmp_path),
                          "--workers", "2", "-q")
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert leftovers(tmp_path / "tmp") == []
