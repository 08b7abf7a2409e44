"""`python -m grader grade SUBMISSION... --out DIR`: build and run students' submissions, isolated, over
the grading matrix; score them; write results.json and index.html per student and a gradebook.

Per submission: unpack safely (grader.grading.submission), key it by its content (grader.sweep.identity),
build it in the sandbox (grader.grading.build), run every cell of the matrix with the same runner
as `grader sweep` (grader.sweep.cellrun), score with the rubric (grader.grading.rubric) after every run,
and rewrite DIR/<student>/results.json atomically. Runs go to DIR/runs.jsonl (a lock keeps a
second grader off it); a rerun skips every run a submission with the same content has done.
The class files (gradebook.csv, leaderboard.csv) are rebuilt from every student folder in DIR,
so grading one student again, or a late one, keeps the class. The report's score is staff's:
DIR/report_scores.csv (grader.grading.manual).

Exit status: 0 every submission graded, whatever its score; 1 every submission graded, but not
one run of any built submission was right (most likely the grading machine: no GPU, a driver,
too short a timeout; check before publishing); 2 bad usage, config or report_scores.csv;
130 interrupted.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

from grader.grading import classpage, counterexamples, gradebook, schedule
from grader.grading.diagnosis import results_test as diagnosis_test
from grader.grading.privacy import SHARE_CHOICES, set_access
from grader.jail.bwrap import unavailable as jail_unavailable
from grader.sweep.cells import expand, graph_label
from grader.sweep.cellrun import run_cell
from grader.commands.options import add_matrix_arguments
from grader.sweep.graphs import GraphUnavailable, prepare_graph, sigterm_as_interrupt
from grader.sweep.config import ConfigError
from grader.sweep.executors import open_pool_or_say
from grader.sweep.executors.celltask import failure_row, run_task, tasks_for
from grader.grading.config import GradeRun, load_grading
from grader.sweep.identity import tree_digest
from grader.progress import Progress
from grader.grading.rubric import grader_failure, score
from grader.jail.sandbox import session_root
from grader.sweep.store import LockedResults, ResultsLocked
from grader.grading import manual, reportpdf
from grader.grading.layouts import discover
from grader.grading.submission import Refused, Submission, has_makefile, unpack, what_was_found
from sssp_common.files import REPO_ROOT, write_text_atomically
from sssp_common.record import latest_by_run_id, machine, project_commit, read_rows

HELP = "build, run and score students' submissions (Gradescope results.json, gradebook.csv)"
DEFAULT_CONFIG = Path("configs/grading.toml")
INTERRUPTED = 130


EXIT_STATUS = """\
exit status: 0 every submission graded, whatever its score; 1 graded, but not one run of any
built submission was right (suspect the machine: GPU, driver, timeout); 2 bad usage, config or
DIR/report_scores.csv; 130 interrupted (rerun to resume)"""


def add_arguments(parser) -> None:
    parser.epilog = EXIT_STATUS
    parser.add_argument("submissions", nargs="+", type=Path, metavar="SUBMISSION",
                        help="a submission folder or .tgz/.tar.gz/.zip, or a folder of them (one per student)")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="where results go")
    add_matrix_arguments(parser, default_config=str(DEFAULT_CONFIG))
    parser.add_argument("--rubric", type=Path, metavar="PATH", help="a rubric instead of the config's (default "
                        "configs/rubric.toml, the spec's weights; configs/rubric-gate.toml: the spec's literal "
                        "0 for any failed correctness test)")
    parser.add_argument("--nvcc", metavar="PATH", help="compatibility: rewrite hard-coded nvcc paths in Makefiles to PATH")
    parser.add_argument("--arch", metavar="sm_XX", help="compatibility: rewrite -arch/-gencode flags in Makefiles to -arch=sm_XX")
    parser.add_argument("--force", action="store_true", help="build and run again even what is already graded")
    parser.add_argument("--unsafe", action="store_true",
                        help="build and run WITHOUT the bubblewrap jail (said on the console and in every record): "
                             "a submission can then read and run what the sandbox user can reach")
    parser.add_argument("--share", choices=SHARE_CHOICES, default="none",
                        help="who may read DIR once grading ends: none (the grader's user only, the default), "
                             "the group, or all; while grading it is the grader's user's alone")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="correctness runs of different students N at a time on one GPU (admitted by free GPU memory), timing runs (the largest graph's) alone; builds beside the runs (default 1: one run at a time)")
    parser.add_argument("--sample-code", type=Path, metavar="DIR",
                        help="the course's sample code: left out of the similarity check")
    parser.add_argument("--sanitizer", metavar="PATH", help="the compute-sanitizer to diagnose failures with (default: on PATH or in /usr/local/cuda/bin, when a GPU is visible)")
    parser.add_argument("--no-diagnosis", action="store_true", help="no compute-sanitizer runs")
    parser.add_argument("--no-shrink", action="store_true",
                        help="no counterexamples (each wrong method shrunk to its smallest failing graph; the "
                             "right ones tried on small random graphs)")


def run_from_args(args) -> int:
    return run(args.submissions, out=args.out, config=args.config, scale=args.scale, graphs=args.graphs,
               methods=args.methods, reps=args.reps, timeout=args.timeout, cache_dir=args.cache_dir,
               quiet=args.quiet, nvcc=args.nvcc, arch=args.arch, force=args.force, unsafe=args.unsafe, share=args.share,
               jobs=args.jobs, sample_code=args.sample_code, sanitizer=args.sanitizer,
               diagnose=not args.no_diagnosis, shrink=not args.no_shrink,
               executor=args.executor, workers=args.workers, scheduler=args.scheduler, rubric=args.rubric)


def run(submissions, out: Path, config: Path | None = None, scale=None, graphs=None, methods=None, reps=None,
        timeout=None, cache_dir: Path | None = None, quiet=False, nvcc=None, arch=None, force=False,
        unsafe=False, share="none",
        jobs=1, sample_code=None, sanitizer=None, diagnose=True, shrink=True,
        stdout=None, err=None, executor=None, workers=None, scheduler=None, rubric=None) -> int:
    """0: every submission graded (whatever its score); 1: graded, but no run of any built submission
    was right (suspect the machine); 2: bad usage, config or report_scores.csv; 130: interrupted.
    executor, workers, scheduler: where the runs go (grader.sweep.executors; default: the matrix's, else local)."""
    stdout, err = stdout or sys.stdout, err or sys.stderr
    config = Path(config) if config else (DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else REPO_ROOT / DEFAULT_CONFIG)
    try:
        grading = load_grading(config, nvcc=nvcc, arch=arch, scale=scale, graphs=graphs, methods=methods,
                               reps=reps, timeout=timeout, rubric=rubric)
        found = discover(list(submissions))
        report_scores = manual.read_scores(Path(out) / manual.FILE, grading.rubric.report)
    except (ConfigError, Refused, manual.ManualScoresError) as error:
        print(f"grader grade: {error}", file=err)
        return 2
    if not found:
        print("grader grade: no submissions found", file=err)
        return 2
    if unsafe:   # as before the jail: the sandbox user, limits and cgroups only
        grading = dataclasses.replace(grading, sandbox=dataclasses.replace(grading.sandbox, jail=False))
        print("grader grade: --unsafe: builds and runs are NOT jailed: a submission can read and run what the "
              "sandbox user can reach (other students' builds among them); every record says so", file=err)
    elif why := jail_unavailable():
        print(f"grader grade: no jail, so no grading: {why} (--unsafe grades without one)", file=err)
        return 2
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    set_access(out, "none")      # private while grading: classmates' results are nobody else's business
    try:
        store = LockedResults(out / "runs.jsonl")
    except ResultsLocked as error:
        print(f"grader grade: {error}", file=err)
        return 2
    os.chmod(out / "runs.jsonl", 0o600)
    matrix = grading.matrix
    if jobs < 1 or (jobs > 1 and (executor or matrix.executor) != "local"):
        print(f"grader grade: --jobs {jobs}: must be at least 1, and above 1 only with the local executor", file=err)
        store.close()
        return 2
    if sample_code is not None and not Path(sample_code).is_dir():
        print(f"grader grade: --sample-code {sample_code}: not a folder", file=err)
        store.close()
        return 2
    classrun = schedule.start(jobs, sanitizer, diagnose, force)
    pool = schedule.open_pool(classrun, run_task) if jobs > 1 else \
        open_pool_or_say(run_task, matrix, executor=executor, workers=workers, scheduler=scheduler,
                         command="grader grade", err=err)
    if pool is None:
        store.close()
        return 2
    cache_dir = Path(cache_dir) if cache_dir else matrix.cache_dir
    provenance = {"machine": machine(), "commit": project_commit()}
    work = session_root() / "grade"
    work.mkdir(mode=0o711, exist_ok=True)   # passable, not listable: student ids stay unseen
    os.chmod(work, 0o711)
    previous = sigterm_as_interrupt()
    began = time.monotonic()
    graphs_ready: dict[str, object] = {}
    skipped: dict[str, str] = {}
    summary = {}
    try:
        for entry in matrix.graphs:
            name = graph_label(entry)
            orderings = {c.ordering for c in expand(matrix, graphs=(entry,))}
            try:
                graphs_ready[name] = prepare_graph(entry, matrix, orderings, cache_dir)
            except GraphUnavailable as why:
                skipped[name] = str(why)
                print(f"grader grade: skipped graph {name}: {why}", file=err)
        classrun.timed = schedule.timed_graphs(graphs_ready) if jobs > 1 else set()
        shared_store = schedule.LockedStore(store, classrun.store_lock)
        # the results file read once (this grader holds its lock), then kept up to date by grade_one
        recorded = latest_by_run_id(read_rows(store.path, warn=None)) if not force else None
        def one(submission):   # a thread per student in flight when --jobs > 1
            return grade_one(submission, grading, graphs_ready, out, work, shared_store,
                             provenance, {} if force else recorded, quiet, err, pool, report_scores.get(submission.student, {}), classrun=classrun,
                             shrink=shrink)

        for submission, data in schedule.each_student(found, one, classrun.lanes):
            summary[submission.student] = data
        summary.update(schedule.counterexamples_after_class(classrun, time.monotonic() - began))
        similar = schedule.after_class(out, work, list(summary), sample_code)
    except KeyboardInterrupt:
        print(f"\ninterrupted; results so far are in {out}; rerun to resume", file=err)
        return INTERRUPTED
    finally:
        classrun.close()
        pool.close(cancel=True)   # nothing is in flight unless interrupted: then the runs are stopped
        store.close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        _remove(work)
    rows = [r for r in latest_by_run_id(read_rows(out / "runs.jsonl", warn=None)).values()]
    board_rows = [r for r in rows if r.get("ran_alone") is not False]   # --jobs: concurrent runs' times are not ranked
    everyone = gradebook.class_results(out)          # this run's students and those graded before
    gradebook.write_gradebook(out, everyone)
    gradebook.write_leaderboard(out, gradebook.students_rows(everyone, board_rows))
    manual.record_found(out / manual.FILE, {s: d.get("report_found", "") for s, d in summary.items()},
                        grading.rubric.report)
    page = classpage.write(out, rows, similar)
    top = similar["pairs"][0] if similar["pairs"] else None
    print(f"class page: {page}" + (f" (most similar sources: {top['a']} and {top['b']}, {top['score']:.2f})" if top else ""),
          file=stdout)
    set_access(out, share)
    width = max(len(s) for s in summary)
    for student, data in sorted(summary.items()):
        runs = data.get("runs", {})
        pending = any((t.get("extra_data") or {}).get("entered") is False for t in data["tests"])
        print(f"{student:<{width}}  {round(data['score'], 2):>7g} / {data['max_score']:<5g}  "
              f"build {'ok' if data.get('built') else 'FAILED'}  runs ok {runs.get('ok', 0)}/{runs.get('total', 0)}"
              + ("  report pending" if pending else ""), file=stdout)
    for name, why in skipped.items():
        print(f"skipped graph {name}: {why}", file=stdout)
    print(f"per student: {out}/<student>/results.json, index.html; class ({len(everyone)} students): "
          f"{out}/gradebook.csv, {out}/leaderboard.csv; report scores: {out}/{manual.FILE}", file=stdout)
    tried = sum(d.get("runs", {}).get("tried", 0) for d in summary.values())
    if tried and not any(d.get("runs", {}).get("ok") for d in summary.values()):
        print(f"grader grade: not one of {tried} runs was right, for any submission: check the machine "
              f"(GPU, driver, timeout) before publishing these grades", file=err)
        return 1
    return 0


def grade_one(submission: Submission, grading, graphs: dict, out: Path, work: Path, store, provenance,
              done: dict, quiet: bool, err, pool, entered: dict | None = None, classrun=None, shrink=True) -> dict:
    """done: run id -> latest row of what counts as already run (updated with the rows written)."""
    student = submission.student
    began = time.monotonic()
    classrun = classrun or schedule.ClassRun()
    folder = out / student
    folder.mkdir(parents=True, exist_ok=True)
    area = work / student
    _remove(area)
    area.mkdir(parents=True, mode=0o711)
    os.chmod(area, 0o711)
    try:
        tree = unpack(submission, area / "unpacked", grading.limits)
    except Refused as error:
        return _refused(student, folder, grading, str(error), graphs, _report(None, submission, grading, entered, folder))
    report = _report(tree, submission, grading, entered, folder)
    os.chmod(area / "unpacked", 0o700)     # the sources: not for other students' programs to read
    options = grading.build
    template = grading.matrix.command
    program_id = "submission@" + hashlib.sha256(json.dumps(
        [tree_digest(tree), options.recorded(), template]).encode()).hexdigest()[:24]
    cells = [c for c in expand(grading.matrix, program_id=program_id, label=student) if c.graph in graphs]
    todo = [c for c in cells if c.run_id not in done or grader_failure(done[c.run_id])]
    previous_build = _read_json(folder / "build.json")
    extra = {"program_id": program_id, "build_options": options.recorded(), "student": student,
             "report_found": report["found"]}
    if not todo and previous_build.get("program_id") == program_id:
        built = previous_build
    elif not has_makefile(tree):   # nothing to build: say what is there instead, in one line
        built = {"program_id": program_id, "built": False, "cleaned": None, "detail": what_was_found(tree),
                 "rewrites": [], "program": None}
        write_text_atomically(folder / "build.log", built["detail"] + "\n")
        write_text_atomically(folder / "build.json", json.dumps(built, indent=2, default=str))
    else:
        result = classrun.build(tree, area, options, grading.sandbox)
        built = {"program_id": program_id, "built": result.built, "cleaned": result.cleaned, "detail": result.detail,
                 "rewrites": result.rewrites, "seconds": round(result.seconds, 2), "protections": result.protections,
                 "program": str(result.program) if result.program else None}
        write_text_atomically(folder / "build.log", result.log)
        write_text_atomically(folder / "build.json", json.dumps(built, indent=2, default=str))
    rows = {c.run_id: done[c.run_id] for c in cells if c.run_id in done}
    data = _publish(folder, student, grading, built, cells, rows, extra, report=report)

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
        tasks = {task.cell.run_id: task for task in tasks_for(todo, graphs, runner, provenance, run_cell)}
        for key, task in tasks.items():
            pool.submit(key, task)
        for outcome in pool.drain(wait=True):   # the rows as they come back, each written once
            task = tasks.pop(outcome.key, None)
            if task is None:
                continue
            row = outcome.row if outcome.row is not None else failure_row(task, outcome.error)
            store.append(row)
            rows[task.cell.run_id] = done[task.cell.run_id] = row
            data = _publish(folder, student, grading, built, cells, rows, extra, page=False, report=report)
            progress.update(1, label=f"{student}: {task.cell.label}", status=row["status"])
        progress.close()
        # compute-sanitizer before the last publish: its findings go into results.json and the page
        schedule.diagnose(classrun, student, folder, tree, area, program_id, rows, cells, graphs, grading,
                          built, began)
        def finish(spent_s: float) -> dict:
            """Each wrong method shrunk to its smallest failing graph, the others tried on small random
            ones, within a share of spent_s; then the student's results published again."""
            counterexamples.for_student(folder, program_id, list(rows.values()), cells, graphs, runner, provenance,
                                        spent_s, grading.counterexamples, err=None if quiet else err,
                                        submit=schedule.correctness_job(classrun, counterexamples.job))
            return summarised(_publish(folder, student, grading, built, cells, rows, extra, report=report))

        if shrink and classrun.jobs > 1:   # after the class's runs (schedule.counterexamples_after_class)
            classrun.later.append((student, finish))
        elif shrink:
            return finish(time.monotonic() - began)
        data = _publish(folder, student, grading, built, cells, rows, extra, report=report)
    return summarised(data)


def _publish(folder, student, grading, built, cells, rows, extra, page=True, report=None) -> dict:
    tests = score(grading.rubric, built, cells, rows, report)
    tests = tests + diagnosis_test(folder, extra.get("program_id", ""), grading.rubric.visibility)
    tests = tests + counterexamples.results_tests(folder, extra.get("program_id", ""), grading.rubric.visibility,
                                                  grading.rubric.random_search)
    data = gradebook.results_json(tests, extra=extra)
    gradebook.write_results(folder, data)
    if page:
        log = (folder / "build.log").read_text(errors="replace") if (folder / "build.log").exists() else ""
        ordered = [rows[c.run_id] for c in cells if c.run_id in rows]
        gradebook.write_page(folder, student=student, data=data, rows=ordered, build_log=log,
                             rewrites=built.get("rewrites") or [])
    return data


def _report(tree, submission: Submission, grading, entered: dict | None, folder: Path) -> dict:
    """What was found of the report (pages counted once per PDF content: folder/report.json)
    and the score staff entered, if any."""
    rubric = grading.rubric
    path, how = reportpdf.find(tree, submission.report, rubric.report_file)
    facts = reportpdf.describe(path, how, rubric.report_file, rubric.report_min_pages, memo=folder / "report.json")
    return {**facts, "score": (entered or {}).get("score"), "comment": (entered or {}).get("comment", "")}


def _refused(student: str, folder: Path, grading, why: str, graphs: dict, report: dict) -> dict:
    """Scored out of the same maximum as everyone: every cell of the matrix, none run."""
    cells = [c for c in expand(grading.matrix, program_id="refused", label=student) if c.graph in graphs]
    tests = score(grading.rubric, {"built": False, "cleaned": None, "detail": f"submission refused: {why}"}, cells, {},
                  report)
    data = gradebook.results_json(tests, output=f"submission refused: {why}",
                                  extra={"program_id": "", "student": student, "report_found": report["found"]})
    gradebook.write_results(folder, data)
    gradebook.write_page(folder, student=student, data=data, rows=[], build_log="", rewrites=[], refused=why)
    return {**data, "built": False, "runs": {}}


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _remove(path: Path) -> None:
    """rmtree that also gets through the read-only program copies."""
    if not path.exists():
        return
    for folder, dirs, _ in os.walk(path):
        for name in dirs:
            try:
                os.chmod(os.path.join(folder, name), 0o755)
            except OSError:
                pass
    try:
        os.chmod(path, 0o755)
    except OSError:
        pass
    shutil.rmtree(path, ignore_errors=True)
