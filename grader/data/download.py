"""One HTTP download into a ``.part`` file, bounded in bytes, time and trust.

- bytes: never more than ``Limits.max_bytes`` (the catalogue's size plus a margin);
- time: an overall deadline, an idle timeout (no byte for ``idle_s``) and a minimum rate
  (fewer than ``min_rate`` bytes/s over any ``rate_window_s``: a trickling server is
  given up);
- redirects: only to the same host (and never https -> http) unless ``allow_redirect_host``;
- retries: a transfer cut short (a reset connection, an idle server, an early end), a server
  that cannot be reached or answers 5xx/429 is tried again up to ``Limits.retries`` times,
  ``backoff_s`` doubling between tries, within the deadline; each try resumes the ``.part``;
- resuming: an existing ``.part`` is continued with a Range request; a 206 that does not
  start where asked, or a 200, restarts from byte 0 (the file is truncated, never appended
  to). So the ``.part`` always holds the server's bytes at their own offsets: a prefix of
  what was asked for, which the caller verifies whole before it counts.

Why not pooch (hashes, caching, retries, progress): its hash is of the downloaded bytes, while the
catalogue pins the uncompressed content (grader.data.integrity checks that); and it has no byte
cap, minimum rate, Range resume or same-host redirect rule, which a 250 MB download from a
server we do not control needs. The progress bar is tqdm's (grader.progress).

Errors are :class:`FetchError` (one line). ``interrupted`` says the ``.part`` is a good
prefix worth resuming; otherwise the caller deletes it.
"""
from __future__ import annotations

import re
import socket
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from grader.progress import Progress

CHUNK = 1 << 20


class FetchError(Exception):
    """A download or verification that failed for a reason the user can act on; one line."""

    def __init__(self, message: str, interrupted: bool = False, retry: bool = False):
        super().__init__(message)
        self.interrupted = interrupted
        self.retry = retry          # worth another try (a cut transfer, an unreachable or failing server)


@dataclass(frozen=True)
class Limits:
    max_bytes: int | None = None      # the whole file; None = unbounded
    deadline_s: float = 3600.0        # the whole fetch, restarts included
    idle_s: float = 60.0              # no byte at all for this long
    min_rate: float = 16 * 1024       # bytes/s, averaged over rate_window_s
    rate_window_s: float = 60.0
    allow_redirect_host: bool = False
    retries: int = 3                  # further tries after a transient failure
    backoff_s: float = 1.0            # the wait before the first retry; doubles after each


class _Clock:
    def __init__(self, limits: Limits):
        self.limits = limits
        self.ends = time.monotonic() + limits.deadline_s

    def socket_timeout(self) -> float:
        return max(0.05, min(self.limits.idle_s, self.ends - time.monotonic()))

    def check(self, received: int) -> None:
        if time.monotonic() > self.ends:
            raise FetchError(f"gave up after the {self.limits.deadline_s:g} s deadline at {received:,} bytes; "
                             "run again to resume", interrupted=True)


class _SameHostRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to the host asked for, unless told otherwise."""

    def __init__(self, allow_other_host: bool):
        super().__init__()
        self.allow_other_host = allow_other_host

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        old, new = urlsplit(req.full_url), urlsplit(newurl)
        if old.scheme == "https" and new.scheme != "https":
            raise FetchError(f"{req.full_url} redirects to {newurl}: refused (https to {new.scheme})")
        if (new.hostname or "").lower() != (old.hostname or "").lower() and not self.allow_other_host:
            raise FetchError(f"{req.full_url} redirects to another host ({new.hostname}): refused; "
                             "pass --allow-redirect-host to follow it")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def download(url: str, part: Path, limits: Limits = Limits(), out=sys.stderr) -> int:
    """Stream ``url`` into ``part`` (resuming it when the server allows); the bytes it holds at the end."""
    clock = _Clock(limits)
    opener = urllib.request.build_opener(_SameHostRedirects(limits.allow_redirect_host))
    restarts = failures = 0
    while True:
        have = part.stat().st_size if part.exists() else 0
        clock.check(have)
        if limits.max_bytes is not None and have > limits.max_bytes:
            part.unlink()
            have = 0
        try:
            restart = _attempt(opener, url, part, have, clock, out)
        except FetchError as err:
            if not err.retry or failures >= limits.retries:
                raise
            failures += 1
            wait = min(limits.backoff_s * 2 ** (failures - 1), max(0.0, clock.ends - time.monotonic()))
            print(f"grader fetch: {err}; try {failures + 1} of {limits.retries + 1} in {wait:g} s", file=out)
            time.sleep(wait)
            continue
        if not restart:
            return part.stat().st_size
        restarts += 1
        if restarts >= 3:
            raise FetchError(f"{url}: the server keeps answering with the wrong byte range")
        part.unlink(missing_ok=True)


def _attempt(opener, url: str, part: Path, have: int, clock: _Clock, out) -> bool:
    """One request; True when the partial file must be dropped and the download restarted."""
    limits = clock.limits
    request = urllib.request.Request(url, headers={"User-Agent": "sssp-gpu-grader"})
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        response = opener.open(request, timeout=clock.socket_timeout())
    except urllib.error.HTTPError as err:
        if err.code == 416 and have:  # our partial file is no prefix the server knows: start over
            return True
        raise FetchError(f"{url}: the server answered {err.code} {err.reason}",
                         retry=err.code >= 500 or err.code == 429) from None
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        unknown_host = isinstance(reason, socket.gaierror)   # no name service: offline, another try will not help
        raise FetchError(f"cannot reach {url}: {reason} (offline?)", retry=not unknown_host) from None
    with response:
        start, total = _placement(response)
        if have and response.status == 206 and start != have:
            print(f"grader fetch: the server resumed at byte {start}, not {have}; starting over", file=out)
            return True
        if response.status != 206:
            start = 0  # a 200: the whole file from byte 0, whatever was asked
        elif start != 0 and not have:
            return True
        if total is not None and limits.max_bytes is not None and total > limits.max_bytes:
            raise FetchError(f"the server offers {total:,} bytes, more than the {limits.max_bytes:,} expected")
        bar = Progress(total, unit="bytes", label=part.name, stream=out, initial=start)
        received = start
        window_start, window_bytes = time.monotonic(), 0
        try:
            with open(part, "ab" if start else "wb") as stream:
                while True:
                    block = response.read1(CHUNK)
                    if not block:
                        break
                    if limits.max_bytes is not None and received + len(block) > limits.max_bytes:
                        raise FetchError(f"the server sent more than the {limits.max_bytes:,} bytes expected; "
                                         "stopped")
                    stream.write(block)
                    received += len(block)
                    window_bytes += len(block)
                    bar.update(len(block))
                    clock.check(received)
                    now = time.monotonic()
                    if now - window_start >= limits.rate_window_s:
                        if window_bytes < limits.min_rate * (now - window_start):
                            raise FetchError(f"slower than {limits.min_rate:,.0f} bytes/s for "
                                             f"{now - window_start:.0f} s; gave up at {received:,} bytes; "
                                             "run again to resume", interrupted=True)
                        window_start, window_bytes = now, 0
        except FetchError:
            raise
        except (socket.timeout, TimeoutError):
            raise FetchError(f"no data for {limits.idle_s:g} s; gave up at {received:,} bytes; run again to resume",
                             interrupted=True) from None
        except Exception as err:  # a reset connection, http.client.IncompleteRead and friends
            raise FetchError(f"download interrupted at {received:,} bytes ({type(err).__name__}); "
                             "run again to resume", interrupted=True, retry=True) from None
        finally:
            bar.close()
    if total is not None and received != total:
        raise FetchError(f"download ended early: {received:,} of {total:,} bytes; run again to resume",
                         interrupted=True, retry=True)
    return False


def _placement(response) -> tuple[int, int | None]:
    """(first byte, whole file size) from Content-Range, else (0, Content-Length)."""
    content_range = response.headers.get("Content-Range", "")
    match = re.match(r"bytes\s+(\d+)-\d+/(\d+|\*)", content_range)
    if match:
        start = int(match.group(1))
        total = int(match.group(2)) if match.group(2) != "*" else None
        return start, total
    if response.status == 206:
        return -1, None  # a partial answer that does not say where it starts: unusable
    length = response.headers.get("Content-Length")
    return 0, int(length) if length and length.isdigit() else None
