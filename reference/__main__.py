"""``python -m reference GRAPH [-o ref.txt]``: trusted distances in the program's output.txt form."""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from sssp_common.errors import InputError, run_cli
from sssp_common.edgelist import write_distances
from sssp_common.files import same_file

from .solver import UNREACHABLE, compute


def write_output(path, dist: np.ndarray) -> None:
    """``<vertex>:<distance>`` per vertex, ``INF`` for unreachable; whole file or none."""
    write_distances(path, dist, dist == UNREACHABLE)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reference",
                                     description="Shortest distances from vertex 0 by scipy (cached by content).")
    parser.add_argument("graph", help="edge list (SNAP text or DIMACS .gr, optionally .gz)")
    parser.add_argument("-o", "--output", help="write <vertex>:<distance> lines here (INF if unreachable)")
    args = parser.parse_args(argv)
    return run_cli("reference", lambda: _solve(args.graph, args.output), subject=lambda: args.graph)


def _solve(graph: str, output: str | None) -> int:
    # As ./sssp: only a regular file is destroyed by writing over it.
    if output and same_file(graph, output) and os.path.isfile(graph):
        raise InputError(output, "is the input file: refusing to overwrite it (choose another -o)")
    try:
        result = compute(graph)
    except ValueError as err:  # a negative cycle: the file is the problem
        raise InputError(graph, str(err)) from None
    if output:
        try:
            write_output(output, result.dist)
        except OSError as err:
            raise InputError(output, f"cannot write: {err.strerror or err}") from None
    dist = result.dist
    reachable = dist != UNREACHABLE
    furthest = int(dist[reachable].max()) if reachable.any() else 0
    where = f" -> {output}" if output else ""
    print(f"reference: {graph}: {dist.shape[0]:,} vertices, {int(reachable.sum()):,} reachable, "
          f"max distance {furthest:,}, {result.seconds:.2f} s ({'cached' if result.cached else 'computed'}){where}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
