"""The benchmark graphs, generated once and kept in an ignored folder (build/bench/graphs).

Six graphs (issue 13): the 700x700 grid with weights 1..100 and with unit weights, R-MAT
scale 20 (edge factor 16) weighted and unit, and the roadNet-CA and LiveJournal stand-ins
(``grader.data.synth``, unit weights). Each is kept as raw arrays (``.npy``, read back in well under
a second) plus the files the programs read: SNAP text for ``./sssp`` (stand-ins only; its
parse cache is filled at once), ``.wsg``/``.wel`` for gapbs and ``.mtx`` for Gunrock. Everything
is written atomically under names that carry the scale and generator version, so an
interrupted run or a generator change never leaves a stale file in use. Generation runs in
parallel processes: cold, the LiveJournal stand-in sets the pace (~16 s to generate, then its
formats side by side).
"""
from __future__ import annotations

import json
import multiprocessing
import os
import shutil
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


def _write_format(scale: str, key: str, suffix: str, root) -> str:
    target = path(scale, key, suffix, root)
    if target.is_file():
        return ""
    started = time.perf_counter()
    graph = load(scale, key, root)
    if suffix in ("txt", "dst.txt"):
        s = spec(scale, key)
        if suffix == "dst.txt":  # segscan's pairing: edges sorted by destination
            graph = graph.reordered(np.argsort(graph.dst, kind="stable"))
        write_edge_list(target, graph, header=f"{s.standin}~synth stand-in (benchmarks), scale {s.size}, "
                                               f"{'destination' if suffix == 'dst.txt' else 'source'}-sorted")
        try:  # fill ./sssp's parse cache (SSSP_CACHE_DIR) now, in parallel with the other files
            from sssp_common.loader import load_graph
            load_graph(target)
        except Exception as err:  # the warm-up run will parse it instead
            return f"{key}.txt: written; parse cache not filled ({type(err).__name__}: {err})"
    elif suffix == "csr.npz":  # the reference's input: scipy's matrix without re-sorting 69M edges
        offsets, heads, weights = formats.squished(graph.n, graph.src, graph.dst, graph.w)
        with atomic_writer(target, "wb") as stream:
            np.savez(stream, offsets=offsets, heads=heads, weights=weights)
    else:
        {"wel": formats.write_wel, "wsg": formats.write_wsg, "mtx": formats.write_mtx}[suffix](target, graph)
        from .baselines import file_digest
        file_digest(target)  # the baseline cache's key, taken here in parallel (LiveJournal's .mtx: ~2 s)
    return f"{key}.{suffix}: written in {time.perf_counter() - started:.1f} s"


def needed_formats(scale: str, keys, gapbs_format: str) -> list[tuple[str, str]]:
    jobs = []
    for key in keys:
        if spec(scale, key).kind == "standin":
            jobs += [(key, "txt"), (key, "dst.txt")]
        jobs += [(key, "csr.npz"), (key, gapbs_format), (key, "mtx")]
    return jobs


def prepare(scale: str, keys=None, gapbs_format: str = "wsg", root: Path | None = None, workers: int | None = None,
            log=print) -> float:
    """Make every file the benchmarks read; returns the seconds it took (~0 when all cached)."""
    started = time.perf_counter()
    keys = list(keys or [s.key for s in specs(scale)])
    folder(scale, root).mkdir(parents=True, exist_ok=True)
    jobs = needed_formats(scale, keys, gapbs_format)
    missing_arrays = [k for k in keys if not (folder(scale, root) / k / "meta.json").is_file()]
    missing_files = [(k, f) for k, f in jobs if not path(scale, k, f, root).is_file()]
    if not missing_arrays and not missing_files:
        return time.perf_counter() - started
    workers = workers or max(1, min(len(missing_files) or 1, os.cpu_count() or 1, 12))
    log(f"preparing graphs in {folder(scale, root)} ({workers} processes): "
        f"{len(missing_arrays)} to generate, {len(missing_files)} files to write", flush=True)
    # fork: nothing here has touched CUDA yet, and the children need only numpy/scipy
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        # each graph's files start as soon as its arrays exist (LiveJournal's take longest)
        arrays = {pool.submit(_save_arrays, scale, k, root): k for k in missing_arrays}
        writes = [pool.submit(_write_format, scale, k, f, root) for k, f in missing_files if k not in missing_arrays]
        for done in as_completed(arrays):
            _log(log, done.result())
            writes += [pool.submit(_write_format, scale, k, f, root) for k, f in missing_files if k == arrays[done]]
        for done in as_completed(writes):
            _log(log, done.result())
    seconds = time.perf_counter() - started
    log(f"graphs ready in {seconds:.1f} s", flush=True)
    return seconds


def _log(log, message: str) -> None:
    if message:
        log(f"  {message}", flush=True)
