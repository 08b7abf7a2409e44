"""grade --mps on the CPU, with the stand-in control binary (tests/fixtures/fake-mps): each
student's runs are clients of their own daemon (their uid, its folders in their jails), scores
match a grade without MPS, every row says which it was, a daemon killed mid-student loses no
student's results (the runs it cost are run again after a restart, and say so), and nothing of a
daemon outlives its student's turn. A missing binary or a bad `[grading] mps` is one line, exit 2."""
from __future__ import annotations

import io
import json
import os
import shutil
import signal
from pathlib import Path

import pytest

from grader.grading import mps_turn
from grader.grading.classgrade import grade_class
from grader.jail import mps

ROOT = Path(__file__).resolve().parents[1]
FAKE = ROOT / "tests" / "fixtures" / "fake-mps"
CONFIG = ROOT / "examples" / "grading.toml"
pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="the jail needs root"),
              pytest.mark.skipif(not all(shutil.which(t) for t in ("cc", "make", "flock")), reason="needs cc, make, flock")]


def mps_class(top: Path) -> Path:
    """Two students of examples/class (right, wrong) built with the fake client check."""
    folder = top / "class"
    for name in ("right", "wrong"):
        student = folder / name
        student.mkdir(parents=True)
        shutil.copy(ROOT / "examples" / "class" / name / "sssp.c", student / "sssp.c")
        shutil.copy(FAKE / "Makefile", student / "Makefile")
        shutil.copy(FAKE / "mps_check.h", student / "mps_check.h")
    return folder


def graded(submissions: Path, out: Path, **options) -> tuple[int, str]:
    err = io.StringIO()
    code = grade_class([submissions], out, config=CONFIG, quiet=True, diagnose=False, shrink=False,
                       stdout=io.StringIO(), err=err, **options)
    return code, err.getvalue()


def latest_rows(out: Path) -> dict:
    rows = {}
    for line in (out / "runs.jsonl").read_text().splitlines():
        row = json.loads(line)
        rows[row["run_id"]] = row
    return rows


def scores(out: Path) -> dict:
    return {folder.name: [(t["name"], t["score"]) for t in json.loads((folder / "results.json").read_text())["tests"]]
            for folder in sorted(out.iterdir()) if (folder / "results.json").exists()}


@pytest.fixture
def fake_daemon(monkeypatch):
    monkeypatch.setenv(mps.ENV_VAR, str(FAKE / "nvidia-cuda-mps-control"))
    started, stopped = [], []
    real_start, real_stop = mps.start, mps.Daemon.stop

    def start(*args, **kwargs):
        daemon = real_start(*args, **kwargs)
        started.append(daemon)
        return daemon

    def stop(self, **options):
        left = real_stop(self, **options)
        if not options.get("clients_running"):   # a turn's end: checked while the turn still holds the uid
            stopped.append((self.uid, left, mps.living(self.uid)))
        return left

    monkeypatch.setattr(mps, "start", start)
    monkeypatch.setattr(mps.Daemon, "stop", stop)
    return started, stopped


def test_mps_grades_as_without_it_and_leaves_nothing(tmp_path, fake_daemon):
    started, stopped = fake_daemon
    submissions = mps_class(tmp_path)
    code, said = graded(submissions, tmp_path / "mps", mps=True, jobs=2)
    assert code == 0, said
    plain_code, plain_said = graded(submissions, tmp_path / "plain", jobs=2)
    assert plain_code == 0, plain_said
    assert scores(tmp_path / "mps") == scores(tmp_path / "plain")
    assert (tmp_path / "mps" / "gradebook.csv").read_text() == (tmp_path / "plain" / "gradebook.csv").read_text()
    with_mps, without = latest_rows(tmp_path / "mps"), latest_rows(tmp_path / "plain")
    assert len(with_mps) == len(without) == 52
    assert all(row["mps"] is True for row in with_mps.values())          # every run an MPS client
    assert all(row["mps"] is False for row in without.values())
    assert {r["run_id"]: (r["status"], r["distances"]) for r in with_mps.values()} == \
        {r["run_id"]: (r["status"], r["distances"]) for r in without.values()}
    uids_used = {row["protections"]["jail"]["uid"] for row in with_mps.values()}
    assert len(started) == 2 and uids_used == {d.uid for d in started}   # each student's runs: their daemon's uid
    assert [(left, alive) for _, left, alive in stopped] == [([], [])] * 2     # one daemon per student, all gone
    assert not any(d.folder.exists() for d in started)


def test_a_daemon_killed_mid_student_loses_no_results(tmp_path, fake_daemon, monkeypatch):
    started, stopped = fake_daemon
    real_label = mps_turn.Turn.label
    seen = {"rows": 0}

    def label(self, row, generation):   # after the first student's 2nd row: kill their daemon
        seen["rows"] += 1
        if seen["rows"] == 2:
            os.kill(int((self.daemon.log / "daemon.pid").read_text()), signal.SIGKILL)
            for _ in range(400):
                if not self.daemon.alive():
                    break
                mps.time.sleep(0.01)
        return real_label(self, row, generation)

    monkeypatch.setattr(mps_turn.Turn, "label", label)
    submissions = mps_class(tmp_path)
    code, said = graded(submissions, tmp_path / "mps", mps=True, jobs=1)
    assert code == 0, said
    monkeypatch.setattr(mps_turn.Turn, "label", real_label)
    plain_code, _ = graded(submissions, tmp_path / "plain", jobs=1)
    assert plain_code == 0
    assert scores(tmp_path / "mps") == scores(tmp_path / "plain")        # no student lost a run to MPS
    rows = latest_rows(tmp_path / "mps")
    assert len(rows) == 52
    rerun = [r for r in rows.values() if r.get("mps_rerun")]
    assert rerun and all("MPS" in r["mps_rerun"] for r in rerun)
    assert all(r["status"] == "ok" for r in rerun if r["student"] == "right")
    killed_student = rerun[0]["student"]
    notes = json.loads((tmp_path / "mps" / killed_student / "results.json").read_text())["mps"]
    assert any("started again" in note for note in notes)
    assert "started again" in said
    assert all(left == [] and alive == [] for _, left, alive in stopped)


def test_a_missing_daemon_refuses_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.setenv(mps.ENV_VAR, str(tmp_path / "no-such-mps-control"))
    code, said = graded(mps_class(tmp_path), tmp_path / "out", mps=True)
    assert code == 2
    assert said.count("\n") == 1 and "--mps" in said and "no-such-mps-control" in said
    assert not (tmp_path / "out").exists()


def test_grading_mps_must_be_true_or_false(tmp_path):
    config = tmp_path / "grading.toml"
    text = CONFIG.read_text().replace('rubric = "../configs/rubric.toml"',
                                      f'rubric = "{ROOT / "configs" / "rubric.toml"}"\nmps = "yes"')
    config.write_text(text.replace('"graphs/detour.txt"', f'"{ROOT / "examples" / "graphs" / "detour.txt"}"'))
    err = io.StringIO()
    code = grade_class([mps_class(tmp_path)], tmp_path / "out", config=config, stdout=io.StringIO(), err=err)
    assert code == 2 and "grading.mps must be true or false" in err.getvalue() and str(config) in err.getvalue()


def test_grade_speed_copies_the_class_and_compares_with_and_without_mps(tmp_path, fake_daemon, capsys):
    from benchmarks import grade_speed
    source = tmp_path / "source"
    for name in ("right", "wrong"):
        shutil.copytree(ROOT / "examples" / "class" / name, source / name)
    code = grade_speed.main([str(source), "--students", "3", "--mps", "--jobs", "2", "--config", str(CONFIG),
                             "--out", str(tmp_path / "speed")])
    said = capsys.readouterr().out
    assert code == 0, said
    assert sorted(p.name for p in (tmp_path / "speed" / "class-3").iterdir()) == ["s000-right", "s001-wrong", "s002-right"]
    assert "grade_speed: mps" in said and "jobs vs mps: gradebook and every verdict identical" in said
    rows = latest_rows(tmp_path / "speed" / "mps")
    assert len(rows) == 3 * 26 and all(r["mps"] is True for r in rows.values())
    # a verdict that differs is found and named
    runs = tmp_path / "speed" / "mps" / "runs.jsonl"
    first = json.loads(runs.read_text().splitlines()[0])
    runs.write_text(runs.read_text() + json.dumps({**first, "status": "wrong", "distances": "wrong"}) + "\n")
    found = grade_speed.differences(tmp_path / "speed" / "jobs", tmp_path / "speed" / "mps")
    assert len(found) == 1 and first["student"] in found[0] and "wrong" in found[0]
