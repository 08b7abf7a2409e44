"""The baseline programs: gapbs's delta-stepping (16 host cores) and Gunrock's SSSP (the GPU).

Both are prebuilt binaries (see their READMEs in ../shared/tools). They are looked for, in
order, under ``$SSSP_TOOLS_DIR``, ``.device-tools/`` in the checkout (an ignored folder the
lead copies them into so that they travel to the GPU machine) and ``../shared/tools``:
``<dir>/gapbs/sssp`` and ``<dir>/gunrock/sssp``. A missing binary skips its column.
"""
from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .common import ROOT

_AVERAGE = re.compile(r"^Average Time:\s*([0-9.eE+-]+)", re.MULTILINE)


def search_dirs(env=None) -> list[Path]:
    env = os.environ if env is None else env
    dirs = [Path(env["SSSP_TOOLS_DIR"])] if env.get("SSSP_TOOLS_DIR") else []
    return dirs + [ROOT / ".device-tools", ROOT.parent / "shared" / "tools"]


def find(name: str, dirs: list[Path] | None = None) -> Path | None:
    for base in search_dirs() if dirs is None else dirs:
        candidate = Path(base) / name / "sssp"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


@dataclass
class Outcome:
    ms: float | None
    detail: str = ""  # why there is no time, or what was chosen (the best delta)
    runs: list | None = None


def gapbs(binary: Path, graph_file: Path, delta: int, threads: int, trials: int = 5, timeout: float = 300) -> Outcome:
    """One gapbs process: ``Average Time`` over ``trials`` runs from vertex 0, in ms."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    command = [str(binary), "-f", str(graph_file), "-r", "0", "-d", str(delta), "-n", str(trials)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return Outcome(None, f"timed out after {timeout:.0f} s")
    found = _AVERAGE.search(done.stdout)
    if done.returncode != 0 or not found:
        return Outcome(None, f"exit {done.returncode}: {(done.stdout + done.stderr).strip()[-200:]}")
    return Outcome(float(found.group(1)) * 1e3, f"Δ={delta}")


def gapbs_best(binary: Path, graph_file: Path, deltas, threads: int, trials: int = 5, timeout: float = 300) -> Outcome:
    """The best Δ of ``deltas``; ``runs`` holds every Δ's time."""
    runs = []
    for delta in deltas:
        outcome = gapbs(binary, graph_file, delta, threads, trials, timeout)
        runs.append({"delta": delta, "ms": outcome.ms, "detail": outcome.detail})
        if outcome.ms is None:
            return Outcome(None, outcome.detail, runs)
    best = min(runs, key=lambda r: r["ms"])
    return Outcome(best["ms"], f"Δ={best['delta']}", runs)


def process_times(document) -> list[float] | None:
    """The ``process_times`` list (ms) anywhere in Gunrock's metrics JSON."""
    found = _field(document, "process_times", list)
    return None if found is None else [float(v) for v in found]


def _field(document, name: str, kind):
    """The first ``name`` of type ``kind`` anywhere in a JSON document (depth first), else None."""
    if isinstance(document, dict):
        if isinstance(document.get(name), kind) and not isinstance(document.get(name), bool):
            return document[name]
        children = document.values()
    elif isinstance(document, list):
        children = document
    else:
        return None
    for child in children:
        found = _field(child, name, kind)
        if found is not None:
            return found
    return None


def size_mismatch(document, vertices: int | None, edges: int | None) -> str:
    """Why Gunrock's reported graph size differs from the graph's ('' when it agrees or is not
    reported): proof that it read the whole file it was given as that graph."""
    said = {"vertices": _field(document, "num_vertices", int), "edges": _field(document, "num_edges", int)}
    wanted = {"vertices": vertices, "edges": edges}
    wrong = [f"{said[k]:,} {k} (the graph has {wanted[k]:,})" for k in said
             if said[k] is not None and wanted[k] is not None and said[k] != wanted[k]]
    return "read " + ", ".join(wrong) if wrong else ""


def gunrock_command(binary: Path, graph_file: Path, runs: int, out_dir: Path) -> list[str]:
    """Gunrock from vertex 0, ``runs`` runs, its metrics JSON written to ``out_dir/result.json``."""
    return [str(binary), "-m", str(graph_file), "-s", "0", "-n", str(runs), "--export_metrics",
            "-d", str(out_dir), "-f", "result.json"]


def gunrock_result(returncode: int, output: str, out_dir: Path, name: str, vertices: int | None = None,
                   edges: int | None = None) -> Outcome:
    """The median of the ``process_times`` in a finished Gunrock's metrics JSON; with
    ``vertices``/``edges`` the size it reports must match, or there is no time."""
    out_dir = Path(out_dir)
    reports = [out_dir / "result.json"] + sorted(out_dir.rglob("*.json"))
    report = next((r for r in reports if r.is_file()), reports[0])
    if returncode != 0 or not report.is_file():
        return Outcome(None, f"exit {returncode}: {output.strip()[-200:]}")
    try:
        document = json.loads(report.read_text())
    except ValueError as err:
        return Outcome(None, f"unreadable metrics JSON: {err}")
    wrong = size_mismatch(document, vertices, edges)
    if wrong:
        return Outcome(None, f"{name}: {wrong}")
    times = process_times(document)
    if not times:
        return Outcome(None, "no process_times in its metrics JSON")
    return Outcome(float(statistics.median(times)), f"median of {len(times)}", times)


def gunrock(binary: Path, mtx_file: Path, runs: int = 7, timeout: float = 300, vertices: int | None = None,
            edges: int | None = None) -> Outcome:
    """One Gunrock process on ``mtx_file``: the median of its ``process_times`` in ms (see
    :func:`gunrock_result`)."""
    with tempfile.TemporaryDirectory(prefix="gunrock-") as out:
        try:
            done = subprocess.run(gunrock_command(binary, mtx_file, runs, Path(out)), capture_output=True,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return Outcome(None, f"timed out after {timeout:.0f} s")
        return gunrock_result(done.returncode, done.stdout + done.stderr, Path(out), mtx_file.name, vertices, edges)
