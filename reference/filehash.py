"""Content hashes of graph files, memoised by file identity so a 1 GB file is hashed once.

The memo is a folder of tiny files, one per (path, size, mtime_ns, inode): concurrent
processes never rewrite a shared index, and a changed file simply gets a new identity.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

CHUNK = 1 << 22


def memo_dir() -> Path:
    explicit = os.environ.get("SSSP_DIGEST_DIR")
    if explicit:
        return Path(explicit)
    from .solver import reference_dir  # the memo lives beside the answers it keys
    return reference_dir() / "digests"


def file_digest(path, memo: Path | None = None) -> str:
    """blake2b (32-byte) hex digest of the file's bytes, as stored (a .gz is hashed compressed)."""
    path = Path(path)
    stat = path.stat()
    identity = json.dumps([str(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino])
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
        fd, temporary = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-")
        with os.fdopen(fd, "w") as stream:
            stream.write(digest)
        os.replace(temporary, entry)
    except OSError:
        pass
