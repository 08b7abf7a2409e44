"""Why a program is wrong: compute-sanitizer on the runs that failed, and on the methods whose
kernels use shared memory, after grading and within a share of its time.

For each student: every method with a wrong, crashed or timed-out run gets the tools on the
smallest graph it failed on (memcheck; racecheck where the sources use `__shared__`; synccheck;
initcheck); a method that passed, where the sources use shared memory, gets racecheck on its
smallest graph (a race can give right answers by luck: such a finding is a warning and costs
nothing; no finding ever changes a score). The program is a second build of the student's tree
with `-lineinfo` added after every nvcc in its Makefiles (so findings carry file:line), or the
graded build when that cannot be made. Each sanitizer run goes through the runner graded runs
use (grader.jail.runner.run_program), under the run's timeout.

Budget: a student's diagnosis may add at most BUDGET_SHARE of that student's grading time,
but their most useful tool run (memcheck of a failing method, else racecheck of the
shared-memory method) always runs (at most FLOOR_S or the run's timeout), so every student
with a failure gets a diagnosis however small the matrix; targets go in priority order, and
what did not fit is recorded as skipped, with why. So is everything skipped for want of
compute-sanitizer, of a GPU, or because the GPU refuses it ("Device not supported" on gVisor).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from grader.grading.build import build, edit_makefiles, replace_nvcc
from grader.grading.sanitizer_report import parse
from grader.jail.runner import run_program
from grader.sweep.cells import render_command

BUDGET_SHARE = 0.25
SANITIZER_DIRS = ("/usr/local/cuda/bin", "/usr/local/cuda/compute-sanitizer")
FAILED = ("wrong", "crash", "timeout")
PRINT_LIMIT = 20
FLOOR_S = 30.0                    # a student's most useful tool run gets this long even past the budget
SHARED_METHODS = ("segscan",)     # the spec's shared-memory method: its racecheck comes first among passing ones


@dataclass(frozen=True)
class Target:
    student: str
    method: str
    tool: str
    run_id: str                   # the graded run whose cell is repeated under the tool
    graph: str
    verdict: str                  # that run's status: ok | wrong | crash | timeout
    why: str
    priority: int                 # lower first


@dataclass
class ToolRun:
    target: Target
    seconds: float = 0.0
    status: str = ""              # ran | refused | timeout | error
    detail: str = ""
    findings: list = field(default_factory=list)   # sanitizer_report.Finding as dicts (with method, graph)
    total: int | None = None


def uses_shared_memory(tree: Path) -> bool:
    """Does any CUDA source of the tree declare __shared__ memory?"""
    for folder, dirs, names in os.walk(tree):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            path = Path(folder) / name
            if path.suffix in (".cu", ".cuh", ".h", ".hpp", ".inl") and not path.is_symlink():
                try:
                    if b"__shared__" in path.read_bytes()[: 4 << 20]:
                        return True
                except OSError:
                    pass
    return False


def plan(student: str, rows: list[dict], shared: bool) -> list[Target]:
    """The tool runs one student's graded rows call for, most useful first (pure).

    A failing method: its smallest failing graph (fewest vertices, then edges); a method that
    passed: its smallest graph, racecheck only, when the sources use shared memory."""
    by_method: dict[str, list[dict]] = {}
    for row in rows:
        if row.get("rep", 0) >= 0:
            by_method.setdefault(row["method"], []).append(row)
    targets = []
    size = lambda r: (r.get("graph_vertices") or 0, r.get("graph_edges") or 0, r["run_id"])  # noqa: E731
    for method, group in sorted(by_method.items()):
        failing = sorted((r for r in group if r.get("status") in FAILED), key=size)
        if failing:
            row = failing[0]
            tools = [("memcheck", 0)] + ([("racecheck", 1)] if shared else []) + [("synccheck", 4), ("initcheck", 5)]
            for tool, priority in tools:
                targets.append(Target(student, method, tool, row["run_id"], row["graph"], row["status"],
                                      f"{row['status']} on {row['graph']}", priority))
        elif shared:
            row = sorted(group, key=size)[0]
            targets.append(Target(student, method, "racecheck", row["run_id"], row["graph"], row.get("status", ""),
                                  "right answers; the sources use __shared__", 2 if method in SHARED_METHODS else 3))
    return sorted(targets, key=lambda t: (t.priority, t.method))


def find_sanitizer(path_env: str | None = None) -> str | None:
    found = shutil.which("compute-sanitizer", path=path_env if path_env is not None else os.environ.get("PATH"))
    if found:
        return found
    for folder in SANITIZER_DIRS:
        candidate = Path(folder) / "compute-sanitizer"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def add_lineinfo(tree: Path) -> list[str]:
    """-lineinfo after every nvcc word in the tree's Makefiles (not in comments); the changes."""
    def edit(line: str) -> str:
        if line.lstrip().startswith("#") or "-lineinfo" in line:
            return line
        return replace_nvcc(line, lambda word: word + " -lineinfo")   # linear in the line's length
    return edit_makefiles(tree, edit, lambda where, old, new: where)


def lineinfo_build(tree: Path, area: Path, options, sandbox, builder: Callable = build) -> tuple[str | None, str]:
    """(the -lineinfo build's program, what happened); None: use the graded build. A process-pool
    job: the build runs under this process's own sandbox uid."""
    area.mkdir(mode=0o711, parents=True, exist_ok=True)
    copy = area / "lineinfo-src"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(tree, copy, symlinks=True)
    changes = add_lineinfo(copy)
    if not changes:
        return None, "no nvcc line in the Makefiles to add -lineinfo to: the graded build is used"
    (area / "lineinfo").mkdir(mode=0o711, exist_ok=True)
    result = builder(copy, area / "lineinfo", options, sandbox)
    if not result.built:
        return None, f"the -lineinfo build failed ({result.detail}): the graded build is used"
    return str(result.program), f"-lineinfo added at {', '.join(changes[:4])}" + (" ..." if len(changes) > 4 else "")


def sanitize(sanitizer: str, tool: str, template: str, cell, input_path: Path, program: str, config_dir,
             timeout_s: float, sandbox, file_limit: int = 1 << 30) -> tuple[str, float, str, str]:
    """One tool run of one cell through the runner: (log text, wall seconds, status, detail)."""
    def argv(output_path: Path) -> list[str]:
        log = output_path.parent / "sanitizer.log"
        options = [sanitizer, "--tool", tool, "--print-limit", str(PRINT_LIMIT), "--log-file", str(log)]
        if tool == "racecheck":
            options += ["--racecheck-report", "analysis"]
        return options + render_command(template, cell, input_path, output_path, config_dir, sssp=Path(program))

    with run_program(argv, timeout_s, sandbox=sandbox, file_limit_bytes=file_limit) as result:
        log = result.output_path.parent / "sanitizer.log"
        try:
            with open(log, "rb") as handle:      # the tool's file (the program may have written it: findings never score)
                text = handle.read(4 << 20).decode("utf-8", "replace")
        except OSError:
            text = result.stdout_text
        if result.launch_error:
            return text, result.wall_s, "error", result.launch_error
        if result.timed_out:
            return text, result.wall_s, "timeout", f"stopped after {timeout_s:.1f} s (the run's timeout or what was left of the budget)"
        return text, result.wall_s, "ran", f"exit code {result.exit_code}" + (
            f"; stderr: {result.stderr_tail.strip()[-300:]}" if result.stderr_tail.strip() else "")


def run_target(job: dict) -> dict:
    """A process-pool job: one tool run; returns what the class report keeps."""
    began = time.monotonic()
    try:
        text, wall, status, detail = sanitize(job["sanitizer"], job["tool"], job["template"], job["cell"],
                                              job["input"], job["program"], job["config_dir"], job["timeout_s"],
                                              job["sandbox"])
    except (OSError, ValueError) as error:
        return {"status": "error", "detail": f"{type(error).__name__}: {error}", "seconds": time.monotonic() - began,
                "findings": [], "total": None}
    report = parse(text, job["tool"])
    if report.refused:
        status, detail = "refused", report.refused
    return {"status": status, "detail": detail, "seconds": round(time.monotonic() - began, 2),
            "findings": [f.as_dict() for f in report.findings], "total": report.total, "wall_s": wall}


def run_budgeted(submit, targets: list[Target], budget_s: float, jobs: int, least_s: float = 0.25,
                 always_first: int = 0):
    """Run targets (submit(target, seconds left) -> future) at most `jobs` at a time while the
    budget lasts (a run is given at most what is left, and none starts with under least_s);
    yields (target, result dict or None, why skipped). The first `always_first` run whatever the
    budget, given FLOOR_S at least. A refusal stops the rest: the GPU says no."""
    began = time.monotonic()
    pending, queue, refused, started = {}, list(targets), "", 0
    while queue or pending:
        while queue and len(pending) < jobs:
            target = queue.pop(0)
            left = budget_s - (time.monotonic() - began)
            if started < always_first:
                left = max(left, FLOOR_S)
            started += 1
            if refused:
                yield target, None, f"compute-sanitizer refused on this machine: {refused}"
            elif left < least_s:
                yield target, None, f"time budget spent ({BUDGET_SHARE:.0%} of grading: {budget_s:.1f} s)"
            else:
                pending[submit(target, left)] = target
        if not pending:
            continue
        done, _ = wait(pending, timeout=max(1.0, budget_s), return_when=FIRST_COMPLETED)
        for future in done:
            target = pending.pop(future)
            try:
                result = future.result()
                result = result[0] if isinstance(result, tuple) else result   # a pool's (row, overhead)
            except Exception as error:   # a worker that died: recorded, the rest goes on
                result = {"status": "error", "detail": f"{type(error).__name__}: {error}", "seconds": 0.0,
                          "findings": [], "total": None}
            if result["status"] == "refused":
                refused = result["detail"]
            yield target, result, ""


def sandbox_for_sanitizer(sandbox, sanitizer: str):
    """The graded runs' sandbox with the sanitizer's folder on PATH (it finds its own libraries)."""
    folder = str(Path(sanitizer).parent)
    return replace(sandbox, extra_path=tuple(dict.fromkeys((folder, *sandbox.extra_path))))


# --- one student's diagnosis (called by grade after the student's runs) -------------------

@dataclass(frozen=True)
class Setup:
    """What this grading session can do, decided once: the tool, or why everything is skipped."""
    sanitizer: str | None
    skip: str = ""


def setup(explicit: str | None, gpus: list[str], enabled: bool = True) -> Setup:
    """explicit: --sanitizer PATH (used even without a visible GPU: staff asked for it)."""
    if not enabled:
        return Setup(None, "diagnosis off (--no-diagnosis)")
    if explicit:
        path = shutil.which(explicit) or explicit
        if not (Path(path).is_file() and os.access(path, os.X_OK)):
            return Setup(None, f"--sanitizer {explicit}: not an executable file")
        return Setup(str(Path(path).resolve()))
    found = find_sanitizer()
    if found is None:
        return Setup(None, "no compute-sanitizer on PATH or in " + " or ".join(SANITIZER_DIRS))
    if not gpus:
        return Setup(None, "no GPU visible (compute-sanitizer needs one)")
    return Setup(found)


def inline_submit(function: Callable) -> Callable:
    """submit(job) -> Future that runs the job in this process at once (the serial grader)."""
    def submit(job):
        future: Future = Future()
        try:
            future.set_result(function(job))
        except Exception as error:   # recorded as that run's error by run_budgeted
            future.set_exception(error)
        return future
    return submit


def diagnose_student(student: str, folder: Path, tree: Path, area: Path, program_id: str, rows: list[dict],
                     cells: list, graphs: dict, grading, plain_program: str | None, *, budget_s: float,
                     session: Setup, submit: Callable | None = None, jobs: int = 1, force: bool = False,
                     builder: Callable = build, prebuilt: Future | None = None) -> dict:
    """Plan, build with -lineinfo, run the tools within budget_s; write and return diagnosis.json.
    submit(job dict) -> Future of run_target(job) (default: in this process)."""
    path = folder / "diagnosis.json"
    cached = _read(path)
    if not force and cached.get("program_id") == program_id and cached.get("complete"):
        return cached
    began = time.monotonic()
    targets = plan(student, rows, uses_shared_memory(tree))
    result = {"program_id": program_id, "complete": True, "budget_s": round(budget_s, 2), "targets": len(targets),
              "tool_runs": [], "findings": [], "skipped": [], "lineinfo": ""}
    if targets and session.skip:   # the grading machine's doing, not the student's: not on their results
        result["skipped"] = [_skipped(t, session.skip) for t in targets]
        result["session_skip"] = session.skip
    elif targets:
        try:   # a -lineinfo build started beside the runs (grade --jobs), else one now
            program, result["lineinfo"] = prebuilt.result() if prebuilt is not None else \
                lineinfo_build(tree, area, grading.build, grading.sandbox, builder)
        except Exception as error:   # a build worker that died: the graded build will do
            program, result["lineinfo"] = None, f"the -lineinfo build failed ({type(error).__name__}: {error})"
        program = program or plain_program
        if not program or not Path(program).exists():
            result["skipped"] = [_skipped(t, "no build of the program to run (graded in an earlier session): "
                                             "rerun with --force") for t in targets]
        else:
            _run(result, targets, program, cells, graphs, grading, session, submit, jobs,
                 budget_s - (time.monotonic() - began))
    order = lambda item: (item["method"], item["tool"], item.get("graph", ""))  # noqa: E731  (runs end in any order)
    for key in ("tool_runs", "findings", "skipped"):
        result[key].sort(key=order)
    result["seconds"] = round(time.monotonic() - began, 2)
    result["complete"] = not any("budget" in s["why"] for s in result["skipped"])
    path.write_text(json.dumps(result, indent=2, default=str) + "\n")
    return result


def _run(result, targets, program, cells, graphs, grading, session, submit, jobs, budget_s) -> None:
    by_id = {cell.run_id: cell for cell in cells}
    sandbox = sandbox_for_sanitizer(grading.sandbox, session.sanitizer)
    matrix = grading.matrix

    def job_for(target: Target, left_s: float) -> dict:
        cell = by_id[target.run_id]
        return {"sanitizer": session.sanitizer, "tool": target.tool, "template": matrix.command, "cell": cell,
                "input": graphs[cell.graph].ordered[cell.ordering], "program": program,
                "config_dir": matrix.config_dir, "timeout_s": min(matrix.timeout_s, left_s), "sandbox": sandbox}

    runnable = [t for t in targets if t.run_id in by_id and by_id[t.run_id].graph in graphs]
    for target in targets:
        if target not in runnable:
            result["skipped"].append(_skipped(target, "its graph is not available in this session"))
    submit = submit or inline_submit(run_target)
    for target, outcome, why in run_budgeted(lambda t, left: submit(job_for(t, left)), runnable, budget_s, jobs,
                                               always_first=1):
        if outcome is None:
            result["skipped"].append(_skipped(target, why))
            continue
        cell = by_id[target.run_id]
        result["tool_runs"].append({"method": target.method, "tool": target.tool, "graph": target.graph,
                                    "cell": cell.label, "status": outcome["status"], "detail": outcome["detail"],
                                    "seconds": outcome["seconds"], "total": outcome.get("total")})
        for finding in outcome["findings"]:
            result["findings"].append({**finding, "method": target.method, "graph": target.graph, "cell": cell.label,
                                       "run_verdict": target.verdict, "run_total": outcome.get("total"),
                                       "severity": "warning" if target.verdict == "ok" else finding["severity"]})


def _skipped(target: Target, why: str) -> dict:
    return {"method": target.method, "tool": target.tool, "graph": target.graph, "why": why}


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


TEST_NAME = "Diagnosis: compute-sanitizer findings (information only: costs no points)"


def results_test(folder: Path, program_id: str, visibility: str = "visible") -> list[dict]:
    """The Gradescope test that shows a student's findings (none when nothing was diagnosed)."""
    found = _read(folder / "diagnosis.json")
    if not found or found.get("program_id") != program_id or not found.get("targets") or found.get("session_skip"):
        return []
    lines = []
    for f in found["findings"]:
        verdict = "answers right: a warning" if f["run_verdict"] == "ok" else f"the run's verdict: {f['run_verdict']}"
        where = f["location"] + (f" and {f['other_location']}" if f.get("other_location") else "")
        lines.append(f"- {f['method']} on {f['cell']} ({verdict}): {f['tool']}: {f['kind']}"
                     + (f" in kernel {f['kernel']}" if f["kernel"] else "") + (f" at {where}" if where else "")
                     + (f", {f['count']} times" if f["count"] > 1 else "")
                     + (f" ({f['run_total']} errors in that run in all: only the first {PRINT_LIMIT} are printed)"
                        if (f.get("run_total") or 0) > f["count"] and f["tool"] != "racecheck" else ""))
        lines += [f"      {line}" for line in f["excerpt"][:4]]
    ran = [r for r in found["tool_runs"]]
    if not found["findings"]:
        lines.append(f"no findings in {len(ran)} tool run(s)" if ran else "no tool ran")
    lines += [f"- not run: {s['tool']} on {s['method']} ({s['graph']}): {s['why']}" for s in found["skipped"]]
    if found.get("lineinfo"):
        lines.append(f"build: {found['lineinfo']}")
    return [{"name": TEST_NAME, "score": 0.0, "max_score": 0.0, "output": "\n".join(lines), "visibility": visibility}]
