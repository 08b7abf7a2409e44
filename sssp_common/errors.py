"""User-facing errors: one clear line, never a traceback."""
from __future__ import annotations


class InputError(Exception):
    """A problem with an input file, reported as ``file:line: what``."""

    def __init__(self, path, message: str, line: int | None = None):
        self.path = str(path)
        self.line = line
        self.message = message
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {message}")


class UsageError(Exception):
    """A bad command line (exit 2 with the usage text)."""


class DeviceError(Exception):
    """The GPU failed (exit 3)."""
