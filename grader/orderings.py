"""Edge orderings the report compares: as given, sorted by source, sorted by destination.

The program processes edges in file order, so each ordering is its own file, written once
per input content (keyed by the file's content hash) and reused by every run.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from sssp_common.digest import file_digest
from sssp_common.files import cache_dir
from sssp_common.edgelist import write_edge_list
from sssp_common.loader import load_graph
from sssp_common.vocabulary import ORDERINGS

FORMAT_VERSION = 1


def default_cache_dir() -> Path:
    return cache_dir("orderings")


def sort_order(src: np.ndarray, dst: np.ndarray, ordering: str) -> np.ndarray:
    """Stable permutation: by (src, dst) for "source", by (dst, src) for "destination"."""
    if ordering == "source":
        return np.lexsort((dst, src))
    if ordering == "destination":
        return np.lexsort((src, dst))
    raise ValueError(f"unknown ordering {ordering!r}; choose from {', '.join(ORDERINGS)}")


def ordered(path: Path, ordering: str, cache_dir: Path | None = None) -> Path:
    """A file with ``path``'s edges in ``ordering`` ("given" is ``path`` itself)."""
    if ordering not in ORDERINGS:
        raise ValueError(f"unknown ordering {ordering!r}; choose from {', '.join(ORDERINGS)}")
    path = Path(path)
    if ordering == "given":
        return path
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    target = folder / f"{file_digest(path)[:40]}.{ordering}.v{FORMAT_VERSION}.txt"
    if target.is_file():
        return target
    graph = load_graph(path)
    sorted_graph = graph.reordered(sort_order(graph.src, graph.dst, ordering))
    folder.mkdir(parents=True, exist_ok=True)
    write_edge_list(target, sorted_graph, header=f"{path.name} sorted by {ordering} (stable)")
    return target
