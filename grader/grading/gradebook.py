"""What grading writes: per student a Gradescope `results.json` (rewritten atomically as tests
finish, so a crash loses nothing) and an `index.html`; for the class `gradebook.csv` and a
leaderboard of times among correct runs (`leaderboard.csv`)."""
from __future__ import annotations

import csv
import io
import json
import statistics
from pathlib import Path

from sssp_common.files import write_text_atomically

TEMPLATES = Path(__file__).with_name("templates")


def results_json(tests: list[dict], *, output: str = "", extra: dict | None = None) -> dict:
    """Gradescope's format: score, tests[] (name, score, max_score, output, visibility)."""
    return {"score": round(sum(t["score"] for t in tests), 4),
            "max_score": round(sum(t["max_score"] for t in tests), 4),
            "output": output, "visibility": "visible", "stdout_visibility": "hidden",
            "tests": tests, **(extra or {})}


def write_results(folder: Path, data: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "results.json"
    write_text_atomically(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    return path


def write_page(folder: Path, *, student: str, data: dict, rows: list[dict], build_log: str,
               rewrites: list[str], refused: str = "") -> Path:
    import jinja2
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                                     autoescape=True, undefined=jinja2.StrictUndefined)
    page = environment.get_template("student.html.j2").render(
        student=student, score=data["score"], max_score=data["max_score"], tests=data["tests"],
        program_id=data.get("program_id", ""), build_options=data.get("build_options") or {},
        refused=refused, failed=[r for r in rows if r.get("status") != "ok"], runs=rows,
        build_log=build_log, rewrites=rewrites)
    path = folder / "index.html"
    write_text_atomically(path, page)
    return path


def write_gradebook(out: Path, students: dict[str, dict]) -> Path:
    """One row per student: total, then each test's score (columns: the union of test names)."""
    names: list[str] = []
    for data in students.values():
        for test in data["tests"]:
            if test["name"] not in names:
                names.append(test["name"])
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["student", "score", "max_score", "program_id", *names])
    for student, data in sorted(students.items()):
        by_name = {t["name"]: t["score"] for t in data["tests"]}
        writer.writerow([student, data["score"], data["max_score"], data.get("program_id", ""),
                         *[by_name.get(name, "") for name in names]])
    path = out / "gradebook.csv"
    write_text_atomically(path, buffer.getvalue())
    return path


def leaderboard(rows: list[dict]) -> list[dict]:
    """Per (graph, method, sync): each student's median computation time over their correct
    runs (spec or recovered times; runs flagged for a time longer than the wall time left out),
    fastest first, with the rank."""
    groups: dict[tuple, dict[str, list[float]]] = {}
    for row in rows:
        if row.get("status") != "ok" or row.get("computation_ms") is None or row.get("time_flag") or row.get("rep", 0) < 0:
            continue
        key = (row["graph"], row["method"], row["sync"])
        groups.setdefault(key, {}).setdefault(row["program"], []).append(row["computation_ms"] + (row.get("filtering_ms") or 0))
    board = []
    for (graph, method, sync), students in sorted(groups.items()):
        ranked = sorted((statistics.median(times), student, len(times)) for student, times in students.items())
        for rank, (ms, student, runs) in enumerate(ranked, 1):
            board.append({"graph": graph, "method": method, "sync": sync, "rank": rank, "student": student,
                          "median_kernel_ms": round(ms, 3), "correct_runs": runs})
    return board


def write_leaderboard(out: Path, rows: list[dict]) -> Path:
    board = leaderboard(rows)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=["graph", "method", "sync", "rank", "student",
                                                "median_kernel_ms", "correct_runs"])
    writer.writeheader()
    writer.writerows(board)
    path = out / "leaderboard.csv"
    write_text_atomically(path, buffer.getvalue())
    return path
