"""What grading writes: per student a Gradescope `results.json` (rewritten atomically as tests
finish, so a crash loses nothing) and an `index.html`; for the class `gradebook.csv` and a
leaderboard of times among correct runs (`leaderboard.csv`, with the times it refused in
`leaderboard_flagged.csv`).

The class files are rebuilt from every student folder's results.json, not from the students
of one `grade` run: regrading one student, or grading a late one, keeps the rest of the class.
"""
from __future__ import annotations

import json
import statistics
from fractions import Fraction
from pathlib import Path

from grader.grading.points import DEFAULT_DECIMALS, decimals_of, exact, rounded, shown
from grader.grading.spreadsheet import csv_text
from grader.sweep.timings import wall_flag
from sssp_common.files import write_text_atomically

TEMPLATES = Path(__file__).with_name("templates")


def results_json(tests: list[dict], *, output: str = "", extra: dict | None = None,
                 decimals: int = DEFAULT_DECIMALS) -> dict:
    """Gradescope's format: score, tests[] (name, score, max_score, output, visibility).
    The one rounding: the total is the exact sum of the tests' exact scores, rounded to
    `decimals`, and each test's score its exact value rounded (so 3 x 10/3 totals 10 while
    each line reads 3.33); `decimals` is recorded for whatever shows these numbers later."""
    total = sum((exact(t["score"]) for t in tests), Fraction(0))
    maximum = sum((exact(t["max_score"]) for t in tests), Fraction(0))
    return {"score": rounded(total, decimals), "max_score": rounded(maximum, decimals), "decimals": decimals,
            "output": output, "visibility": "visible", "stdout_visibility": "hidden",
            "tests": [{**t, "score": rounded(t["score"], decimals), "max_score": rounded(t["max_score"], decimals)}
                      for t in tests], **(extra or {})}


def write_results(folder: Path, data: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "results.json"
    write_text_atomically(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    return path


def write_page(folder: Path, *, student: str, data: dict, rows: list[dict], build_log: str,
               rewrites: list[str], refused: str = "") -> Path:
    page = environment(decimals_of(data)).get_template("student.html.j2").render(
        student=student, score=data["score"], max_score=data["max_score"],
        tests=[{**t, "pending": pending(t)} for t in data["tests"]],
        program_id=data.get("program_id", ""), build_options=data.get("build_options") or {},
        refused=refused, failed=[r for r in rows if r.get("status") != "ok"], runs=rows,
        build_log=build_log, rewrites=rewrites, counterexamples=_counterexamples(folder, data.get("program_id", "")))
    path = folder / "index.html"
    write_text_atomically(path, page)
    return path


def environment(decimals: int):
    """The pages' jinja environment; its `points` filter writes a score as gradebook.csv does."""
    import jinja2
    made = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                              autoescape=True, undefined=jinja2.StrictUndefined)
    made.filters["points"] = lambda value: shown(value, decimals)
    return made


def _counterexamples(folder: Path, program_id: str) -> list[dict]:
    """This build's shrunk failures and random-search finds (grader.grading.counterexamples)."""
    try:
        record = json.loads((folder / "counterexamples.json").read_text())
    except (OSError, ValueError):
        return []
    if not isinstance(record, dict) or record.get("program_id") != program_id:
        return []
    return [entry for entry in record.get("shrunk", []) + record.get("search", []) if entry.get("edge_list")]


def class_results(out: Path) -> dict[str, dict]:
    """student -> results.json of every student graded into out (their folders' files)."""
    found = {}
    for path in sorted(out.glob("*/results.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("student"), str) and isinstance(data.get("tests"), list):
            found[data["student"]] = data
    return found


def write_gradebook(out: Path, students: dict[str, dict]) -> Path:
    """One row per student: total, then each test's score (columns: the union of test names),
    each written as grader.grading.points.shown writes it (the page and the console too); a
    manual line not entered yet is left empty. Cells a spreadsheet would evaluate are defused
    (grader.grading.spreadsheet)."""
    names: list[str] = []
    for data in students.values():
        for test in data["tests"]:
            if test["name"] not in names:
                names.append(test["name"])
    rows = []
    for student, data in sorted(students.items()):
        places = decimals_of(data)
        by_name = {t["name"]: ("" if pending(t) else shown(t["score"], places)) for t in data["tests"]}
        rows.append([student, shown(data["score"], places), shown(data["max_score"], places),
                     data.get("program_id", ""), *[by_name.get(name, "") for name in names]])
    path = out / "gradebook.csv"
    write_text_atomically(path, csv_text(["student", "score", "max_score", "program_id", *names], rows))
    return path


def pending(test: dict) -> bool:
    """A manual line (the report) staff have not entered yet: shown as pending, never as 0."""
    return (test.get("extra_data") or {}).get("entered") is False


def _kernel_ms(row: dict) -> float:
    return row["computation_ms"] + (row.get("filtering_ms") or 0)


def refused_time(row: dict) -> str:
    """Why a correct run's time stays off the board ('' if it may be ranked): the checks of
    grader.sweep.timings.wall_flag, made again (rows written before they existed count too)."""
    if row.get("computation_ms") is None:
        return "no kernel time printed"
    return row.get("time_flag") or wall_flag(row["computation_ms"], row.get("filtering_ms"), row.get("wall_s"),
                                             row.get("device") or "")


def leaderboard(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """(board, flagged). board: per (graph, method, sync), each student's median computation
    time over their correct runs (spec or recovered times), fastest first, with the rank.
    flagged: correct runs whose time cannot be true, each with why (kept off the board)."""
    groups: dict[tuple, dict[str, list[float]]] = {}
    flagged = []
    for row in rows:
        if row.get("status") != "ok" or row.get("rep", 0) < 0 or row.get("computation_ms") is None:
            continue
        why = refused_time(row)
        if why:
            flagged.append({"graph": row["graph"], "method": row["method"], "sync": row["sync"],
                            "student": row["program"], "run_id": row.get("run_id", ""),
                            "kernel_ms": row["computation_ms"] + (row.get("filtering_ms") or 0), "why": why})
            continue
        key = (row["graph"], row["method"], row["sync"])
        groups.setdefault(key, {}).setdefault(row["program"], []).append(_kernel_ms(row))
    board = []
    for (graph, method, sync), students in sorted(groups.items()):
        ranked = sorted((statistics.median(times), student, len(times)) for student, times in students.items())
        for rank, (ms, student, runs) in enumerate(ranked, 1):
            board.append({"graph": graph, "method": method, "sync": sync, "rank": rank, "student": student,
                          "median_kernel_ms": round(ms, 3), "correct_runs": runs})
    return board, flagged


def students_rows(students: dict[str, dict], rows: list[dict]) -> list[dict]:
    """Each student's runs, labelled with the student: runs are keyed by the program's content,
    so two students who handed in the same package share them (and both are on the board)."""
    by_program: dict[str, list[dict]] = {}
    for row in rows:
        by_program.setdefault(row.get("program_id", ""), []).append(row)
    return [{**row, "program": student} for student, data in sorted(students.items())
            for row in by_program.get(data.get("program_id") or "-", [])]


def write_leaderboard(out: Path, rows: list[dict]) -> Path:
    """rows: labelled by student (students_rows)."""
    board, flagged = leaderboard(rows)
    for name, fields, items in (("leaderboard.csv", ["graph", "method", "sync", "rank", "student",
                                                     "median_kernel_ms", "correct_runs"], board),
                                ("leaderboard_flagged.csv", ["graph", "method", "sync", "student", "run_id",
                                                             "kernel_ms", "why"], flagged)):
        write_text_atomically(out / name, csv_text(fields, [[item[f] for f in fields] for item in items]))
    return out / "leaderboard.csv"
