"""One cell as a task a worker can run: the cell, where its inputs lie, and their digests.

Why files and digests rather than the data itself: a reference or an ordered input of a big
graph is tens of megabytes and a sweep has hundreds of cells per graph; the grader writes
each once to a folder every worker sees (this machine's disk, or a shared file system on a
cluster: SSSP_CACHE_DIR / --cache-dir) and sends only paths. A worker checks each file's
digest before using it, so a stale or half-copied shared folder fails that run loudly
instead of grading against the wrong graph.
"""
from __future__ import annotations

import hashlib
import io
import weakref
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np

from grader.sweep.cellrun import freeze
from sssp_common.digest import file_digest
from sssp_common.files import atomic_writer, cache_dir as default_cache_dir
from sssp_common.record import RunRecord, utc_now

HARNESS_STATUS = "crash"   # a run the harness could not carry out is not ok, and --rerun-failed redoes it


@dataclass(frozen=True)
class Shipped:
    """A file the grader wrote for the workers, with the digest it had then."""
    path: Path
    digest: str


@dataclass(frozen=True)
class CellTask:
    cell: object                  # grader.sweep.cells.Cell
    graph: object                 # the prepared graph without its reference array (it travels as a file)
    vertices: int
    sweep: object                 # grader.sweep.config.SweepConfig
    provenance: dict
    inputs: tuple[Shipped, ...]   # the ordered edge list the program reads (and a graded program itself)
    reference: Shipped
    runner: Callable              # runner(cell, graph, sweep, provenance, store) -> (row, overhead)


# --- the grader's side ---------------------------------------------------------------

_shipped: dict[int, tuple] = {}   # id of a frozen reference -> (weak ref to it, folder, Shipped)


def ship_reference(distances: np.ndarray, folder: Path | None = None) -> Shipped:
    """The reference distances as a .npy file named by its content (written once, atomically).
    A frozen reference (grader.sweep.cellrun.freeze: cannot change) is serialised and hashed once per
    process, not again for every submission that `grade` ships it for."""
    folder = Path(folder) if folder is not None else default_cache_dir("reference") / "shipped"
    known = _shipped.get(id(distances))
    if known and known[0]() is distances and not distances.flags.writeable and known[1] == folder \
            and known[2].path.is_file():
        return known[2]
    shipped = _write_reference(distances, folder)
    if not distances.flags.writeable and distances.flags.owndata:
        key = id(distances)
        _shipped[key] = (weakref.ref(distances, lambda _, key=key: _shipped.pop(key, None)), folder, shipped)
    return shipped


def _write_reference(distances: np.ndarray, folder: Path) -> Shipped:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(distances, dtype=np.int64), allow_pickle=False)
    data = buffer.getvalue()
    path = folder / f"{hashlib.blake2b(data, digest_size=16).hexdigest()}.npy"
    if not path.is_file() or path.stat().st_size != len(data):
        folder.mkdir(parents=True, exist_ok=True)
        with atomic_writer(path, "wb") as stream:
            stream.write(data)
    return Shipped(path, file_digest(path))


def ship_file(path: Path) -> Shipped:
    return Shipped(Path(path), file_digest(path))


def make_tasks(cells, graph, sweep, provenance: dict, runner: Callable, folder: Path | None = None) -> list[CellTask]:
    """The tasks of one prepared graph's cells (graph.reference: the distances; graph.ordered:
    ordering -> input file)."""
    reference = ship_reference(graph.reference, folder)
    inputs = {ordering: ship_file(path) for ordering, path in graph.ordered.items()}
    program = getattr(sweep, "program_path", None)   # a graded submission's build: it must reach the worker too
    shipped_program = (ship_file(program),) if program is not None and Path(program).is_file() else ()
    bare = replace(graph, reference=None)
    vertices = int(graph.reference.shape[0])
    return [CellTask(cell, bare, vertices, sweep, provenance, (inputs[cell.ordering], *shipped_program), reference,
                     runner) for cell in cells]


def tasks_for(cells, graphs: dict, sweep, provenance: dict, runner: Callable, folder: Path | None = None) -> list[CellTask]:
    """make_tasks over cells of several prepared graphs (graphs: name -> prepared graph), in order."""
    by_graph: dict[str, list] = {}
    for cell in cells:
        by_graph.setdefault(cell.graph, []).append(cell)
    made = {name: iter(make_tasks(group, graphs[name], sweep, provenance, runner, folder))
            for name, group in by_graph.items()}
    return [next(made[cell.graph]) for cell in cells]


def failure_row(task: CellTask, detail: str) -> dict:
    """The row of a run that produced none (its workers kept dying, an input arrived changed),
    with the fields the runner's rows carry for every run (program identity, the sweep's extras)."""
    cell = task.cell
    row = RunRecord(
        run_id=cell.run_id, graph=cell.graph, ordering=cell.ordering, method=cell.method, sync=cell.sync,
        bsize=cell.bsize, bcount=cell.bcount, rep=cell.rep, status=HARNESS_STATUS,
        sweep=getattr(task.sweep, "name", ""), program=cell.program,
        program_id=getattr(cell, "program_id", "") or cell.program, graph_vertices=task.vertices,
        graph_edges=getattr(task.graph, "edges", None), detail=f"harness: {detail}",
        machine=task.provenance.get("machine", ""), commit=task.provenance.get("commit", ""),
        started_at=utc_now()).to_dict()
    row["distances"] = HARNESS_STATUS
    row.update(getattr(task.sweep, "record_extra", {}) or {})
    return row


# --- the worker's side -----------------------------------------------------------------

# A worker's own digests, in memory: a folder would outlive workers, which end by os._exit
# (54 grader-worker-digests-* folders were left in /tmp after a test suite and a few sweeps).
_private_memo: dict[str, str] = {}
_reference_memo: dict[str, np.ndarray] = {}


def arrival_problem(item: Shipped) -> str:
    """'' when the file is here with the grader's digest, else what is wrong. Hashed for real
    once per file and worker (a private memo: the shared one could only repeat the grader)."""
    try:
        digest = file_digest(item.path, memo=_private_memo)
    except FileNotFoundError:
        return (f"{item.path} is not on this worker: the grader's files must be in a folder every "
                f"worker sees (SSSP_CACHE_DIR / --cache-dir and the graphs on a shared file system)")
    except OSError as error:
        return f"cannot read {item.path} on this worker: {error}"
    if digest != item.digest:
        return (f"{item.path} on this worker differs from the grader's (digest {digest[:12]}, "
                f"expected {item.digest[:12]}): a stale or half-copied shared folder; not run")
    return ""


def load_reference(item: Shipped) -> np.ndarray:
    """The reference array, kept while cells of the same graph follow one another."""
    if item.digest not in _reference_memo:
        _reference_memo.clear()
        # frozen (read-only, its own memory): its checksum is then checked once per worker, not per run
        _reference_memo[item.digest] = freeze(np.load(item.path, allow_pickle=False))
    return _reference_memo[item.digest]


class RowList:
    """A stand-in results file for the runner: rows kept in memory (a worker's go back to the
    grader; the shrinker's candidates are no results at all)."""
    def __init__(self):
        self.rows: list[dict] = []

    def append(self, row) -> None:
        self.rows.append(row)


def run_task(task: CellTask):
    """On a worker: check the inputs arrived whole, run the cell, return (row, harness seconds)."""
    for item in (*task.inputs, task.reference):
        problem = arrival_problem(item)
        if problem:
            return failure_row(task, problem), None
    graph = replace(task.graph, reference=load_reference(task.reference))
    return task.runner(task.cell, graph, task.sweep, task.provenance, RowList())
