"""Grades in the import formats of learning-management systems (`grade --lms canvas|moodle
--roster FILE`): DIR/gradebook-canvas.csv or DIR/gradebook-moodle.csv, one row per student, the
LMS's student id columns and one assignment column holding each student's total as results.json,
gradebook.csv and the pages write it (the rubric's decimals). gradebook.csv itself keeps every
test's column for staff; an LMS would read each of those as another assignment.

- Canvas (Grades > Import): the columns of Canvas's own gradebook export, `Student`, `ID`,
  `SIS User ID`, `SIS Login ID`, `Section`, then the assignment as `Name (id)`; Canvas matches a
  row to a student by ID (else the SIS ids) and the column to an assignment by the id in
  parentheses (a header without one makes a new assignment).
- Moodle (Grades > Import > CSV file): an identifier column that "Identify user by" maps to a
  user field (`ID number`, `Email address` or `Username`), and the grade column, mapped to the
  grade item on the import page.

The roster is a CSV staff write, with a `folder` column (the student's folder name under DIR)
and the LMS's columns above, e.g. a gradebook export with a `folder` column added. A roster row
whose folder was not graded, and a graded student the roster lacks, are each said in one line;
a roster that cannot be used is RosterError: one line naming the file and line.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from grader.grading.gradebook import pending
from grader.grading.points import decimals_of, shown
from grader.grading.spreadsheet import csv_text, plain
from sssp_common.files import write_text_atomically

SYSTEMS = ("canvas", "moodle")
FOLDER = "folder"
# the student columns each LMS's import reads, in its export's order; IDS: those that identify a student
COLUMNS = {"canvas": ("Student", "ID", "SIS User ID", "SIS Login ID", "Section"),
           "moodle": ("ID number", "Email address", "Username")}
IDS = {"canvas": ("ID", "SIS User ID", "SIS Login ID"), "moodle": ("ID number", "Email address", "Username")}
DEFAULT_ASSIGNMENT = "SSSP GPU"
MAX_ROSTER_BYTES = 16 << 20


class RosterError(Exception):
    """A roster that cannot be used as written; the message names the file and line."""


@dataclass(frozen=True)
class Roster:
    lms: str
    path: Path
    columns: tuple[str, ...]           # the LMS columns the roster has, in the LMS's order
    students: dict[str, dict]          # folder -> {LMS column: value}


def read_roster(path: Path | str, lms: str) -> Roster:
    path = Path(path)
    if lms not in SYSTEMS:
        raise RosterError(f"--lms {lms!r}: must be one of {', '.join(SYSTEMS)}")
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_ROSTER_BYTES + 1)
    except OSError as error:
        raise RosterError(f"{path}: cannot be read ({error.strerror or error})") from None
    if len(data) > MAX_ROSTER_BYTES:
        raise RosterError(f"{path}: larger than {MAX_ROSTER_BYTES >> 20} MiB: not a roster")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        raise RosterError(f"{path}: line {line}: not UTF-8 text (save the roster as CSV UTF-8)") from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = [plain(cell.strip()) for cell in next(reader, [])]
        wanted = {name.lower(): name for name in (FOLDER, *COLUMNS[lms])}
        index = {wanted[cell.lower()]: i for i, cell in reversed(list(enumerate(header))) if cell.lower() in wanted}
        if FOLDER not in index:
            raise RosterError(f"{path}: line 1: needs a '{FOLDER}' column (the student's folder name under DIR); "
                              f"has: {', '.join(header) or 'nothing'}")
        ids = [name for name in IDS[lms] if name in index]
        if not ids:
            raise RosterError(f"{path}: line 1: a {lms} roster needs one of the columns {', '.join(IDS[lms])}")
        columns = tuple(name for name in COLUMNS[lms] if name in index)
        students: dict[str, dict] = {}
        seen_ids: dict[tuple[str, str], str] = {}
        for row in reader:
            where = f"{path}: line {reader.line_num}"
            if not any(cell.strip() for cell in row):
                continue
            cells = {name: plain(row[i].strip()) if i < len(row) else "" for name, i in index.items()}
            folder = cells.pop(FOLDER)
            if not folder:
                raise RosterError(f"{where}: the '{FOLDER}' cell is empty")
            if folder in students:
                raise RosterError(f"{where}: folder {folder!r} appears twice")
            if not any(cells.get(name) for name in ids):
                raise RosterError(f"{where}: {folder!r} has no {' / '.join(ids)}: {lms} cannot match the row")
            for name in ids:
                if cells.get(name):
                    earlier = seen_ids.setdefault((name, cells[name]), folder)
                    if earlier != folder:
                        raise RosterError(f"{where}: {name} {cells[name]!r} is given to folder {earlier!r} too")
            students[folder] = cells
    except csv.Error as error:
        raise RosterError(f"{path}: line {reader.line_num}: not CSV ({error})") from None
    return Roster(lms, path, columns, students)


def export(roster: Roster, graded: dict[str, dict], assignment: str) -> tuple[list, list[list], list[str]]:
    """(header, rows, notes) for the roster's LMS: a row per roster student who was graded (their
    results.json in `graded`), the total written as gradebook.csv writes it; notes: one line each
    for roster folders not graded, graded students the roster lacks, and pending report scores."""
    header = [*roster.columns, assignment]
    rows, pending_report = [], []
    for folder, cells in roster.students.items():
        data = graded.get(folder)
        if data is None:
            continue
        rows.append([*(cells.get(name, "") for name in roster.columns), shown(data["score"], decimals_of(data))])
        if any(pending(t) for t in data.get("tests", [])):
            pending_report.append(folder)
    notes = []
    unknown = sorted(set(roster.students) - set(graded))
    missing = sorted(set(graded) - set(roster.students))
    if unknown:
        notes.append(f"{roster.path}: {len(unknown)} roster folders were not graded (left out of the export): "
                     + ", ".join(unknown))
    if missing:
        notes.append(f"{roster.path}: {len(missing)} graded students are not in the roster (left out of the export): "
                     + ", ".join(missing))
    if pending_report:
        notes.append(f"{len(pending_report)} exported totals leave out the report, its score pending "
                     f"(report_scores.csv): " + ", ".join(sorted(pending_report)))
    return header, rows, notes


def write_export(out: Path, roster: Roster, graded: dict[str, dict], assignment: str | None = None) -> tuple[Path, list[str]]:
    """DIR/gradebook-<lms>.csv (every cell through grader.grading.spreadsheet) and the notes."""
    header, rows, notes = export(roster, graded, assignment or DEFAULT_ASSIGNMENT)
    path = out / f"gradebook-{roster.lms}.csv"
    write_text_atomically(path, csv_text(header, rows))
    return path, notes
