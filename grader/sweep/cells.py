"""Expand a sweep config into cells (one program run each) and render their commands.

Pure logic: no files are touched, so the matrix and the run ids can be checked
(and listed with --dry-run) without any graph at hand.
"""
from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from grader.sweep.config import SweepConfig, looks_like_path  # noqa: F401 (the graph-entry rule lives with the config)
from sssp_common.files import REPO_ROOT
from sssp_common.record import run_id

PROJECT_SSSP = REPO_ROOT / "sssp"


@dataclass(frozen=True)
class Cell:
    program: str
    graph: str
    ordering: str
    bsize: int
    bcount: int
    method: str       # as recorded: bmf, segscan, tpe, opt
    run_as: str       # the word the program gets
    usesmem: str
    sync: str
    rep: int
    program_id: str = ""   # identity (commit, content digest): what run ids are keyed by

    @property
    def run_id(self) -> str:
        return run_id(self.program_id or self.program, self.graph, self.ordering, self.method, self.sync,
                      self.bsize, self.bcount, self.rep)

    @property
    def label(self) -> str:
        return (f"{self.graph} {self.ordering} {self.bsize}x{self.bcount} {self.method} {self.sync}"
                + (" warm-up" if self.rep < 0 else f" #{self.rep}" if self.rep else ""))


def graph_label(entry: str) -> str:
    """The name recorded for a graph entry: a catalogue name as is, a file by its stem
    (tiny.txt.gz -> tiny)."""
    if not looks_like_path(entry):
        return entry
    name = Path(entry).name
    for suffix in (".gz", ".txt", ".gr", ".el", ".tsv", ".csv", ".edges"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


WARMUP_REP = -1   # rep of a warm-up run: recorded (so a failing one shows), never reported


def expand(config: SweepConfig, graphs: tuple[str, ...] | None = None, program_id: str = "",
           label: str | None = None) -> list[Cell]:
    """Every cell of the matrix, graph outermost (one reference per graph), honouring each
    method's orderings and syncs.

    Within a graph the repetition is the outer loop: each repetition is a full pass over the
    graph's settings, so a moment of a busy machine slows one repetition of many settings
    (which the report's ranges and outlier rule see) instead of every repetition of one.
    Inside a pass each ordering's cells come together. That is also the order a kept ./sssp
    (grader.sweep.warm) needs: a graph's cells are contiguous, and its kept process holds every
    ordering of the graph at once (sssp_gpu.serve.Shelf), so the passes read each input once;
    ordering outermost would save nothing and would put every repetition of one ordering in
    one stretch of time, where a busy moment could fake an ordering's effect.
    With ``warmup`` set, each (ordering, method, sync) first gets that many warm-up runs at
    the first configuration, recorded with negative reps (file caches, GPU clocks).
    ``program_id`` keys the run ids (grader.sweep.identity); ``label`` overrides the config's."""
    cells = []
    for entry in graphs if graphs is not None else config.graphs:
        graph = graph_label(entry)
        settings = [(ordering, method, sync) for ordering in config.orderings for method in config.methods
                    if ordering in method.orderings for sync in method.syncs]
        bsize0, bcount0 = config.configs[0]
        for warm in range(getattr(config, "warmup", 0)):
            for ordering, method, sync in settings:
                cells.append(Cell(label or config.program_label, graph, ordering, bsize0, bcount0, method.name,
                                  method.run_as, method.usesmem, sync, WARMUP_REP - warm, program_id))
        for rep in range(config.reps):
            for ordering in config.orderings:
                for bsize, bcount in config.configs:
                    for method in config.methods:
                        if ordering not in method.orderings:
                            continue
                        for sync in method.syncs:
                            cells.append(Cell(label or config.program_label, graph, ordering, bsize, bcount,
                                              method.name, method.run_as, method.usesmem, sync, rep, program_id))
    return cells


def render_command(template: str, cell: Cell, input_path: Path, output_path: Path,
                   config_dir: Path | None = None, sssp: Path = PROJECT_SSSP) -> list[str]:
    """Fill the template (every value shell-quoted) and split it the way a shell would."""
    values = {
        "sssp": str(sssp), "python": sys.executable, "config_dir": str(config_dir or Path.cwd()),
        "input": str(input_path), "output": str(output_path),
        "bsize": str(cell.bsize), "bcount": str(cell.bcount), "method": cell.run_as,
        "sync": cell.sync, "usesmem": cell.usesmem, "ordering": cell.ordering,
        "graph": cell.graph, "rep": str(cell.rep),
    }
    quoted = {key: shlex.quote(value) for key, value in values.items()}
    return shlex.split(template.format(**quoted))
