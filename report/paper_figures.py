"""The seed papers' own published figures, for "ours vs the papers" tables.

Each :class:`PaperFigure` is one number a paper prints: which paper and table, the method
as the paper names it, our method (``./sssp`` or ``./apsp`` word) that implements it, the
graph as the paper names it with its size, and the time in seconds. Figures are copied
from ``../shared/seeds`` (000: Bodra, Tables 1-3, measured on a GeForce GPU; 001: An;
003: Telang); the papers give no other timings.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PaperFigure:
    paper: str        # "Bodra, Table 1"
    method: str       # as the paper names it
    ours: str         # our method word: vbf, vbf-stride, vbf-flag, fw, fw-blocked, sssp-all, ...
    program: str      # "sssp" or "apsp"
    graph: str        # as the paper names it
    vertices: int
    edges: int | None
    seconds: float
    standin: str      # what we run for that graph (a file of ../shared/data or a stand-in)


NY_ROAD = ("DIMACS New York road network", 264_346, 733_846, "road stand-in of NY's size (grader.synth, weights 1..1000)")
GNUTELLA04 = ("gnutella04", 10_876, 39_994, "p2p-Gnutella04 (../shared/data, the same graph)")
GNUTELLA25 = ("gnutella25", 22_687, 54_705, "random graph of gnutella25's size")
GNUTELLA30 = ("gnutella30", 36_682, 88_328, "random graph of gnutella30's size")

FIGURES: tuple[PaperFigure, ...] = (
    PaperFigure("Bodra, Table 1", "Bellman-Ford naive", "vbf", "sssp", *NY_ROAD[:3], 8.58, NY_ROAD[3]),
    PaperFigure("Bodra, Table 1", "Bellman-Ford stride", "vbf-stride", "sssp", *NY_ROAD[:3], 8.78, NY_ROAD[3]),
    PaperFigure("Bodra, Table 1", "Bellman-Ford stride with flag", "vbf-flag", "sssp", *NY_ROAD[:3], 3.91, NY_ROAD[3]),
    PaperFigure("Bodra, Table 2", "Dijkstra, all pairs (a thread per source)", "sssp-all", "apsp",
                *GNUTELLA04[:3], 119.9, GNUTELLA04[3]),
    PaperFigure("Bodra, Table 3", "Floyd-Warshall naive (a thread per row)", "fw", "apsp", *GNUTELLA04[:3], 30.15,
                GNUTELLA04[3]),
    PaperFigure("Bodra, Table 3", "Floyd-Warshall super naive (2-D grid per k)", "fw", "apsp", *GNUTELLA04[:3], 9.74,
                GNUTELLA04[3]),
    PaperFigure("Bodra, Table 3", "Floyd-Warshall super naive, shared memory", "fw", "apsp", *GNUTELLA04[:3], 10.42,
                GNUTELLA04[3]),
    PaperFigure("Bodra, Table 3", "Floyd-Warshall tiled", "fw-blocked", "apsp", *GNUTELLA04[:3], 4.84, GNUTELLA04[3]),
    PaperFigure("Bodra, Table 3", "Floyd-Warshall tiled, shared memory", "fw-blocked", "apsp", *GNUTELLA04[:3], 2.38,
                GNUTELLA04[3]),
    PaperFigure("Bodra, Table 3", "Floyd-Warshall tiled, shared memory", "fw-blocked", "apsp", *GNUTELLA25[:3], 20.5,
                GNUTELLA25[3]),
    PaperFigure("Bodra, Table 3", "Floyd-Warshall tiled, shared memory", "fw-blocked", "apsp", *GNUTELLA30[:3], 82.3,
                GNUTELLA30[3]),
)

# Issue 15's goals on an H100 (seconds), by (our method, graph as the papers name it).
GOALS = {
    ("vbf-flag", "DIMACS New York road network"): 0.050,
    ("fw-blocked", "gnutella04"): 0.1,
    ("fw-blocked", "p2p-Gnutella31"): 10.0,
}


def figures_for(ours: str) -> list[PaperFigure]:
    return [f for f in FIGURES if f.ours == ours]
