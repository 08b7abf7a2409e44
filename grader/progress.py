"""The progress bar on stderr for sweep cells, graded runs and downloaded bytes: tqdm's.

On a terminal tqdm redraws one line in place with the rate and the ETA; the current cell is
its description and the runs that were not ok its postfix. When stderr is not a terminal (CI
logs, a batch job) or with quiet it writes nothing: the closing summary says what happened.
"""
from __future__ import annotations

import sys

from tqdm import tqdm


def format_duration(seconds: float | None) -> str:
    """1:05, 1:02:03; '?' when unknown (the closing summaries' durations)."""
    if seconds is None or seconds != seconds or seconds < 0:
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Progress(total, unit="cells"|"runs"|"bytes", label=...); .update(n, label=None, status=None);
    .close(); .total may be lowered while running (cells of a skipped graph).

    `status`: anything but "ok" is counted and shown as "N <status>" after the bar.
    """

    def __init__(self, total: int | None, unit: str = "cells", label: str = "", *, stream=None,
                 quiet: bool = False, tty: bool | None = None, initial: int = 0):
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) if tty is None else tty
        self.not_ok: dict[str, int] = {}
        in_bytes = unit == "bytes"
        self._bar = tqdm(total=total, desc=label or None, unit="B" if in_bytes else f" {unit}",
                         unit_scale=in_bytes, unit_divisor=1024 if in_bytes else 1000, file=self.stream,
                         disable=quiet or not self.tty, dynamic_ncols=True, leave=True, mininterval=0.1,
                         smoothing=0.1, initial=initial)

    @property
    def total(self):
        return self._bar.total

    @total.setter
    def total(self, value) -> None:
        self._bar.total = value
        self._bar.refresh()

    @property
    def label(self) -> str:
        return self._bar.desc

    @label.setter
    def label(self, value: str) -> None:
        self._bar.set_description_str(value, refresh=False)

    @property
    def done(self) -> int:
        return self._bar.n

    def update(self, n: int = 1, label: str | None = None, status: str | None = None) -> None:
        """Count n more done (n=0 just shows a new current label)."""
        if label is not None:
            self._bar.set_description_str(label, refresh=False)
        if status is not None and status != "ok":
            self.not_ok[status] = self.not_ok.get(status, 0) + 1
            self._bar.set_postfix_str(", ".join(f"{count} {name}" for name, count in sorted(self.not_ok.items())),
                                      refresh=False)
        self._bar.update(n)
        if n == 0:
            self._bar.refresh()

    def write(self, text: str) -> None:
        """A line of its own above the bar (tqdm clears and redraws it)."""
        if self._bar.disable:
            print(text, file=self.stream)
        else:
            self._bar.write(text, file=self.stream)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
