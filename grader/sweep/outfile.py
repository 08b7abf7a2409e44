"""Read a program's output file strictly, fast, and within a size bound; say how its format
departs from the spec's exact `<v>:<d>` lines, apart from what its distances are.

Strict: a distance is a run of digits, an INF word (INF, inf, Inf, infinity) or `-1` (a
common way to print unreachable, read as one); `5:2 0`, `2e1`, `1.0`, `-2`, `+3` are not
distances. Spaces around the colon, CRLF line ends, blank lines, other INF spellings, `-1` and
`v d` lines without the colon (when no line has one) are read, and reported as format
deviations: the distances are judged all the same. The structure is
checked over runs of character classes (one regular-expression pass over a string a few
bytes per line long), so millions of lines take well under a second; only a bad file is
walked line by line, to say where it goes wrong.
"""
from __future__ import annotations

import io
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MAX_DIGITS = 18                         # fits int64 with room; longer is not a distance
_ALLOWED = b"0123456789: \t\r\n" + bytes(range(65, 91)) + bytes(range(97, 123))
_NOT_LETTERS = bytes(b for b in range(256) if not (65 <= b <= 90 or 97 <= b <= 122))
_WORD = re.compile(rb"infinity|inf", re.IGNORECASE)
_IS_DIGIT = np.zeros(256, dtype=bool)
_IS_DIGIT[48:58] = True
_IS_LETTER = np.zeros(256, dtype=bool)
_IS_LETTER[65:91] = True
_IS_LETTER[97:123] = True
_WORDISH = _IS_DIGIT | _IS_LETTER
_LINE = re.compile(rb"^[ \t]*(\d{1,18})[ \t]*:[ \t]*(\d{1,18}|[A-Za-z]+)[ \t]*\r?$")
INF_WORDS = {b"inf", b"infinity"}
_MARK = -(2 ** 62)                      # an INF word, before the numeric parse
_NO_COLON = re.compile(rb"(?m)^([ \t]*\d{1,18})[ \t]+(?=\S)")      # `v d`: the gap after the vertex
_MINUS_ONE = re.compile(rb"(?m)(:[ \t]*)-1(?=[ \t]*\r?$)")            # `v:-1` (and `v: -1`)
_MINUS_ONE_WORD = b"iNFINITY"           # what -1 is read as: a spelling no one writes, so no other note is made


class NoOutput(Exception):
    """There is no output file."""


class Unparsable(ValueError):
    """The output file cannot be read as `<vertex>:<distance>` lines; the message says where."""


@dataclass
class Parsed:
    ids: np.ndarray                      # int64, file order
    values: np.ndarray                   # int64, file order (INF words: 0, see inf)
    inf: np.ndarray                      # bool: an INF word
    deviations: list[str] = field(default_factory=list)
    inf_words: list[str] = field(default_factory=list)


def size_bound(n: int) -> int:
    """The most bytes an answer for n vertices can need, generously (spaces, CRLF, long INF words)."""
    return 65536 + max(n, 1) * (len(str(max(n - 1, 0))) + MAX_DIGITS + 16)


def read_capped(path: Path | str, max_bytes: int) -> bytes:
    """The file's bytes: never through a link, never a device or FIFO, never past max_bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise NoOutput("no output file") from None
    except OSError as error:
        if error.errno == 40:   # ELOOP: a symbolic link
            raise Unparsable("the output file is a symbolic link (not followed)") from None
        raise Unparsable(f"the output file cannot be opened: {error.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unparsable("the output file is not a regular file")
        if info.st_size > max_bytes:
            raise Unparsable(f"the output file is {info.st_size} bytes, more than the {max_bytes} "
                             f"an answer for this graph can need (not read)")
        chunks, left = [], max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:
            raise Unparsable(f"the output file grew past {max_bytes} bytes while being read")
        return data
    finally:
        os.close(fd)


def parse(data: bytes) -> Parsed:
    """Vertex ids and distances in file order, with the format deviations seen.

    Checked in whole-array steps (no Python loop over lines): only the allowed bytes; at most
    one ':' per line; no whitespace inside a number or word; letters only as INF words after
    the ':'; '\\r' only before '\\n'. pandas' C reader then reads the two integer columns (an
    empty field or a number past int64 fails it). Any failure walks the lines for a message."""
    if not data.strip():
        raise Unparsable("line 1: the output file is empty")
    data, rewritten = _spellings(data)
    if data.translate(None, _ALLOWED):
        _first_bad_line(data)
    arr = np.frombuffer(data, dtype=np.uint8)
    newlines = np.flatnonzero(arr == 10)
    colons = np.flatnonzero(arr == 58)
    line_of_colon = np.searchsorted(newlines, colons)
    spaced = b" " in data or b"\t" in data
    lettered = data.translate(None, _NOT_LETTERS)
    if (line_of_colon.size > 1 and not bool(np.all(np.diff(line_of_colon) > 0))) \
            or data.count(b"\r") != data.count(b"\r\n") \
            or (spaced and _words_split(arr)) or (lettered and not _letters_ok(data, arr, newlines, colons, line_of_colon, lettered)):
        _first_bad_line(data)
    deviations = rewritten + _deviations(data, arr, colons, spaced)
    inf_words = sorted({w.decode() for w in _WORD.findall(lettered) if w != _MINUS_ONE_WORD}) if lettered else []
    if any(w != "INF" for w in inf_words):
        deviations.append(f"unreachable written as {', '.join(repr(w) for w in inf_words)} (the spec: INF)")
    try:
        ids, values = _columns(data, bool(lettered))
    except (ValueError, OverflowError):
        _first_bad_line(data)
    inf = values == _MARK
    values = np.where(inf, 0, values)
    return Parsed(ids, values, inf, deviations, inf_words)


def _spellings(data: bytes) -> tuple[bytes, list[str]]:
    """Rewrite two spellings the spec does not forbid into ones the fast path reads: `v d` lines
    (no ':' anywhere in the file) get their colon, and a distance of `-1` becomes an INF word
    (distances are never negative, so -1 can only mean unreachable). Line numbers are kept."""
    found = []
    if b":" not in data and _NO_COLON.search(data):
        data = _NO_COLON.sub(rb"\1:", data)
        found.append("no ':' between vertex and distance ('v d' lines; the spec: '<vertex>:<distance>')")
    if b"-" in data:
        data, count = _MINUS_ONE.subn(rb"\1" + _MINUS_ONE_WORD, data)
        if count:
            found.append("unreachable written as '-1' (the spec: INF)")
    return data, found


def _words_split(arr: np.ndarray) -> bool:
    """Whitespace between two digits or letters (`5:2 0`, `IN F`)."""
    solid = np.flatnonzero((arr != 32) & (arr != 9))
    gap = np.flatnonzero(np.diff(solid) > 1)
    before, after = arr[solid[gap]], arr[solid[gap + 1]]
    return bool(np.any(_WORDISH[before] & _WORDISH[after]))


def _letters_ok(data, arr, newlines, colons, line_of_colon, lettered) -> bool:
    """Letters only as INF words, each after its line's ':' and not touching a digit."""
    if _WORD.sub(b"", lettered):
        return False
    letters = np.flatnonzero(_IS_LETTER[arr])
    colon_of_line = np.full(newlines.size + 1, -1, dtype=np.int64)
    colon_of_line[line_of_colon] = colons
    where = colon_of_line[np.searchsorted(newlines, letters)]
    if bool(np.any((where < 0) | (where > letters))):
        return False
    neighbours = np.concatenate([letters - 1, letters + 1])
    neighbours = neighbours[(neighbours >= 0) & (neighbours < arr.size)]
    return not bool(np.any(_IS_DIGIT[arr[neighbours]]))


def _deviations(data: bytes, arr: np.ndarray, colons: np.ndarray, spaced: bool) -> list[str]:
    found = []
    if spaced:
        blank = (arr == 32) | (arr == 9)
        if colons.size and bool(np.any(blank[np.minimum(colons + 1, arr.size - 1)])):
            found.append("a space after ':' ('v: d')")
        if colons.size and bool(np.any(blank[np.maximum(colons - 1, 0)])):
            found.append("a space before ':'")
        ends = np.flatnonzero((arr == 10) | (arr == 13))
        starts = np.concatenate(([0], np.flatnonzero(arr == 10) + 1))
        starts = starts[starts < arr.size]
        if bool(np.any(blank[starts])) or bool(np.any(blank[np.maximum(ends - 1, 0)])) or bool(blank[-1]):
            found.append("spaces at a line's start or end")
    if b"\r" in data:
        found.append("CRLF line ends")
    if data.startswith((b"\n", b"\r\n")) or b"\n\n" in data or b"\n\r\n" in data:
        found.append("blank lines")
    if not data.endswith(b"\n"):
        found.append("no newline at the end")
    return found


def _columns(data: bytes, has_words: bool) -> tuple[np.ndarray, np.ndarray]:
    import pandas as pd
    clean = data.translate(None, b" \t\r")
    if has_words:
        clean = clean.lower().replace(b"infinity", str(_MARK).encode()).replace(b"inf", str(_MARK).encode())
    frame = pd.read_csv(io.BytesIO(clean), sep=":", header=None, names=["v", "d"],
                        dtype={"v": np.int64, "d": np.int64}, engine="c", skip_blank_lines=True)
    return frame["v"].to_numpy(), frame["d"].to_numpy()


def _first_bad_line(data: bytes, word: bytes | None = None):
    for number, line in enumerate(data.split(b"\n"), 1):
        stripped = line.strip(b" \t\r")
        if not stripped:
            continue
        match = _LINE.match(line)
        if match is None or (match.group(2).isalpha() and match.group(2).lower() not in INF_WORDS):
            shown = line.decode("utf-8", errors="replace")[:60]
            raise Unparsable(f"line {number}: not '<vertex>:<distance>' (a distance is digits, INF or -1): {shown!r}")
    raise Unparsable("not '<vertex>:<distance>' lines" + (f": {word[:20]!r}" if word else ""))


def placed(parsed: Parsed, n: int) -> tuple[np.ndarray, np.ndarray, str]:
    """(values, inf) indexed by vertex, and '' or why the file is incomplete (missing, repeated
    or out-of-range vertices); order is a format deviation, never an error."""
    ids = parsed.ids
    if ids.shape[0] == n and (n == 0 or np.array_equal(ids, np.arange(n, dtype=ids.dtype))):
        return parsed.values, parsed.inf, ""
    parsed.deviations.append("vertices not in order 0..n-1")
    problems = []
    stray = np.flatnonzero((ids < 0) | (ids >= n))
    if stray.size:
        problems.append(f"{stray.size} line(s) for vertices that do not exist (first: {ids[stray[0]]}; "
                        f"the graph has {n}: 0..{n - 1})")
    inside = ids[(ids >= 0) & (ids < n)]
    counts = np.bincount(inside, minlength=n) if n else np.zeros(0, dtype=np.int64)
    repeated = np.flatnonzero(counts > 1)
    if repeated.size:
        problems.append(f"{repeated.size} vertex(es) appear more than once (first: {repeated[0]})")
    missing = np.flatnonzero(counts == 0)
    if missing.size:
        problems.append(f"{missing.size} of {n} vertices missing (first: {missing[0]})")
    if problems:
        return parsed.values, parsed.inf, "; ".join(problems)
    values = np.empty(n, dtype=np.int64)
    inf = np.empty(n, dtype=bool)
    values[ids] = parsed.values
    inf[ids] = parsed.inf
    return values, inf, ""
