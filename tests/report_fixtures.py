"""Synthetic sweep results for the report's tests: one sweep's true times, measured with noise.

Why synthetic: a rerun test needs two runs of the *same* sweep that differ only by
noise, with known effects (a configuration 1.4x slower, two configurations equal, an
ordering that does not matter) so the test can say which claims must and must not be made.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

from sssp_common.record import run_id

GPU = "NVIDIA H100 80GB HBM3"
CPU = "CPU (numpy)"
GRAPHS = {"roadNet-CA~synth": (1_965_206, 5_533_214), "p2p-Gnutella04": (10_879, 39_994)}
CONFIGS = {(256, 8): 1.4, (384, 5): 1.2, (512, 4): 1.0, (768, 2): 1.0, (1024, 2): 1.05}
ORDER = {"given": 1.3, "source": 1.0, "destination": 1.1}
SETTINGS = [("bmf", "outcore", o) for o in ORDER] + [("bmf", "incore", o) for o in ORDER] + [
    ("segscan", "outcore", "destination"), ("tpe", "outcore", "source"), ("tpe", "incore", "source"),
    ("opt", "outcore", "given"), ("opt", "outcore", "source"), ("opt", "incore", "given"), ("opt", "incore", "source")]


def true_times(method: str, sync: str, ordering: str, config: tuple[int, int]) -> tuple[float, float, int]:
    """(computation ms, filtering ms, rounds) without noise."""
    if method == "opt":          # ignores the grid and the order: every setting the same
        return 5.0, 0.4, 40
    if method == "tpe":
        return 20.0 * CONFIGS[config], 15.0, 600 if sync == "outcore" else 350
    base = 300.0 * CONFIGS[config] * ORDER[ordering]
    if method == "segscan":
        return base * 0.8, 0.0, 600
    return (base, 0.0, 600) if sync == "outcore" else (base * 0.6, 0.0, 350)


def sweep_rows(seed: int, device: str = GPU, program: str = "project", program_id: str = "",
               reps: int = 3, noise: float = 0.015, outlier: bool = True, warmup: bool = True) -> list[dict]:
    """Every run of the synthetic sweep, measured with multiplicative noise (one outlier if asked)."""
    rng = random.Random(seed)
    rows = []
    ident = program_id or program
    for graph, (vertices, edges) in GRAPHS.items():
        scale = 1.0 if graph.startswith("road") else 0.05
        for rep in ([-1] if warmup else []) + list(range(reps)):
            for method, sync, ordering in SETTINGS:
                for config in CONFIGS:
                    comp, filt, rounds = true_times(method, sync, ordering, config)
                    jitter = lambda: 1.0 + rng.gauss(0.0, noise)  # noqa: E731
                    comp, filt = comp * scale * jitter(), filt * scale * jitter()
                    if rep < 0:
                        comp *= 7.0     # a cold warm-up: must never show
                    if outlier and rep == 1 and (method, sync, ordering, config) == ("bmf", "outcore", "source",
                                                                                       (768, 2)):
                        comp *= 3.0     # one busy moment
                    processed = rounds * edges if method in ("bmf", "segscan") else edges
                    rows.append({
                        "run_id": run_id(ident, graph, ordering, method, sync, *config, rep), "sweep": "synthetic",
                        "program": program, "program_id": program_id, "graph": graph,
                        "graph_vertices": vertices, "graph_edges": edges, "ordering": ordering, "method": method,
                        "sync": sync, "bsize": config[0], "bcount": config[1], "rep": rep, "status": "ok",
                        "computation_ms": round(comp, 4), "filtering_ms": round(filt, 4), "rounds": rounds,
                        "edges_processed": processed, "edges_filtered": edges * rounds if method == "tpe" else 0,
                        "mismatches": None, "detail": "", "device": device, "wall_s": 1.0, "command": [],
                        "machine": "node-1", "commit": "abc1234", "started_at": f"2024-11-22T1{rep + 2}:00:00Z"})
    return rows


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path
