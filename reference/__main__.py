"""``python -m reference GRAPH [-o ref.txt]``: trusted distances in the program's output.txt form."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from sssp_gpu.errors import InputError

from .solver import UNREACHABLE, compute
from .textio import write_rows


def write_output(path, dist: np.ndarray) -> None:
    """``<vertex>:<distance>`` per vertex, ``INF`` for unreachable; whole file or none."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as stream:
            ids = np.arange(dist.shape[0], dtype=np.int64)
            write_rows(stream, [ids, dist], b":", words={1: (dist == UNREACHABLE, b"INF")})
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


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
