"""The "Ours vs the papers" table: each seed paper's published time beside our fastest correct run.

The papers' figures live in :mod:`report.paper_figures` (data, kept by the seed-methods work).
Only single-source figures (program "sssp") can meet a sweep's results. A results graph
matches a paper's graph by name (gnutella04 is SNAP's p2p-Gnutella04) or by size (vertices
and edges within SIZE_TOLERANCE, so a stand-in of the paper's size matches too). The table
appears only when at least one figure meets a correct run of its method.
"""
from __future__ import annotations

import pandas as pd

from .cells import TextCell, format_number
from .paper_figures import FIGURES
from .tables import Table, best_clean, graphs, select, variant_short, variants, with_total

SIZE_TOLERANCE = 0.02
ALIASES = {"gnutella04": "p2p-Gnutella04", "gnutella25": "p2p-Gnutella25", "gnutella30": "p2p-Gnutella30"}


def _close(ours: int | None, theirs: int | None) -> bool:
    return bool(ours) and bool(theirs) and abs(ours - theirs) <= SIZE_TOLERANCE * theirs


def matches(figure, graph: str, vertices: int | None, edges: int | None) -> bool:
    """Our graph is the paper's (by name, a ~synth suffix aside) or one of its size."""
    base = graph.split("~", 1)[0]
    if base in (figure.graph, ALIASES.get(figure.graph)):
        return True
    return _close(vertices, figure.vertices) and _close(edges, figure.edges)


def papers_table(frame: pd.DataFrame, figures=FIGURES) -> Table | None:
    """Rows for the figures whose method ran correctly on a matching graph; None when there are none."""
    if not len(frame):
        return None
    frame = with_total(frame)
    names = variants(frame)
    rows = []
    for graph in graphs(frame):
        runs = select(frame, graph=graph)
        vertices, edges = runs["graph_vertices"].dropna(), runs["graph_edges"].dropna()
        v = int(vertices.iloc[0]) if len(vertices) else None
        e = int(edges.iloc[0]) if len(edges) else None
        for figure in figures:
            if getattr(figure, "program", "sssp") != "sssp" or not matches(figure, graph, v, e):
                continue
            found = [(x, b) for x in names if x.split(" ")[0] == figure.ours
                     and (b := best_clean(frame, graph, x, "total_ms")) is not None]
            if not found:
                continue
            variant, (ordering, config, cell) = min(found, key=lambda item: item[1][2].median)
            ratio = figure.seconds * 1000 / cell.median
            rows.append((f"{figure.paper}: {figure.method}", [
                TextCell(f"{figure.graph} ({figure.vertices:,})"), TextCell(format_number(figure.seconds * 1000),
                                                                            "number"),
                TextCell(graph), cell, TextCell(f"{variant_short(variant)}, {config}"),
                TextCell(f"{ratio:,.0f}×" if ratio >= 10 else f"{ratio:.1f}×", "number")]))
    if not rows:
        return None
    return Table(id="papers", title="Ours vs the papers",
                 caption="The seed papers' published times in ms (Bodra measured on a GeForce GPU) beside our "
                         "fastest correct total kernel time of the same method on the same graph, or on one of its "
                         "size (a stand-in when the name ends in ~synth), median [min–max]; the ratio mixes "
                         "hardware and method.",
                 graph="", row_header="paper: method",
                 columns=["paper's graph (V)", "paper ms", "our graph", "our ms", "our setting", "paper / ours"],
                 rows=rows)
