"""`python -m grader sweep`: run every cell of a sweep matrix, check it, keep the result.

A straight line, hyperfine style: load the config; for each graph resolve it, write its
orderings and compute its reference once; for each cell run the program, judge the run,
append the row (durably) and move the bar; then print a summary. Anything that goes
wrong with one graph or one run is recorded and the sweep goes on.
"""
from __future__ import annotations

import dataclasses
import signal
import statistics
import sys
import time
from pathlib import Path

from grader.sweep.cells import PROJECT_SSSP, Cell, expand, graph_label
from grader.sweep import cellrun
from grader.sweep.identity import template_identity
from grader.sweep.config import ConfigError, SweepConfig, load_config, template_fields
from grader.sweep.executors import open_pool_or_say
from grader.sweep.executors.celltask import failure_row, make_tasks, run_task
from grader.sweep.timesplit import time_split
from grader.progress import Progress, format_duration
from grader.sweep.graphs import GraphUnavailable, PreparedGraph, check_available, prepare_graph, sigterm_as_interrupt
from grader.commands.options import TEMPLATE_HELP, add_matrix_arguments
from grader.sweep.store import LockedResults, ResultsLocked, done_ids
from sssp_common.files import REPO_ROOT
from sssp_common.record import ResultsFile, latest_by_run_id, machine, project_commit, read_rows

HELP = "run a sweep matrix, checking every output (resumes where it stopped)"
DEFAULT_CONFIG = Path("configs/sweep.toml")
def add_arguments(parser) -> None:
    add_matrix_arguments(parser)
    parser.add_argument("--program", metavar="TEMPLATE", help=TEMPLATE_HELP)
    parser.add_argument("--results", type=Path, metavar="PATH", help="results file (default results/<config name>.jsonl)")
    parser.add_argument("--force", action="store_true", help="run every cell again, even those already recorded")
    parser.add_argument("--rerun-failed", action="store_true", help="run again the cells whose latest result is not ok")
    parser.add_argument("--dry-run", action="store_true", help="list the cells (done or to do) and stop")
    parser.add_argument("--cold", action="store_true",
                        help="run this checkout's ./sssp as one process per cell, not in a kept process per worker")
    parser.add_argument("--no-shrink", action="store_true",
                        help="--program: do not shrink each wrong method to its smallest failing graph")


def run_from_args(args) -> int:
    return run(config=args.config, scale=args.scale, program=args.program, results=args.results,
               force=args.force, rerun_failed=args.rerun_failed, graphs=args.graphs, methods=args.methods,
               reps=args.reps, timeout=args.timeout, dry_run=args.dry_run, quiet=args.quiet,
               cache_dir=args.cache_dir, executor=args.executor, workers=args.workers, scheduler=args.scheduler,
               cold=args.cold, shrink=not args.no_shrink)


INTERRUPTED = 130
# a student's own sweep: at least this long for its counterexamples, however short the sweep
SWEEP_FLOOR_S = 10.0


def run(config: Path | None = None, scale=None, program=None, results: Path | None = None, force=False,
        rerun_failed=False, graphs=None, methods=None, reps=None, timeout=None, dry_run=False, quiet=False,
        cache_dir: Path | None = None, out=None, err=None, executor=None, workers=None, scheduler=None,
        cold=False, shrink=True) -> int:
    """0: every run of the matrix ok; 1: some run was not (the table says which); 2: config error;
    130: interrupted (everything finished so far is in the results file). executor, workers,
    scheduler: where the runs go (grader.sweep.executors; None: the config's [executor], else local)."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        sweep = load_config(_config_path(config), scale=scale, program=program, graphs=graphs,
                            methods=methods, reps=reps, timeout=timeout)
        check_available(sweep)      # before a cell is listed or run: a missing graph is the user's to fetch
    except ConfigError as error:
        print(f"grader sweep: {error}", file=err)
        return 2
    if cold:
        sweep = dataclasses.replace(sweep, warm=False)
    results_path = Path(results) if results else default_results(sweep, scale)
    cache_dir = Path(cache_dir) if cache_dir else sweep.cache_dir
    cells = expand(sweep, program_id=template_identity(sweep.command, sweep.config_dir))
    skip = set() if force else done_ids(results_path, rerun_failed, warn=err)
    todo = [cell for cell in cells if cell.run_id not in skip]

    if dry_run:
        return _dry_run(sweep, cells, todo, results_path, out)
    if "sssp" in template_fields(sweep.command) and not PROJECT_SSSP.exists():
        print(f"grader sweep: {PROJECT_SSSP} does not exist: run `make sssp` first", file=err)
        return 2
    try:
        import reference  # noqa: F401  (fail early and clearly, not once per graph)
    except ImportError as error:
        print(f"grader sweep: the reference solver cannot be imported ({error})", file=err)
        return 2

    started = time.perf_counter()
    provenance = {"machine": machine(), "commit": project_commit()}
    skipped: dict[str, str] = {}
    overheads: list[float] = []
    ran = 0
    try:
        store = LockedResults(results_path)
    except ResultsLocked as error:
        print(f"grader sweep: {error}", file=err)
        return 2
    pool = open_pool_or_say(run_task, sweep, executor=executor, workers=workers, scheduler=scheduler,
                            command="grader sweep", err=err)
    if pool is None:
        store.close()
        return 2
    if not quiet:
        print(f"sweep {sweep.name!r}: {len(cells)} cells, {len(todo)} to run "
              f"({len(cells) - len(todo)} already in {results_path}); scale {sweep.scale}; {pool.describe()}"
              + ("; ./sssp kept running per worker (--cold: a process per run)"
                 if sweep.warm and cellrun.is_project_template(sweep.command) else ""), file=err)
    progress = Progress(len(todo), unit="cells", label="", stream=err, quiet=quiet)
    previous_sigterm = sigterm_as_interrupt()
    pending: dict = {}            # run id -> its task, until its row is written
    recorded: set[str] = set()    # run ids written in this session: a cell is never written twice
    said_outside: list[str] = []  # why --program runs unjailed, said on the console once

    def record(outcome) -> None:
        nonlocal ran
        task = pending.pop(outcome.key, None)
        if task is None:
            return
        row = outcome.row if outcome.row is not None else failure_row(task, outcome.error)
        if row["run_id"] in recorded:
            return
        if outcome.attempts > 1:         # its worker died under it (killed, out of memory, a lost GPU)
            row["attempts"] = outcome.attempts
            if outcome.row is not None:
                _note(progress, err, f"{task.cell.label}: its worker died; ran again on "
                                     f"{row.get('worker') or 'another worker'} ({outcome.attempts} attempts)")
        store.append(row)
        recorded.add(row["run_id"])
        ran += 1
        outside = ((row.get("protections") or {}).get("not_in_force") or {}).get("jail")
        if outside and not said_outside and not cellrun.is_project_template(sweep.command):
            said_outside.append(outside)     # once per sweep: every row records it too
            print(f"grader sweep: the program runs outside the jail: {outside}", file=err)
        if outcome.overhead is not None:
            overheads.append(outcome.overhead)
        progress.update(1, label=task.cell.label, status=row["status"])

    interrupted = False
    prepared: dict = {}           # graph name -> PreparedGraph, kept for shrinking wrong runs
    try:
        for entry in sweep.graphs:
            name = graph_label(entry)
            graph_cells = [cell for cell in todo if cell.graph == name]
            if not graph_cells:
                continue
            progress.update(0, label=f"{name}: preparing (graph, orderings, reference)")
            try:
                graph = prepared[name] = prepare_graph(entry, sweep, {c.ordering for c in graph_cells}, cache_dir)
                tasks = make_tasks(graph_cells, graph, sweep, provenance, run_cell,
                                   Path(cache_dir) / "shipped" if cache_dir else None)
            except (GraphUnavailable, OSError) as why:
                skipped[name] = str(why)
                progress.total -= len(graph_cells)
                _note(progress, err, f"skipped {name} ({len(graph_cells)} cells): {why}")
                continue
            for task in tasks:
                pending[task.cell.run_id] = task
                pool.submit(task.cell.run_id, task)
            for outcome in pool.drain(wait=False):   # rows written as they come, while the next graph is prepared
                record(outcome)
        for outcome in pool.drain(wait=True):
            record(outcome)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        pool.close(cancel=True)   # nothing is in flight unless interrupted: then the runs are stopped
        if previous_sigterm is not None:
            signal.signal(signal.SIGTERM, previous_sigterm)
    _write_plan(results_path, cells, skipped, prepared, err)
    if interrupted:
        progress.close()
        store.close()
        print(f"\ninterrupted; results so far are in {results_path}; rerun to resume", file=err)
        return INTERRUPTED
    progress.label = "done"
    progress.close()
    store.close()
    status = summarise(sweep, cells, results_path, skipped, overheads, ran, time.perf_counter() - started, out, err,
                       session=recorded)
    if shrink and not cellrun.is_project_template(sweep.command):
        _shrink_wrong(sweep, cells, prepared, provenance, results_path, time.perf_counter() - started, out, err)
    return status


def _write_plan(results_path: Path, cells, skipped: dict[str, str], prepared: dict, err) -> None:
    """The cells this sweep meant to run and the graphs it skipped, beside the results
    (sssp_common.sweepplan), so the report can say what has no result and why."""
    from sssp_common.sweepplan import write_plan
    try:
        write_plan(results_path, cells, skipped, prepared=list(prepared))
    except OSError as error:
        print(f"grader sweep: warning: the sweep plan beside {results_path} was not written ({error}); "
              "the report cannot list the cells that have no result", file=err)


def _shrink_wrong(sweep, cells, prepared, provenance, results_path: Path, spent_s: float, out, err) -> None:
    """Each wrong (method, sync) of a student's program shrunk once to its smallest failing graph,
    as grade does it (grader.grading.counterexamples), within a quarter of the sweep's time."""
    from grader.grading.counterexamples import Settings, failing_cases, for_student
    mine = {cell.run_id for cell in cells}
    rows = [row for row in latest_by_run_id(read_rows(results_path)).values() if row["run_id"] in mine]
    if not failing_cases(rows):
        return
    if not any(row.get("status") in ("ok", "wrong") for row in rows):   # it never ran to an answer
        print("\ngrader sweep: no run of the program gave an answer (every one crashed or timed out): "
              "nothing to shrink; see the failures above", file=err)
        return
    folder = results_path.parent / f"{results_path.stem}-shrunk"
    folder.mkdir(parents=True, exist_ok=True)
    print("\ngrader sweep: shrinking each failing method to its smallest failing graph (--no-shrink: skip)",
          file=err)
    record = for_student(folder, cells[0].program_id or cells[0].program, rows, cells, prepared, sweep, provenance,
                         spent_s, Settings(search_graphs=0, floor_s=SWEEP_FLOOR_S))
    for entry in record["shrunk"]:
        print(f"counterexample {entry['method']} {entry['sync']}: {entry['file']} ({entry['size_said']}; "
              f"{entry['kind']} {entry['failed']} of {entry['tried']} runs{', flaky' if entry['flaky'] else ''})",
              file=out)
    for skipped in record["skipped"]:
        print(f"  {skipped['method']} {skipped['sync']}: not shrunk: {skipped['why']}", file=err)


def default_results(sweep: SweepConfig, scale_override=None) -> Path:
    """results/<name>.jsonl; a --scale other than the config's gets a file of its own, since run ids
    do not include the scale and a ci-sized run must not pass for a full-sized one."""
    stem = sweep.name
    if scale_override is not None and sweep.scale != load_config(sweep.path).scale:
        stem += f"-scale-{sweep.scale}"
    return REPO_ROOT / "results" / f"{stem}.jsonl"


def _config_path(config) -> Path:
    """The default config from the current folder, else from this checkout."""
    if config is not None:
        return Path(config)
    return DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else REPO_ROOT / DEFAULT_CONFIG


def _note(progress: Progress, err, text: str) -> None:
    """A line of its own above the bar (the bar is redrawn below it)."""
    progress.write(f"grader sweep: {text}")


# --- one cell ----------------------------------------------------------------------

def run_cell(cell: Cell, graph: PreparedGraph, sweep: SweepConfig, provenance: dict,
             store: ResultsFile) -> tuple[dict, float]:
    """Run (isolated), judge, append; returns the row and the harness's own seconds (total minus
    the program's). The one runner sweep, grade and the executors share: grader.sweep.cellrun."""
    return cellrun.run_cell(cell, graph, sweep, provenance, store)


# --- the end -----------------------------------------------------------------------

def _dry_run(sweep: SweepConfig, cells: list[Cell], todo: list[Cell], results_path: Path, out) -> int:
    pending = {cell.run_id for cell in todo}
    for cell in cells:
        print(f"{cell.run_id}  {'todo' if cell.run_id in pending else 'done'}  {cell.label}", file=out)
    print(f"\n{len(cells)} cells in sweep {sweep.name!r} ({len(sweep.graphs)} graphs); {len(todo)} to run, "
          f"{len(cells) - len(todo)} already in {results_path}", file=out)
    print(f"command: {sweep.command}", file=out)
    return 0


def format_table(header: list[str], rows: list[list], align_left: int = 1) -> str:
    """Plain fixed-width columns; the first `align_left` columns to the left, numbers to the right."""
    text = [[str(h) for h in header]] + [["" if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in text) for i in range(len(header))]
    lines = []
    for number, row in enumerate(text):
        cells = [v.ljust(w) if i < align_left else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
        if number == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _median(values: list[float]) -> str:
    values = [v for v in values if v is not None]
    return f"{statistics.median(values):.3f}" if values else "-"


def summarise(sweep: SweepConfig, cells: list[Cell], results_path: Path, skipped: dict[str, str],
              overheads: list[float], ran: int, wall_s: float, out, err, session: set[str] | None = None) -> int:
    """Status counts per method, median times per method x sync, the runs that were not ok, and
    where this session's time went (``session``: the run ids it wrote; grader.sweep.timesplit)."""
    from sssp_common.vocabulary import OK, STATUSES, SYNCS
    latest = latest_by_run_id(read_rows(results_path, warn=None))
    rows = [latest[cell.run_id] for cell in cells if cell.run_id in latest]
    methods = [method.name for method in sweep.methods]
    print(f"\nsweep {sweep.name!r}: {len(rows)} of {len(cells)} cells have results "
          f"({ran} run now in {format_duration(wall_s)}); program: {sweep.program_label}", file=out)
    if rows:
        table = []
        for method in methods:
            statuses = [row["status"] for row in rows if row["method"] == method]
            table.append([method] + [statuses.count(s) or "" for s in STATUSES] + [len(statuses)])
        print("\n" + format_table(["method", *STATUSES, "total"], table), file=out)
        timing = []
        for method in methods:
            for sync in SYNCS:
                good = [row for row in rows if row["method"] == method and row["sync"] == sync and row["status"] == OK]
                if good:
                    timing.append([f"{method} {sync}", len(good), _median([r["computation_ms"] for r in good]),
                                   _median([r["filtering_ms"] for r in good])])
        if timing:
            print("\n" + format_table(["ok runs: median ms", "runs", "computation", "filtering"], timing), file=out)
    failed = [row for row in rows if row.get("status") != OK]
    if failed:
        print(f"\nnot ok ({len(failed)}):", file=out)
        for row in failed[:15]:
            print(f"  {row['status']:<9} {row['graph']} {row['ordering']} {row['bsize']}x{row['bcount']} "
                  f"{row['method']} {row['sync']} #{row['rep']}: {str(row.get('detail', ''))[:160]}", file=out)
        if len(failed) > 15:
            print(f"  ... {len(failed) - 15} more (see {results_path})", file=out)
    for name, why in skipped.items():
        print(f"skipped graph {name}: {why}", file=out)
    missing = len(cells) - len(rows) - sum(1 for c in cells if c.graph in skipped and c.run_id not in latest)
    if missing > 0:
        print(f"{missing} cells have no result yet: rerun to run them", file=out)
    if overheads:
        print(f"harness overhead per run (total minus the program's wall time): median "
              f"{statistics.median(overheads) * 1000:.0f} ms, max {max(overheads) * 1000:.0f} ms", file=out)
    split = time_split([row for row in rows if row["run_id"] in session], overheads, wall_s) if session else ""
    if split:
        print(split, file=out)
    print(f"results: {results_path}\nreport:  python -m grader report --results {results_path}", file=out)
    return 0 if rows and not failed and missing <= 0 else 1
