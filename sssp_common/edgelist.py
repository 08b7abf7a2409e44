"""Writing the spec's text files: edge lists (what programs read) and distance files (what they write).

Both go through :mod:`.textio`'s vectorised integer formatter in bounded chunks, so a
100-million-vertex output costs a few bytes per vertex, never a Python string per line.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .files import atomic_writer
from .graph import Graph
from .textio import format_rows, text_workers, write_pieces, write_rows

CHUNK = 1 << 18  # rows per formatted block: ~5 MB of text; smaller blocks stay in cache (2M distances:
                 # 0.12 s in blocks of 1M rows, 0.10 s in blocks of 256k, one thread) and spread over more threads


def write_edge_list(path, graph: Graph, header: str | None = None, weights: bool | None = None,
                    workers: int = 1) -> None:
    """SNAP-form text (``#`` comments, then ``src<TAB>dst[<TAB>w]``), written atomically.

    ``weights=None`` writes weights only when some weight is not 1 (SNAP files carry none).
    ``workers`` threads format the rows (the same bytes for any count).
    """
    path = Path(path)
    weighted = _weighted(graph, weights)
    lines = [] if header is None else [ln if ln.startswith("#") else f"# {ln}" for ln in header.splitlines()]
    lines.append(f"# Nodes: {graph.n} Edges: {graph.m}")
    lines.append("# FromNodeId\tToNodeId" + ("\tWeight" if weighted else ""))
    columns = [graph.src, graph.dst] + ([graph.w] if weighted else [])
    with atomic_writer(path, "wb") as stream:
        stream.write(("\n".join(lines) + "\n").encode())
        write_rows(stream, columns, b"\t", workers=workers)


def _weighted(graph: Graph, weights: bool | None) -> bool:
    """Whether the file carries weights: as asked, else only when some weight is not 1."""
    return (bool(graph.m) and bool(np.any(graph.w != 1))) if weights is None else weights


def parsed_form(graph: Graph, weights: bool | None = None) -> Graph:
    """The graph that loading :func:`write_edge_list`'s file gives back: ``n`` is the largest
    id + 1 (the loader's count) and weights are all 1 when the file carries none."""
    weighted = _weighted(graph, weights)
    n = max(int(graph.src.max(initial=-1)), int(graph.dst.max(initial=-1))) + 1
    return Graph(n, graph.src, graph.dst, graph.w if weighted else np.ones_like(graph.src))


def write_distances(path, dist: np.ndarray, unreachable: np.ndarray, word: bytes = b"INF") -> None:
    """``<vertex>:<distance>`` for every vertex in order, ``word`` where ``unreachable``
    (the ``-paths`` file is the same format: ``<vertex>:<predecessor>``, ``-`` for none)."""
    with atomic_writer(path, "wb") as stream:
        write_distance_rows(stream, dist, unreachable, word=word)


def write_distance_rows(stream, dist: np.ndarray, unreachable: np.ndarray, chunk: int = CHUNK,
                        workers: int | None = None, word: bytes = b"INF") -> None:
    """The rows in chunks, each with its own id column, so nothing is n long but the input.

    numpy releases the GIL inside the formatter, so chunks are formatted by up to
    ``workers`` threads (default: up to 8 cores) and written in order; at most two chunks
    per thread are in flight, so memory stays bounded.
    """
    total = dist.shape[0]

    def piece(start: int) -> bytes:
        stop = min(total, start + chunk)
        ids = np.arange(start, stop, dtype=np.int64 if stop > 2**31 - 1 else np.int32)
        return format_rows([ids, dist[start:stop]], b":", {1: (unreachable[start:stop], word)})

    workers = text_workers() if workers is None else workers
    write_pieces(stream, piece, range(0, total, chunk), workers)
