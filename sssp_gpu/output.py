"""The spec's outputs: the distance file (written atomically) and the timing lines."""
from __future__ import annotations


import numpy as np

from .device import Device
from sssp_common.edgelist import write_distances
from .methods.common import INF, Result


def write_distance_file(path, dist: np.ndarray) -> None:
    """``<vertex id>:<distance>`` for every vertex in order, unreachable as ``INF``; whole or absent."""
    write_distances(path, dist, dist == INF)


def milliseconds(value: float) -> str:
    return "0" if value == 0 else f"{value:.3f}"


def report_lines(result: Result, device: Device, num_edges: int) -> list[str]:
    """The spec's two timing lines, then ``key: value`` figures (docs/CONTRACTS.md)."""
    label = device.timing_label
    per_edge = result.edges_processed / num_edges if num_edges else 0.0
    lines = [
        f"The total computation kernel time on {label} is {milliseconds(result.computation_ms)} milli-seconds",
        f"The total filtering kernel time on {label} is {milliseconds(result.filtering_ms)} milli-seconds",
        f"rounds: {result.rounds}",
        f"edges processed: {result.edges_processed} ({per_edge:.2f} per graph edge)",
        f"edges scanned by filtering: {result.edges_filtered}",
    ]
    if result.launch:
        lines.append(f"launch: {result.launch}")
    lines.extend(note for note in result.notes if not note.startswith("warning:"))
    return lines
