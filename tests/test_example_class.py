"""The example class (examples/class, README "Grading a class") graded as a new member of staff
would: `python -m grader grade examples/class --config examples/grading.toml --out DIR`, here with
a Canvas roster too. Each student gets the verdict the README promises: right the whole code part
and the extra credit, wrong and crashing only their right runs (formats and timing gated on right
distances), formats right distances without the timing points, and hostile nothing: its attempts
to read classmates' files and write outside its folder all fail in the jail, and nothing outside
the grader's folders changes. A control runs the hostile program unjailed in a temporary tree, to
show its attempts are real (so its failing in the jail is the jail's doing)."""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.grading.spreadsheet import plain
from grader.jail.sandbox import grader_root

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
MARKER = "hostile-was-here.txt"
STUDENTS = {"crashing": 40, "formats": 63, "hostile": 10, "right": 70, "wrong": 40}
pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="the jail needs root"),
              pytest.mark.skipif(shutil.which("cc") is None or shutil.which("make") is None, reason="needs cc, make")]


def tree_digest(folder: Path) -> str:
    """Names, modes and contents of every file under folder."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        digest.update(f"{path.relative_to(folder)} {info.st_mode:o}\n".encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def markers(*folders: Path) -> list[Path]:
    found = []
    for folder in folders:
        for top, dirs, files in os.walk(folder):
            found += [Path(top) / MARKER for name in files if name == MARKER]
    return found


def by_name(data: dict) -> dict:
    return {t["name"].split(" (")[0]: t for t in data["tests"]}


def test_the_example_class_grades_as_the_readme_says(tmp_path):
    before = tree_digest(EXAMPLES)
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section,folder\n"
                      + "".join(f"{name.title()},{1000 + i},,,A,{name}\n" for i, name in enumerate(sorted(STUDENTS))
                                if name != "formats") + "Ghost,1999,,,A,ghost\n")
    out = tmp_path / "graded"
    done = subprocess.run([sys.executable, "-m", "grader", "grade", "examples/class", "--config",
                           "examples/grading.toml", "--out", str(out), "--lms", "canvas", "--roster", str(roster),
                           "--assignment", "SSSP GPU (4242)"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = {name: json.loads((out / name / "results.json").read_text()) for name in STUDENTS}
    assert {name: data["score"] for name, data in results.items()} == STUDENTS
    rows = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    runs = {name: [r for r in rows if r.get("student") == name] for name in STUDENTS}
    assert {name: len(r) for name, r in runs.items()} == {name: 26 for name in STUDENTS}   # 13 cells x 2 graphs
    # right: full code marks (60) and the extra credit (10)
    right = by_name(results["right"])
    assert all(t["score"] == t["max_score"] for n, t in right.items() if not n.startswith(("Report", "Extra")))
    assert right["Extra credit: opt correct"]["score"] == 10
    # wrong: right on figure1, wrong on detour (it stops after 10 rounds); the format and timing points
    # only for its right runs (the correctness gate), half each
    assert {r["graph"]: r["status"] for r in runs["wrong"] if r["status"] != "ok"} == {"detour": "wrong"}
    wrong = by_name(results["wrong"])
    assert wrong["bmf correct on figure1"]["score"] == 9 and wrong["bmf correct on detour"]["score"] == 0
    assert wrong["Output file format"]["score"] == 3.5 and wrong["Timing lines on stdout"]["score"] == 3.5
    # crashing: killed by SIGABRT on detour, right on figure1
    assert {r["detail"].split(";")[0] for r in runs["crashing"] if r["status"] != "ok"} == {"killed by SIGABRT"}
    assert {r["graph"] for r in runs["crashing"] if r["status"] == "crash"} == {"detour"}
    # formats: every distance right; the spec-silent formats free, the missing timing lines not
    formats = by_name(results["formats"])
    assert formats["Output file format"]["score"] == 7 and formats["Timing lines on stdout"]["score"] == 0
    # hostile: no run right, nothing it tried worked, nothing outside changed
    assert {r["status"] for r in runs["hostile"]} == {"crash"}
    assert all("none worked" in r["detail"] and "ESCAPED" not in r["detail"] for r in runs["hostile"])
    assert results["hostile"]["score"] == by_name(results["hostile"])["Build: make sssp produces ./sssp"]["score"] + 5
    assert tree_digest(EXAMPLES) == before
    assert markers(tmp_path, ROOT / "examples", grader_root()) == []
    # one number everywhere: the console, gradebook.csv and the Canvas export agree with results.json
    book = {plain(r["student"]): r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}
    for name, score in STUDENTS.items():
        assert book[name]["score"] == str(score) and f"{score} / 100" in done.stdout
    canvas = list(csv.reader(io.StringIO((out / "gradebook-canvas.csv").read_text())))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "SSSP GPU (4242)"]
    assert {row[1]: row[5] for row in canvas[1:]} == {"1000": "40", "1002": "10", "1003": "70", "1004": "40"}
    assert f"{roster}: 1 roster folders were not graded (left out of the export): ghost" in done.stderr
    assert f"{roster}: 1 graded students are not in the roster (left out of the export): formats" in done.stderr


def test_the_hostile_program_really_attacks_when_nothing_stops_it(tmp_path):
    """The control: built and run as a plain process in a temporary tree, with a classmate's
    folder and answers beside it, it reads the classmate's source, hands in the answers and
    leaves its marker outside its folder. So the graded run's 'none worked' is the jail's doing."""
    build = tmp_path / "deeper" / "still" / "build"     # its climbs (.., ../..) stay inside tmp_path
    shutil.copytree(EXAMPLES / "class" / "hostile", build)
    subprocess.run(["make", "-s", "sssp"], cwd=build, check=True, capture_output=True, timeout=120)
    top = tmp_path / "course"
    (top / "classmate").mkdir(parents=True)
    shutil.copy(EXAMPLES / "class" / "right" / "sssp.c", top / "classmate" / "sssp.c")
    (top / "answers.txt").write_text("0:0\n1:4\n")
    work = top / "me" / "work"
    work.mkdir(parents=True)
    (work / "in.txt").write_text("0 1 4\n")
    env = {"PATH": os.environ["PATH"], "HOME": str(work), "TMPDIR": str(work)}
    done = subprocess.run([str(build / "sssp"), "--input", "in.txt", "--output", "out.txt"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=60)
    assert "read a classmate's source" in done.stderr and "handed in a classmate's answers" in done.stderr
    assert "ESCAPED" in done.stderr and (work / "out.txt").read_text() == "0:0\n1:4\n"
    assert markers(tmp_path) != []
