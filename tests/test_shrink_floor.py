"""A small class is not starved of counterexamples: the class's candidate runs are 0.15 per graded
run, which a class of five at the course's config turns into ~98 runs but the example class
(examples/class: 26 graded runs a student) into 20, so its wrong programs were shown "not shrunk
(76 edges)". The floor (counterexamples.CLASS_FLOOR_RUNS, in runs, never seconds) gives a small
class's shrinking what each case's first look and each student's first case need, and nothing
more to a real class or to the random search."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from grader.grading import counterexamples

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
METHODS = [("bmf", "incore"), ("bmf", "outcore"), ("segscan", "outcore"), ("tpe", "incore"), ("tpe", "outcore"),
           ("opt", "incore"), ("opt", "outcore")]


def rows_of(graded: int, wrong: int) -> list[dict]:
    """`graded` graded rows of one student, the first `wrong` of the seven (method, sync) pairs
    wrong on one graph (as the example class's wrong program: right on figure1, wrong on detour)."""
    rows = []
    for index in range(graded):
        method, sync = METHODS[index % len(METHODS)]
        bad = METHODS.index((method, sync)) < wrong and index >= len(METHODS)
        rows.append({"method": method, "sync": sync, "rep": 0, "status": "wrong" if bad else "ok",
                     "graph": "detour" if bad else "figure1", "ordering": "given", "graph_vertices": 48,
                     "graph_edges": 76, "run_id": f"r{index}"})
    return rows


def shares(students: dict[str, tuple[int, int]], settings=counterexamples.Settings()) -> dict[str, int]:
    return counterexamples.share_runs({name: counterexamples.demand(rows_of(*shape), settings)
                                       for name, shape in students.items()})


def test_a_small_class_gets_what_each_case_needs_for_a_first_look():
    """The example class's shape: five students of 26 graded runs, three with seven failing cases.
    Its share is 20 runs (6-7 each: fewer than the later cases' reserve, so no case was shrunk);
    the floor gives each its least: a first case's triage and four candidates, three runs for each
    later case (its 1-edge run, the first case's counterexample, a confirming run)."""
    class_ = {"crashing": (26, 7), "formats": (26, 0), "hostile": (26, 7), "right": (26, 0), "wrong": (26, 7)}
    least = counterexamples.LEAST_CASE_RUNS + 6 * counterexamples.RESERVE_PER_CASE
    assert least == 26
    assert shares(class_) == {"crashing": least, "formats": 0, "hostile": least, "right": 0, "wrong": least}
    off = shares(class_, counterexamples.Settings(floor_runs=0))      # the share alone, as before
    assert sum(off.values()) == round(0.15 * 5 * 26) == 20 and max(off.values()) < least


def test_the_floor_is_capped_and_a_real_class_gets_its_share_alone():
    """At most CLASS_FLOOR_RUNS in all however many students need runs; a class of thirty at the
    course's config (130 graded runs each) gets 0.15 per graded run and not one run more."""
    small = shares({f"s{i}": (26, 7) for i in range(10)})                       # ten need 26 each: 260
    assert sum(small.values()) == counterexamples.CLASS_FLOOR_RUNS < 10 * 26
    real = shares({f"s{i}": (130, 7 if i % 2 else 0) for i in range(30)})
    assert sum(real.values()) == round(counterexamples.RUNS_PER_GRADED_RUN * 30 * 130)


def test_the_floor_buys_no_random_search():
    """A wrong student beside a right one: the floor gives the wrong one its least, and the right
    one's random search only what the share leaves (here nothing): the floor is for shrinking."""
    assert shares({"wrong": (26, 7), "right": (26, 0)}) == {"wrong": 26, "right": 0}
    assert shares({"right": (26, 0), "also": (26, 0)}) == {"right": 4, "also": 4}   # round(0.15 x 52) = 8: the share


@pytest.mark.skipif(shutil.which("cc") is None or shutil.which("make") is None, reason="needs cc, make")
def test_the_example_class_wrong_program_gets_its_counterexamples_shrunk(tmp_path):
    """Through `grader grade` at examples/grading.toml: the example class's wrong program (Bellman-Ford
    stopped after 10 rounds, wrong on the 76-edge detour) beside the right one. Its share would be
    8 runs; the floor gives 26, so its first case is shrunk (a path of 11 edges is the least that
    shows it) and the six others take that graph, every case said with its size, none "not shrunk"."""
    from grader.commands import grade
    out = tmp_path / "out"
    assert grade.run([EXAMPLES / "class" / "right", EXAMPLES / "class" / "wrong"], out=out,
                     config=EXAMPLES / "grading.toml", quiet=True) == 0
    record = json.loads((out / "wrong" / "counterexamples.json").read_text())
    assert record["allowance_runs"] == 26 and record["runs"] <= 26 and not record["skipped"]
    assert sorted((e["method"], e["sync"]) for e in record["shrunk"]) == sorted(METHODS)
    for entry in record["shrunk"]:
        assert 11 <= entry["edges"] <= 13 and not entry["not_shrunk"] and not entry["not_small"], entry
        assert entry["size_said"] == f"{entry['edges']} edges" and entry["failed"] == entry["tried"]
    tests = json.loads((out / "wrong" / "results.json").read_text())["tests"]
    assert not any("not shrunk" in t["name"] for t in tests)


@pytest.mark.skipif(shutil.which("cc") is None or shutil.which("make") is None, reason="needs cc, make")
def test_with_the_share_alone_the_first_case_is_shrunk_before_the_later_cases_are_looked_at(tmp_path):
    """The same two students with the floor off (floor_runs = 0): 8 runs for seven cases, fewer
    than the later cases' reserve. The case with the most points at stake (bmf incore) still gets
    its triage and four candidates and is shrunk; the cases after it are said not shrunk, rather
    than each spending its 1-edge run and none being shrunk."""
    from grader.commands import grade
    config = tmp_path / "grading.toml"
    config.write_text((EXAMPLES / "grading.toml").read_text()
                      .replace('"graphs/detour.txt"', f'"{EXAMPLES / "graphs" / "detour.txt"}"')
                      .replace('"../configs/rubric.toml"', f'"{ROOT / "configs" / "rubric.toml"}"')
                      .replace("max_runs = 40\n", "max_runs = 40\nfloor_runs = 0\n"))
    out = tmp_path / "out"
    assert grade.run([EXAMPLES / "class" / "right", EXAMPLES / "class" / "wrong"], out=out, config=config,
                     quiet=True) == 0
    record = json.loads((out / "wrong" / "counterexamples.json").read_text())
    assert record["allowance_runs"] == round(0.15 * 52) == 8 and record["runs"] <= 8
    [first] = record["shrunk"]
    assert (first["method"], first["sync"]) == ("bmf", "incore") and first["edges"] <= 13 and not first["not_shrunk"]
    assert sorted((s["method"], s["sync"]) for s in record["skipped"]) == sorted(METHODS[1:])
    assert all(s["why"] == "not shrunk (76 edges, the failing course graph)" for s in record["skipped"])


def test_a_grader_error_in_one_students_counterexamples_is_theirs_alone(tmp_path, monkeypatch):
    """An exception inside the shrinking (a grader bug, e.g. CI's IndexError on a wrong source)
    becomes that student's one-line note in counterexamples.json; the class goes on."""
    from grader.grading import counterexamples

    def broken(**_):
        raise IndexError("list index out of range")

    monkeypatch.setattr(counterexamples, "_for_student", broken)
    rows = [{"method": "bmf", "sync": "incore", "status": "wrong", "graph": "g", "graph_vertices": 5,
             "graph_edges": 7, "rep": 0, "run_id": "r"}]
    record = counterexamples.for_student(tmp_path, "p", rows, [], {}, None, {}, counterexamples.Allowance(runs=10),
                                         submit=lambda *a, **k: None)
    [said] = record["skipped"]
    assert said["why"] == "counterexamples stopped by a grader error (IndexError: list index out of range)"
    assert not record["complete"] and record["shrunk"] == []
    assert json.loads((tmp_path / counterexamples.RECORD).read_text())["skipped"] == [said]
