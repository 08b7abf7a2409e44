"""The one runner `sweep` and `grade` (and every executor's worker) share: one cell, run in the
sandbox, judged in every dimension, returned as a run record.

`run_cell(cell, graph, sweep, provenance, store)` keeps the signature the sweep always had
(grader.sweep.executors call it on workers): every argument is picklable; `sweep` is a
SweepConfig or anything with its attributes, plus optionally
- `sandbox`: grader.jail.sandbox.Sandbox (default: see `sandbox_for`),
- `patterns`: timing-line patterns (grader.sweep.timings.Pattern) to recover times with,
- `program_path`: what `{sssp}` means (grade: the built submission; default this checkout's),
- `record_extra`: fields added to every row (grade: the build options),
- `capture_distances`: called with the distances the output file holds (or None): the shrinker's view.
No state is kept between calls but a memo of sandbox-reachability probes.
"""
from __future__ import annotations

import math
import os
import shlex
import time
import weakref
from pathlib import Path

import numpy as np

from grader.data import inputs
from grader.sweep import outfile, warm
from grader.sweep.cells import PROJECT_SSSP, render_command
from grader.sweep.check import classify, parse_output
from grader.jail.runner import run_program
from grader.jail.sandbox import Sandbox
from grader.sweep.timings import DEFAULT_PATTERNS, wall_startup
from sssp_common.record import utc_now
from sssp_common.digest import distances_checksum

MIN_FILE_LIMIT = 64 << 20


def freeze(distances: np.ndarray) -> np.ndarray:
    """The reference as a private, read-only int64 copy: nothing can write it in place (no
    other view of its memory exists), so its checksum holds once checked (`_reference_problem`)."""
    frozen = np.array(distances, dtype=np.int64, copy=True)
    frozen.flags.writeable = False
    return frozen


def keep_private(cache_dir: Path | None) -> None:
    """The reference answers (and an explicit --cache-dir) out of the sandbox user's reach: 0700."""
    from sssp_common.files import cache_dir as kind_dir
    for folder in ([Path(cache_dir)] if cache_dir else []) + [kind_dir("reference")]:
        try:
            if folder.is_dir() and folder.stat().st_uid == os.geteuid():
                os.chmod(folder, 0o700)
        except OSError:
            pass


def is_project_template(template: str) -> bool:
    try:
        first = shlex.split(template)[0]
    except (ValueError, IndexError):
        return False
    return first == "{sssp}"


def sandbox_for(sweep) -> Sandbox:
    """The settings a sweep's runs get: its own `sandbox` if it has one; this checkout's
    ./sssp (trusted: its identity is a commit) as the grader's user with the grader's
    environment (its caches live under HOME), outside the jail; any other program in a jail
    (grader.jail.bwrap) when the machine can make one and the jail's uid can reach the
    program, else outside it as the grader's user (recorded in every row, said by `sweep`)."""
    chosen = getattr(sweep, "sandbox", None)
    if chosen is not None:
        return chosen
    if is_project_template(sweep.command) and getattr(sweep, "program_path", None) is None:
        return Sandbox(user="never", env="inherit",
                       note="this checkout's ./sssp (trusted: identified by its commit) runs as the grader's user")
    return Sandbox(user="auto")


def run_cell(cell, graph, sweep, provenance: dict, store) -> tuple[dict, float]:
    """Run, judge, append (store.append); returns the row and the harness's own seconds."""
    started_at = utc_now()
    began = time.perf_counter()
    row = _base_row(cell, graph, sweep, provenance, started_at)
    problem = _inputs_problem(cell, graph)
    if problem:
        row.update(status="crash", distances="crash", detail=f"harness: {problem}; not run")
        store.append(row)
        return row, time.perf_counter() - began
    input_path = graph.ordered[cell.ordering]
    program = getattr(sweep, "program_path", None) or PROJECT_SSSP
    bound = outfile.size_bound(graph.vertices)
    try:   # room for the output, and for a program's own binary cache of its input
        file_limit = max(MIN_FILE_LIMIT, 2 * bound, 2 * os.path.getsize(input_path))
    except OSError:
        file_limit = max(MIN_FILE_LIMIT, 2 * bound)

    def argv_for(output_path: Path) -> list[str]:
        return render_command(sweep.command, cell, input_path, output_path, sweep.config_dir, sssp=program)

    def fresh():
        return run_program(argv_for, sweep.timeout_s, sandbox=sandbox_for(sweep), file_limit_bytes=file_limit)

    try:   # this checkout's own ./sssp runs in its kept process (grader.sweep.warm); all else jailed
        with (warm.kept_or_fresh(argv_for, sweep.timeout_s, sandbox_for(sweep), fresh)
              if warm.eligible(sweep, cell, program) else fresh()) as result:
            verdict = classify(result, graph.reference, sweep.sentinels,
                               getattr(sweep, "patterns", DEFAULT_PATTERNS), max_output_bytes=bound)
            capture = getattr(sweep, "capture_distances", None)
            if capture is not None:          # the shrinker shows a small graph's printed distances
                capture(_printed(result.output_path, graph.vertices, sweep.sentinels))
    except (OSError, MemoryError, ValueError) as error:   # the harness failed this run, not the sweep
        row.update(status="crash", distances="crash", detail=f"harness: {type(error).__name__}: {error}")
        store.append(row)
        return row, time.perf_counter() - began
    row.update({
        "status": verdict["status"],
        "computation_ms": _finite(verdict["computation_ms"]), "filtering_ms": _finite(verdict["filtering_ms"]),
        "rounds": verdict["rounds"], "edges_processed": verdict["edges_processed"],
        "edges_filtered": verdict["edges_filtered"], "mismatches": verdict["mismatches"],
        "detail": verdict["detail"], "device": verdict["device"], "wall_s": round(result.wall_s, 4),
        "command": list(result.argv), "exit_code": result.exit_code,
        "distances": verdict["distances"], "file_distances": verdict["file_distances"],
        "output_format": verdict["output_format"], "output_deviations": verdict["output_deviations"],
        "stdout_format": verdict["stdout_format"], "stdout_problems": verdict["stdout_problems"],
        "times_source": verdict["times_source"], "time_flag": verdict["time_flag"],
        "unreadable": verdict["unreadable"],
        "stdout_bytes": result.stdout_bytes, "killed_descendants": result.leftovers,
        "protections": result.protections, "startup_s": wall_startup(result.stdout_text),
    })
    store.append(row)
    return row, time.perf_counter() - began - result.wall_s


def _printed(path: Path, n: int, sentinels) -> np.ndarray | None:
    """The output file's distances (check.parse_output: UNREACHABLE for INF and sentinels), or None."""
    try:
        return parse_output(path, n, sentinels)
    except (outfile.NoOutput, outfile.Unparsable):
        return None


def _base_row(cell, graph, sweep, provenance, started_at) -> dict:
    return {
        "run_id": cell.run_id, "sweep": sweep.name, "program": cell.program,
        "program_id": getattr(cell, "program_id", "") or cell.program, "graph": cell.graph,
        "graph_vertices": graph.vertices, "graph_edges": graph.edges, "ordering": cell.ordering,
        "method": cell.method, "sync": cell.sync, "bsize": cell.bsize, "bcount": cell.bcount, "rep": cell.rep,
        "status": "crash", "computation_ms": None, "filtering_ms": None, "rounds": None,
        "edges_processed": None, "edges_filtered": None, "mismatches": None, "detail": "", "device": "",
        "wall_s": None, "command": [], **provenance, "started_at": started_at,
        **getattr(sweep, "record_extra", {}),
    }


def _inputs_problem(cell, graph) -> str:
    """The reference must match its checksum and the input its identity, before every run."""
    if _reference_problem(graph.reference, getattr(graph, "reference_checksum", "")):
        return "the reference distances failed their checksum"
    identities = getattr(graph, "identities", None) or {}
    known = identities.get(cell.ordering)
    if known is not None:
        try:
            if inputs.identity(graph.ordered[cell.ordering]) != known:
                return f"the input file {graph.ordered[cell.ordering]} changed since it was written"
        except OSError as error:
            return f"the input file cannot be read: {error}"
    return ""


_checked: tuple = (lambda: None, "")   # (weak ref to the last frozen reference checked, its checksum)


def _reference_problem(reference: np.ndarray, expected: str) -> bool:
    """True when the reference fails its checksum. A frozen one (see `freeze`: read-only, owning
    its memory) cannot have changed since it passed, so it is hashed once per process, not per run;
    any other array is hashed before every run."""
    global _checked
    if not expected:
        return False
    frozen = not reference.flags.writeable and reference.flags.owndata
    if frozen and _checked[0]() is reference and _checked[1] == expected:
        return False
    if distances_checksum(reference) != expected:
        return True
    if frozen:
        _checked = (weakref.ref(reference), expected)
    return False


def _finite(value):
    return value if value is None or math.isfinite(value) else None
