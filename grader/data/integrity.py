"""Is a file the graph the catalogue names? Bytes, content, counts, and trust on first use.

Checks, cheapest first, all before a download takes its final name (and, by
:func:`verify_copy`, before any copy is used):

1. one pass over the bytes: sha256, size, and for a gzip (told by its magic bytes, which
   must agree with its name: the loader reads by the name) the decompressed stream,
   stopped as soon as it passes :func:`max_content_bytes` (a gzip bomb never reaches the
   parser or the parse cache); a corrupt or truncated gzip is an error here too;
2. the pins: the download's size and sha256 (of a copy under the downloaded name), the
   uncompressed content's sha256 and size (any gzip of the same content verifies), else
   the sha256 recorded beside the data by the first verified download when the catalogue
   publishes none (trust on first use: ``<file>.sha256``, ``sha256sum -c`` format);
3. the vertex and edge counts, parsed without the parse cache (a download nothing pins).

A copy that passed is remembered by its file identity (path, size, inode, mtime, ctime: what
changes whenever its bytes may have), so a 1 GB graph is hashed once, not before every sweep.
"""
from __future__ import annotations

import hashlib
import json
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grader.data.catalogue import Dataset
from grader.data.download import FetchError
from sssp_common.digest import file_identity
from sssp_common.files import cache_dir, write_text_atomically

CHUNK = 1 << 20
HEADER_ALLOWANCE = 64 * 1024   # comment lines at the top of a SNAP file
BYTES_PER_DIGITS_LINE = 16     # separators, a weight of up to 10 digits, CRLF, DIMACS's "a "


def margin(size: int) -> int:
    return max(64 * 1024, size // 100)


def max_content_bytes(entry: Dataset) -> int | None:
    """The most uncompressed bytes the entry's counts allow (None when it publishes no counts):
    every line ``src dst [weight]`` with ids of at most as many digits as the largest id; exactly
    the pinned content size when there is one."""
    if entry.content_size:
        return entry.content_size
    lines = max(entry.lines, entry.edges)
    if not lines:
        return None
    digits = len(str(max(entry.vertices, entry.nodes, 1)))
    return lines * (2 * digits + BYTES_PER_DIGITS_LINE) + HEADER_ALLOWANCE


def max_download_bytes(entry: Dataset) -> int | None:
    """The catalogue size plus a margin; without one, the content bound (gzip never grows data by much)."""
    if entry.size:
        return entry.size + margin(entry.size)
    if entry.content_size:
        return entry.content_size + margin(entry.content_size)
    content = max_content_bytes(entry)
    return None if content is None else content + margin(content)


@dataclass(frozen=True)
class Inspection:
    size: int
    sha256: str
    content_bytes: int
    lines: int
    content_sha256: str


GZIP_MAGIC = b"\x1f\x8b"


def inspect(path: Path, entry: Dataset, name: str | None = None) -> Inspection:
    """One pass: hashes, sizes and line count, the content capped at :func:`max_content_bytes`.
    ``name``: what the file will be read as (default: its own name; a ``.part`` is the catalogue's)."""
    cap = max_content_bytes(entry)
    name = name or (entry.filename if path.name.endswith(".part") else path.name)
    gz = name.lower().endswith(".gz")
    with open(path, "rb") as stream:
        magic = stream.read(2)
    if magic and gz != (magic == GZIP_MAGIC):
        raise FetchError(f"{'not' if gz else 'a'} gzip file, but named {name}: the loader would misread it")
    raw, content = hashlib.sha256(), hashlib.sha256()
    counts = {"bytes": 0, "lines": 0, "last": b"\n"}
    size = 0

    def take(data: bytes) -> None:
        if not data:
            return
        counts["bytes"] += len(data)
        if cap is not None and counts["bytes"] > cap:
            held = (f"the {cap:,} bytes the catalogue pins" if entry.content_size else
                    f"{cap:,} bytes, more than {entry.name}'s {max(entry.lines, entry.edges):,} lines can hold")
            raise FetchError(f"decompresses to more than {held}: not this graph (a gzip bomb?)")
        counts["lines"] += data.count(b"\n")
        counts["last"] = data[-1:]
        content.update(data)

    unzip = _Gunzip() if gz else None
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(CHUNK), b""):
            size += len(block)
            raw.update(block)
            if unzip is None:
                take(block)
            else:
                for piece in unzip.feed(block):
                    take(piece)
    if unzip is not None:
        unzip.finish()
    lines = counts["lines"] + (0 if counts["last"] == b"\n" else 1)
    return Inspection(size, raw.hexdigest(), counts["bytes"], lines, content.hexdigest())


class _Gunzip:
    """Streaming gzip (several members allowed), at most CHUNK bytes out per step."""

    def __init__(self):
        self.engine = zlib.decompressobj(wbits=31)
        self.started = False

    def feed(self, data: bytes):
        while True:
            if data:
                self.started = True
            try:
                out = self.engine.decompress(data, CHUNK)
            except zlib.error as err:
                raise FetchError(f"not a valid gzip file ({err})") from None
            if out:
                yield out
            if self.engine.eof:
                data = self.engine.unused_data
                self.engine = zlib.decompressobj(wbits=31)
                self.started = False
                if not data:
                    return
                continue
            data = self.engine.unconsumed_tail
            if not data and len(out) < CHUNK:  # input used up and nothing held back
                return

    def finish(self) -> None:
        if self.started and not self.engine.eof:
            raise FetchError("the gzip stream is truncated")


def check_bytes(entry: Dataset, found: Inspection, recorded: str | None, as_downloaded: bool = True) -> str:
    """The catalogue's pins (the download's size and sha256 when ``as_downloaded``, the content's
    always), else the trust-on-first-use record; what vouched for the file ("": nothing did)."""
    vouched = []
    if as_downloaded and entry.size and found.size != entry.size:
        raise FetchError(f"size {found.size:,} bytes, the catalogue says {entry.size:,}")
    if as_downloaded and entry.sha256:
        if found.sha256 != entry.sha256.lower():
            raise FetchError(f"sha256 mismatch: got {found.sha256}, the catalogue says {entry.sha256}")
        vouched.append("sha256 matches the catalogue")
    if entry.content_sha256:
        if entry.content_size and found.content_bytes != entry.content_size:
            raise FetchError(f"content of {found.content_bytes:,} bytes, the catalogue says {entry.content_size:,}")
        if found.content_sha256 != entry.content_sha256.lower():
            raise FetchError(f"content sha256 mismatch: got {found.content_sha256}, "
                             f"the catalogue says {entry.content_sha256}")
        vouched.append("content sha256 matches the catalogue")
    if vouched:
        return "; ".join(vouched)
    if recorded:
        if found.sha256 != recorded:
            raise FetchError(f"sha256 {found.sha256} differs from {recorded}, recorded by the first download "
                             "(trust on first use); if the server's file really changed, delete the .sha256 record")
        return "sha256 matches the one recorded by the first download (trust on first use)"
    return ""


def verify_copy(entry: Dataset, path: Path) -> str:
    """A copy about to be used: checked against the catalogue's pins (or the record of its verified
    fetch), once per file identity; what vouched for it. FetchError when nothing can vouch or it fails."""
    as_downloaded = path.name == entry.filename
    recorded = None if entry.content_sha256 or (entry.sha256 and as_downloaded) else read_record(path)
    if not entry.content_sha256 and not (entry.sha256 and as_downloaded) and not recorded:
        raise FetchError("the catalogue pins no hash this copy can be checked against"
                         + (f" (only {entry.filename}'s)" if entry.sha256 else "")
                         + " and no verified fetch recorded one")
    memo = _memo_path(path, entry, recorded)
    if memo is not None and memo.is_file():
        return "verified before (the same file, unchanged)"
    vouched = check_bytes(entry, inspect(path, entry), recorded, as_downloaded)
    if memo is not None:
        try:
            memo.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomically(memo, f"{path}\n{vouched}\n")
        except OSError:
            pass   # best effort: an unwritable memo costs a hash next time
    return vouched


def _memo_path(path: Path, entry: Dataset, recorded: str | None) -> Path | None:
    """One tiny file per (file identity, the pins it passed): a changed file or pin misses."""
    try:
        key = json.dumps([file_identity(path), entry.sha256, entry.size, entry.content_sha256,
                          entry.content_size, recorded])
        folder = cache_dir("digests") / "verified"
    except OSError:
        return None
    return folder / hashlib.sha256(key.encode()).hexdigest()[:40]


def check_lines(entry: Dataset, found: Inspection) -> None:
    """Fewer lines than edges cannot be this graph; caught before any parsing."""
    if entry.edges and found.lines < entry.edges:
        raise FetchError(f"{found.lines:,} lines, fewer than the {entry.edges:,} edges expected")


def verify_counts(entry: Dataset, path: Path) -> None:
    """Edges and nodes must match; max id + 1 too, unless the node count already vouches for the file."""
    if not (entry.edges or entry.nodes or entry.vertices):
        return
    from sssp_common.errors import InputError
    from sssp_common.loader import load_graph
    try:
        graph = load_graph(path, cache=False)
    except InputError as err:
        raise FetchError(f"the downloaded file does not parse: {err}") from None
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
        raise FetchError("counts differ: " + "; ".join(problems))


# ---------------------------------------------------------------- trust on first use

def record_path(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def read_record(target: Path) -> str | None:
    """The sha256 the first verified download of ``target`` recorded, or None."""
    path = record_path(target)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as err:
        raise FetchError(f"cannot read {path}: {err.strerror or err}") from None
    fields = text.split()
    if not fields or len(fields[0]) != 64 or any(c not in "0123456789abcdef" for c in fields[0].lower()):
        raise FetchError(f"{path}: not a sha256 record; delete it to trust the next verified download")
    return fields[0].lower()


def write_record(target: Path, sha256: str) -> Path:
    path = record_path(target)
    try:
        write_text_atomically(path, f"{sha256}  {target.name}\n")
    except OSError as err:
        raise FetchError(f"cannot write {path}: {err.strerror or err}") from None
    return path


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()
