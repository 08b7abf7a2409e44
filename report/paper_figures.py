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


NY_ROAD, GNUTELLA04 = "DIMACS New York road network", "gnutella04"
# The papers' graphs, by the name they give: vertices, edges, what we run for it.
GRAPHS: dict[str, tuple[int, int | None, str]] = {
    NY_ROAD: (264_346, 733_846, "road stand-in of NY's size (grader.data.synth, weights 1..1000)"),
    GNUTELLA04: (10_876, 39_994, "p2p-Gnutella04 (../shared/data, the same graph)"),
    "gnutella25": (22_687, 54_705, "random graph of gnutella25's size"),
    "gnutella30": (36_682, 88_328, "random graph of gnutella30's size"),
}

# paper and table, method as the paper names it, our method word, program, graph, seconds
_TABLE = (
    ("Bodra, Table 1", "Bellman-Ford naive", "vbf", "sssp", NY_ROAD, 8.58),
    ("Bodra, Table 1", "Bellman-Ford stride", "vbf-stride", "sssp", NY_ROAD, 8.78),
    ("Bodra, Table 1", "Bellman-Ford stride with flag", "vbf-flag", "sssp", NY_ROAD, 3.91),
    ("Bodra, Table 2", "Dijkstra, all pairs (a thread per source)", "sssp-all", "apsp", GNUTELLA04, 119.9),
    ("Bodra, Table 3", "Floyd-Warshall naive (a thread per row)", "fw", "apsp", GNUTELLA04, 30.15),
    ("Bodra, Table 3", "Floyd-Warshall super naive (2-D grid per k)", "fw", "apsp", GNUTELLA04, 9.74),
    ("Bodra, Table 3", "Floyd-Warshall super naive, shared memory", "fw", "apsp", GNUTELLA04, 10.42),
    ("Bodra, Table 3", "Floyd-Warshall tiled", "fw-blocked", "apsp", GNUTELLA04, 4.84),
    ("Bodra, Table 3", "Floyd-Warshall tiled, shared memory", "fw-blocked", "apsp", GNUTELLA04, 2.38),
    ("Bodra, Table 3", "Floyd-Warshall tiled, shared memory", "fw-blocked", "apsp", "gnutella25", 20.5),
    ("Bodra, Table 3", "Floyd-Warshall tiled, shared memory", "fw-blocked", "apsp", "gnutella30", 82.3),
)

FIGURES: tuple[PaperFigure, ...] = tuple(
    PaperFigure(paper, method, ours, program, graph, GRAPHS[graph][0], GRAPHS[graph][1], seconds, GRAPHS[graph][2])
    for paper, method, ours, program, graph, seconds in _TABLE)

# Issue 15's goals on an H100 (seconds), by (our method, graph as the papers name it).
GOALS = {
    ("vbf-flag", NY_ROAD): 0.050,
    ("fw-blocked", GNUTELLA04): 0.1,
    ("fw-blocked", "p2p-Gnutella31"): 10.0,
}
