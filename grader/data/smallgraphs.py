"""Small random graphs where the course graphs do not look, for the grader's search for failures.

Each family stresses one thing a student's kernel can get wrong: trees (one path to each
vertex), DAGs (long dependency chains), cycles (relaxations coming back round), zero weights
(ties and `<` vs `<=`), duplicate edges and self-loops (the same destination twice in a warp), a
vertex with more in-edges than a warp has lanes (segmented scans and ballots across warps), and
unreachable parts (INF must stay INF). Deterministic for a seed; edges as (src, dst, weight)
rows, vertex 0 the source, at most `max_vertices` vertices.
"""
from __future__ import annotations

import numpy as np

FAMILIES = ("tree", "dag", "cycle", "zero-weights", "duplicates", "self-loops", "wide-in", "unreachable")


def family_graph(family: str, rng: np.random.Generator, max_vertices: int = 64) -> list[tuple[int, int, int]]:
    n = int(rng.integers(4, max_vertices + 1))
    weight = lambda: int(rng.integers(1, 20))  # noqa: E731  (small weights: sums stay readable)
    if family == "tree":
        return [(int(rng.integers(0, v)), v, weight()) for v in range(1, n)]
    if family == "dag":
        edges = [(int(rng.integers(0, v)), v, weight()) for v in range(1, n)]
        extra = int(rng.integers(n, 3 * n))
        for _ in range(extra):
            u, v = sorted(int(x) for x in rng.choice(n, size=2, replace=False))
            edges.append((u, v, weight()))
        return edges
    if family == "cycle":
        edges = [(v, (v + 1) % n, weight()) for v in range(n)]
        edges += [(int(rng.integers(0, n)), int(rng.integers(0, n)), weight()) for _ in range(n // 2)]
        return [e for e in edges if e[0] != e[1]]
    if family == "zero-weights":
        edges = family_graph("dag", rng, max_vertices)
        return [(u, v, 0 if rng.random() < 0.5 else w) for u, v, w in edges]
    if family == "duplicates":
        edges = family_graph("tree", rng, max_vertices)
        copies = [edges[int(i)] for i in rng.integers(0, len(edges), size=len(edges))]
        return edges + [(u, v, w + int(rng.integers(-w + 1, 5))) for u, v, w in copies]
    if family == "self-loops":
        edges = family_graph("tree", rng, max_vertices)
        loops = [(int(v), int(v), weight()) for v in rng.integers(0, n, size=max(1, n // 4))]
        return edges + loops
    if family == "wide-in":
        n = max(n, 40)
        sink = n - 1
        edges = [(0, v, weight()) for v in range(1, sink)]
        edges += [(v, sink, weight()) for v in range(1, sink)]          # sink has n-2 >= 38 in-edges
        order = rng.permutation(len(edges))
        return [edges[int(i)] for i in order]
    if family == "unreachable":
        half = n // 2
        edges = [(int(rng.integers(0, v)), v, weight()) for v in range(1, half)]
        edges += [(int(rng.integers(half, v)), v, weight()) for v in range(half + 1, n)]
        edges += [(int(rng.integers(half, n)), int(rng.integers(0, half)), weight()) for _ in range(2)]
        return edges
    raise ValueError(f"unknown graph family {family!r} (known: {', '.join(FAMILIES)})")


def search_graphs(count: int, seed: int = 515, max_vertices: int = 64):
    """`count` graphs cycling through the families: yields (name, edges)."""
    rng = np.random.default_rng(seed)
    for index in range(count):
        family = FAMILIES[index % len(FAMILIES)]
        yield f"random-{index:03d}-{family}", family_graph(family, rng, max_vertices)
