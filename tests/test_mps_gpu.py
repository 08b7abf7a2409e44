"""grade --mps with the real nvidia-cuda-mps-control on a GPU (make test-gpu; the coordinator runs
it on an H100): two CUDA students of tests/fixtures/class_gpu (ana right, ben's tpe wrong) graded
with and without MPS get the same scores and run verdicts, every MPS row is an MPS client's, and
a daemon killed in the middle of a student's runs loses no results and leaves no process of the
student's uid. Skips, saying why, where there is no daemon binary, no nvcc, or where MPS refuses
(H200 machines run under gVisor): a grade whose MPS runs all fell back to plain runs says so."""
from __future__ import annotations

import io
import json
import os
import shutil
import signal
import statistics
import sys
from pathlib import Path

import pytest

from grader.grading import mps_turn
from grader.grading.classgrade import grade_class
from grader.jail import mps

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_grade import config  # noqa: E402
from test_mps_grade import latest_rows as latest  # noqa: E402

CLASS_GPU = Path(__file__).resolve().parent / "fixtures" / "class_gpu"
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(os.geteuid() != 0, reason="the jail and MPS per uid need root")]


def nvcc() -> str:
    found = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(found).exists():
        pytest.skip("no nvcc on this machine")
    return found


def tiny_class(top: Path) -> Path:
    folder = top / "class"
    for name in ("ana", "ben"):
        shutil.copytree(CLASS_GPU / name, folder / name)
    return folder


def graded(submissions: Path, out: Path, cfg: Path, **options) -> tuple[int, str]:
    err = io.StringIO()
    code = grade_class([submissions], out, config=cfg, quiet=True, nvcc=nvcc(), diagnose=False, shrink=False,
                       stdout=io.StringIO(), err=err, **options)
    return code, err.getvalue()


def scores(out: Path) -> dict:
    return {name: json.loads((out / name / "results.json").read_text())["score"] for name in ("ana", "ben")}


def verdicts(rows: dict) -> dict:
    return {key: (r["status"], r["distances"]) for key, r in rows.items()}


def refused_here(rows: dict, out: Path, said: str) -> str:
    """'' when every MPS row was an MPS client's; else why MPS did not serve (to skip with)."""
    if all(r.get("mps") is True for r in rows.values()):
        return ""
    notes = [n for name in ("ana", "ben") for n in json.loads((out / name / "results.json").read_text()).get("mps", [])]
    return "; ".join(notes)[:500] or said[-500:] or "MPS rows fell back to plain runs"


@pytest.fixture
def stopped(monkeypatch):
    found = []
    real_stop = mps.Daemon.stop

    def stop(self, **options):
        left = real_stop(self, **options)
        said = ""
        for name in ("control.log", "server.log"):    # what the daemon and its server logged (bounded)
            try:
                with open(self.log / name, "rb") as handle:
                    said += handle.read(1 << 20).decode("utf-8", "replace").lower()
            except OSError:
                pass
        if not options.get("clients_running"):   # a turn's end (not a restart with runs in flight)
            found.append((self.uid, left, mps.living(self.uid), said.count("client")))
        return left

    monkeypatch.setattr(mps.Daemon, "stop", stop)
    return found


def test_mps_grade_matches_plain_and_survives_a_killed_daemon(tmp_path, stopped, monkeypatch):
    if why := mps.unavailable():
        pytest.skip(f"no MPS here: {why}")
    cfg = config(tmp_path, timeout=30)    # a client that cannot reach MPS must not hold the call for minutes
    submissions = tiny_class(tmp_path)
    code, said = graded(submissions, tmp_path / "plain", cfg, jobs=4)
    assert code == 0, said
    code, said = graded(submissions, tmp_path / "mps", cfg, jobs=4, mps=True)
    assert code == 0, said
    plain, with_mps = latest(tmp_path / "plain"), latest(tmp_path / "mps")
    if why := refused_here(with_mps, tmp_path / "mps", said):
        pytest.skip(f"MPS did not serve the runs on this machine: {why}")
    assert verdicts(with_mps) == verdicts(plain) and scores(tmp_path / "mps") == scores(tmp_path / "plain")
    assert all(r["mps"] is False for r in plain.values())
    assert all(left == [] and alive == [] for _, left, alive, _ in stopped)   # nothing of a daemon's uid left
    if not all(clients for *_, clients in stopped):   # CUDA would run a client that never reached it plainly
        pytest.skip(f"the MPS daemons' logs name no client: the runs did not reach MPS here ({stopped})")
    for mode, rows in (("plain", plain), ("mps", with_mps)):     # for the report: kernel times, alone runs
        times = [r["computation_ms"] for r in rows.values() if r.get("ran_alone") and r.get("computation_ms")]
        print(f"{mode}: {len(times)} timing runs, median kernel {statistics.median(times) if times else 0:.3f} ms")

    real_label = mps_turn.Turn.label
    seen = {"rows": 0}

    def label(self, row, generation):   # the first student's daemon killed after their 2nd row
        seen["rows"] += 1
        if seen["rows"] == 2 and self.daemon is not None:
            for pid in self.daemon.pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        return real_label(self, row, generation)

    monkeypatch.setattr(mps_turn.Turn, "label", label)
    code, said = graded(submissions, tmp_path / "killed", cfg, jobs=4, mps=True)
    assert code == 0, said
    killed = latest(tmp_path / "killed")
    assert verdicts(killed) == verdicts(plain) and scores(tmp_path / "killed") == scores(tmp_path / "plain")
    assert all(left == [] and alive == [] for _, left, alive, _ in stopped)
    print(f"killed daemon: {sum(1 for r in killed.values() if r.get('mps_rerun'))} runs re-run, "
          f"{sum(1 for r in killed.values() if r.get('mps') is False)} not counted as MPS clients; {said[-400:]}")
