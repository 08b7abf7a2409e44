"""grader.jail.mps with the stand-in control binary (tests/fixtures/fake-mps): a daemon per uid,
its folders private to that uid, its clients jailed with its pipe, log and shm folders, and
nothing of it left after stop() (quit, or a kill when it ignores quit, or when it died)."""
from __future__ import annotations

import os
import shutil
import signal
import stat
import tempfile
from pathlib import Path

import pytest

from grader.jail import mps, uids
from grader.jail.runner import run_program
from grader.jail.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[1]
FAKE = ROOT / "tests" / "fixtures" / "fake-mps" / "nvidia-cuda-mps-control"
BASE = 64123
pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="a daemon per uid needs root"),
              pytest.mark.skipif(shutil.which("flock") is None, reason="the fake daemon needs flock")]


@pytest.fixture
def top():
    folder = Path(tempfile.mkdtemp(prefix="mps-test-", dir="/tmp"))
    os.chmod(folder, 0o711)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def uid():
    with uids.lease() as slot:
        yield BASE + slot


def test_a_missing_binary_is_one_clear_line(monkeypatch, tmp_path):
    monkeypatch.setenv(mps.ENV_VAR, str(tmp_path / "nowhere"))
    why = mps.unavailable()
    assert "nowhere" in why and "\n" not in why
    monkeypatch.delenv(mps.ENV_VAR)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(mps, "NVIDIA_BIN", tmp_path / "no-nvidia")
    assert mps.find() is None and mps.BINARY in mps.unavailable()


def test_a_daemon_runs_as_its_uid_in_private_folders_and_leaves_nothing(top, uid):
    daemon = mps.start(uid, uid, top, binary=str(FAKE))
    try:
        assert daemon.alive() and daemon.pids
        assert all(mps.uid_processes(uid).get(pid) not in (None, "Z") for pid in daemon.pids)
        for folder in (daemon.pipe, daemon.log, daemon.shm):
            info = os.lstat(folder)
            assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (uid, 0o700)
        assert stat.S_IMODE(os.lstat(daemon.folder).st_mode) == 0o711 and os.lstat(daemon.folder).st_uid == 0
        assert stat.S_ISFIFO(os.lstat(daemon.pipe / "control").st_mode)
        assert f"uid {uid}" in (daemon.log / "control.log").read_text()
    finally:
        left = daemon.stop()
    assert left == [] and not daemon.alive() and mps.living(uid) == []
    assert "quit" in (daemon.log / "control.log").read_text()     # stopped by quit, not by the kill
    daemon.remove()
    assert not daemon.folder.exists()


def test_a_daemon_that_ignores_quit_is_killed(top, uid, tmp_path):
    stubborn = top / "stubborn"
    stubborn.write_text(FAKE.read_text().replace('[ "$command" = quit ] && {', '[ "$command" = never ] && {'))
    os.chmod(stubborn, 0o755)
    daemon = mps.start(uid, uid, top, binary=str(stubborn))
    assert daemon.alive()
    assert daemon.stop() == [] and mps.living(uid) == []
    daemon.remove()


def test_a_killed_daemon_is_seen_dead_and_restarts(top, uid):
    daemon = mps.start(uid, uid, top, binary=str(FAKE))
    try:
        os.kill(int((daemon.log / "daemon.pid").read_text()), signal.SIGKILL)
        for _ in range(200):
            if not daemon.alive():
                break
            mps.time.sleep(0.01)
        assert not daemon.alive()
        daemon.start()
        assert daemon.alive() and daemon.starts == 2
    finally:
        assert daemon.stop() == []
        daemon.remove()


def test_a_uid_already_running_something_gets_no_daemon(top, uid):
    first = mps.start(uid, uid, top, binary=str(FAKE))
    try:
        with pytest.raises(mps.MpsError, match="already has processes"):
            mps.start(uid, uid, top, binary=str(FAKE))
    finally:
        first.stop()
        first.remove()


@pytest.mark.parametrize("cgroup", [True, False])   # without a cgroup, a run's leftovers were found by uid
def test_a_jailed_client_gets_the_daemons_uid_folders_and_env(top, uid, cgroup):
    daemon = mps.start(uid, uid, top, binary=str(FAKE))
    try:
        client = daemon.client
        script = ('echo "uid=$(id -u) pipe=$CUDA_MPS_PIPE_DIRECTORY log=$CUDA_MPS_LOG_DIRECTORY"; '
                  'test -p "$CUDA_MPS_PIPE_DIRECTORY/control" && echo fifo-seen; '
                  'touch /dev/shm/shared-with-daemon && echo shm-written')
        with run_program(lambda out: ["/bin/sh", "-c", script], 30,
                         sandbox=Sandbox(user="always", mps=client, cgroup=cgroup)) as result:
            said = result.stdout_head
            assert result.exit_code == 0, result.stderr_tail
        assert f"uid={uid} pipe={client.pipe} log={client.log}" in said
        assert "fifo-seen" in said and "shm-written" in said
        assert (daemon.shm / "shared-with-daemon").exists()      # the client's /dev/shm is the daemon's
        assert daemon.alive()      # the run's cleanup killed the run, not the uid's daemon
    finally:
        assert daemon.stop() == []
        daemon.remove()


@pytest.mark.parametrize("text, expected", [
    ("CUDA error: MPS client failed to connect to the MPS control daemon or the MPS server", True),
    ("cudaErrorMpsServerNotReady", True), ("CUDA_ERROR_MPS_RPC_FAILURE", True),
    ("wrong distances at vertex 3", False), ("", False), ("x" * (mps.ERROR_SCAN + 10) + "MPS server", False)])
def test_mps_errors_are_recognised_by_their_words(text, expected):
    assert mps.mps_error(text) is expected


def test_a_restart_mid_turn_leaves_the_students_runs_alone(top, uid):
    import threading
    daemon = mps.start(uid, uid, top, binary=str(FAKE))
    ended = {}

    def client():
        with run_program(lambda out: ["/bin/sh", "-c", "echo started; exec sleep 300"], 600,
                         sandbox=Sandbox(user="always", mps=daemon.client)) as result:
            ended["code"] = result.exit_code

    runner = threading.Thread(target=client)
    runner.start()
    try:
        for _ in range(1000):     # the client running in its jail: a process of the uid in another pid namespace
            jailed = [p for p in mps.living(uid) if p not in mps.outside_jails([p])]
            if jailed:
                break
            mps.time.sleep(0.01)
        assert jailed and mps.outside_jails(jailed) == []
        os.kill(int((daemon.log / "daemon.pid").read_text()), signal.SIGKILL)
        assert daemon.stop(clients_running=True) == []
        assert all(pid in mps.living(uid) for pid in jailed)       # the student's run is still running
        daemon.start()
        assert daemon.alive() and not set(jailed) & daemon.pids    # the new daemon's pids are its own
    finally:
        assert daemon.stop() == [] and mps.living(uid) == []        # the turn's end: everything of the uid
        runner.join(60)
        daemon.remove()
    assert not runner.is_alive() and ended["code"] is not None and ended["code"] != 0   # the run was ended, killed
