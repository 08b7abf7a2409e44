"""Read SNAP edge lists and DIMACS-9 ``.gr`` files (plain or ``.gz``) into a :class:`Graph`.

Parsing is the slowest thing the grader does per run, so there are three layers:

1. a binary cache keyed by the file's identity (:func:`.digest.file_identity`), so the
   grader's dozens of runs over one file parse it once;
2. a fast path through numpy's C ``loadtxt`` (files whose lines all have the same
   number of columns: every SNAP and DIMACS file);
3. a careful line-by-line path, taken only when the fast path refuses a file: it
   accepts mixed 2/3-column files and otherwise finds the exact line that is wrong (a
   line of more than three columns is an error naming it).

Validation (ranges, negative weights) is vectorised and runs on every uncached load.
Every byte read passes a line-length guard (no line over 1 MB, named by number), so an
endless line (``/dev/zero``, a gzip bomb of one character) stops at once. Pipes, FIFOs and
``/dev/stdin`` are read once into memory (at most :data:`STREAM_LIMIT` bytes), never cached.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import shutil
import sys
import stat as stat_module
import warnings
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from .adler import arrays_checksum
from .errors import InputError
from .digest import file_identity
from .files import cache_dir, write_array_folder
from .graph import Graph

INT32_MAX = np.iinfo(np.int32).max
CACHE_FORMAT = 3
LINE_LIMIT = 1 << 20     # bytes in one line, newline excluded
STREAM_LIMIT = 8 << 30   # bytes read from a pipe or FIFO (compressed, if it is gzip)
_READ_CHUNK = 1 << 18    # < LINE_LIMIT: a line longer than the limit spans chunks
_GZIP_MAGIC = b"\x1f\x8b"
_INTEGER = re.compile(r"^[+-]?[0-9]+$")
_DIMACS_ARC = np.dtype([("tag", "S1"), ("u", np.int64), ("v", np.int64), ("w", np.int64)])


def load_graph(path, cache: bool = True) -> Graph:
    """Load ``path`` (SNAP text or DIMACS ``.gr``, optionally gzipped; a file or a stream)."""
    path = Path(path)
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except OSError as err:
        raise InputError(path, f"cannot read: {err.strerror}") from None
    if stat_module.S_ISDIR(stat.st_mode):
        raise InputError(path, "is a folder, not a graph file")
    if not os.access(path, os.R_OK):
        raise InputError(path, "permission denied")
    if not stat_module.S_ISREG(stat.st_mode):
        return _parse(path, _read_stream(path))

    entry = _cache_entry(path) if cache else None
    if entry is not None and entry.is_dir():
        graph = _read_cache(entry, path)
        if graph is not None:
            return graph

    graph = _parse(path)
    if entry is not None:
        _write_cache(entry, graph)
    return graph


def is_dimacs(path) -> bool:
    name = Path(path).name.lower()
    return name.endswith(".gr") or name.endswith(".gr.gz")


# ---------------------------------------------------------------- reading

class LineTooLong(InputError):
    """A line over :data:`LINE_LIMIT` bytes."""


class _LineGuard(io.RawIOBase):
    """A byte stream that fails, naming the line, as soon as a line passes :data:`LINE_LIMIT`."""

    def __init__(self, raw, path, underlying=None):
        self.raw, self.path = raw, path
        self.underlying = underlying  # a GzipFile does not close the file it reads
        self.lines = 0  # newlines seen
        self.run = 0    # bytes since the last newline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")[:_READ_CHUNK]
        data = self.raw.read(len(view))
        view[:len(data)] = data
        self.check(data)
        return len(data)

    def check(self, data: bytes) -> None:
        first = data.find(b"\n")
        if first < 0:
            self.run += len(data)
        else:
            if self.run + first > LINE_LIMIT:
                self.fail()
            self.lines += data.count(b"\n")
            self.run = len(data) - 1 - data.rfind(b"\n")
        if self.run > LINE_LIMIT:
            self.fail()

    def fail(self):
        raise LineTooLong(self.path, f"line longer than {LINE_LIMIT // (1 << 20)} MB (not a text edge list?)",
                         self.lines + 1)

    def close(self):
        for stream in (self.raw, self.underlying):
            if stream is not None:
                stream.close()
        super().close()


class _Source:
    """Where a graph's bytes come from: a regular file (reopened per pass) or a stream's
    bytes, read once. ``path`` names it in messages."""

    def __init__(self, path: Path, data: bytes | None = None):
        self.path, self.data = path, data
        head = data[:2] if data is not None else _head(path)
        self.gzipped = path.name.lower().endswith(".gz") or head == _GZIP_MAGIC
        self.dimacs = is_dimacs(path) or (data is not None and _looks_dimacs(self))

    def open_text(self):
        raw = io.BytesIO(self.data) if self.data is not None else open(self.path, "rb")
        underlying = None
        if self.gzipped:
            raw, underlying = gzip.GzipFile(fileobj=raw, mode="rb"), raw
        guarded = io.BufferedReader(_LineGuard(raw, self.path, underlying), buffer_size=_READ_CHUNK)
        return io.TextIOWrapper(guarded, encoding="utf-8", errors="replace", newline=None)


def _head(path: Path) -> bytes:
    with open(path, "rb") as stream:
        return stream.read(2)


def _looks_dimacs(source: _Source) -> bool:
    """A stream has no name to go by: DIMACS when its first token is ``c`` or ``p``."""
    with source.open_text() as stream:
        for line in stream:
            tokens = line.split()
            if tokens:
                return tokens[0] in ("c", "p")
    return False


def _read_stream(path: Path) -> bytes:
    """A pipe's or FIFO's bytes, read once; an endless line or stream is refused early."""
    chunks, total = [], 0
    try:
        with open(path, "rb", buffering=0) as stream:
            guard = None
            while True:
                block = stream.read(_READ_CHUNK)
                if not block:
                    break
                if guard is None:  # gzip: lines are checked as it is decompressed
                    guard = _LineGuard(None, path) if block[:2] != _GZIP_MAGIC else False
                if guard:
                    guard.check(block)
                total += len(block)
                if total > STREAM_LIMIT:
                    raise InputError(path, f"stream longer than {STREAM_LIMIT >> 30} GB")
                chunks.append(block)
    except OSError as err:
        raise InputError(path, f"cannot read: {err.strerror or err}") from None
    return b"".join(chunks)


# ---------------------------------------------------------------- parsing

_GZIP_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile)


def _parse(path: Path, data: bytes | None = None) -> Graph:
    source = None
    try:
        source = _Source(path, data)
        if source.dimacs:
            return _parse_dimacs(source)
        return _parse_snap(source)
    except LineTooLong:
        raise
    except InputError:
        # A flipped byte in a gzip file decodes to garbage before its checksum is reached:
        # say that the file is corrupt, not that a line of the garbage is wrong.
        if source is not None and source.gzipped:
            _check_gzip(source)
        raise
    except _GZIP_ERRORS as err:
        raise InputError(path, f"corrupt gzip data: {err}") from None
    except OSError as err:
        raise InputError(path, f"cannot read: {err.strerror or err}") from None


def _check_gzip(source: _Source) -> None:
    raw = io.BytesIO(source.data) if source.data is not None else open(source.path, "rb")
    try:
        with gzip.GzipFile(fileobj=raw, mode="rb") as stream:
            while stream.read(1 << 22):
                pass
    except _GZIP_ERRORS as err:
        raise InputError(source.path, f"corrupt gzip data: {err}") from None
    finally:
        raw.close()


def _parse_snap(source: _Source) -> Graph:
    path = source.path
    columns = _first_data_columns(source, comment="#")
    if columns is None:
        raise InputError(path, "no edges: the file has no data lines")
    table = None
    if columns in (2, 3):
        # Every column is read (no usecols): loadtxt would drop a fourth column silently, and
        # a line of another width must fall to the careful path, which names it.
        with source.open_text() as stream, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                table = np.loadtxt(stream, dtype=np.int64, comments="#", ndmin=2)
            except ValueError:
                table = None  # the careful path says exactly what is wrong
    if table is None:
        src, dst, w, lines = _careful_snap(source)
    else:
        src, dst = table[:, 0], table[:, 1]
        w = table[:, 2] if table.shape[1] > 2 else None
        lines = None
    return _validated(source, src, dst, w, n=None, lines=lines, comment="#")


def _parse_dimacs(source: _Source) -> Graph:
    path = source.path
    declared_n, declared_m, problem_line = _dimacs_problem_line(source)
    with source.open_text() as stream, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            table = np.loadtxt(stream, dtype=_DIMACS_ARC, comments=("c", "p"), ndmin=1)
        except ValueError:
            table = None
    if table is None or not bool(np.all(table["tag"] == b"a")):
        src, dst, w, lines = _careful_dimacs(source)
    else:
        src, dst, w, lines = table["u"], table["v"], table["w"], None
    if src.size == 0:
        raise InputError(path, "no edges: the file has no 'a' lines")
    if src.size != declared_m:
        print(f"sssp: warning: {path}:{problem_line}: declares {declared_m} arcs, the file has {src.size}",
              file=sys.stderr)
    if min(src.min(), dst.min()) < 1:
        row = int(np.flatnonzero((src < 1) | (dst < 1))[0])
        raise InputError(path, "DIMACS vertex ids start at 1", _line_of(source, row, lines, comment=("c", "p")))
    if max(src.max(), dst.max()) > declared_n:
        row = int(np.flatnonzero((src > declared_n) | (dst > declared_n))[0])
        raise InputError(path, f"vertex id above the declared count {declared_n}",
                         _line_of(source, row, lines, comment=("c", "p")))
    return _validated(source, src - 1, dst - 1, w, n=declared_n, lines=lines, comment=("c", "p"))


def _validated(source: _Source, src, dst, w, n, lines, comment) -> Graph:
    """Range checks shared by both formats; errors name the offending line."""
    path = source.path
    if src.size == 0:
        raise InputError(path, "no edges: the file has no data lines")

    def fail(mask, message):
        row = int(np.flatnonzero(mask)[0])
        raise InputError(path, message, _line_of(source, row, lines, comment))

    lowest = min(int(src.min()), int(dst.min()))
    if lowest < 0:
        fail((src < 0) | (dst < 0), "negative vertex id")
    if max(int(src.max()), int(dst.max())) >= INT32_MAX:
        fail((src >= INT32_MAX) | (dst >= INT32_MAX), f"vertex id does not fit in int32 (max {INT32_MAX - 1})")
    if w is not None:
        if int(w.min()) < 0:
            fail(w < 0, "negative weight: Bellman-Ford's convergence test and the methods' "
                        "int distances assume weights >= 0 (the spec's graphs have none)")
        if int(w.max()) > INT32_MAX:
            fail(w > INT32_MAX, f"weight does not fit in int32 (max {INT32_MAX})")
    if n is None:
        n = max(int(src.max()), int(dst.max())) + 1
    return Graph.from_arrays(src, dst, w, n=n)


def _first_data_columns(source: _Source, comment: str) -> int | None:
    with source.open_text() as stream:
        for line in stream:
            tokens = line.split()
            if tokens and not tokens[0].startswith(comment):
                return len(tokens)
    return None


def _careful_snap(source: _Source):
    """Line-by-line parse: accepts mixed 2/3 columns, names the first bad line."""
    def edge(tokens: list[str], number: int):
        if not tokens or tokens[0].startswith("#"):
            return None
        if len(tokens) < 2:
            raise InputError(source.path, f"an edge needs two vertex ids, found {len(tokens)} token", number)
        if len(tokens) > 3:
            raise InputError(source.path, f"an edge is 'src dst [weight]': found {len(tokens)} columns", number)
        return tokens
    return _careful(source, edge)


def _careful_dimacs(source: _Source):
    def edge(tokens: list[str], number: int):
        if not tokens or tokens[0] in ("c", "p"):
            return None
        if tokens[0] != "a" or len(tokens) != 4:
            raise InputError(source.path, "expected an arc line 'a u v w'", number)
        return tokens[1:]
    return _careful(source, edge)


def _careful(source: _Source, edge):
    """The edges of a file read line by line, to name the first bad line: ``edge(tokens, line
    number)`` picks a line's tail, head and (optional, default 1) weight tokens, None for a
    line that holds no edge, or raises InputError."""
    src, dst, w, lines = [], [], [], []
    with source.open_text() as stream:
        for number, line in enumerate(stream, start=1):
            fields = edge(line.split(), number)
            if fields is None:
                continue
            for token in fields:
                if not _INTEGER.match(token):
                    raise InputError(source.path, f"not an integer: {token!r}", number)
            src.append(int(fields[0]))
            dst.append(int(fields[1]))
            w.append(int(fields[2]) if len(fields) > 2 else 1)
            lines.append(number)
    return _as_int64(source.path, src, dst, w, lines)


def _as_int64(path, src, dst, w, lines):
    limit = np.iinfo(np.int64).max
    for values, what in ((src, "vertex id"), (dst, "vertex id"), (w, "weight")):
        for index, value in enumerate(values):
            if abs(value) > limit:
                raise InputError(path, f"{what} out of range: {value}", lines[index])
    return (np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64),
            np.array(w, dtype=np.int64), np.array(lines, dtype=np.int64))


def _dimacs_problem_line(source: _Source):
    path = source.path
    with source.open_text() as stream:
        for number, line in enumerate(stream, start=1):
            tokens = line.split()
            if not tokens or tokens[0] == "c":
                continue
            if tokens[0] == "p":
                if len(tokens) != 4 or tokens[1] != "sp" or not all(_INTEGER.match(t) for t in tokens[2:]):
                    raise InputError(path, "bad problem line, expected 'p sp N M'", number)
                n, m = int(tokens[2]), int(tokens[3])
                if not 0 < n < INT32_MAX:
                    raise InputError(path, f"vertex count {n} out of range", number)
                return n, m, number
            raise InputError(path, "expected the problem line 'p sp N M' before the first arc", number)
    raise InputError(path, "no problem line 'p sp N M'")


def _line_of(source: _Source, row: int, lines, comment) -> int:
    """File line number of data row ``row`` (only computed when reporting an error)."""
    if lines is not None:
        return int(lines[row])
    prefixes = (comment,) if isinstance(comment, str) else tuple(comment)
    seen = -1
    with source.open_text() as stream:
        for number, line in enumerate(stream, start=1):
            tokens = line.split()
            if tokens and not tokens[0].startswith(prefixes):
                seen += 1
                if seen == row:
                    return number
    return 0


# ---------------------------------------------------------------- cache

def cache_root() -> Path:
    return cache_dir("graphs")


def _cache_entry(path: Path) -> Path:
    identity = json.dumps([CACHE_FORMAT, *file_identity(path)])
    return cache_root() / hashlib.sha256(identity.encode()).hexdigest()[:32]


_ARRAYS = ("src", "dst", "w")


def _checksum(n: int, arrays) -> str:
    """Adler-32 over the vertex count and every array's bytes (fast: ~3 GB/s); it catches
    a damaged, truncated or replaced entry, not a forger."""
    return arrays_checksum([n] + [a.shape[0] for a in arrays], arrays)


def _read_cache(entry: Path, path: Path) -> Graph | None:
    """The cached graph, checked; a bad entry is removed with a one-line warning (None)."""
    try:
        meta = json.loads((entry / "meta.json").read_text())
        n, m = int(meta["n"]), int(meta["m"])
        with ThreadPoolExecutor(max_workers=len(_ARRAYS)) as pool:  # reads release the GIL
            arrays = list(pool.map(lambda name: np.load(entry / f"{name}.npy", allow_pickle=False), _ARRAYS))
        problem = None
        if not 0 < n <= INT32_MAX or m < 1:
            problem = f"counts out of range (n={n}, m={m})"
        elif any(a.dtype != np.int32 or a.shape != (m,) for a in arrays):
            problem = "arrays of the wrong type or length"
        elif meta.get("checksum") != _checksum(n, arrays):
            problem = "checksum mismatch"
        if problem is None:
            return Graph(n, *arrays)
    except (OSError, ValueError, KeyError, TypeError, EOFError) as err:
        problem = f"unreadable ({type(err).__name__})"
    print(f"sssp: warning: {path}: cached copy {entry} is damaged ({problem}); parsing the file again",
          file=sys.stderr)
    shutil.rmtree(entry, ignore_errors=True)
    return None


def remember_parsed(path, graph: Graph) -> None:
    """Put ``graph`` in the parse cache as what ``path`` parses to, without parsing it: for a
    writer that has just written ``path`` from ``graph`` (the benchmarks' graph files, from
    :func:`.edgelist.parsed_form`; tests check the two agree). Keyed like any entry, by the
    file's identity: a file rewritten later misses it."""
    _write_cache(_cache_entry(Path(path)), graph)


def _write_cache(entry: Path, graph: Graph) -> None:
    """Best effort: a read-only or full cache folder only costs speed, and leaves nothing behind
    (the staging folder is registered with the writer's signal handler: an interrupted first load
    of a big graph must not leave hundreds of MB of half-written arrays in the cache)."""
    arrays = [getattr(graph, name) for name in _ARRAYS]
    write_array_folder(entry, dict(zip(_ARRAYS, arrays)),
                       {"n": graph.n, "m": graph.m, "checksum": _checksum(graph.n, arrays)})
