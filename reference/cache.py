"""The reference's answer cache: one ``.npy`` per graph content, checked on every load.

An entry is named ``<graph digest>.<vertices>.<checksum>.npy``: the name carries the
vertex count and a blake2b checksum of the distances, so an entry that was truncated,
replaced or edited is noticed on load, removed with a one-line warning, and recomputed.
The whole entry is one file renamed into place, so name and content never disagree.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

from sssp_common.files import atomic_writer
from sssp_common.digest import distances_checksum

_NAME = re.compile(r"^(?P<digest>[0-9a-f]+)\.(?P<n>[0-9]+)\.(?P<checksum>[0-9a-f]{32})\.npy$")


def entry_path(folder: Path, graph_digest: str, dist: np.ndarray) -> Path:
    return Path(folder) / f"{graph_digest}.{dist.shape[0]}.{distances_checksum(dist)}.npy"


def load(folder: Path, graph_digest: str, err=None) -> tuple[np.ndarray, str] | None:
    """The cached distances and their checksum for this graph content, or None.

    Every entry found is checked (name, 1-D int64, length, checksum); a bad one is
    deleted with a one-line warning on ``err`` (stderr)."""
    err = err if err is not None else sys.stderr
    try:
        candidates = sorted(Path(folder).glob(f"{graph_digest}.*.npy"))
    except OSError:
        return None
    for entry in candidates:
        problem, dist, expected = _check(entry, graph_digest)
        if problem is None:
            return dist, expected
        print(f"reference: warning: cache entry {entry} is damaged ({problem}); removed, recomputing", file=err)
        try:
            entry.unlink()
        except OSError:
            pass
    return None


def _check(entry: Path, graph_digest: str):
    match = _NAME.match(entry.name)
    if match is None or match["digest"] != graph_digest:
        return "unexpected name", None, None
    try:
        dist = np.load(entry, allow_pickle=False)
    except (OSError, ValueError, EOFError) as error:
        return f"unreadable: {type(error).__name__}", None, None
    if dist.dtype != np.int64 or dist.ndim != 1:
        return f"{dist.dtype} array of shape {dist.shape}, not 1-D int64", None, None
    if dist.shape[0] != int(match["n"]):
        return f"{dist.shape[0]} values, the name says {match['n']}", None, None
    if distances_checksum(dist) != match["checksum"]:
        return "checksum mismatch", None, None
    return None, dist, match["checksum"]


def store(folder: Path, graph_digest: str, dist: np.ndarray) -> str:
    """Write the entry (atomic, best effort: a read-only cache folder only costs speed); its checksum."""
    entry = entry_path(folder, graph_digest, dist)
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        with atomic_writer(entry, "wb") as stream:
            np.save(stream, np.ascontiguousarray(dist, dtype=np.int64))
    except OSError:
        pass
    return entry.name.split(".")[2]
