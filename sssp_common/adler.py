"""Adler-32 over large buffers, in pieces on several threads, equal to ``zlib.adler32`` of the
pieces one after another.

Why: the parse cache checks every entry it reads (:mod:`.loader`), and at LiveJournal's size
(~830 MB of edge arrays) one thread needs ~0.28 s for it, a seventh of a whole ``./sssp``
run. ``zlib.adler32`` releases the GIL on large buffers, so pieces run in parallel; their
sums are then joined with the checksum's algebra rather than recomputed.

The algebra. For bytes d_1..d_n, Adler-32 keeps A = 1 + sum d_i and B = sum of the n running
values of A, both mod 65521, and packs B << 16 | A. Appending Y (length k, sums A_y, B_y) to
X (sums A_x, B_x): every running A of Y is larger by A_x - 1, so
A_xy = A_x + A_y - 1 and B_xy = B_x + B_y + k * (A_x - 1).
"""
from __future__ import annotations

import zlib
from concurrent.futures import ThreadPoolExecutor

MOD = 65521
PIECE = 32 << 20   # bytes a thread sums at a time
THREADS = 8


def join(first: int, second: int, second_length: int) -> int:
    """The Adler-32 of X + Y from the Adler-32 of X, of Y, and Y's length in bytes."""
    a_x, b_x = first & 0xFFFF, first >> 16
    a_y, b_y = second & 0xFFFF, second >> 16
    a = (a_x + a_y - 1) % MOD
    b = (b_x + b_y + (second_length % MOD) * (a_x - 1)) % MOD
    return (b << 16) | a


def adler32_of(buffers, value: int = 1, threads: int = THREADS) -> int:
    """``zlib.adler32`` over ``buffers`` (bytes-like, in order), continuing from ``value``."""
    pieces = []
    for buffer in buffers:
        view = memoryview(buffer).cast("B")
        pieces.extend(view[start:start + PIECE] for start in range(0, view.nbytes, PIECE))
    if len(pieces) <= 1 or threads <= 1:
        for piece in pieces:
            value = zlib.adler32(piece, value)
        return value
    with ThreadPoolExecutor(max_workers=min(threads, len(pieces))) as pool:
        sums = list(pool.map(zlib.adler32, pieces))
    for piece, piece_sum in zip(pieces, sums):
        value = join(value, piece_sum, piece.nbytes)
    return value


def arrays_checksum(header: list, arrays) -> str:
    """The checksum a cache entry of arrays carries: Adler-32 (8 hex digits) over the JSON of
    ``header`` (what the entry is: sizes, lengths, types) and then every array's bytes. It
    catches a damaged, truncated or replaced entry, not a forger."""
    import json

    import numpy as np

    return f"{adler32_of([json.dumps(header).encode()] + [np.ascontiguousarray(a) for a in arrays]):08x}"

