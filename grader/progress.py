"""A small progress bar on stderr, for sweep cells or downloaded bytes.

On a terminal it redraws one line in place (at most ~10 times a second); in a log
(stderr not a TTY) it writes plain lines, so CI logs stay readable; quiet writes nothing.
"""
from __future__ import annotations

import shutil
import sys
import time

REDRAW_EVERY_S = 0.1
LOG_EVERY_S = 10.0


def format_duration(seconds: float | None) -> str:
    """1:05, 1:02:03; '?' when unknown."""
    if seconds is None or seconds != seconds or seconds < 0:
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def format_bytes(count: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(count) < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} TiB"


class Progress:
    """Progress(total, unit="cells"|"bytes", label=...); .update(n, label=None, status=None); .close().

    `status` (cells): anything but "ok" is counted and shown as "N not ok".
    """

    def __init__(self, total: int | None, unit: str = "cells", label: str = "", *, stream=None,
                 quiet: bool = False, tty: bool | None = None, clock=time.monotonic):
        self.total = total
        self.unit = unit
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.tty = self.stream.isatty() if tty is None else tty
        self.clock = clock
        self.done = 0
        self.not_ok: dict[str, int] = {}
        self.started = clock()
        self._last_draw = float("-inf")
        self._last_log_fraction = -1.0
        self._drawn_width = 0
        self._closed = False

    # --- public -------------------------------------------------------------------
    def update(self, n: int = 1, label: str | None = None, status: str | None = None) -> None:
        """Count n more done (n=0 just shows a new current label)."""
        self.done += n
        if label is not None:
            self.label = label
        if status is not None and status != "ok":
            self.not_ok[status] = self.not_ok.get(status, 0) + 1
        if self.quiet:
            return
        now = self.clock()
        if self.tty:
            finished = self.total is not None and self.done >= self.total
            if now - self._last_draw >= REDRAW_EVERY_S or finished or status not in (None, "ok"):
                self._draw(now)
        elif n and self._log_due(now, status):
            self._log(now, status)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.quiet:
            return
        if self.tty:
            self._draw(self.clock())
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- figures ------------------------------------------------------------------
    def elapsed(self, now: float | None = None) -> float:
        return (self.clock() if now is None else now) - self.started

    def eta(self, now: float | None = None) -> float | None:
        """Remaining time from the mean pace so far (cells: mean time per finished cell)."""
        if not self.total or not self.done:
            return None
        return self.elapsed(now) / self.done * max(0, self.total - self.done)

    def line(self, now: float | None = None, width: int = 100) -> str:
        now = self.clock() if now is None else now
        count = (f"{format_bytes(self.done)}/{format_bytes(self.total)}" if self.unit == "bytes" and self.total
                 else format_bytes(self.done) if self.unit == "bytes"
                 else f"{self.done}/{self.total}" if self.total is not None else str(self.done))
        fraction = min(1.0, self.done / self.total) if self.total else None
        percent = f"{fraction * 100:3.0f}%" if fraction is not None else ""
        timing = f"{format_duration(self.elapsed(now))} ETA {format_duration(self.eta(now))}"
        if self.unit == "bytes" and self.elapsed(now) > 0:
            timing += f" {format_bytes(self.done / self.elapsed(now))}/s"
        failures = ", ".join(f"{count} {status}" for status, count in sorted(self.not_ok.items()))
        unit = "" if self.unit == "bytes" else f" {self.unit}"
        text = f"{count}{unit} {percent}  {timing}" + (f"  [{failures}]" if failures else "")
        if fraction is not None:
            bar_width = 30 if width >= 140 else 20 if width >= 100 else 10
            filled = int(round(fraction * bar_width))
            text = "[" + "#" * filled + "." * (bar_width - filled) + "] " + text
        room = width - len(text) - 2
        label = self.label if len(self.label) <= room else (self.label[: room - 1] + "…" if room > 8 else "")
        return f"{text}  {label}".rstrip()

    # --- drawing ------------------------------------------------------------------
    def _draw(self, now: float) -> None:
        self._last_draw = now
        width = shutil.get_terminal_size((100, 20)).columns - 1
        text = self.line(now, width)
        pad = max(0, self._drawn_width - len(text))
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self._drawn_width = len(text)

    def _log_due(self, now: float, status: str | None) -> bool:
        """Logs: every cell for up to 100 cells, else each new percent or every 10 s; bytes: each 10%."""
        if status not in (None, "ok") or (self.total is not None and self.done >= self.total):
            return True
        fraction = self.done / self.total if self.total else 0.0
        step = 0.1 if self.unit == "bytes" else (0.0 if (self.total or 0) <= 100 else 0.01)
        if fraction - self._last_log_fraction >= step or now - self._last_draw >= LOG_EVERY_S:
            return True
        return False

    def _log(self, now: float, status: str | None) -> None:
        self._last_draw = now
        self._last_log_fraction = self.done / self.total if self.total else 0.0
        suffix = f": {status}" if status else ""
        self.stream.write(self.line(now, 160) + suffix + "\n")
        self.stream.flush()
