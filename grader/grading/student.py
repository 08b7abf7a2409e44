"""Grading one student: unpack, build, run the matrix, score, publish (results.json, the page).

Called by grader.grading.classgrade for each submission; everything here is about one student,
and whatever goes wrong here is that student's (classgrade turns an exception into that
student's refusal, never the class's stop).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from pathlib import Path

from grader.grading import counterexamples, gradebook, mps_turn, reportpdf, reruns, schedule
from grader.grading.config import GradeRun
from grader.grading.diagnosis import results_test as diagnosis_test
from grader.grading.rubric import grader_failure, score
from grader.grading.submission import Refused, Submission, unpack_into
from grader.jail.boundary import remove_tree
from grader.progress import Progress
from grader.sweep.cellrun import run_cell
from grader.sweep.cells import expand
from grader.sweep.executors.celltask import tasks_for
from grader.sweep.identity import tree_digest
from sssp_common.files import write_text_atomically


def grade_one_guarded(submission: Submission, grading, graphs: dict, out: Path, *args, **kwargs) -> dict:
    """grade_one, with whatever it raises kept to this student: their refusal with one line
    (the exception's type and message, never a traceback), and the class goes on."""
    try:
        return grade_one(submission, grading, graphs, out, *args, **kwargs)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:   # noqa: BLE001 - one student's failure is never the class's
        why = f"the grader could not grade this submission ({type(error).__name__}: {_one_line(error)})"
        folder = out / submission.student
        entered = kwargs.get("entered") or {}       # staff's report score survives the refusal
        try:
            folder.mkdir(parents=True, exist_ok=True)
            return refused(submission.student, folder, grading, why, graphs,
                           {"found": "", "score": entered.get("score"), "comment": entered.get("comment", "")})
        except BaseException as second:   # noqa: BLE001 - even its refusal could not be written
            return {"score": 0.0, "max_score": 0.0, "tests": [], "built": False, "runs": {},
                    "refused": f"{why}; its refusal could not be written either ({_one_line(second)})"}


def _one_line(error: BaseException, cap: int = 300) -> str:
    text = " ".join(str(error).split())
    return text if len(text) <= cap else text[:cap] + "..."


def grade_one(submission: Submission, grading, graphs: dict, out: Path, work: Path, store, provenance,
              done: dict, quiet: bool, err, pool, entered: dict | None = None, classrun=None, shrink=True) -> dict:
    """done: run id -> latest row of what counts as already run (updated with the rows written)."""
    student = submission.student
    began = time.monotonic()
    classrun = classrun or schedule.ClassRun()
    folder = out / student
    folder.mkdir(parents=True, exist_ok=True)
    area = work / student
    remove_tree(area)
    area.mkdir(parents=True, mode=0o711)
    os.chmod(area, 0o711)
    try:   # as a uid of its own, never as root (grader.jail.boundary)
        unpacked = unpack_into(submission, area / "unpacked", dataclasses.replace(grading.limits, uid=grading.sandbox.uid))
    except Refused as error:
        return refused(student, folder, grading, "; ".join([*submission.notes, str(error)]), graphs,
                       report_facts(None, submission, grading, entered, folder))
    tree, notes = unpacked.top, [*submission.notes, *unpacked.notes]
    report = report_facts(tree, submission, grading, entered, folder)
    os.chmod(area / "unpacked", 0o700)     # the sources: not for other students' programs to read
    options = grading.build
    template = grading.matrix.command
    program_id = "submission@" + hashlib.sha256(json.dumps(
        [tree_digest(tree), options.recorded(), template]).encode()).hexdigest()[:24]
    cells = [c for c in expand(grading.matrix, program_id=program_id, label=student) if c.graph in graphs]
    todo = [c for c in cells if c.run_id not in done or grader_failure(done[c.run_id])]
    plan = reruns.Plan(grading.reruns, cells, todo, done)   # [grading] reruns: the runs the verdicts need
    todo = plan.pending
    previous_build = _read_json(folder / "build.json")
    extra = {"program_id": program_id, "build_options": options.recorded(), "student": student,
             "report_found": report["found"], **({"output": "; ".join(notes)} if notes else {})}
    if plan.skipped():
        extra["skipped_runs"] = plan.skipped()
    if not todo and previous_build.get("program_id") == program_id:
        built = previous_build
    elif not unpacked.makefile:   # nothing to build: say what is there instead, in one line
        built = {"program_id": program_id, "built": False, "cleaned": None, "detail": unpacked.found,
                 "rewrites": [], "program": None}
        write_text_atomically(folder / "build.log", "".join(f"grader: {n}\n" for n in notes) + built["detail"] + "\n")
        write_text_atomically(folder / "build.json", json.dumps(built, indent=2, default=str))
    else:
        result = classrun.build(tree, area, options, grading.sandbox)
        built = {"program_id": program_id, "built": result.built, "cleaned": result.cleaned, "detail": result.detail,
                 "rewrites": result.rewrites, "seconds": round(result.seconds, 2), "protections": result.protections,
                 "program": str(result.program) if result.program else None}
        write_text_atomically(folder / "build.log", "".join(f"grader: {n}\n" for n in notes) + result.log)
        write_text_atomically(folder / "build.json", json.dumps(built, indent=2, default=str))
    rows = {c.run_id: done[c.run_id] for c in cells if c.run_id in done}
    data = publish(folder, student, grading, built, cells, rows, extra, report=report)

    def summarised(data: dict) -> dict:   # what the console's closing table needs of a student
        return {**data, "built": built["built"],
                "runs": {"ok": sum(1 for r in rows.values() if r.get("status") == "ok"), "total": len(cells),
                         "tried": len(rows) if built["built"] else 0}}

    if built["built"] and todo:
        runner = GradeRun(name=grading.matrix.name, command=template, config_dir=grading.matrix.config_dir,
                          timeout_s=grading.matrix.timeout_s, sentinels=grading.matrix.sentinels,
                          sandbox=grading.sandbox, patterns=grading.patterns, program_path=Path(built["program"]),
                          record_extra={"student": student, "build_options": options.recorded()})
        progress = Progress(len(todo), unit="runs", label=student, stream=err, quiet=quiet)
        make = lambda chosen, with_runner: {t.cell.run_id: t for t in tasks_for(chosen, graphs, with_runner,  # noqa: E731
                                                                                provenance, run_cell)}
        say = lambda line: print(line, file=err)   # noqa: E731
        with mps_turn.turn(classrun, runner, student, grading.sandbox.uid, say) as turn:   # plain without --mps
            for task, row in mps_turn.rows_of(pool, make, plan.now, turn, plan.after):   # each row written once
                store.append(row)
                rows[task.cell.run_id] = done[task.cell.run_id] = row
                if plan.skipped():
                    extra["skipped_runs"] = plan.skipped()
                data = publish(folder, student, grading, built, cells, rows, extra, page=False, report=report)
                progress.update(1, label=f"{student}: {task.cell.label}", status=row["status"])
        if turn.notes:
            extra["mps"] = turn.notes
        if plan.skipped():   # the last row's skips are known only once the loop has ended
            extra["skipped_runs"] = plan.skipped()
        progress.close()
        # compute-sanitizer before the last publish: its findings go into results.json and the page
        schedule.diagnose(classrun, student, folder, tree, area, program_id, rows, cells, graphs, grading,
                          built, began)
        def finish(allowance) -> dict:
            """Each wrong method shrunk to its smallest failing graph, the others tried on small random
            ones, within the student's part of the class's runs; then the results published again."""
            counterexamples.for_student(folder, program_id, list(rows.values()), cells, graphs, runner, provenance,
                                        allowance, grading.counterexamples, err=None if quiet else err,
                                        submit=schedule.correctness_job(classrun, counterexamples.job))
            return summarised(publish(folder, student, grading, built, cells, rows, extra, report=report))

        if shrink:   # after the class's runs, the class's budget shared (schedule.counterexamples_after_class)
            classrun.later.append((student, finish, counterexamples.demand(list(rows.values()), grading.counterexamples)))
        data = publish(folder, student, grading, built, cells, rows, extra, report=report)
    return summarised(data)


def rows_as_they_come(pool, tasks: dict):
    """(task, row) per submitted run as it comes back, tasks emptied as they do (mps_turn.rows_of
    for tasks already sent, without MPS): a run the harness could not judge is sent once more and
    only its second row counts (rubric.grader_failure says why)."""
    yield from mps_turn.rows_of(pool, None, [], mps_turn.Turn(None), sent=tasks)


def publish(folder, student, grading, built, cells, rows, extra, page=True, report=None) -> dict:
    tests = score(grading.rubric, built, cells, rows, report)
    tests = tests + diagnosis_test(folder, extra.get("program_id", ""), grading.rubric.visibility)
    tests = tests + counterexamples.results_tests(folder, extra.get("program_id", ""), grading.rubric.visibility,
                                                  grading.rubric.random_search)
    data = gradebook.results_json(tests, extra=extra, decimals=grading.rubric.decimals)
    gradebook.write_results(folder, data)
    if page:
        log = (folder / "build.log").read_text(errors="replace") if (folder / "build.log").exists() else ""
        ordered = [rows[c.run_id] for c in cells if c.run_id in rows]
        gradebook.write_page(folder, student=student, data=data, rows=ordered, build_log=log,
                             rewrites=built.get("rewrites") or [])
    return data


def report_facts(tree, submission: Submission, grading, entered: dict | None, folder: Path) -> dict:
    """What was found of the report (pages counted once per PDF content: folder/report.json)
    and the score staff entered, if any."""
    rubric = grading.rubric
    path, how = reportpdf.find(tree, submission.report, rubric.report_file)
    facts = reportpdf.describe(path, how, rubric.report_file, rubric.report_min_pages, memo=folder / "report.json")
    return {**facts, "score": (entered or {}).get("score"), "comment": (entered or {}).get("comment", "")}


def refused(student: str, folder: Path, grading, why: str, graphs: dict, report: dict) -> dict:
    """Scored out of the same maximum as everyone: every cell of the matrix, none run."""
    cells = [c for c in expand(grading.matrix, program_id="refused", label=student) if c.graph in graphs]
    tests = score(grading.rubric, {"built": False, "cleaned": None, "detail": f"submission refused: {why}"}, cells, {},
                  report)
    data = gradebook.results_json(tests, output=f"submission refused: {why}", decimals=grading.rubric.decimals,
                                  extra={"program_id": "", "student": student, "report_found": report["found"]})
    gradebook.write_results(folder, data)
    gradebook.write_page(folder, student=student, data=data, rows=[], build_log="", rewrites=[], refused=why)
    return {**data, "built": False, "runs": {}, "refused": why}


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
