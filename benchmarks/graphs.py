"""The benchmark graphs, generated once and kept in an ignored folder (build/bench/graphs).

Six graphs (issue 13): the 700x700 grid with weights 1..100 and with unit weights, R-MAT
scale 20 (edge factor 16) weighted and unit, and the roadNet-CA and LiveJournal stand-ins
(``grader.data.synth``, unit weights). Each is kept as raw arrays (``.npy``, read back in well under
a second) plus the files the programs read: SNAP text for ``./sssp`` (every graph; its
parse cache is filled at once), ``.wsg``/``.wel`` for gapbs and ``.mtx`` for Gunrock. Everything
is written atomically under names that carry the scale and generator version, so an
interrupted run or a generator change never leaves a stale file in use. Generation runs in
parallel processes, which the harness starts before anything else and may overlap with GPU-only
work (the fw table): cold, the LiveJournal stand-in sets the pace (~7 s to generate on the dev
machine, then its files side by side, the slowest ~4 s). Nothing is parsed back: the SNAP
texts' parse-cache entries are written from the arrays they were written from
(``sssp_common.edgelist.parsed_form``), and the destination-sorted copy is a CSR transpose.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import threading
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sssp_common.edgelist import write_edge_list
from sssp_common.files import atomic_writer
from sssp_common.graph import Graph

from . import formats
from .common import ROOT

GRAPHS_DIR = ROOT / "build" / "bench" / "graphs"
LAYOUT_VERSION = 1  # bump when a file written here changes


@dataclass(frozen=True)
class Spec:
    key: str     # file-name stem
    label: str   # table label
    kind: str    # grid, rmat or standin
    size: object  # grid side, R-MAT scale, or stand-in scale ("full" or a fraction)
    weighted: bool
    seed: int
    standin: str = ""  # grader.data.synth stand-in name


# Sizes per benchmark scale: full is issue 13's; ci is tiny, for the CPU smoke test.
SIZES = {"full": {"grid": 700, "rmat": 20, "road": "full", "lj": "full"},
         "ci": {"grid": 24, "rmat": 9, "road": 1 / 4096, "lj": 1 / 65536}}


def specs(scale: str) -> list[Spec]:
    size = SIZES[scale]
    side, rmat = size["grid"], size["rmat"]
    return [
        Spec("grid-w", f"grid {side}², weights 1..100", "grid", side, True, 1),
        Spec("grid-u", f"grid {side}², unit", "grid", side, False, 1),
        Spec("rmat-w", f"R-MAT s{rmat}, weights 1..100", "rmat", rmat, True, 2),
        Spec("rmat-u", f"R-MAT s{rmat}, unit", "rmat", rmat, False, 2),
        Spec("road", "road stand-in, unit", "standin", size["road"], False, 0, "roadNet-CA"),
        Spec("lj", "LiveJournal stand-in, unit", "standin", size["lj"], False, 0, "soc-LiveJournal1"),
    ]


def spec(scale: str, key: str) -> Spec:
    return next(s for s in specs(scale) if s.key == key)


def folder(scale: str, root: Path | None = None) -> Path:
    from grader.data import synth
    return Path(root or GRAPHS_DIR) / f"{scale}-v{LAYOUT_VERSION}.{synth.GENERATOR_VERSION}"


def path(scale: str, key: str, suffix: str, root: Path | None = None) -> Path:
    """``<folder>/<key>.<suffix>``; a stand-in's SNAP text is ``<key>.txt`` (source-sorted, as
    ``grader synth`` writes it) and ``<key>.dst.txt`` (destination-sorted, for segscan)."""
    return folder(scale, root) / f"{key}.{suffix}"


def generate(s: Spec) -> Graph:
    from grader.data import synth
    if s.kind == "grid":
        return synth.grid(s.size, s.size, weights=(1, 100) if s.weighted else None, seed=s.seed)
    if s.kind == "rmat":
        return synth.rmat(s.size, 16, weights=(1, 100) if s.weighted else None, seed=s.seed)
    return synth.standin(s.standin, scale=s.size, seed=s.seed)


def meta(scale: str, key: str, root: Path | None = None) -> dict:
    """``{"n", "m", "label"}`` of a prepared graph."""
    return json.loads((folder(scale, root) / key / "meta.json").read_text())


def load(scale: str, key: str, root: Path | None = None) -> Graph:
    """The graph from its ``.npy`` arrays (``prepare`` must have run)."""
    base = folder(scale, root) / key
    meta = json.loads((base / "meta.json").read_text())
    arrays = [np.load(base / f"{name}.npy") for name in ("src", "dst", "w")]
    return Graph(int(meta["n"]), *arrays)


def load_csr(scale: str, key: str, root: Path | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The graph's out-CSR (offsets, heads, weights): one edge per (src, dst), the lightest."""
    with np.load(path(scale, key, "csr.npz", root)) as data:
        return data["offsets"], data["heads"], data["weights"]


# ---------------------------------------------------------------- preparing

def _save_arrays(scale: str, key: str, root) -> str:
    s = spec(scale, key)
    target = folder(scale, root) / key
    if (target / "meta.json").is_file():
        return ""
    started = time.perf_counter()
    graph = generate(s)
    staging = target.with_name(f".{key}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name in ("src", "dst", "w"):
        np.save(staging / f"{name}.npy", getattr(graph, name))
    (staging / "meta.json").write_text(json.dumps({"n": graph.n, "m": graph.m, "label": s.label}))
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return f"{key}: generated {graph.n:,} vertices, {graph.m:,} edges in {time.perf_counter() - started:.1f} s"


def _write_format(scale: str, key: str, suffix: str, root, threads: int = 1) -> str:
    target = path(scale, key, suffix, root)
    if target.is_file():
        return ""
    started = time.perf_counter()
    graph = load(scale, key, root)
    if suffix in ("txt", "dst.txt"):
        s = spec(scale, key)
        if suffix == "dst.txt":  # segscan's pairing: edges sorted by destination
            graph = formats.by_destination(graph)
        header = (f"{s.standin}~synth stand-in (benchmarks), scale {s.size}, "
                  f"{'destination' if suffix == 'dst.txt' else 'source'}-sorted" if s.kind == "standin" else
                  f"{s.label} (benchmarks, seed {s.seed}), edges in the generator's order")
        write_edge_list(target, graph, header=header, workers=threads)
        try:  # ./sssp's parse cache (SSSP_CACHE_DIR): what parsing the file gives, without parsing it
            from sssp_common.edgelist import parsed_form
            from sssp_common.loader import remember_parsed
            remember_parsed(target, parsed_form(graph))
        except Exception as err:  # the warm-up run will parse it instead
            return f"{key}.{suffix}: written; parse cache not filled ({type(err).__name__}: {err})"
    elif suffix == "csr.npz":  # the reference's input: scipy's matrix without re-sorting 69M edges
        offsets, heads, weights = formats.squished(graph.n, graph.src, graph.dst, graph.w)
        with atomic_writer(target, "wb") as stream:
            np.savez(stream, offsets=offsets, heads=heads, weights=weights)
    else:
        if suffix == "wsg":
            formats.write_wsg(target, graph)
        else:
            {"wel": formats.write_wel, "mtx": formats.write_mtx}[suffix](target, graph, workers=threads)
        from .baselines import file_digest
        file_digest(target)  # the baseline cache's key, taken here in parallel (LiveJournal's .mtx: ~2 s)
    return f"{key}.{suffix}: written in {time.perf_counter() - started:.1f} s"


TEXT = ("txt", "dst.txt", "wel", "mtx")  # formats written as text: each may use several threads


def needed_formats(scale: str, keys, gapbs_format: str) -> list[tuple[str, str]]:
    jobs = []
    for key in keys:
        jobs.append((key, "mtx"))  # first: Gunrock parses it while the rest is written (gunrock_early)
        jobs.append((key, "txt"))  # ./sssp's input: the versus table's fresh processes (issue 40), the wall table
        if spec(scale, key).kind == "standin":
            jobs.append((key, "dst.txt"))
        jobs += [(key, "csr.npz"), (key, gapbs_format)]
    return jobs


class Preparation:
    """Graph preparation under way in worker processes, started by :func:`start`.

    Every worker is forked in ``start`` (a fork pool starts all of its processes at the first
    submit), before this process touches CUDA: the caller may then run GPU work (the fw table)
    while a thread here hands out the files each finished graph needs. :meth:`wait` returns the
    seconds from ``start`` to the last file and raises a worker's error."""

    def __init__(self, scale, keys, gapbs_format, root, workers, log):
        self.started = time.perf_counter()
        self.seconds: float | None = None
        self.error: BaseException | None = None
        self._thread = None
        self.log = log
        keys = list(keys or [s.key for s in specs(scale)])
        folder(scale, root).mkdir(parents=True, exist_ok=True)
        jobs = needed_formats(scale, keys, gapbs_format)
        missing_arrays = [k for k in keys if not (folder(scale, root) / k / "meta.json").is_file()]
        missing_arrays.sort(key=lambda k: k != "lj")  # the longest first: the others fit around it
        missing_files = [(k, f) for k, f in jobs if not path(scale, k, f, root).is_file()]
        if not missing_arrays and not missing_files:
            self.seconds = time.perf_counter() - self.started
            return
        cores = os.cpu_count() or 1
        workers = workers or max(1, min(len(missing_files) or 1, cores, 12))
        threads = max(1, min(4, cores // 4))  # per text file: 4 on the 16-core host, 1 on small machines
        log(f"preparing graphs in {folder(scale, root)} ({workers} processes): "
            f"{len(missing_arrays)} to generate, {len(missing_files)} files to write", flush=True)
        # fork: nothing here has touched CUDA yet, and the children need only numpy/scipy
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))

        def write(k, f):
            return self._pool.submit(_write_format, scale, k, f, root, threads if f in TEXT else 1)

        # each graph's files start as soon as its arrays exist (LiveJournal's take longest)
        self._arrays = {self._pool.submit(_save_arrays, scale, k, root): k for k in missing_arrays}
        self._writes = [write(k, f) for k, f in missing_files if k not in missing_arrays]
        self._later = {k: [f for kk, f in missing_files if kk == k] for k in missing_arrays}
        self._write = write
        self._thread = threading.Thread(target=self._drive, name="prepare-graphs", daemon=True)
        self._thread.start()

    def _drive(self) -> None:
        try:
            for done in as_completed(self._arrays):
                _log(self.log, done.result())
                self._writes += [self._write(self._arrays[done], f) for f in self._later[self._arrays[done]]]
            for done in as_completed(self._writes):
                _log(self.log, done.result())
        except BaseException as err:  # re-raised by wait()
            self.error = err
        finally:
            self._pool.shutdown(wait=True, cancel_futures=self.error is not None)
            self.seconds = time.perf_counter() - self.started

    def wait(self) -> float:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
            if self.error is not None:
                raise self.error
            self.log(f"graphs ready in {self.seconds:.1f} s", flush=True)
        return self.seconds


def start(scale: str, keys=None, gapbs_format: str = "wsg", root: Path | None = None, workers: int | None = None,
          log=print) -> Preparation:
    """Begin making every file the benchmarks read (see :class:`Preparation`)."""
    return Preparation(scale, keys, gapbs_format, root, workers, log)


def prepare(scale: str, keys=None, gapbs_format: str = "wsg", root: Path | None = None, workers: int | None = None,
            log=print) -> float:
    """Make every file the benchmarks read; returns the seconds it took (~0 when all cached)."""
    return start(scale, keys, gapbs_format, root, workers, log).wait()


def _log(log, message: str) -> None:
    if message:
        log(f"  {message}", flush=True)
