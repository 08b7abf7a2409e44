"""Which submissions the `grade` arguments name, in the layouts staff download them in.

- A submission itself: a folder with a Makefile (at its top or in its only subfolder), or a
  package file (`.tgz`/`.tar.gz`/`.tar`/`.zip`).
- A folder per student holding the spec's `sssp_gpu.tgz`, and `sssp_report.pdf` beside it.
- Gradescope's submission export: `submission_metadata.yml` and `submission_<id>/` folders;
  the student is the submitter's SID (else e-mail, else name) from the metadata.
- Downloads from learning-management systems, by name:
  Canvas `smithjane_12345_67890_sssp_gpu.tgz` (or `smithjane_LATE_12345_...`) -> smithjane_12345;
  Moodle `Jane Smith_12345_assignsubmission_file_` folders (or files so prefixed) -> Jane_Smith_12345;
  Blackboard `Project 2_jsmith_attempt_2017-11-20-23-59-59_sssp_gpu.tgz` -> jsmith (the latest attempt).
  A report among those files goes with its student's package.

A student id is a safe folder name ([A-Za-z0-9._@+-], other characters as '_') that is never
one of the grader's own files in the results folder: a name that looks like one (ends in
.csv, .jsonl, .json, .html, ...) or starts with '.' gets `-student` added, and says so.
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from grader.grading.submission import Refused, Submission, _archive_kind, looks_like_one, student_id

GRADESCOPE_METADATA = "submission_metadata.yml"
# suffixes of the files the grader (and its class page) write beside the student folders
GRADER_SUFFIXES = (".csv", ".jsonl", ".json", ".html", ".htm", ".lock", ".log", ".txt", ".md", ".svg", ".png",
                   ".css", ".js", ".tmp", ".part")
_CANVAS = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9-]*?)(?:_late)?_(?P<id>\d+)_(?P<sub>\d+)_(?P<file>.+)$", re.IGNORECASE)
_MOODLE = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_(?P<kind>[a-z]+)_(?P<file>.*)$")
_BLACKBOARD = re.compile(r"^.+?_(?P<user>[^_]+)_attempt_(?P<date>\d{4}(?:-\d{2}){5})(?:_(?P<file>.+))?$")


def safe_student(name: str) -> str:
    """A folder name for the student that cannot collide with the grader's files."""
    clean = re.sub(r"[^A-Za-z0-9._@+-]+", "_", name.strip()).strip("_") or "student"
    if clean.startswith(".") or clean.lower().endswith(GRADER_SUFFIXES) or clean.lower() in ("students", "runs"):
        clean = clean.lstrip(".") + "-student"
    return clean


def discover(paths: list[Path]) -> list[Submission]:
    """Every submission the arguments name, one per student id (of several, the latest: said in its notes)."""
    found: list[Submission] = []
    for path in map(Path, paths):
        if path.is_file():
            if _archive_kind(path) is None:
                raise Refused(f"{path}: not a folder or a .tgz/.tar.gz/.tar/.zip archive")
            found.extend(_loose_files([path]))
        elif path.is_dir():
            found.extend(_folder(path))
        else:
            raise Refused(f"{path}: no such file or folder")
    return _latest_of_each(found)


def _latest_of_each(found: list[Submission]) -> list[Submission]:
    """One submission per student: of several (an LMS export holding two uploads of one
    student, or the same id twice), the latest, with a note naming the others."""
    by_student: dict[str, list[Submission]] = {}
    for item in found:
        by_student.setdefault(item.student, []).append(item)
    kept = []
    for student, items in by_student.items():
        if len(items) == 1:
            kept.append(items[0])
            continue
        items.sort(key=_upload_order)
        latest = items[-1]
        others = ", ".join(str(i.source.name) for i in items[:-1])
        note = f"{len(items)} uploads for {student}: graded the latest, {latest.source.name} (not {others})"
        kept.append(dataclasses.replace(latest, notes=(*latest.notes, note)))
    return kept


def _upload_order(item: Submission) -> tuple:
    """Later uploads sort last: Blackboard's attempt stamp, else Canvas's submission number,
    else the file's modification time, else the name."""
    _, stamp, _ = _lms_name(item.source)
    canvas = _CANVAS.match(item.source.name)
    try:
        modified = item.source.lstat().st_mtime_ns
    except OSError:
        modified = 0
    return stamp, int(canvas["sub"]) if canvas else -1, modified, item.source.name


def _folder(path: Path) -> list[Submission]:
    if (path / GRADESCOPE_METADATA).is_file():
        return _gradescope(path)
    one = _student_folder(path, safe_student(path.name), alone=True)
    if one is not None:
        return [one]
    found, loose = [], []
    for child in sorted(path.iterdir()):
        if child.name.startswith(".") or child.is_symlink():
            continue
        if child.is_dir():
            moodle = _MOODLE.match(child.name)
            if moodle and moodle["kind"] != "file":
                continue                       # Moodle's online-text folders: no code in them
            student = safe_student(f"{moodle['name']}_{moodle['id']}" if moodle else child.name)
            found.append(_student_folder(child, student))
        elif child.is_file():
            loose.append(child)
    return found + _loose_files(loose)


def _student_folder(folder: Path, student: str, alone: bool = False) -> Submission | None:
    """One student's folder: a package tree, or a folder holding the package (and the report).
    alone: the folder was named on the command line; None if it is a class folder instead."""
    report = _report_in(folder)
    if looks_like_one(folder):
        return Submission(student, folder, "dir", report)
    packages = [c for c in folder.iterdir() if c.is_file() and not c.is_symlink() and _archive_kind(c)]
    notes: tuple[str, ...] = ()
    if len(packages) > 1:
        spec = [p for p in packages if p.name.lower().startswith("sssp_gpu")]
        packages = spec if len(spec) == 1 else packages
    if len(packages) > 1 and not alone:        # one student's folder holding several uploads: the latest
        latest = _latest_of_each([Submission(student, p, _archive_kind(p)) for p in packages])[0]
        packages, notes = [latest.source], latest.notes
    if len(packages) == 1:
        if alone and (any(c.is_dir() and not c.name.startswith(".") for c in folder.iterdir())
                      or _lms_patterned(packages[0].name)):
            return None                        # a class folder that holds one loose archive
        return Submission(student, packages[0], _archive_kind(packages[0]), report, notes)
    return None if alone else Submission(student, folder, "dir", report)


def _report_in(folder: Path) -> Path | None:
    pdfs = sorted(c for c in folder.iterdir() if c.suffix.lower() == ".pdf" and c.is_file() and not c.is_symlink())
    named = [p for p in pdfs if p.name.lower().endswith("sssp_report.pdf")]
    return (named or pdfs or [None])[0] if len(named) == 1 or len(pdfs) == 1 else None


def _loose_files(files: list[Path]) -> list[Submission]:
    """Files side by side in one folder: packages and reports, grouped by the student their
    LMS download name gives (Blackboard's latest attempt wins)."""
    packages: dict[str, Path] = {}
    reports: dict[str, Path] = {}
    everything: list[Submission] = []
    for path in files:
        student, _, _ = _lms_name(path)
        if _archive_kind(path):
            everything.append(Submission(student, path, _archive_kind(path)))
            packages[student] = path
        elif path.suffix.lower() == ".pdf":
            reports[student] = path
    found = [dataclasses.replace(item, report=reports.get(item.student)) for item in _latest_of_each(everything)]
    found.sort(key=lambda item: item.student)
    found += [Submission(student, path, "file", path) for student, path in sorted(reports.items())
              if student not in packages]      # a report but no package: graded, the build says why
    return found


def _lms_patterned(name: str) -> bool:
    return any(pattern.match(name) for pattern in (_BLACKBOARD, _MOODLE, _CANVAS))


def _lms_name(path: Path) -> tuple[str, str, str]:
    """(student, attempt stamp or '', the file's own name) from an LMS download name."""
    name = path.name
    match = _BLACKBOARD.match(name)
    if match:
        return safe_student(match["user"]), match["date"], match["file"] or name
    match = _MOODLE.match(name)
    if match:
        return safe_student(f"{match['name']}_{match['id']}"), "", match["file"]
    match = _CANVAS.match(name)
    if match:
        return safe_student(f"{match['name']}_{match['id']}"), "", match["file"]
    own = student_id(path) if _archive_kind(path) else path.stem
    for suffix in ("_sssp_report", "_report"):
        own = own[: -len(suffix)] if own.endswith(suffix) and len(own) > len(suffix) else own
    return safe_student(own), "", name


def _gradescope(export: Path) -> list[Submission]:
    """Gradescope's export: each submission_<id>/ folder, named by its submitters."""
    submitters = _gradescope_submitters((export / GRADESCOPE_METADATA).read_text(errors="replace"))
    found = []
    for child in sorted(export.iterdir()):
        if child.is_dir() and not child.is_symlink() and child.name.startswith("submission_"):
            people = submitters.get(child.name) or [child.name]
            found.append(_student_folder(child, safe_student("+".join(people))))
    return found


def _gradescope_submitters(text: str) -> dict[str, list[str]]:
    """submission_<id> -> each submitter's SID (else e-mail, else name), read line by line (the
    export's YAML is flat enough; no YAML library needed)."""
    found: dict[str, list[dict]] = {}
    current = None
    for line in text.splitlines():
        top = re.match(r"^(submission_\d+):\s*$", line)
        if top:
            current = found.setdefault(top.group(1), [])
            continue
        field = re.match(r"^\s*(-\s*)?:(name|sid|email):\s*(.*?)\s*$", line)
        if current is None or field is None:
            continue
        if field.group(1) or not current:
            current.append({})
        current[-1][field.group(2)] = field.group(3).strip("'\"")
    result = {}
    for key, people in found.items():
        ids = [p.get("sid") or (p.get("email") or "").split("@")[0] or p.get("name") or "" for p in people]
        result[key] = [i for i in ids if i]
    return result
