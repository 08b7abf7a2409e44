"""The numpy fallback's relaxation steps, shared by bmf, segscan and tpe.

Distances are kept in the method's dtype (int32 or int64) with that dtype's INF, and
candidates are computed in int64 and clamped at INF: the same saturating arithmetic as
the kernels, so CPU and GPU agree to the last vertex.
"""
from __future__ import annotations

import numpy as np

from .common import lockstep_order


def candidates(du: np.ndarray, w: np.ndarray, inf: int) -> tuple[np.ndarray, np.ndarray]:
    """(mask of finite sources, du + w saturated at inf) for the finite ones."""
    finite = du != inf
    wide = du.astype(np.int64) + w
    if inf == np.iinfo(np.int64).max:
        overflow = finite & (du > inf - w.astype(np.int64))
        wide[overflow] = inf
    return finite, np.minimum(wide, inf)


def relax_outcore(prev: np.ndarray, src, dst, w, inf: int):
    """One Jacobi round: returns (new distances, mask of vertices that improved)."""
    finite, cand = candidates(prev[src], w, inf)
    better = finite & (cand < prev[dst])
    cur = prev.copy()
    np.minimum.at(cur, dst[better], cand[better].astype(prev.dtype))
    improved = np.zeros(prev.shape[0], dtype=bool)
    improved[dst[better]] = True
    return cur, improved


def relax_incore(dist: np.ndarray, edges: np.ndarray, src, dst, w, warps: int, inf: int):
    """One in-place round over ``edges`` (positions), in the GPU threads' lockstep order.

    Updates ``dist`` and returns the mask of vertices that improved.
    """
    improved = np.zeros(dist.shape[0], dtype=bool)
    order, bounds = lockstep_order(edges.shape[0], warps)
    scheduled = edges[order]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        step = scheduled[lo:hi]
        v = dst[step]
        finite, cand = candidates(dist[src[step]], w[step], inf)
        better = finite & (cand < dist[v])
        if better.any():
            np.minimum.at(dist, v[better], cand[better].astype(dist.dtype))
            improved[v[better]] = True
    return improved
