"""The class page, DIR/index.html: one self-contained file (inline CSS, JS and SVG; nothing
fetched) for the TA the night grades are due.

It shows the gradebook as a table that sorts on any column, a histogram of scores, the pass
rate of every test, the most common failure messages with the students they hit, the
compute-sanitizer findings, the most similar pairs of sources with their matching regions,
and a link to every student's page. Everything is read from DIR: each student's
results.json and diagnosis.json, runs.jsonl, similarity.json. `collect` is the data (pure
over what it is given), `write` the rendering.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from grader.grading.gradebook import environment, pending
from grader.grading.points import bin_index, decimals_of, exact, rounded, shown
from sssp_common.files import write_text_atomically

TEMPLATES = Path(__file__).with_name("templates")
BINS = 10
TOP_FAILURES = 15


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def students_in(out: Path) -> dict[str, dict]:
    """student -> results.json, for every student folder in DIR."""
    found = {}
    for folder in sorted(p for p in out.iterdir() if p.is_dir()):
        data = _read(folder / "results.json")
        if "tests" in data:
            found[folder.name] = data
    return found


def histogram(scores: list[float], maximum: float, bins: int = BINS) -> list[dict]:
    """Counts of scores (as results.json rounded them) in `bins` equal bins of [0, maximum] (the
    last one closed), placed exactly (grader.grading.points.bin_index): 30 of 100 is in 30-40."""
    if maximum <= 0:
        return []
    counts = [0] * bins
    for value in scores:
        counts[bin_index(value, maximum, bins)] += 1
    width = exact(maximum) / bins
    return [{"low": rounded(i * width), "high": rounded((i + 1) * width), "count": c} for i, c in enumerate(counts)]


def pass_rates(students: dict[str, dict]) -> list[dict]:
    """Per test (in first-seen order): how many students got full marks, and the mean share; a
    manual line staff have not entered yet counts as pending, never as 0 % (rate None while no
    student has it entered)."""
    order: list[str] = []
    got: dict[str, list[float]] = {}
    full: Counter = Counter()
    waiting: Counter = Counter()
    for data in students.values():
        for test in data["tests"]:
            if not test.get("max_score"):
                continue
            name = test["name"]
            if name not in got:
                order.append(name)
                got[name] = []
            if pending(test):
                waiting[name] += 1
                continue
            got[name].append(test["score"] / test["max_score"])
            full[name] += test["score"] >= test["max_score"] - 1e-9
    return [{"name": n, "passed": full[n], "of": len(got[n]), "pending": waiting[n],
             "rate": full[n] / len(got[n]) if got[n] else None,
             "mean_share": sum(got[n]) / len(got[n]) if got[n] else None} for n in order]


def failure_message(row: dict) -> str:
    """A failed run's message with its run-specific numbers taken out, so equal causes group."""
    detail = str(row.get("detail") or row.get("distances") or row.get("status"))
    first = detail.strip().splitlines()[0] if detail.strip() else str(row.get("status"))
    first = re.sub(r"/\S+", "<path>", first)
    first = re.sub(r"\d+(?:\.\d+)?", "N", first)
    return f"{row.get('status')}: {first[:160]}"


def common_failures(rows: list[dict], top: int = TOP_FAILURES) -> list[dict]:
    """The most frequent failure messages over the class, with the students they hit."""
    hits: dict[str, Counter] = {}
    for row in rows:
        if row.get("status") in (None, "ok") or (row.get("rep") or 0) < 0:
            continue
        hits.setdefault(failure_message(row), Counter())[row.get("student") or row.get("program", "?")] += 1
    ranked = sorted(hits.items(), key=lambda kv: (-len(kv[1]), -sum(kv[1].values()), kv[0]))
    return [{"message": m, "runs": sum(c.values()), "students": sorted(c)} for m, c in ranked[:top]]


def counterexamples(out: Path, students: dict) -> list[dict]:
    """Per student, the smallest failing graphs of their current build (counterexamples.json)."""
    found = []
    for student, data in students.items():
        record = _read(out / student / "counterexamples.json")
        if not record or record.get("program_id") != data.get("program_id"):
            continue
        for entry in record.get("shrunk", []) + [s for s in record.get("search", []) if s.get("found")]:
            found.append({"student": student, "method": entry["method"], "sync": entry["sync"],
                          "kind": entry["kind"], "edges": entry["edges"], "vertices": entry["vertices"],
                          "flaky": entry.get("race", entry["flaky"]), "failed": entry["failed"], "tried": entry["tried"],
                          "origin": entry.get("origin", ""), "warning": entry in record.get("search", []),
                          "said": entry.get("size_said", "") if entry.get("not_small") or entry.get("not_shrunk") else "",
                          "file": f"{student}/smallest/{entry['method']}-{entry['sync']}.txt"})
    return found


def findings(out: Path, students: list[str]) -> tuple[list[dict], list[dict]]:
    """(every finding with its student, per student what diagnosis ran and skipped)."""
    all_findings, status = [], []
    for student in students:
        data = _read(out / student / "diagnosis.json")
        if not data:
            continue
        for f in data.get("findings", []):
            all_findings.append({**f, "student": student})
        reasons = Counter(s["why"] for s in data.get("skipped", []))
        status.append({"student": student, "ran": len(data.get("tool_runs", [])), "targets": data.get("targets", 0),
                       "findings": len(data.get("findings", [])), "seconds": data.get("seconds", 0),
                       "skipped": [f"{n} x {why}" for why, n in reasons.most_common()]})
    all_findings.sort(key=lambda f: (f["severity"] != "error", f["student"], f["method"], f["tool"]))
    return all_findings, status


def collect(out: Path, rows: list[dict] | None = None, similarity: dict | None = None) -> dict:
    students = students_in(out)
    if rows is None:
        from sssp_common.record import latest_by_run_id, read_rows
        rows = list(latest_by_run_id(read_rows(out / "runs.jsonl", warn=None)).values()) \
            if (out / "runs.jsonl").exists() else []
    names = list(students)
    current = {d.get("program_id") for d in students.values()}
    rows = [r for r in rows if r.get("program_id") in current]
    maximum = max((d.get("max_score", 0) for d in students.values()), default=0)
    scores = [d.get("score", 0) for d in students.values()]
    columns = [t["name"] for t in pass_rates(students)]
    places = max((decimals_of(d) for d in students.values()), default=decimals_of({}))
    table = []
    for student, data in students.items():
        by_name = {t["name"]: t for t in data["tests"]}
        mine = decimals_of(data)
        table.append({"student": student, "score": data.get("score", 0), "max_score": data.get("max_score", 0),
                      "score_text": shown(data.get("score", 0), mine), "max_text": shown(data.get("max_score", 0), mine),
                      "page": f"{student}/index.html" if (out / student / "index.html").exists() else "",
                      "cells": [_cell(by_name.get(c), mine) for c in columns]})
    found, diagnosed = findings(out, names)
    return {"students": names, "table": table, "columns": columns, "maximum": maximum,
            "histogram": histogram(scores, maximum), "pass_rates": pass_rates(students),
            "failures": common_failures(rows), "findings": found, "diagnosed": diagnosed,
            "counterexamples": counterexamples(out, students),
            "similarity": similarity if similarity is not None else _read(out / "similarity.json"),
            "mean": shown(sum(map(exact, scores)) / len(scores), places) if scores else "0",
            "median": shown(sorted(scores)[len(scores) // 2], places) if scores else "0", "decimals": places,
            "files": [name for name in ("gradebook.csv", "leaderboard.csv", "similarity.json", "runs.jsonl")
                      if (out / name).exists()]}


def _cell(test: dict | None, decimals: int) -> dict:
    """A test's gradebook cell: its value to sort on (-1: none, -0.5: pending) and its text."""
    if test is None:
        return {"value": -1, "text": ""}
    if pending(test):
        return {"value": -0.5, "text": "pending"}
    return {"value": test["score"], "text": shown(test["score"], decimals)}


def write(out: Path, rows: list[dict] | None = None, similarity: dict | None = None) -> Path:
    data = collect(out, rows, similarity)
    peak = max((b["count"] for b in data["histogram"]), default=0) or 1
    page = environment(data["decimals"]).get_template("class.html.j2").render(**data, peak=peak)
    path = out / "index.html"
    write_text_atomically(path, page)
    return path
