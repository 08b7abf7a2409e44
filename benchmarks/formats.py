"""The baselines' input files, written from one in-memory graph so every program reads the same edges.

- ``.wel``  gapbs text: ``u v w`` per line, no comments (gapbs stops at the first ``#``).
- ``.wsg``  gapbs's serialized weighted graph: what gapbs builds from the ``.wel`` (out- and
  in-CSR, each neighbourhood sorted, duplicates merged to the lightest edge, self-loops
  dropped), stored as raw arrays so that gapbs reads it in a fraction of a second instead of
  parsing text (~10 s per run on the LiveJournal stand-in). Its reported times exclude
  reading either way.
- ``.mtx``  Matrix Market for Gunrock: ``coordinate integer general``, 1-based. The staged
  build reads nothing else: its binary-CSR branch (``-m x.csr``) first parses the same path as
  Matrix Market, then throws on its first successful ``fread`` (BENCHMARKS.md, issue 26 item 3).
"""
from __future__ import annotations

import numpy as np

from sssp_common.files import atomic_writer
from sssp_common.graph import Graph
from sssp_common.textio import write_rows

MTX_BANNER = b"%%MatrixMarket matrix coordinate integer general\n"


def write_wel(path, graph: Graph, workers: int = 1) -> None:
    with atomic_writer(path, "wb") as stream:
        write_rows(stream, [graph.src, graph.dst, graph.w], b" ", workers=workers)


def write_mtx(path, graph: Graph, workers: int = 1) -> None:
    with atomic_writer(path, "wb") as stream:
        stream.write(MTX_BANNER)
        stream.write(f"{graph.n} {graph.n} {graph.m}\n".encode())
        chunk = 4_000_000 * max(1, workers)  # 1-based copies per chunk keep memory bounded on 69M edges
        for start in range(0, graph.m, chunk):
            stop = start + chunk
            write_rows(stream, [graph.src[start:stop].astype(np.int64) + 1,
                                graph.dst[start:stop].astype(np.int64) + 1, graph.w[start:stop]], b" ", workers=workers)


def stable_order(keys: np.ndarray, n: int) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for int keys in [0, n), as a counting sort: a CSR matrix
    with one entry per row (row i: column keys[i], value i) transposed to CSC by scipy's C, which
    walks rows in order. ~1 s on 69M keys where numpy's stable argsort takes ~9 s."""
    m = keys.shape[0]
    if m < 2 or m >= 2**31 - 1 or n >= 2**31 - 1:
        return np.argsort(keys, kind="stable")
    import scipy.sparse as sp

    rows = sp.csr_matrix((np.arange(m, dtype=np.int32), keys.astype(np.int32, copy=False),
                          np.arange(m + 1, dtype=np.int32)), shape=(m, n), copy=False)
    return rows.tocsc().data


def by_destination(graph: Graph) -> Graph:
    """The same edges stably sorted by destination: ``graph.reordered(argsort(dst, stable))``
    (the sorted destinations are counted, not gathered; equal weights are not gathered either)."""
    if graph.m < 2:
        return graph
    order = stable_order(graph.dst, graph.n)
    dst = np.repeat(np.arange(graph.n, dtype=graph.dst.dtype), np.bincount(graph.dst, minlength=graph.n))
    same = bool(np.all(graph.w == graph.w[0]))
    w = np.full_like(graph.w, graph.w[0]) if same else graph.w[order]
    return Graph(graph.n, graph.src[order], dst, w)


def squished(n: int, src: np.ndarray, dst: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """gapbs's squish of edges grouped by ``src``: CSR offsets (n+1), neighbours and weights,
    each neighbourhood sorted by neighbour, one edge per (src, dst) with the least weight,
    no self-loops."""
    keep = src != dst
    src, dst, w = src[keep], dst[keep], w[keep]
    id_bits = max(int(n - 1).bit_length(), 1)
    weight_bits = max(int(w.max(initial=0)).bit_length(), 1)
    if 2 * id_bits + weight_bits <= 63:
        # (src, dst, w) packed in one int64: one plain sort, the lightest of each (src, dst) first
        key = (src.astype(np.int64) << (id_bits + weight_bits)) | (dst.astype(np.int64) << weight_bits) | w
        key.sort()
        weight = (key & ((1 << weight_bits) - 1)).astype(np.int32)
        pair = key >> weight_bits
    else:
        pair = src.astype(np.int64) << 32 | dst.astype(np.int64)
        order = np.lexsort((w, pair))
        pair, weight = pair[order], w[order]
        id_bits = 32
    first = np.ones(pair.shape[0], dtype=bool)
    first[1:] = pair[1:] != pair[:-1]
    pair, weight = pair[first], weight[first]
    heads = (pair & ((1 << id_bits) - 1)).astype(np.int32)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(pair >> id_bits, minlength=n), out=offsets[1:])
    return offsets, heads, weight


def write_wsg(path, graph: Graph) -> None:
    """gapbs ``.wsg``: bool directed, int64 edges, int64 nodes, then out-offsets (int64 x n+1)
    and (int32 neighbour, int32 weight) pairs; then the same for in-edges."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:  # the two squishes side by side (numpy sorts without the GIL)
        later = pool.submit(squished, graph.n, graph.dst, graph.src, graph.w)
        out = squished(graph.n, graph.src, graph.dst, graph.w)
        inverse = later.result()
    edges = out[1].shape[0]
    with atomic_writer(path, "wb") as stream:
        stream.write(np.array([1], dtype=np.uint8).tobytes())
        stream.write(np.array([edges, graph.n], dtype=np.int64).tobytes())
        for offsets, heads, weights in (out, inverse):
            pairs = np.empty((heads.shape[0], 2), dtype=np.int32)
            pairs[:, 0], pairs[:, 1] = heads, weights
            stream.write(offsets.tobytes())
            stream.write(pairs.tobytes())
