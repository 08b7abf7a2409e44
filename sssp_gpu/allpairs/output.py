"""Writing the all-pairs answer: a ``.npy`` matrix, or ``u v d`` text lines; streamed by row blocks.

Neither the device matrix nor the host ever holds a second full copy: blocks of rows are
converted to the output type (unreachable = its maximum) and written as they come, to a
temporary file renamed at the end (whole or absent).
"""
from __future__ import annotations

import numpy as np

from sssp_common.files import atomic_writer
from sssp_common.textio import write_rows
from .matrix import ApspResult


def write_result(path: str, result: ApspResult, dtype: np.dtype) -> None:
    if str(path).endswith(".npy"):
        _write_npy(path, result, dtype)
    else:
        _write_text(path, result)


def _write_npy(path: str, result: ApspResult, dtype: np.dtype) -> None:
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False,
              "shape": (result.n, result.n)}
    with atomic_writer(path, "wb") as stream:
        np.lib.format.write_array_header_1_0(stream, header)
        for first in range(0, result.n, 2048):
            stream.write(np.ascontiguousarray(result.rows(first, min(result.n, first + 2048), dtype)).tobytes())


def _write_text(path: str, result: ApspResult) -> None:
    """``u v d`` for every reachable pair (u != v included only when reachable: the diagonal is 0)."""
    unreachable = np.iinfo(np.int64).max
    with atomic_writer(path, "wb") as stream:
        for first in range(0, result.n, 1024):
            block = result.rows(first, min(result.n, first + 1024), np.int64)
            u, v = np.nonzero(block != unreachable)
            write_rows(stream, [u + first, v, block[u, v]], b" ")
