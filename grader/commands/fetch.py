"""``python -m grader fetch NAME...``: download catalogue graphs, resumably, and verify them.

A download streams into ``<file>.part``; a rerun resumes it with an HTTP Range request
(or starts over when the server ignores ranges). The finished file must match the
Content-Length, the catalogue's size and sha256 (when known) and its vertex/edge counts;
a file that fails is deleted, never left looking whole. The .gz is kept as downloaded:
the loader reads gzip directly.
"""
from __future__ import annotations

import hashlib
import http.client
import os
import re
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np

from grader.datasets import Dataset, DatasetError, load_catalogue
from sssp_common.files import REPO_ROOT

CHUNK = 1 << 20
TIMEOUT_S = 30


class FetchError(Exception):
    """A download that failed for a reason the user can act on; one line."""


def default_data_dir() -> Path:
    explicit = os.environ.get("SSSP_DATA_DIR")
    return Path(explicit) if explicit else REPO_ROOT / "data"


HELP = "download, verify and unpack catalogue graphs"


def add_arguments(parser) -> None:
    parser.add_argument("names", nargs="+", metavar="NAME", help="catalogue names, e.g. roadNet-CA")
    parser.add_argument("--data-dir", type=Path, metavar="DIR", help="where to put them")
    parser.add_argument("--force", action="store_true", help="download again even when present")


def run_from_args(args) -> int:
    return run(names=args.names, data_dir=args.data_dir, force=args.force)


def run(names: list[str], data_dir: Path | None = None, force: bool = False, catalogue: Path | None = None,
        out=sys.stderr) -> int:
    """Fetch each named graph into ``data_dir``; 0 when all are there and verified, else 1."""
    try:
        entries = load_catalogue(catalogue)
    except DatasetError as err:
        print(f"grader fetch: {err}", file=out)
        return 1
    fetchable = {name: entry for name, entry in entries.items() if entry.url}
    wanted = list(fetchable) if names == ["all"] else list(names)
    unknown = [name for name in wanted if name not in fetchable]
    if unknown:
        print(f"grader fetch: cannot fetch {', '.join(map(repr, unknown))}; "
              f"downloadable graphs: {', '.join(fetchable)} (or 'all')", file=out)
        return 1
    folder = Path(data_dir) if data_dir is not None else default_data_dir()
    status = 0
    for name in wanted:
        try:
            path = fetch_one(fetchable[name], folder, force=force, out=out)
            print(f"grader fetch: {name}: {path}", file=out)
        except FetchError as err:
            print(f"grader fetch: {name}: {err}", file=out)
            status = 1
        except KeyboardInterrupt:
            print(f"grader fetch: {name}: interrupted; run again to resume", file=out)
            return 130
    return status


def fetch_one(entry: Dataset, folder: Path, force: bool = False, out=sys.stderr) -> Path:
    target = folder / entry.filename
    if target.is_file() and not force:
        if entry.size and target.stat().st_size != entry.size:
            raise FetchError(f"{target} exists but has {target.stat().st_size:,} bytes, not {entry.size:,}; "
                             "delete it or use --force")
        print(f"grader fetch: {entry.name}: already present", file=out)
        return target
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise FetchError(f"cannot create {folder}: {err.strerror or err}") from None
    part = folder / f"{entry.filename}.part"
    if force and part.exists():
        part.unlink()
    download(entry.url, part, out=out)
    try:
        verify_bytes(entry, part)
    except FetchError:
        part.unlink(missing_ok=True)
        raise
    os.replace(part, target)
    try:
        verify_counts(entry, target)
    except FetchError:
        target.unlink(missing_ok=True)
        raise
    return target


# ---------------------------------------------------------------- download

def download(url: str, part: Path, out=sys.stderr) -> None:
    """Stream ``url`` into ``part``, resuming an existing partial file when the server allows."""
    have = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"User-Agent": "sssp-gpu-grader"})
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        response = urllib.request.urlopen(request, timeout=TIMEOUT_S)
    except urllib.error.HTTPError as err:
        if err.code == 416 and have:  # our partial file is no prefix the server knows: start over
            part.unlink()
            return download(url, part, out)
        raise FetchError(f"{url}: the server answered {err.code} {err.reason}") from None
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise FetchError(f"cannot reach {url}: {reason} (offline? these machines have no network)") from None
    with response:
        resumed = have > 0 and response.status == 206
        if not resumed:
            have = 0
        total = _expected_total(response, have)
        bar = ProgressBar(part.name, total, out, start=have)
        received = have
        try:
            with open(part, "ab" if resumed else "wb") as stream:
                while True:
                    block = response.read(CHUNK)
                    if not block:
                        break
                    stream.write(block)
                    received += len(block)
                    bar.update(received)
        except (http.client.IncompleteRead, OSError) as err:
            bar.close()
            raise FetchError(f"download interrupted at {received:,} bytes ({type(err).__name__}); "
                             f"run again to resume") from None
        bar.close()
    if total is not None and received != total:
        raise FetchError(f"download ended early: {received:,} of {total:,} bytes; run again to resume")


def _expected_total(response, start: int) -> int | None:
    """Full file size from Content-Range (206) or start + Content-Length."""
    content_range = response.headers.get("Content-Range", "")
    match = re.match(r"bytes\s+\d+-\d+/(\d+)", content_range)
    if match:
        return int(match.group(1))
    length = response.headers.get("Content-Length")
    return start + int(length) if length and length.isdigit() else None


# ---------------------------------------------------------------- verification

def verify_bytes(entry: Dataset, path: Path) -> None:
    size = path.stat().st_size
    if entry.size and size != entry.size:
        raise FetchError(f"size {size:,} bytes, the catalogue says {entry.size:,}; the file was deleted")
    if entry.sha256:
        digest = hashlib.sha256()
        with open(path, "rb") as stream:
            for block in iter(lambda: stream.read(CHUNK), b""):
                digest.update(block)
        if digest.hexdigest() != entry.sha256.lower():
            raise FetchError(f"sha256 mismatch: got {digest.hexdigest()}, the catalogue says {entry.sha256}; "
                             "the file was deleted")


def verify_counts(entry: Dataset, path: Path) -> None:
    """Edges and nodes must match; max id + 1 too, unless the node count already vouches for the file."""
    if not (entry.edges or entry.nodes or entry.vertices):
        return
    from sssp_common.errors import InputError
    from sssp_common.loader import load_graph
    try:
        graph = load_graph(path)
    except InputError as err:
        raise FetchError(f"the downloaded file does not parse: {err}; it was deleted") from None
    problems = []
    if entry.edges and graph.m != entry.edges:
        problems.append(f"{graph.m:,} edges, expected {entry.edges:,}")
    nodes_ok = None
    if entry.nodes:
        seen = np.zeros(graph.n, dtype=bool)
        seen[graph.src] = True
        seen[graph.dst] = True
        distinct = int(seen.sum())
        nodes_ok = distinct == entry.nodes
        if not nodes_ok:
            problems.append(f"{distinct:,} distinct vertices, expected {entry.nodes:,}")
    if entry.vertices and graph.n != entry.vertices and not nodes_ok:
        problems.append(f"largest id + 1 is {graph.n:,}, expected {entry.vertices:,}")
    if problems:
        raise FetchError("counts differ: " + "; ".join(problems) + "; the file was deleted")


# ---------------------------------------------------------------- progress

class ProgressBar:
    """bytes done/total, rate and ETA on one line, redrawn at most 5 times a second on a terminal."""

    def __init__(self, label: str, total: int | None, out, start: int = 0):
        self.label, self.total, self.out, self.start = label, total, out, start
        self.began = time.monotonic()
        self.last_draw = 0.0
        self.done = start
        self.live = bool(getattr(out, "isatty", lambda: False)())

    def update(self, done: int) -> None:
        self.done = done
        now = time.monotonic()
        if self.live and now - self.last_draw >= 0.2:
            self.last_draw = now
            self.out.write("\r" + self.line() + "\033[K")
            self.out.flush()

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.began, 1e-6)
        rate = (self.done - self.start) / elapsed
        if self.total:
            fraction = min(self.done / self.total, 1.0)
            filled = int(fraction * 30)
            eta = (self.total - self.done) / rate if rate > 0 else float("inf")
            eta_text = f"{eta:.0f}s" if eta != float("inf") else "?"
            return (f"{self.label} [{'#' * filled}{'.' * (30 - filled)}] {_mb(self.done)}/{_mb(self.total)} "
                    f"{_mb(rate)}/s ETA {eta_text}")
        return f"{self.label} {_mb(self.done)} {_mb(rate)}/s"

    def close(self) -> None:
        text = self.line()
        self.out.write(("\r" + text + "\033[K\n") if self.live else text + "\n")
        self.out.flush()


def _mb(count: float) -> str:
    return f"{count / 1e6:.1f} MB"
