"""Content hashes of graph files, memoised by file identity so a 1 GB file is hashed once.

The memo is a folder of tiny files, one per file identity (:func:`file_identity`):
concurrent processes never rewrite a shared index, and a changed file gets a new identity.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .files import cache_dir, write_text_atomically

CHUNK = 1 << 22


def memo_dir() -> Path:
    return cache_dir("digests")


def file_identity(path) -> list:
    """What changes whenever a file's bytes may have changed: path, size, inode, and the
    modification *and* change times (``touch -d`` can set the first back, not the second)."""
    path = Path(path)
    stat = path.stat()
    return [str(path.resolve()), stat.st_size, stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns]


def file_digest(path, memo: Path | dict | None = None) -> str:
    """blake2b (32-byte) hex digest of the file's bytes, as stored (a .gz is hashed compressed).

    Memoised under the file's identity: in ``memo``, a folder (default: the digests cache)
    or a dict (a process's own memo, which leaves nothing on disk when the process dies)."""
    path = Path(path)
    identity = json.dumps(file_identity(path))
    if isinstance(memo, dict):
        if identity not in memo:
            memo[identity] = _hash_bytes(path)
        return memo[identity]
    folder = memo if memo is not None else memo_dir()
    entry = folder / hashlib.sha256(identity.encode()).hexdigest()[:40]
    try:
        known = entry.read_text().strip()
        if len(known) == 64:
            return known
    except OSError:
        pass
    digest = _hash_bytes(path)
    _remember(entry, digest)
    return digest


def _hash_bytes(path: Path) -> str:
    hasher = hashlib.blake2b(digest_size=32)
    with open(path, "rb") as stream:
        while True:
            block = stream.read(CHUNK)
            if not block:
                break
            hasher.update(block)
    return hasher.hexdigest()


def _remember(entry: Path, digest: str) -> None:
    """Best effort: an unwritable memo only costs a rehash next time."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(entry, digest)
    except OSError:
        pass


def distances_checksum(distances) -> str:
    """blake2b (16-byte) hex of distances as little-endian int64: what a reference answer is
    named by in its cache and checked against before a run is judged by it."""
    import numpy as np

    data = np.ascontiguousarray(distances, dtype="<i8")
    return hashlib.blake2b(memoryview(data).cast("B"), digest_size=16).hexdigest()
