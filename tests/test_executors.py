"""Executors: local worker processes and a real Dask cluster run a sweep as the serial run does;
a worker killed mid-sweep loses no cell and doubles none; runs on one GPU never overlap."""
from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from grader.commands import grade, sweep
from grader.sweep.executors import ExecutorUnavailable, open_executor, visible_gpus
from grader.sweep.executors.celltask import Shipped, arrival_problem, ship_reference
from sssp_common.record import RunRecord, read_rows

sys.path.insert(0, str(Path(__file__).parent))
from test_sweep import FIGURE1, PROGRAMS, stand_in_config, tiny_graph, toml_list, write_config  # noqa: E402
from test_grade import config as grade_config, needs_cc, results as grade_results  # noqa: E402
from test_grade import submission as grade_submission  # noqa: E402

try:
    import distributed
except ImportError:
    distributed = None
needs_dask = pytest.mark.skipif(distributed is None, reason="dask[distributed] is not installed "
                                "(pip install -e '.[test]' installs it)")

FIVE_CONFIGS = "[[256, 8], [384, 5], [512, 4], [768, 2], [1024, 2]]"
MIXED = {"ok": "ok", "wrong": "wrong", "crash": "crash", "nofile": "no_output", "notiming": "malformed"}


@pytest.fixture(autouse=True)
def _cpu(tmp_path, monkeypatch):
    monkeypatch.setenv("SSSP_DEVICE", "cpu")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.delenv("FAKE_SLEEP", raising=False)


ROOT = Path(__file__).resolve().parents[1]


def config_with(tmp_path: Path, graphs, methods, extra: str = "", configs: str = "[[256, 8]]") -> Path:
    """Stand-in programs given extra arguments (the runner scrubs the environment, so no FAKE_*)."""
    template = (f"{{python}} {shlex.quote(str(PROGRAMS))}/{{method}}.py --input {{input}} --output {{output}} "
                f"--sync {{sync}} {extra}")
    tables = "".join(f'[methods.{m}]\norderings = ["given"]\nsyncs = ["outcore"]\n' for m in methods)
    return write_config(tmp_path, f"""
graphs = {toml_list(graphs)}
configs = {configs}
orderings = ["given"]
timeout_s = 30
[program]
label = "stand-ins"
command = {json.dumps(template)}
{tables}""", name="x")


def local_worker_pids() -> list[int]:
    """This process's children started by multiprocessing's spawn (the local executor's workers)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or int(entry.joinpath("stat").read_text().rsplit(")", 1)[1].split()[1]) != os.getpid():
                continue
            if b"spawn_main" in entry.joinpath("cmdline").read_bytes():
                pids.append(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue
    return pids


def kill_when(results: Path, find_pid, killed: list) -> threading.Thread:
    """A thread that SIGKILLs one worker once two rows are written (so mid-sweep, mid-run)."""
    def kill():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(read_rows(results, warn=None)) < 2:
            time.sleep(0.05)
        pid = find_pid()
        if pid:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


def statuses(path: Path) -> dict:
    return {(r["program"], r["graph"], r["ordering"], r["method"], r["sync"], r["bsize"]): r["status"]
            for r in read_rows(path)}


def assert_each_cell_once(path: Path, expected: int) -> list[dict]:
    rows = read_rows(path)
    ids = Counter(r["run_id"] for r in rows)
    assert len(ids) == expected and max(ids.values()) == 1, ids.most_common(3)
    return rows


# --- choosing workers -------------------------------------------------------------------

def test_visible_gpus_follow_cuda_visible_devices_and_sssp_device():
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "0,1"}) == ["0", "1"]
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "GPU-ab12, 3"}) == ["GPU-ab12", "3"]
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "2,-1,3"}) == ["2"]
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": ""}) == []
    assert visible_gpus({"SSSP_DEVICE": "cpu", "CUDA_VISIBLE_DEVICES": "0"}) == []
    assert visible_gpus({}, probe=lambda: ["0", "1", "2"]) == ["0", "1", "2"]


def test_worker_counts_are_checked():
    with pytest.raises(ExecutorUnavailable, match="only 2 GPU"):
        open_executor("local", print, workers=3, gpus=["0", "1"])
    with pytest.raises(ExecutorUnavailable, match="CPU workers"):
        open_executor("local", print, workers=3, gpus=[])
    with pytest.raises(ExecutorUnavailable, match="at least 1"):
        open_executor("local", print, workers=0, gpus=[])
    one = open_executor("local", print, gpus=[])
    assert one.workers == 1 and "this process" in one.describe()
    one.close()


def test_dask_missing_is_one_line_saying_how_to_install(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)     # as if not installed
    config = stand_in_config(tmp_path, [FIGURE1], methods={"ok": "ok"})
    code = sweep.run(config=config, results=tmp_path / "r.jsonl", quiet=True, executor="dask",
                     scheduler="tcp://127.0.0.1:1")
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "pip install 'dask[distributed]" in err and read_rows(tmp_path / "r.jsonl") == []


def test_inputs_changed_on_the_way_fail_that_run_loudly(tmp_path):
    import numpy as np
    shipped = ship_reference(np.arange(5, dtype=np.int64), tmp_path / "share")
    assert arrival_problem(shipped) == ""
    assert "not on this worker" in arrival_problem(Shipped(tmp_path / "absent.npy", shipped.digest))
    other = tmp_path / "other.npy"
    other.write_bytes(b"x" * 10)
    assert "differs from the grader's" in arrival_problem(Shipped(other, shipped.digest))


def test_a_frozen_reference_is_shipped_once_per_process(tmp_path, monkeypatch):
    import numpy as np
    from grader.sweep.cellrun import freeze
    from grader.sweep.executors import celltask
    frozen, writable = freeze(np.arange(5)), np.arange(5, dtype=np.int64)
    writes = []
    real = celltask._write_reference
    monkeypatch.setattr(celltask, "_write_reference", lambda d, f: writes.append(1) or real(d, f))
    first = ship_reference(frozen, tmp_path / "share")
    assert ship_reference(frozen, tmp_path / "share") == first and len(writes) == 1   # grade: per submission
    first.path.unlink()                                                                # gone: written again
    assert ship_reference(frozen, tmp_path / "share") == first and first.path.is_file() and len(writes) == 2
    assert ship_reference(frozen, tmp_path / "other") != first and len(writes) == 3
    ship_reference(writable, tmp_path / "share"), ship_reference(writable, tmp_path / "share")
    assert len(writes) == 5                                                            # could change: every time


def test_records_name_their_worker_and_gpu():
    record = RunRecord.from_dict({"run_id": "a", "graph": "g", "ordering": "given", "method": "bmf",
                                  "sync": "outcore", "bsize": 1, "bcount": 1, "rep": 0, "status": "ok",
                                  "worker": "local-1@h", "gpu": "1"})
    assert (record.worker, record.gpu, record.extra) == ("local-1@h", "1", {})


# --- local worker processes ----------------------------------------------------------------

def test_two_local_workers_give_the_serial_statuses(tmp_path, capsys):
    graphs = [FIGURE1, tiny_graph(tmp_path)]
    config = stand_in_config(tmp_path, graphs, methods=MIXED)
    serial, parallel = tmp_path / "serial.jsonl", tmp_path / "parallel.jsonl"
    assert sweep.run(config=config, results=serial, quiet=True, shrink=False) == 1
    assert sweep.run(config=config, results=parallel, quiet=True, workers=2, shrink=False) == 1
    assert statuses(parallel) == statuses(serial) and len(statuses(serial)) == 10
    rows = assert_each_cell_once(parallel, 10)
    assert {r["worker"].split("@")[0] for r in rows} == {"local-0", "local-1"}
    assert {r["gpu"] for r in rows} == {""}
    assert {r["worker"] for r in read_rows(serial)} == {f"local-0@{socket.gethostname()}"}
    capsys.readouterr()


def test_a_local_worker_killed_mid_sweep_loses_nothing_and_doubles_nothing(tmp_path, capsys):
    config = config_with(tmp_path, [FIGURE1, tiny_graph(tmp_path)], ["showgpu"], extra="--sleep 0.3",
                         configs=FIVE_CONFIGS)
    results, killed = tmp_path / "r.jsonl", []
    killer = kill_when(results, lambda: next(iter(local_worker_pids()), None), killed)
    assert sweep.run(config=config, results=results, quiet=True, workers=2) == 0
    killer.join(timeout=30)
    assert killed, "no worker was killed"
    rows = assert_each_cell_once(results, 10)
    assert {r["status"] for r in rows} == {"ok"}
    said = capsys.readouterr().err
    for row in rows:          # a cell its worker died under ran again, and the sweep said so
        if row.get("attempts", 1) > 1:
            assert "its worker died; ran again" in said


def test_a_program_that_kills_its_worker_is_recorded_as_failed_and_the_sweep_goes_on(tmp_path, capsys):
    config = config_with(tmp_path, [FIGURE1], ["ok", "killworker"])
    results = tmp_path / "r.jsonl"
    assert sweep.run(config=config, results=results, quiet=True, workers=2, shrink=False) == 1
    rows = {r["method"]: r for r in assert_each_cell_once(results, 2)}
    assert rows["ok"]["status"] == "ok" and rows["killworker"]["status"] == "crash"
    assert "died 3 times" in rows["killworker"]["detail"]
    capsys.readouterr()


def test_shrinking_a_program_that_kills_its_parent_leaves_the_grader_standing(tmp_path, capsys):
    """The shrinker runs candidates many times after the sweep: in a process of its own, so a
    program that kills its parent takes only that process."""
    config = config_with(tmp_path, [FIGURE1], ["ok", "killworker"])    # it answers for ok: worth shrinking
    assert sweep.run(config=config, results=tmp_path / "r.jsonl", quiet=True, workers=2) == 1
    said = capsys.readouterr()
    assert "not shrunk: the process running the candidates died" in said.err


def test_stopping_a_sweep_with_workers_stops_their_programs_and_it_resumes(tmp_path):
    log = tmp_path / "logs"
    log.mkdir()
    config = config_with(tmp_path, [FIGURE1, tiny_graph(tmp_path)], ["showgpu"], configs=FIVE_CONFIGS,
                         extra=f"--sleep 0.6 --logdir {shlex.quote(str(log))}")
    results = tmp_path / "r.jsonl"
    command = [sys.executable, "-m", "grader", "sweep", "--config", str(config), "--results", str(results),
               "--workers", "2", "-q"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(read_rows(results, warn=None)) < 2:
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    first = read_rows(results)
    assert 2 <= len(first) < 10
    time.sleep(0.3)
    assert not programs_running(str(log)), "a worker's program outlived the sweep"
    rerun = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert_each_cell_once(results, 10)


def programs_running(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in entry.joinpath("cmdline").read_bytes() \
                    and entry.joinpath("stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
                found.append(int(entry.name))
        except (OSError, IndexError):
            continue
    return found


def test_each_local_worker_sees_only_its_gpu_and_runs_never_overlap(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("SSSP_DEVICE")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5,7")   # two "GPUs"; the stand-in only reads the variable
    log = tmp_path / "logs"
    log.mkdir()
    config = config_with(tmp_path, [FIGURE1], ["showgpu"], extra=f"--sleep 0.1 --logdir {shlex.quote(str(log))}",
                         configs=FIVE_CONFIGS)
    results = tmp_path / "r.jsonl"
    assert sweep.run(config=config, results=results, quiet=True) == 0
    rows = assert_each_cell_once(results, 5)
    assert {r["gpu"] for r in rows} == {"5", "7"}
    for row in rows:
        assert row["device"] == f"Fake GPU {row['gpu']}"      # the program saw its GPU and no other
    spans: dict[str, list] = {}
    for line in (entry.read_text().strip() for entry in log.iterdir()):
        gpu, began, ended = line.split()
        spans.setdefault(gpu, []).append((float(began), float(ended)))
    assert sorted(spans) == ["5", "7"]
    for runs in spans.values():
        runs.sort()
        assert all(earlier[1] <= later[0] for earlier, later in zip(runs, runs[1:]))
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "5,7"
    capsys.readouterr()


@needs_cc
def test_grading_with_two_workers_gives_the_serial_scores(tmp_path, capsys):
    subs = tmp_path / "subs"
    for name in ("spec_ok", "wrong_one"):
        grade_submission(subs, name)
    matrix = grade_config(tmp_path)
    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    assert grade.run([subs], out=serial, config=matrix, quiet=True, shrink=False) == 0
    assert grade.run([subs], out=parallel, config=matrix, quiet=True, workers=2, shrink=False) == 0
    for student in ("spec_ok", "wrong_one"):
        assert grade_results(parallel, student)["score"] == grade_results(serial, student)["score"]
    assert statuses(parallel / "runs.jsonl") == statuses(serial / "runs.jsonl")
    rows = assert_each_cell_once(parallel / "runs.jsonl", 32)
    assert {r["worker"].split("@")[0] for r in rows} == {"local-0", "local-1"}
    assert {r["student"] for r in rows} == {"spec_ok", "wrong_one"}
    capsys.readouterr()


# --- Dask ---------------------------------------------------------------------------------

@pytest.fixture
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, resources={"GPU": 1},
                                  dashboard_address=None, host="127.0.0.1") as local:
        with distributed.Client(local) as client:
            yield local, client


@needs_dask
def test_a_dask_cluster_gives_the_serial_statuses(tmp_path, cluster, capsys):
    local, _ = cluster
    config = stand_in_config(tmp_path, [FIGURE1, tiny_graph(tmp_path)], methods=MIXED)
    serial, spread = tmp_path / "serial.jsonl", tmp_path / "dask.jsonl"
    assert sweep.run(config=config, results=serial, quiet=True, shrink=False) == 1
    assert sweep.run(config=config, results=spread, quiet=True, executor="dask",
                     scheduler=local.scheduler_address, shrink=False) == 1
    assert statuses(spread) == statuses(serial)
    rows = assert_each_cell_once(spread, 10)
    assert all("tcp://127.0.0.1:" in r["worker"] for r in rows)
    capsys.readouterr()


@needs_dask
def test_a_dask_worker_killed_mid_sweep_loses_nothing(tmp_path, cluster, capsys):
    local, client = cluster
    config = config_with(tmp_path, [FIGURE1, tiny_graph(tmp_path)], ["showgpu"], extra="--sleep 0.4",
                         configs=FIVE_CONFIGS)
    results, killed = tmp_path / "r.jsonl", []

    def busy_worker_pid():
        busy = client.processing()
        address = next((a for a, keys in busy.items() if keys), None) or next(iter(busy))
        return client.run(os.getpid, workers=[address])[address]

    killer = kill_when(results, busy_worker_pid, killed)
    assert sweep.run(config=config, results=results, quiet=True, executor="dask",
                     scheduler=local.scheduler_address) == 0
    killer.join(timeout=30)
    assert killed, "no worker was killed"
    rows = assert_each_cell_once(results, 10)
    assert {r["status"] for r in rows} == {"ok"}
    capsys.readouterr()
