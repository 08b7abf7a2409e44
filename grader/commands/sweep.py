"""`python -m grader sweep`: run every cell of a sweep matrix, check it, keep the result.

A straight line, hyperfine style: load the config; for each graph resolve it, write its
orderings and compute its reference once; for each cell run the program, judge the run,
append the row (durably) and move the bar; then print a summary. Anything that goes
wrong with one graph or one run is recorded and the sweep goes on.
"""
from __future__ import annotations

import gzip
import inspect
import signal
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.cells import PROJECT_SSSP, Cell, expand, graph_label, looks_like_path
from grader import cellrun, inputs
from grader.identity import template_identity
from grader.config import ConfigError, SweepConfig, load_config, template_fields
from grader.executors import EXECUTORS, open_pool_or_say
from grader.executors.celltask import failure_row, make_tasks, run_task
from grader.progress import Progress, format_duration
from grader.sandbox import shared_inputs
from grader.store import LockedResults, ResultsLocked, done_ids
from sssp_common.files import REPO_ROOT
from sssp_common.digest import distances_checksum
from sssp_common.record import ResultsFile, latest_by_run_id, machine, project_commit, read_rows

HELP = "run a sweep matrix, checking every output (resumes where it stopped)"
DEFAULT_CONFIG = Path("configs/sweep.toml")
TEMPLATE_HELP = ("command template, overriding the config's: placeholders {sssp} {python} {input} {output} "
                 "{bsize} {bcount} {method} {sync} {usesmem} {ordering} {graph} {rep} {config_dir}, "
                 "e.g. \"{sssp} -input {input} -bsize {bsize} -bcount {bcount} -output {output} "
                 "{method} -sync {sync} -usesmem {usesmem}\"")


def csv_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def add_matrix_arguments(parser) -> None:
    """The matrix options sweep and grade share."""
    parser.add_argument("--config", type=Path, metavar="PATH", help="sweep matrix (default configs/sweep.toml)")
    parser.add_argument("--scale", metavar="ci|full|X", help="stand-in size: ci, full or a fraction (overrides the config)")
    parser.add_argument("--graphs", type=csv_list, metavar="A,B", help="only these graphs (catalogue names or files)")
    parser.add_argument("--methods", type=csv_list, metavar="A,B", help="only these methods (bmf, segscan, tpe, opt, ...)")
    parser.add_argument("--reps", type=int, metavar="N", help="repetitions per cell")
    parser.add_argument("--timeout", type=float, metavar="S", help="seconds before a run is killed")
    parser.add_argument("--cache-dir", type=Path, metavar="DIR", help="where orderings and stand-ins are cached")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--executor", choices=EXECUTORS, help="where runs go: local (default: one worker process "
                        "per GPU, or one CPU worker) or dask (a Dask cluster; needs --scheduler)")
    parser.add_argument("--workers", type=int, metavar="N", help="local: worker processes (default: one per "
                        "visible GPU; on a CPU-only machine 1, at most 2)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="dask: the scheduler, e.g. tcp://HOST:8786")


def add_arguments(parser) -> None:
    add_matrix_arguments(parser)
    parser.add_argument("--program", metavar="TEMPLATE", help=TEMPLATE_HELP)
    parser.add_argument("--results", type=Path, metavar="PATH", help="results file (default results/<config name>.jsonl)")
    parser.add_argument("--force", action="store_true", help="run every cell again, even those already recorded")
    parser.add_argument("--rerun-failed", action="store_true", help="run again the cells whose latest result is not ok")
    parser.add_argument("--dry-run", action="store_true", help="list the cells (done or to do) and stop")


def run_from_args(args) -> int:
    return run(config=args.config, scale=args.scale, program=args.program, results=args.results,
               force=args.force, rerun_failed=args.rerun_failed, graphs=args.graphs, methods=args.methods,
               reps=args.reps, timeout=args.timeout, dry_run=args.dry_run, quiet=args.quiet,
               cache_dir=args.cache_dir, executor=args.executor, workers=args.workers, scheduler=args.scheduler)
INTERRUPTED = 130


class GraphUnavailable(Exception):
    """This graph cannot be swept here (not downloaded, unreadable, no reference); its cells are skipped."""


@dataclass
class PreparedGraph:
    name: str
    path: Path
    reference: object            # np.ndarray of int64 distances
    edges: int
    ordered: dict[str, Path] = field(default_factory=dict)
    reference_checksum: str = ""     # checked before use (grader.cellrun: once per process for a frozen reference)
    identities: dict = field(default_factory=dict)   # ordering -> the input file's identity, checked before every run

    @property
    def vertices(self) -> int:
        return int(self.reference.shape[0])


def run(config: Path | None = None, scale=None, program=None, results: Path | None = None, force=False,
        rerun_failed=False, graphs=None, methods=None, reps=None, timeout=None, dry_run=False, quiet=False,
        cache_dir: Path | None = None, out=None, err=None, executor=None, workers=None, scheduler=None) -> int:
    """0: every run of the matrix ok; 1: some run was not (the table says which); 2: config error;
    130: interrupted (everything finished so far is in the results file). executor, workers,
    scheduler: where the runs go (grader.executors; None: the config's [executor], else local)."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        sweep = load_config(_config_path(config), scale=scale, program=program, graphs=graphs,
                            methods=methods, reps=reps, timeout=timeout)
    except ConfigError as error:
        print(f"grader sweep: {error}", file=err)
        return 2
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
              f"({len(cells) - len(todo)} already in {results_path}); scale {sweep.scale}; {pool.describe()}", file=err)
    progress = Progress(len(todo), unit="cells", label="", stream=err, quiet=quiet)
    previous_sigterm = sigterm_as_interrupt()
    pending: dict = {}            # run id -> its task, until its row is written
    recorded: set[str] = set()    # run ids written in this session: a cell is never written twice

    def record(outcome) -> None:
        nonlocal ran
        task = pending.pop(outcome.key, None)
        if task is None:
            return
        row = outcome.row if outcome.row is not None else failure_row(task, outcome.error)
        if row["run_id"] in recorded:
            return
        store.append(row)
        recorded.add(row["run_id"])
        ran += 1
        if outcome.overhead is not None:
            overheads.append(outcome.overhead)
        progress.update(1, label=task.cell.label, status=row["status"])

    interrupted = False
    try:
        for entry in sweep.graphs:
            name = graph_label(entry)
            graph_cells = [cell for cell in todo if cell.graph == name]
            if not graph_cells:
                continue
            progress.update(0, label=f"{name}: preparing (graph, orderings, reference)")
            try:
                graph = prepare_graph(entry, sweep, {c.ordering for c in graph_cells}, cache_dir)
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
    if interrupted:
        progress.close()
        store.close()
        print(f"\ninterrupted; results so far are in {results_path}; rerun to resume", file=err)
        return INTERRUPTED
    progress.label = "done"
    progress.close()
    store.close()
    return summarise(sweep, cells, results_path, skipped, overheads, ran, time.perf_counter() - started, out, err)


def sigterm_as_interrupt():
    """A batch system's SIGTERM stops the sweep as Ctrl-C does (program killed, rows kept);
    returns the handler to restore, None where signals cannot be set (not the main thread)."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt
    try:
        return signal.signal(signal.SIGTERM, interrupt)
    except ValueError:
        return None


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
    """A line of its own that does not collide with the bar drawn in place."""
    if progress.tty and not progress.quiet:
        err.write("\r\x1b[K")
    print(f"grader sweep: {text}", file=err)


# --- one graph ---------------------------------------------------------------------

def prepare_graph(entry: str, sweep: SweepConfig, orderings: set[str], cache_dir: Path | None) -> PreparedGraph:
    """Resolve the graph; write its spec-format inputs (plain `src dst w` text, one per ordering,
    cached by content) and expose them read-only; compute the reference on exactly what the
    program reads (cached by content; its checksum kept and checked before every run)."""
    name = graph_label(entry)
    path = resolve_graph(entry, sweep, cache_dir)
    import reference
    folder = Path(cache_dir) / "inputs" if cache_dir else None
    try:
        given = inputs.spec_input(path, "given", folder)
    except Exception as error:
        raise GraphUnavailable(f"cannot write the spec-format input for {path}: {type(error).__name__}: {error}") from None
    try:
        distances = _call(reference.distances, given, cache_dir=cache_dir)
    except Exception as error:  # a reference that cannot be had: skip the graph, say why
        raise GraphUnavailable(f"no reference for {path}: {type(error).__name__}: {error}") from None
    shown = shared_inputs()
    ordered, identities = {}, {}
    for ordering in sorted(orderings):
        try:
            ordered[ordering] = inputs.expose(inputs.spec_input(path, ordering, folder), shown)
        except Exception as error:
            raise GraphUnavailable(f"cannot write the {ordering} ordering: {type(error).__name__}: {error}") from None
        identities[ordering] = inputs.identity(ordered[ordering])
    cellrun.keep_private(cache_dir)
    distances = cellrun.freeze(distances)
    return PreparedGraph(name=name, path=path, reference=distances, edges=count_edges(given), ordered=ordered,
                         reference_checksum=distances_checksum(distances), identities=identities)


def resolve_graph(entry: str, sweep: SweepConfig, cache_dir: Path | None) -> Path:
    """A file entry (relative to the config's folder, else the current one) or a catalogue name."""
    if looks_like_path(entry):
        candidates = [Path(entry).expanduser()] if Path(entry).is_absolute() else \
            [sweep.config_dir / entry, Path.cwd() / entry]
        for candidate in candidates:
            if candidate.is_file():
                return candidate.resolve()
        raise GraphUnavailable(f"no such file: {candidates[0]}")
    try:
        from grader import datasets
    except ImportError as error:
        raise GraphUnavailable(f"the graph catalogue is not available ({error})") from None
    try:
        return Path(_call(datasets.resolve, entry, scale=sweep.scale,
                          data_dirs=list(sweep.data_dirs) or None, cache_dir=cache_dir))
    except datasets.DatasetError as error:
        raise GraphUnavailable(str(error)) from None
    except Exception as error:
        raise GraphUnavailable(f"{type(error).__name__}: {error}") from None


def _call(function, *args, **kwargs):
    """Pass keyword arguments (cache_dir, data_dirs, ...) only to functions that take them:
    the contract allows either; a None cache_dir is left to the callee's default."""
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return function(*args, **{k: v for k, v in kwargs.items() if v is not None})
    open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    kwargs = {key: value for key, value in kwargs.items()
              if (open_ended or key in parameters) and not (key == "cache_dir" and value is None)}
    return function(*args, **kwargs)


def count_edges(path: Path) -> int:
    """Edge lines of a SNAP list (not blank, not a comment) or of a DIMACS .gr ('a' lines),
    gzipped or not, counted in big byte chunks (seconds for LiveJournal, not minutes)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    dimacs = ".gr" in Path(path).name
    count, previous = 0, b"\n"
    with opener(path, "rb") as handle:
        while chunk := handle.read(1 << 24):
            text = previous + chunk          # the byte before lets a line start straddle chunks
            if dimacs:
                count += text.count(b"\na")
            else:
                count += text[:-1].count(b"\n") - sum(text.count(b"\n" + c) for c in (b"#", b"%", b"\n", b"\r"))
            previous = chunk[-1:]
    return count


# --- one cell ----------------------------------------------------------------------

def run_cell(cell: Cell, graph: PreparedGraph, sweep: SweepConfig, provenance: dict,
             store: ResultsFile) -> tuple[dict, float]:
    """Run (isolated), judge, append; returns the row and the harness's own seconds (total minus
    the program's). The one runner sweep, grade and the executors share: grader.cellrun."""
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
              overheads: list[float], ran: int, wall_s: float, out, err) -> int:
    """Status counts per method, median times per method x sync, the runs that were not ok."""
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
    print(f"results: {results_path}\nreport:  python -m grader report --results {results_path}", file=out)
    return 0 if rows and not failed and missing <= 0 else 1
