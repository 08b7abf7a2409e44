"""Hostile stdout graded through `grade` beside a control (issue 37): the fixture hostile_stdout
answers exactly as wrong_one does and adds a timing line of 65,000 blanks (minutes of grader CPU
per run before) and `rounds:` with 5,000 digits (a harness failure before, which the rubric then
dropped: a higher score, and a pass through rubric-gate.toml). Now it scores what wrong_one
scores under both rubrics, its rounds unreadable, no run a harness failure."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_grade import FAKE_NVCC, ROOT, config, needs_cc, results, rows_of, submission  # noqa: E402

from grader.commands import grade  # noqa: E402


@needs_cc
def test_hostile_stdout_scores_as_its_wrong_answers_under_both_rubrics(tmp_path, capsys):
    subs = tmp_path / "subs"
    for name in ("wrong_one", "hostile_stdout"):
        submission(subs, name)
    out = tmp_path / "graded"
    code = grade.run([subs], out=out, config=config(tmp_path), quiet=True, nvcc=str(FAKE_NVCC), shrink=False,
                     diagnose=False)
    assert code == 0, capsys.readouterr()
    hostile, control = rows_of(out, "hostile_stdout"), rows_of(out, "wrong_one")
    assert len(hostile) == len(control) == 16
    assert not any(str(r["detail"]).startswith("harness:") for r in hostile)
    assert sorted(r["status"] for r in hostile) == sorted(r["status"] for r in control)
    assert all(r["rounds"] is None and any(n.startswith("rounds unreadable") for n in r["unreadable"])
               for r in hostile if r["status"] in ("ok", "wrong"))
    assert results(out, "hostile_stdout")["score"] == results(out, "wrong_one")["score"] == 35
    # the spec's literal rule: rescored from the same runs (none is run again)
    code = grade.run([subs], out=out, config=config(tmp_path), quiet=True, nvcc=str(FAKE_NVCC), shrink=False,
                     diagnose=False, rubric=ROOT / "configs" / "rubric-gate.toml")
    assert code == 0
    assert results(out, "hostile_stdout")["score"] == results(out, "wrong_one")["score"] == 0
    assert len(rows_of(out, "hostile_stdout")) == 16
