"""``python -m reference GRAPH [-o ref.txt]``: trusted distances in the program's output.txt form."""
from __future__ import annotations

import argparse
import sys

import numpy as np

from sssp_common.errors import InputError
from sssp_common.edgelist import write_distances

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
    try:
        result = compute(args.graph)
        if args.output:
            try:
                write_output(args.output, result.dist)
            except OSError as err:
                raise InputError(args.output, f"cannot write: {err.strerror or err}") from None
    except InputError as err:
        print(f"reference: error: {err}", file=sys.stderr)
        return 1
    except ValueError as err:
        print(f"reference: error: {args.graph}: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("reference: interrupted", file=sys.stderr)
        return 130
    dist = result.dist
    reachable = dist != UNREACHABLE
    furthest = int(dist[reachable].max()) if reachable.any() else 0
    where = f" -> {args.output}" if args.output else ""
    print(f"reference: {args.graph}: {dist.shape[0]:,} vertices, {int(reachable.sum()):,} reachable, "
          f"max distance {furthest:,}, {result.seconds:.2f} s ({'cached' if result.cached else 'computed'}){where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
