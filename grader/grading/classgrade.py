"""Grading a class: the matrix and graphs readied once, each submission graded
(grader.grading.student) with its failures kept to itself, then what comes after the last
student (counterexamples with --jobs, similarity, the class page), the class files and the
console's closing table.

Exit status (grade_class's return): see EXIT_STATUS.
"""
from __future__ import annotations

import dataclasses
import os
import signal
import sys
import time
from pathlib import Path

from grader.grading import classpage, gradebook, lms as lms_export, manual, schedule
from grader.grading.config import load_grading
from grader.grading.layouts import discover
from grader.grading.points import shown
from grader.grading.privacy import set_access
from grader.grading.student import grade_one_guarded, remove_tree
from grader.grading.submission import Refused
from grader.jail.bwrap import unavailable as jail_unavailable
from grader.jail.mps import unavailable as mps_unavailable
from grader.jail.sandbox import session_root
from grader.sweep.cells import expand, graph_label
from grader.sweep.config import ConfigError
from grader.sweep.executors import open_pool_or_say
from grader.sweep.executors.celltask import run_task
from grader.sweep.graphs import GraphUnavailable, check_available, prepare_graph, sigterm_as_interrupt
from grader.sweep.store import LockedResults, ResultsLocked
from sssp_common.files import REPO_ROOT
from sssp_common.record import latest_by_run_id, machine, project_commit, read_rows

DEFAULT_CONFIG = Path("configs/grading.toml")
INTERRUPTED = 130
REFUSED = 3

EXIT_STATUS = """\
exit status: 0 every submission graded, whatever its score; 1 graded, but not one submission
that was not refused built, or not one run of any built submission was right (suspect the
machine: compiler, make, GPU, driver, timeout; said on stderr); 2 bad usage, config, a graph of
the matrix missing or failing verification (nothing graded; the line gives the fetch command),
DIR/report_scores.csv or --roster file; 3 graded, but some submissions were refused (unreadable
or unsafe uploads, or the grader failed on them: each named on stderr, the rest of the class
graded; 1 wins when its case holds too); 130 interrupted (rerun to resume)"""


def grade_class(submissions, out: Path, config: Path | None = None, scale=None, graphs=None, methods=None, reps=None,
        timeout=None, cache_dir: Path | None = None, quiet=False, nvcc=None, arch=None, force=False,
        unsafe=False, share="none",
        jobs=1, sample_code=None, sanitizer=None, diagnose=True, shrink=True,
        stdout=None, err=None, executor=None, workers=None, scheduler=None, rubric=None,
        lms=None, roster=None, assignment=None, mps=False) -> int:
    """0: every submission graded (whatever its score); 1: graded, but no run of any built submission
    was right (suspect the machine); 2: bad usage, config or report_scores.csv; 130: interrupted.
    executor, workers, scheduler: where the runs go (grader.sweep.executors; default: the matrix's, else local).
    lms, roster, assignment: also DIR/gradebook-<lms>.csv for that LMS's import (grader.grading.lms).
    mps (or [grading] mps = true): each student's runs as clients of their own MPS daemon, one
    student at a time per GPU (grader.grading.mps_turn)."""
    stdout, err = stdout or sys.stdout, err or sys.stderr
    config = Path(config) if config else (DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else REPO_ROOT / DEFAULT_CONFIG)
    try:
        grading = load_grading(config, nvcc=nvcc, arch=arch, scale=scale, graphs=graphs, methods=methods,
                               reps=reps, timeout=timeout, rubric=rubric)
        check_available(grading.matrix)   # a missing graph would grade the class on fewer runs: refused
        found = discover(list(submissions))
        report_scores = manual.read_scores(Path(out) / manual.FILE, grading.rubric.report)
        if (lms is None) != (roster is None):
            raise lms_export.RosterError("--lms and --roster go together: --lms canvas|moodle --roster FILE "
                                         "(a CSV with a 'folder' column and the LMS's student ids)")
        class_roster = lms_export.read_roster(roster, lms) if lms else None
    except (ConfigError, Refused, manual.ManualScoresError, lms_export.RosterError) as error:
        print(f"grader grade: {error}", file=err)
        return 2
    if not found:
        print("grader grade: no submissions found", file=err)
        return 2
    if clash := _out_overlaps(Path(out), [Path(p) for p in submissions] + [Path(s.source) for s in found]):
        print(f"grader grade: {clash}", file=err)
        return 2
    if unsafe:   # as before the jail: the sandbox user, limits and cgroups only
        grading = dataclasses.replace(grading, sandbox=dataclasses.replace(grading.sandbox, jail=False))
        print("grader grade: --unsafe: builds and runs are NOT jailed: a submission can read and run what the "
              "sandbox user can reach (other students' builds among them); every record says so", file=err)
    elif why := jail_unavailable():
        print(f"grader grade: no jail, so no grading: {why} (--unsafe grades without one)", file=err)
        return 2
    mps = mps or grading.mps
    if mps and (why := mps_refusal(unsafe, executor or grading.matrix.executor)):
        print(f"grader grade: --mps: {why}", file=err)   # before anything is built, run or written
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
    classrun = schedule.start(jobs, sanitizer, diagnose, force, mps=mps)
    pool = schedule.open_pool(classrun, run_task) if jobs > 1 or mps else \
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
    summary = {}
    try:
        for entry in matrix.graphs:
            name = graph_label(entry)
            orderings = {c.ordering for c in expand(matrix, graphs=(entry,))}
            try:
                graphs_ready[name] = prepare_graph(entry, matrix, orderings, cache_dir)
            except GraphUnavailable as why:   # every student is graded on the whole matrix, or none is
                print(f"grader grade: graph {name} cannot be prepared, so no grading: {why}", file=err)
                return 2
        classrun.timed = schedule.timed_graphs(graphs_ready) if classrun.pool is not None else set()
        shared_store = schedule.LockedStore(store, classrun.store_lock)
        # the results file read once (this grader holds its lock), then kept up to date by grade_one
        recorded = latest_by_run_id(read_rows(store.path, warn=None)) if not force else None
        def one(submission):   # a thread per student in flight when --jobs > 1
            return grade_one_guarded(submission, grading, graphs_ready, out, work, shared_store,
                                     provenance, {} if force else recorded, quiet, err, pool,
                                     entered=report_scores.get(submission.student, {}), classrun=classrun,
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
        remove_tree(work)
    rows = [r for r in latest_by_run_id(read_rows(out / "runs.jsonl", warn=None)).values()]
    board_rows = [r for r in rows if r.get("ran_alone") is not False]   # --jobs: concurrent runs' times are not ranked
    everyone = gradebook.class_results(out)          # this run's students and those graded before
    gradebook.write_gradebook(out, everyone)
    gradebook.write_leaderboard(out, gradebook.students_rows(everyone, board_rows))
    if class_roster is not None:
        exported, notes = lms_export.write_export(out, class_roster, everyone, assignment)
        for note in notes:
            print(f"grader grade: {note}", file=err)
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
        places = grading.rubric.decimals      # written as gradebook.csv and the pages write it
        print(f"{student:<{width}}  {shown(data['score'], places):>7} / {shown(data['max_score'], places):<5}  "
              f"build {'ok' if data.get('built') else 'FAILED'}  runs ok {runs.get('ok', 0)}/{runs.get('total', 0)}"
              + ("  report pending" if pending else ""), file=stdout)
    print(f"per student: {out}/<student>/results.json, index.html; class ({len(everyone)} students): "
          f"{out}/gradebook.csv, {out}/leaderboard.csv; report scores: {out}/{manual.FILE}"
          + (f"; for {lms}'s import: {exported}" if class_roster is not None else ""), file=stdout)
    refusals = {s: d["refused"] for s, d in summary.items() if d.get("refused")}
    for name, why in sorted(refusals.items()):
        print(f"grader grade: {name}: refused: {why}", file=err)
    if refusals:
        print(f"grader grade: {len(refusals)} of {len(summary)} submissions refused (scored as nothing handed "
              f"in; the rest of the class is graded)", file=err)
    tried = sum(d.get("runs", {}).get("tried", 0) for d in summary.values())
    unrefused = [d for d in summary.values() if not d.get("refused")]
    if unrefused and not any(d.get("built") for d in unrefused):
        print(f"grader grade: not one of {len(unrefused)} submissions built: check the machine (compiler, make, "
              f"nvcc, --arch) and the build logs ({out}/<student>/build.log) before publishing these grades",
              file=err)
        return 1
    if tried and not any(d.get("runs", {}).get("ok") for d in summary.values()):
        print(f"grader grade: not one of {tried} runs was right, for any submission: check the machine "
              f"(GPU, driver, timeout) before publishing these grades", file=err)
        return 1
    return REFUSED if refusals else 0


def mps_refusal(unsafe: bool, executor: str) -> str:
    """'' when --mps can be used; else why not (one line)."""
    if unsafe:
        return "an MPS client runs in the jail (its daemon's folders bound in): not with --unsafe"
    if executor != "local":
        return f"MPS serves the runs on this machine's GPUs: not with the {executor} executor"
    return mps_unavailable()


def _out_overlaps(out: Path, sources: list[Path]) -> str:
    """Why --out may not be used with these submissions ('' when it may): the results folder
    must not be, or lie inside, a submission (the grader would write among a student's files),
    nor hold one (the next grade would take the results for a student)."""
    where = Path(os.path.realpath(out))
    for source in sources:
        real = Path(os.path.realpath(source))
        if where == real or where.is_relative_to(real):
            return f"--out {out} is inside {source} (a submission, or a folder of them): choose a folder outside it"
        if real.is_relative_to(where):
            return f"the submission {source} is inside --out {out}: choose a results folder outside it"
    return ""

