"""grader grade's class features end to end on the CPU: a compute-sanitizer finding (from a
stand-in tool that writes the real tool's report format) flows into the failing student's
results.json, diagnosis.json and the class page; a passing student gets no diagnosis; the
similarity table and DIR/index.html are written; --jobs grades the same as one at a time."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from grader.commands import grade
from grader.grading.diagnosis import TEST_NAME

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_grade import config, needs_cc, results, submission  # noqa: E402

FAKE_SANITIZER = Path(__file__).resolve().parent / "fixtures" / "fake-compute-sanitizer"


@needs_cc
def test_a_finding_flows_into_results_json_and_the_class_page(tmp_path, capsys):
    subs = tmp_path / "subs"
    for name in ("spec_ok", "wrong_one"):
        submission(subs, name)
    out = tmp_path / "out"
    code = grade.run([subs], out=out, config=config(tmp_path), quiet=True, sanitizer=str(FAKE_SANITIZER))
    assert code == 0, capsys.readouterr()
    wrong = results(out, "wrong_one")
    test = next(t for t in wrong["tests"] if t["name"] == TEST_NAME)
    assert test["score"] == 0 and test["max_score"] == 0                         # information only
    assert "memcheck: Invalid __global__ write of size 4 bytes in kernel relax at sssp.c:12" in test["output"]
    assert "the run's verdict: wrong" in test["output"]
    diagnosis = json.loads((out / "wrong_one" / "diagnosis.json").read_text())
    first = diagnosis["findings"][0]
    assert (first["tool"], first["method"], first["graph"], first["location"]) == ("memcheck", "bmf", "tiny", "sssp.c:12")
    assert diagnosis["tool_runs"][0]["status"] == "ran" and diagnosis["lineinfo"].startswith("no nvcc line")
    # what did not fit in 25 % of the student's grading time is listed, not silently dropped
    assert len(diagnosis["tool_runs"]) + len(diagnosis["skipped"]) == diagnosis["targets"]
    assert diagnosis["seconds"] <= diagnosis["budget_s"] + 5
    # right answers: nothing to diagnose (no __shared__ in the C source), so no test
    assert all(t["name"] != TEST_NAME for t in results(out, "spec_ok")["tests"])
    page = (out / "index.html").read_text()
    assert "sssp.c:12" in page and 'href="wrong_one/index.html"' in page
    pairs = json.loads((out / "similarity.json").read_text())["pairs"]
    assert len(pairs) == 1 and {pairs[0]["a"], pairs[0]["b"]} == {"spec_ok", "wrong_one"}
    assert pairs[0]["score"] > 0.9        # the two fixtures share their C source (one -D flag apart)


@needs_cc
def test_jobs_grade_the_same_as_one_at_a_time(tmp_path):
    subs = tmp_path / "subs"
    for name in ("spec_ok", "wrong_one", "crash_some"):
        submission(subs, name)
    scores = {}
    for jobs in (1, 3):
        out = tmp_path / f"out{jobs}"
        assert grade.run([subs], out=out, config=config(tmp_path), quiet=True, jobs=jobs, diagnose=False) == 0
        scores[jobs] = {s: results(out, s)["score"] for s in ("spec_ok", "wrong_one", "crash_some")}
        rows = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
        if jobs > 1:   # only the largest graph's runs had the machine alone, and only they are ranked
            assert {r["graph"] for r in rows if r["ran_alone"]} == {"tiny"}
            assert {r["graph"] for r in rows if not r["ran_alone"]} == {"figure1"}
            board = (out / "leaderboard.csv").read_text()
            assert "figure1" not in board and "tiny" in board
    assert scores[1] == scores[3]


def test_jobs_must_be_positive(tmp_path, capsys):
    subs = submission(tmp_path / "subs", "spec_ok")
    assert grade.run([subs], out=tmp_path / "out", config=config(tmp_path), jobs=0) == 2
    assert "--jobs 0" in capsys.readouterr().err
