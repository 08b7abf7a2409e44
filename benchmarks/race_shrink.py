"""How small a race's counterexample gets: the pure reducer (grader.sweep.shrink) against a
model of tests/fixtures/shrink/buggy.c's race (BUG=4: the CSR off-by-one, the last out-edge of a
vertex of out-degree >= 3 never relaxed, on a fair coin each run), from the starting points the
grader would give it, with the runs a class of five gives such a case (16).

    python -m benchmarks.race_shrink --graph rome99.gr.gz --shrinks 300
    python -m benchmarks.race_shrink --graph p2p-Gnutella04.txt.gz --start-tries 3   # before

Prints the distribution of final sizes and how many ended over 40 edges (issue 39's bound).
"""
from __future__ import annotations

import argparse
import gzip
import random
import tempfile
from pathlib import Path

import numpy as np

from grader.sweep import shrink
from grader.sweep.counterexample import edge_list_of, reference_of
from grader.sweep.shrink import Budget, EdgeList, Reducer, starting_points
from sssp_common.vocabulary import UNREACHABLE

GRAPHS = Path(__file__).resolve().parents[1] / "grader" / "data" / "graphs"


def buggy(graph: EdgeList) -> np.ndarray:
    """Distances with the last out-edge (file order) of every vertex of out-degree >= 3 dropped."""
    degree = np.bincount(graph.src, minlength=graph.vertices)
    last = {int(u): e for e, u in enumerate(graph.src.tolist())}
    keep = np.ones(graph.edges, dtype=bool)
    keep[[e for u, e in last.items() if degree[u] >= 3]] = False
    # the dropped edges' heads stay vertices (unreachable ones), as in the student's output
    dist = reference_of(EdgeList(graph.src[keep], graph.dst[keep], graph.weight[keep]))
    return np.concatenate([dist, np.full(graph.vertices - dist.shape[0], UNREACHABLE, dtype=dist.dtype)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graph", default="rome99.gr.gz",
                        help="a graph carried in grader/data/graphs, or the path of a spec-format file")
    parser.add_argument("--shrinks", type=int, default=300)
    parser.add_argument("--runs", type=int, default=16, help="the case's candidate runs")
    parser.add_argument("--start-tries", type=int, default=shrink.START_TRIES)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    shrink.START_TRIES = args.start_tries
    if Path(args.graph).is_file():
        graph = edge_list_of(Path(args.graph))
    else:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / args.graph.removesuffix(".gz")
            path.write_bytes(gzip.decompress((GRAPHS / args.graph).read_bytes()))
            graph = edge_list_of(path)
    expected = reference_of(graph)
    wrong = [int(v) for v in np.flatnonzero(buggy(graph) != expected)][:10]
    starts = starting_points(graph, expected, wrong)
    print("starts:", ", ".join(f"{g.edges} edges" for _, g in starts))
    coin = random.Random(args.seed)

    def trial(candidate: EdgeList) -> str:
        if coin.random() >= 0.5:
            return "ok"
        return "wrong" if not np.array_equal(buggy(candidate), reference_of(candidate)) else "ok"

    sizes = np.array([Reducer(trial, "wrong", budget=Budget(args.runs, 600), tries=3).run(graph, starts=starts).graph.edges
                      for _ in range(args.shrinks)])
    values, counts = np.unique(sizes, return_counts=True)
    print(f"{args.shrinks} shrinks, starts tried {args.start_tries} times: over 40 edges {int((sizes > 40).sum())}; "
          + ", ".join(f"{v} edges x{c}" for v, c in zip(values.tolist(), counts.tolist())))


if __name__ == "__main__":
    main()
