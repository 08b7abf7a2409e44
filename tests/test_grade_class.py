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
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_finding_flows_into_results_json_and_the_class_page(tmp_path, capsys, jobs):
    subs = tmp_path / "subs"
    for name in ("spec_ok", "wrong_one"):
        submission(subs, name)
    out = tmp_path / "out"
    code = grade.run([subs], out=out, config=config(tmp_path), quiet=True, sanitizer=str(FAKE_SANITIZER), jobs=jobs)
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


CLASS_GPU = Path(__file__).resolve().parent / "fixtures" / "class_gpu"


def planted_line(student: str) -> str:
    for number, line in enumerate((CLASS_GPU / student / "sssp.cu").read_text().splitlines(), 1):
        if "PLANTED" in line and not line.lstrip().startswith("//"):
            return f"sssp.cu:{number}"
    raise AssertionError(f"no planted line in {student}")


@pytest.mark.gpu
def test_a_cuda_class_is_graded_with_findings_page_and_similarity(tmp_path, capsys):
    """On the GPU machine: four CUDA submissions (tests/fixtures/class_gpu: ana right, ben's tpe
    wrong with an out-of-bounds write, cam right with a shared-memory race under -usesmem yes,
    dot = ana renamed and reordered), graded 4 at a time with diagnosis."""
    import shutil as _shutil
    nvcc = _shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(nvcc).exists():
        pytest.fail("nvcc is not on this GPU machine")
    path = tmp_path / "grading.toml"
    base = config(tmp_path, timeout=60).read_text()
    # segscan is bmf with --usesmem yes: the template must pass it on, or cam's shared pass never runs
    base = base.replace("--sync {sync}\"", "--sync {sync} --usesmem {usesmem}\"")
    assert "--usesmem {usesmem}" in base
    path.write_text(base.replace("[methods.tpe]", '[methods.segscan]\nrun_as = "bmf"\nusesmem = "yes"\n'
                                 'orderings = ["destination"]\nsyncs = ["outcore"]\n[methods.tpe]'))
    out = tmp_path / "out"
    assert grade.run([CLASS_GPU], out=out, config=path, quiet=True, nvcc=nvcc, jobs=4) == 0, capsys.readouterr()
    ben = json.loads((out / "ben" / "diagnosis.json").read_text())
    cam = json.loads((out / "cam" / "diagnosis.json").read_text())
    print(json.dumps({"ben": ben["findings"], "cam": cam["findings"], "ben_skipped": ben["skipped"],
                      "cam_skipped": cam["skipped"], "lineinfo": [ben["lineinfo"], cam["lineinfo"]]}, indent=1)[:6000])
    refused = [s["why"] for s in ben["skipped"] if "refused" in s["why"] or "no GPU" in s["why"]]
    if refused:
        pytest.skip(f"compute-sanitizer cannot run here: {refused[0]}")
    writes = [f for f in ben["findings"] if f["tool"] == "memcheck" and f["method"] == "tpe"
              and f["kind"].startswith("Invalid __global__ write")]
    assert writes and writes[0]["location"] == planted_line("ben") and writes[0]["kernel"] == "mark_touched"
    races = [f for f in cam["findings"] if f["tool"] == "racecheck" and f["method"] == "segscan"]
    assert races and races[0]["severity"] == "warning" and races[0]["kernel"] == "block_minimum"
    assert planted_line("cam") in (races[0]["location"], races[0]["other_location"])
    assert not json.loads((out / "ana" / "diagnosis.json").read_text()).get("findings") \
        if (out / "ana" / "diagnosis.json").exists() else True
    pairs = json.loads((out / "similarity.json").read_text())["pairs"]
    assert {pairs[0]["a"], pairs[0]["b"]} == {"ana", "dot"}
    page = (out / "index.html").read_text()
    assert "mark_touched" in page and "block_minimum" in page and 'href="dot/index.html"' in page


def test_sample_code_must_be_a_folder(tmp_path, capsys):
    subs = submission(tmp_path / "subs", "spec_ok")
    assert grade.run([subs], out=tmp_path / "out", config=config(tmp_path), sample_code=tmp_path / "nope") == 2
    assert "--sample-code" in capsys.readouterr().err


@needs_cc
def test_a_late_student_is_compared_with_the_whole_class(tmp_path):
    subs = tmp_path / "subs"
    for name in ("spec_ok", "wrong_one"):
        submission(subs, name)
    out = tmp_path / "out"
    cfg = config(tmp_path)
    assert grade.run([subs], out=out, config=cfg, quiet=True, diagnose=False) == 0
    late = submission(tmp_path / "late", "real_formats")
    assert grade.run([late], out=out, config=cfg, quiet=True, diagnose=False) == 0
    data = json.loads((out / "similarity.json").read_text())
    assert data["students"] == ["real_formats", "spec_ok", "wrong_one"] and len(data["pairs"]) == 3


def test_the_report_takes_no_time_from_a_run_that_shared_the_gpu():
    from report.load import to_frame
    base = {"graph": "g", "method": "bmf", "sync": "outcore", "bsize": 256, "bcount": 8, "rep": 0, "status": "ok",
            "computation_ms": 1.5, "filtering_ms": 0.0, "wall_s": 0.4}
    frame = to_frame([{**base, "run_id": "a", "ran_alone": True}, {**base, "run_id": "b", "ran_alone": False},
                      {**base, "run_id": "c"}])
    times = dict(zip(frame["run_id"], frame["computation_ms"]))
    assert times["a"] == 1.5 and times["c"] == 1.5 and times["b"] != times["b"]   # NaN: not reported
    assert list(frame["status"]) == ["ok", "ok", "ok"]                            # its answers still count
