"""The report's score, which staff enter: `DIR/report_scores.csv` (student, score, comment,
found). The grader adds a row for every student it grades (score empty) and rewrites only the
`found` column (what it found of the report); staff fill `score` (0 to the rubric's report
points) and `comment`, and the next `grade` run puts them in each student's results.json."""
from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from grader.grading.spreadsheet import csv_text, plain
from sssp_common.files import write_text_atomically

FILE = "report_scores.csv"
COLUMNS = ("student", "score", "comment", "found")


class ManualScoresError(Exception):
    """A report_scores.csv that cannot be read as written; the message names the file and line."""


def read_scores(path: Path, maximum: float) -> dict[str, dict]:
    """student -> {'score': float or None, 'comment', 'found'}; a missing file is no scores."""
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise ManualScoresError(f"{path}: cannot be read ({error})") from None
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames is None or "student" not in reader.fieldnames or "score" not in reader.fieldnames:
        raise ManualScoresError(f"{path}: line 1: needs the columns student and score (has: {reader.fieldnames})")
    scores: dict[str, dict] = {}
    for row in reader:
        where = f"{path}: line {reader.line_num}"
        student = plain((row.get("student") or "").strip())
        if not student:
            continue
        if student in scores:
            raise ManualScoresError(f"{where}: student {student!r} appears twice")
        raw = (row.get("score") or "").strip()
        value = None
        if raw:
            try:
                value = float(raw)
            except ValueError:
                raise ManualScoresError(f"{where}: score {raw!r} is not a number") from None
            if not math.isfinite(value) or value < 0 or value > maximum:
                raise ManualScoresError(f"{where}: score {raw} is outside 0..{maximum:g}")
        scores[student] = {"score": value, "comment": plain((row.get("comment") or "").strip()),
                           "found": plain((row.get("found") or "").strip())}
    return scores


def record_found(path: Path, found: dict[str, str], maximum: float) -> None:
    """Add rows for students not in the file and refresh `found`; staff's score and comment stay."""
    scores = read_scores(path, maximum)
    for student, text in found.items():
        entry = scores.setdefault(student, {"score": None, "comment": "", "found": ""})
        entry["found"] = text
    rows = [[student, "" if entry["score"] is None else f"{entry['score']:g}", entry["comment"], entry["found"]]
            for student, entry in sorted(scores.items())]
    write_text_atomically(path, csv_text(list(COLUMNS), rows))   # student ids and `found` are the students' text
