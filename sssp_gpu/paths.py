"""Shortest-path trees: predecessors for any method, the ``-paths`` file, and the path printer.

``python -m sssp_gpu.paths PATHS DIST VERTEX`` prints the path from vertex 0 to VERTEX
and its length, from a ``-paths`` file and the matching ``-output`` file.

harish and dijkstra record predecessors as they go. For every other method they are
derived from the final distances (on the GPU when the solve ran there): a vertex's
predecessor is a tail ``u`` of an in-edge with ``dist[u] + w == dist[v]`` (a *tight*
edge). Tight edges of positive weight always form a tree (distance falls strictly along
them); zero-weight tight edges could close a cycle, so the vertices reached only through
them are attached level by level from vertices already in the tree.
"""
from __future__ import annotations

import sys

import numpy as np

from sssp_common.edgelist import write_distances
from sssp_common.graph import Graph

NONE = -1  # predecessor of the source and of unreachable vertices; "-" in the file


def derive_predecessors(graph: Graph, dist: np.ndarray, on_gpu: bool = False) -> np.ndarray:
    """A predecessor per vertex (int64; -1 for the source and unreachable) from exact distances.

    ``dist`` is int64 with unreachable = int64 max (a :class:`Result`'s). With ``on_gpu``
    the arrays live in CuPy for the work; the answer comes back to the host.
    """
    if on_gpu:
        import cupy as xp
    else:
        xp = np
    unreachable = np.iinfo(np.int64).max
    d = xp.asarray(dist, dtype=np.int64)
    src, dst = xp.asarray(graph.src), xp.asarray(graph.dst)
    w = xp.asarray(graph.w, dtype=np.int64)
    du = d[src]
    tight = (du != unreachable) & (src != dst) & (dst != 0)
    tight &= xp.where(tight, du + w, -1) == d[dst]
    pred = xp.full(graph.n, NONE, dtype=np.int64)
    positive = tight & (w > 0)
    _scatter_last(xp, pred, dst[positive], src[positive])
    anchored = pred != NONE
    anchored[0] = True
    zero = xp.flatnonzero(tight & (w == 0))
    zsrc, zdst = src[zero], dst[zero]
    while zsrc.shape[0]:
        step = anchored[zsrc] & ~anchored[zdst]
        if not bool(step.any()):
            break
        _scatter_last(xp, pred, zdst[step], zsrc[step])
        anchored[zdst[step]] = True
        keep = ~anchored[zdst]
        zsrc, zdst = zsrc[keep], zdst[keep]
    return pred.get() if on_gpu else pred


def _scatter_last(xp, out, where, values) -> None:
    """out[where[i]] = values[i], the last i winning where `where` repeats: numpy's rule for a
    fancy-index store, which CuPy leaves undefined. Fixed here so the same graph gives the same
    paths file on either device and in every run (several tight edges may reach one vertex)."""
    if where.shape[0] == 0:
        return
    targets, first = xp.unique(where[::-1], return_index=True)
    out[targets] = values[::-1][first]


def predecessors(graph: Graph, result, on_gpu: bool = False) -> np.ndarray:
    """The method's own predecessors where it keeps them, else derived from its distances."""
    own = getattr(result, "pred", None)
    return own if own is not None else derive_predecessors(graph, result.dist, on_gpu)


def write_paths_file(path, pred: np.ndarray) -> None:
    """``v:p`` per vertex in order, ``-`` where there is none; whole or absent."""
    write_distances(path, pred, pred < 0, word=b"-")


def read_pairs(path, missing: bytes) -> np.ndarray:
    """Column 2 of a ``v:x`` file as int64 (``missing`` -> -1), checking the ids run 0..n-1."""
    with open(path, "rb") as stream:
        data = stream.read().replace(b":", b" ").replace(missing, b"-1")
    wrong = f"{path}: not a file of '<vertex>:<value>' lines for vertices 0, 1, 2, ..."
    try:
        values = np.array(data.split(), dtype=np.int64)
    except (ValueError, OverflowError):
        raise ValueError(wrong) from None
    if values.shape[0] % 2 or not np.array_equal(values[0::2], np.arange(values.shape[0] // 2)):
        raise ValueError(wrong)
    return values[1::2]


def path_to(pred: np.ndarray, vertex: int) -> list[int] | None:
    """Vertices from 0 to ``vertex`` along the predecessors, or None if unreachable."""
    if vertex == 0:
        return [0]
    if pred[vertex] < 0:
        return None
    walk = [vertex]
    while walk[-1] != 0:
        walk.append(int(pred[walk[-1]]))
        if walk[-1] < 0 or len(walk) > pred.shape[0]:
            raise ValueError("the predecessors do not lead back to vertex 0")
    return walk[::-1]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 3 or any(a in ("-h", "--help") for a in argv):
        print("usage: python -m sssp_gpu.paths PATHS_FILE DISTANCE_FILE VERTEX\n"
              "  prints the shortest path from vertex 0 to VERTEX and its length, from the files\n"
              "  ./sssp ... -paths PATHS_FILE -output DISTANCE_FILE wrote", file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    try:
        pred = read_pairs(argv[0], b"-")
        dist = read_pairs(argv[1], b"INF")
        vertex = int(argv[2])
        if not 0 <= vertex < pred.shape[0] or pred.shape != dist.shape:
            raise ValueError(f"vertex {argv[2]} is not in 0..{pred.shape[0] - 1}, or the files differ in length")
        walk = path_to(pred, vertex)
    except OSError as err:
        print(f"paths: error: {err.filename}: cannot read: {err.strerror or err}", file=sys.stderr)
        return 1
    except ValueError as err:
        print(f"paths: error: {err}", file=sys.stderr)
        return 1
    if walk is None:
        print(f"vertex {vertex} is unreachable from 0")
        return 0
    print(" -> ".join(map(str, walk)))
    print(f"length {dist[vertex]} ({len(walk) - 1} edges)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
