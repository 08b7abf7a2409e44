"""`python -m grader shrink`: the smallest graph a program gets wrong for one case.

A straight line: load the sweep settings (the program template, timeouts, sentinels), prepare
the graph (its spec-format input in the ordering asked for, its reference), run the case once;
when it is right say so and stop; else shrink the graph (grader.sweep.shrink, every candidate
run like a graded run and judged against the reference) and save the counterexample file.
"""
from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from grader.sweep import cellrun
from grader.sweep.cells import PROJECT_SSSP, Cell, graph_label
from grader.sweep.config import KNOWN_METHODS, ConfigError, load_config
from grader.sweep.counterexample import save, shrink_cell
from grader.sweep.executors.celltask import RowList
from grader.sweep.graphs import GraphUnavailable, prepare_graph
from grader.sweep.identity import template_identity
from grader.sweep.shrink import Budget, FAILURE_KINDS
from grader.commands.options import TEMPLATE_HELP
from sssp_common.files import REPO_ROOT
from sssp_common.record import machine, project_commit
from sssp_common.vocabulary import ORDERINGS, SYNCS

HELP = "shrink one failing case (program, graph, method, sync, configuration) to its smallest failing graph"
DEFAULT_CONFIG = Path("configs/sweep.toml")


def add_arguments(parser) -> None:
    parser.add_argument("--program", metavar="TEMPLATE", help=TEMPLATE_HELP + " (default: this checkout's ./sssp)")
    parser.add_argument("--graph", required=True, metavar="G", help="a catalogue name or an edge-list file")
    parser.add_argument("--method", required=True, metavar="M", help="bmf, segscan, tpe, opt, ...")
    parser.add_argument("--sync", required=True, choices=SYNCS)
    parser.add_argument("--bsize", type=int, default=256, metavar="N", help="threads per block (default 256)")
    parser.add_argument("--bcount", type=int, default=8, metavar="N", help="blocks (default 8)")
    parser.add_argument("--order", choices=ORDERINGS, help="edge ordering (default: the method's first)")
    parser.add_argument("--config", type=Path, metavar="PATH", help="sweep settings (default configs/sweep.toml)")
    parser.add_argument("--out", type=Path, default=Path("smallest"), metavar="DIR",
                        help="where the counterexample is written (default ./smallest)")
    parser.add_argument("--max-runs", type=int, default=200, metavar="N", help="budget: program runs (default 200)")
    parser.add_argument("--max-seconds", type=float, default=60.0, metavar="S", help="budget: seconds (default 60)")
    parser.add_argument("--tries", type=int, default=3, metavar="K",
                        help="runs of the original to tell a flaky failure (default 3)")


def run_from_args(args) -> int:
    return run(program=args.program, graph=args.graph, method=args.method, sync=args.sync, bsize=args.bsize,
               bcount=args.bcount, order=args.order, config=args.config, out_dir=args.out,
               budget=Budget(runs=args.max_runs, seconds=args.max_seconds), tries=args.tries)


def run(program=None, graph="", method="", sync="", bsize=256, bcount=8, order=None, config=None,
        out_dir: Path = Path("smallest"), budget: Budget = Budget(), tries: int = 3, out=None, err=None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    config_path = Path(config) if config else (DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else REPO_ROOT / DEFAULT_CONFIG)
    spec = KNOWN_METHODS.get(method)
    if spec is None:
        print(f"grader shrink: unknown method {method!r} (known: {', '.join(KNOWN_METHODS)})", file=err)
        return 2
    ordering = order or spec.orderings[0]
    try:
        sweep = load_config(config_path, program=program, graphs=[graph], reps=1)
    except ConfigError as error:
        print(f"grader shrink: {error}", file=err)
        return 2
    problem = _program_problem(sweep.command)
    if problem:
        print(f"grader shrink: {problem}", file=err)
        return 2
    try:
        prepared = prepare_graph(graph, sweep, {ordering}, sweep.cache_dir)
    except GraphUnavailable as error:
        print(f"grader shrink: {error}", file=err)
        return 1
    cell = Cell(sweep.program_label, graph_label(graph), ordering, bsize, bcount, spec.name, spec.run_as,
                spec.usesmem, sync, 0, template_identity(sweep.command, sweep.config_dir))
    provenance = {"machine": machine(), "commit": project_commit()}
    statuses = []
    for _ in range(max(1, tries)):
        row, _ = cellrun.run_cell(cell, prepared, sweep, provenance, RowList())
        statuses.append(row["status"])
    failures = [s for s in statuses if s in FAILURE_KINDS]
    if not failures:
        print(f"{cell.label}: {', '.join(statuses)} in {len(statuses)} runs: nothing to shrink", file=out)
        return 0
    kind = max(set(failures), key=failures.count)
    flaky = len(failures) < len(statuses)
    print(f"{cell.label}: {kind} in {len(failures)} of {len(statuses)} runs; shrinking "
          f"(at most {budget.runs} runs, {budget.seconds:g} s)", file=err)
    example = shrink_cell(cell, sweep, provenance, prepared.ordered[ordering], kind, budget=budget,
                          tries=len(statuses) if flaky else 1, confirm=max(4, len(statuses)))
    path = save(example, Path(out_dir))
    shrunk = example.shrunk
    print(f"{path}: {shrunk.graph.edges} edges, {shrunk.graph.vertices} vertices; failed {shrunk.failed} of "
          f"{shrunk.tried} runs{' (flaky: likely a race)' if shrunk.flaky else ''}; {shrunk.runs} runs, "
          f"{shrunk.seconds:.1f} s, {shrunk.stopped}", file=out)
    return 0


def _program_problem(template: str) -> str:
    """Why the template's program cannot run at all (a missing file is no bug of the program's to
    shrink), or ""."""
    try:
        first = shlex.split(template)[0]
    except (ValueError, IndexError):
        return f"bad --program template: {template!r}"
    if first == "{python}":
        return ""
    if first == "{sssp}":
        return "" if PROJECT_SSSP.exists() else f"{PROJECT_SSSP} does not exist: run `make sssp` first"
    if "/" in first:
        path = Path(first).expanduser()
        return "" if path.is_file() and os.access(path, os.X_OK) else f"{first}: no such executable file"
    return "" if shutil.which(first) else f"{first}: not found on PATH"
