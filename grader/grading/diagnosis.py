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

Budget: the whole class's diagnosis may add at most BUDGET_SHARE of the grading's wall time;
targets go round-robin over students in priority order (memcheck of a failing method first),
and what did not fit is recorded as skipped, with why. So is everything skipped for want of
compute-sanitizer, of a GPU, or because the GPU refuses it ("Device not supported" on gVisor).
"""
from __future__ import annotations

import os
import re
import shutil
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field, replace
from multiprocessing import get_context
from pathlib import Path

from grader.grading.build import MAKEFILE_NAMES, build
from grader.grading.sanitizer_report import parse
from grader.jail.runner import run_program
from grader.sweep.cells import render_command

BUDGET_SHARE = 0.25
SANITIZER_DIRS = ("/usr/local/cuda/bin", "/usr/local/cuda/compute-sanitizer")
FAILED = ("wrong", "crash", "timeout")
_NVCC_WORD = re.compile(r"(?<![\w./-])((?:/[^\s:=;'\"()]*/)?nvcc)(?![\w.-])")
PRINT_LIMIT = 20


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
            tools = [("memcheck", 0)] + ([("racecheck", 1)] if shared else []) + [("synccheck", 3), ("initcheck", 4)]
            for tool, priority in tools:
                targets.append(Target(student, method, tool, row["run_id"], row["graph"], row["status"],
                                      f"{row['status']} on {row['graph']}", priority))
        elif shared:
            row = sorted(group, key=size)[0]
            targets.append(Target(student, method, "racecheck", row["run_id"], row["graph"], row.get("status", ""),
                                  "right answers; the sources use __shared__", 2))
    return sorted(targets, key=lambda t: (t.priority, t.method))


def interleave(per_student: dict[str, list[Target]]) -> list[Target]:
    """One order for the class: by priority, then round-robin over students, so a short budget
    still gives every student their most useful run."""
    ranked = []
    for student, targets in per_student.items():
        for index, target in enumerate(targets):
            ranked.append((target.priority, index, student, target))
    return [t for *_, t in sorted(ranked, key=lambda x: x[:3])]


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
    changes = []
    for path in sorted(tree.rglob("*")):
        if not MAKEFILE_NAMES.match(path.name) or path.is_symlink() or not path.is_file():
            continue
        lines = path.read_text(encoding="utf-8", errors="surrogateescape").split("\n")
        for number, line in enumerate(lines, 1):
            if line.lstrip().startswith("#") or "-lineinfo" in line:
                continue
            new = _NVCC_WORD.sub(r"\1 -lineinfo", line)
            if new != line:
                changes.append(f"{path.relative_to(tree)}:{number}")
                lines[number - 1] = new
        path.write_text("\n".join(lines), encoding="utf-8", errors="surrogateescape")
    return changes


def lineinfo_build(tree: Path, area: Path, options, sandbox) -> tuple[str | None, str]:
    """(the -lineinfo build's program, what happened); None: use the graded build. A process-pool
    job: the build runs under this process's own sandbox uid."""
    copy = area / "lineinfo-src"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(tree, copy, symlinks=True)
    changes = add_lineinfo(copy)
    if not changes:
        return None, "no nvcc line in the Makefiles to add -lineinfo to: the graded build is used"
    (area / "lineinfo").mkdir(mode=0o711, exist_ok=True)
    result = build(copy, area / "lineinfo", options, sandbox)
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
            return text, result.wall_s, "timeout", f"stopped after {timeout_s:g} s"
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


def pool(jobs: int) -> ProcessPoolExecutor:
    """Worker processes (spawned: no CUDA or thread state inherited); each claims its own sandbox uid."""
    return ProcessPoolExecutor(max_workers=max(1, jobs), mp_context=get_context("spawn"))


def run_budgeted(submit, targets: list[Target], budget_s: float, jobs: int):
    """Run targets (submit(target) -> future) at most `jobs` at a time while the budget lasts;
    yields (target, result dict or None, why skipped). A refusal stops the rest: the GPU says no."""
    began = time.monotonic()
    pending, queue, refused = {}, list(targets), ""
    while queue or pending:
        while queue and len(pending) < jobs:
            target = queue.pop(0)
            if refused:
                yield target, None, f"compute-sanitizer refused on this machine: {refused}"
            elif time.monotonic() - began >= budget_s:
                yield target, None, f"time budget spent ({BUDGET_SHARE:.0%} of grading: {budget_s:.1f} s)"
            else:
                pending[submit(target)] = target
        if not pending:
            continue
        done, _ = wait(pending, timeout=max(1.0, budget_s), return_when=FIRST_COMPLETED)
        for future in done:
            target = pending.pop(future)
            try:
                result = future.result()
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
