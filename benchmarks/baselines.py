"""Baseline results (gapbs, Gunrock) kept between benchmark runs, keyed by what decides them.

A baseline's time depends on its binary, the graph file it reads, the machine it runs on and
how it is run (threads, Δ set, trials). The key is the SHA-256 of the binary and of the graph
file, the GPU's name, the host's processor model and those run settings; any change misses the
cache. A hit is reported as cached, with the date it was measured, never as a fresh run.

Digests of the large graph files (LiveJournal's ``.mtx`` is ~1.2 GB) are remembered in a
sidecar ``<file>.sha256`` next to the file, valid while the file's size and mtime stay the
same (benchmark graph files are written once, atomically, and never edited in place).
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path

from sssp_common.files import atomic_writer

from .common import ROOT

CACHE = ROOT / "build" / "bench" / "baselines.json"


def file_digest(path: Path) -> str:
    """SHA-256 of ``path``, memoised in ``<path>.sha256`` (keyed by size and mtime)."""
    path = Path(path)
    stat = path.stat()
    stamp = f"{stat.st_size}:{stat.st_mtime_ns}"
    sidecar = path.with_name(path.name + ".sha256")
    try:
        remembered, digest = sidecar.read_text().split()
        if remembered == stamp and len(digest) == 64:
            return digest
    except (OSError, ValueError):
        pass
    hasher = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 22), b""):
            hasher.update(block)
    digest = hasher.hexdigest()
    try:
        with atomic_writer(sidecar, "w") as out:
            out.write(f"{stamp} {digest}\n")
    except OSError:  # a read-only folder: hash again next time
        pass
    return digest


def processor() -> str:
    """The host's processor model (gapbs runs on the host's cores)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def key(tool: str, binary: Path, graph_file: Path, gpu: str, settings: dict) -> str:
    """The cache key of one baseline measurement (a readable JSON string)."""
    return json.dumps({"tool": tool, "binary": file_digest(binary), "graph": file_digest(graph_file),
                       "gpu": gpu, "cpu": processor(), "settings": settings}, sort_keys=True)


@dataclass
class Entry:
    ms: float
    detail: str
    runs: list | None
    measured_at: str  # ISO date-time of the fresh run

    @property
    def date(self) -> str:
        return self.measured_at[:10]


class Cache:
    """A JSON file {key: entry}; ``path=None`` keeps nothing (every baseline runs fresh)."""

    def __init__(self, path: Path | None = CACHE):
        self.path = Path(path) if path is not None else None
        self._entries: dict = {}
        if self.path is not None and self.path.is_file():
            try:
                self._entries = json.loads(self.path.read_text())
            except ValueError:  # a damaged cache is only a lost speed-up
                self._entries = {}

    def get(self, cache_key: str) -> Entry | None:
        found = self._entries.get(cache_key)
        if not isinstance(found, dict) or not isinstance(found.get("ms"), (int, float)):
            return None
        return Entry(float(found["ms"]), str(found.get("detail", "")), found.get("runs"),
                     str(found.get("measured_at", "unknown date")))

    def put(self, cache_key: str, ms: float, detail: str, runs, now=time.time) -> None:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now()))
        self._entries[cache_key] = {"ms": ms, "detail": detail, "runs": runs, "measured_at": stamp}
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_writer(self.path, "w") as out:
            json.dump(self._entries, out, indent=1, sort_keys=True)


def cache_from_env(default: Path = CACHE) -> Cache:
    """``$SSSP_BASELINE_CACHE``: another file, or ``off`` to run every baseline fresh."""
    chosen = os.environ.get("SSSP_BASELINE_CACHE", "")
    if chosen.lower() == "off":
        return Cache(None)
    return Cache(Path(chosen) if chosen else default)
