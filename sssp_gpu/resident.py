"""Device copies of a kept graph's edge arrays, reused by the next cell on the same graph.

Why: in the kept ./sssp (sssp_gpu/serve.py) consecutive cells usually share a graph, and
copying its edges to the GPU again for each is work a fresh process must do but a kept one
need not. Only arrays that cannot change are kept: read-only ones, which only the kept
process's shelf of graphs makes (a fresh process's arrays are writable, so it keeps nothing
and behaves exactly as before). The methods never write their input arrays on the device.

The copies belong to one graph at a time: the shelf calls :func:`drop_all` when a cell
brings another graph, and sssp_gpu.memory counts :func:`held_bytes` as free, because the
solve that follows needs exactly these copies and will not allocate them again.
"""
from __future__ import annotations

import weakref

_kept: dict[int, tuple] = {}   # id(host array) -> (weak ref to it, its device copy)


def upload(array, dtype=None):
    """A device copy of a host array: an empty device array filled by one pageable copy.

    Not ``cupy.asarray``: for a numpy array that first copies into a pinned staging buffer
    it allocates, which on the H100 took 215 ms for 276 MB against 32 ms this way
    (BENCHMARKS.md, "Uploads"): 0.36 s of opt's setup on the LiveJournal stand-in.
    """
    import numpy as np
    import cupy

    host = np.ascontiguousarray(array, dtype=dtype)
    copy = cupy.empty(host.shape, dtype=host.dtype)
    if host.size:
        copy.set(host)
    return copy


def on_device(array):
    """:func:`upload`; the same device copy again for a read-only host array."""
    if array.flags.writeable:
        return upload(array)
    key = id(array)
    entry = _kept.get(key)
    if entry is not None and entry[0]() is array:
        return entry[1]
    copy = upload(array)
    _kept[key] = (weakref.ref(array, lambda _, key=key: _kept.pop(key, None)), copy)
    return copy


def held_bytes() -> int:
    return sum(int(copy.nbytes) for _, copy in _kept.values())


def drop_all() -> None:
    _kept.clear()
