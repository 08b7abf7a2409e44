"""[grading] reruns: "first-right" skips a setting's other configurations once its first is right,
only under a rubric that scores each setting once (correctness.configurations = "any"), where it
gives the example class the same scores as the full matrix and says what it skipped; under a
rubric that scores every configuration it is refused in one line (exit 2)."""
from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest

from grader.grading.classgrade import grade_class
from grader.grading.reruns import Plan
from grader.grading.rubric import Rubric, score
from grader.sweep.cells import Cell

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
needs_jail = [pytest.mark.skipif(os.geteuid() != 0, reason="the jail needs root"),
              pytest.mark.skipif(shutil.which("cc") is None or shutil.which("make") is None, reason="needs cc, make")]


def cell(ordering="given", bsize=256, sync="outcore", method="bmf", graph="g") -> Cell:
    return Cell("p", graph, ordering, bsize, 8, method, method, "no", sync, 0, "pid")


def row(c: Cell, status: str) -> dict:
    return {"run_id": c.run_id, "status": status, "ordering": c.ordering, "bsize": c.bsize, "bcount": c.bcount,
            "sync": c.sync, "detail": "", "distances": status, "output_deviations": [], "stdout_format": "ok"}


def test_first_right_waits_for_the_first_configuration_then_skips_or_runs_the_rest():
    a1, a2, b1, b2 = cell("given", 256), cell("given", 64), cell("source", 256), cell("source", 64)
    cells = [a1, b1, a2, b2]                       # the matrix's order: configurations inside orderings
    plan = Plan("first-right", cells, cells, {})
    assert plan.now == [a1, b1] and set(plan.pending) == set(cells)
    assert plan.after(a1, row(a1, "ok")) == []               # right first: a2 not needed
    assert plan.after(b1, row(b1, "wrong")) == [b2]          # wrong first: the other configuration runs
    assert plan.skipped()["runs"] == [a2.label] and plan.skipped()["count"] == 1
    assert "right at the first configuration" in plan.skipped()["why"]
    resumed = Plan("first-right", cells, [a2, b2], {a1.run_id: row(a1, "ok"), b1.run_id: row(b1, "crash")})
    assert resumed.now == [b2] and resumed.pending == [b2] and resumed.skipped()["count"] == 1
    full = Plan("all", cells, cells, {})
    assert full.now == cells and full.after(a1, row(a1, "ok")) == [] and full.skipped() is None


def test_any_configuration_scores_a_setting_once_and_each_scores_every_run():
    a1, a2 = cell("given", 256), cell("given", 64)
    built = {"built": True, "cleaned": True, "detail": ""}
    rows = {a1.run_id: row(a1, "wrong"), a2.run_id: row(a2, "ok")}
    by_name = lambda tests: {t["name"]: float(t["score"]) for t in tests}  # noqa: E731
    each = by_name(score(Rubric(report=0), built, [a1, a2], rows))
    anyone = by_name(score(Rubric(report=0, configurations="any"), built, [a1, a2], rows))
    assert each["bmf correct on g"] == pytest.approx(36 / 2) and anyone["bmf correct on g"] == pytest.approx(36)
    skipped = by_name(score(Rubric(report=0, configurations="any"), built, [a1, a2], {a2.run_id: row(a2, "ok")}))
    assert skipped == anyone


def two_configurations(folder: Path, rule: str, configurations: str) -> Path:
    rubric = folder / "rubric.toml"
    text = (ROOT / "configs" / "rubric.toml").read_text()
    assert text.count('configurations = "each"') == 1
    rubric.write_text(text.replace('configurations = "each"', f'configurations = "{configurations}"'))
    text = (EXAMPLES / "grading.toml").read_text()
    text = text.replace("configs = [[256, 8]]", "configs = [[256, 8], [64, 2]]")
    text = text.replace('rubric = "../configs/rubric.toml"', f'rubric = {json.dumps(str(rubric))}\nreruns = "{rule}"')
    text = text.replace('"graphs/detour.txt"', json.dumps(str(EXAMPLES / "graphs" / "detour.txt")))
    path = folder / f"grading-{rule}-{configurations}.toml"
    path.write_text(text)
    return path


def grade(config: Path, out: Path) -> tuple[int, str]:
    err = io.StringIO()
    code = grade_class([EXAMPLES / "class"], out, config=config, quiet=True, jobs=2, diagnose=False, shrink=False,
                       stdout=io.StringIO(), err=err)
    return code, err.getvalue()


def results(out: Path) -> dict:
    return {p.parent.name: json.loads(p.read_text()) for p in sorted(out.glob("*/results.json"))}


@needs_jail[0]
@needs_jail[1]
def test_first_right_gives_the_example_class_the_same_scores_with_fewer_runs(tmp_path):
    full_code, said = grade(two_configurations(tmp_path, "all", "any"), tmp_path / "all")
    assert full_code == 0, said
    code, said = grade(two_configurations(tmp_path, "first-right", "any"), tmp_path / "first-right")
    assert code == 0, said
    full, lean = results(tmp_path / "all"), results(tmp_path / "first-right")
    assert {s: [(t["name"], t["score"]) for t in d["tests"]] for s, d in full.items()} == \
        {s: [(t["name"], t["score"]) for t in d["tests"]] for s, d in lean.items()}
    assert (tmp_path / "all" / "gradebook.csv").read_text() == (tmp_path / "first-right" / "gradebook.csv").read_text()
    ran_full = len((tmp_path / "all" / "runs.jsonl").read_text().splitlines())
    ran_lean = len((tmp_path / "first-right" / "runs.jsonl").read_text().splitlines())
    skipped = sum(d.get("skipped_runs", {}).get("count", 0) for d in lean.values())
    assert ran_full == 5 * 52 and skipped > 0 and ran_lean == ran_full - skipped   # none dropped silently
    # right everywhere: half skipped; wrong (wrong on detour) and crashing: only their right settings'
    # other configuration; hostile is right nowhere: nothing skipped
    assert {s: d.get("skipped_runs", {}).get("count", 0) for s, d in lean.items()} == \
        {"crashing": 13, "formats": 26, "hostile": 0, "right": 26, "wrong": 13}
    assert all(not d.get("skipped_runs") for d in full.values())


def test_first_right_is_refused_where_the_rubric_scores_each_configuration(tmp_path):
    config = two_configurations(tmp_path, "first-right", "each")
    code, said = grade(config, tmp_path / "out")
    assert code == 2 and said.count("\n") == 1
    assert "grading.reruns" in said and str(config) in said and "scores every configuration" in said
    assert not (tmp_path / "out").exists()


def test_an_unknown_rule_is_named(tmp_path):
    config = two_configurations(tmp_path, "sometimes", "any")
    code, said = grade(config, tmp_path / "out")
    assert code == 2 and "grading.reruns must be one of" in said and "'sometimes'" in said
