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


def run_cli(prog: str, action, usage: str | None = None, subject=None) -> int:
    """Run ``action()`` for a program's ``main``: its return value is the exit status; a user
    error becomes one line on stderr and its status (usage 2 with the usage text, input 1,
    device 3, interrupted 130). ``subject()`` names the file an out-of-memory is blamed on."""
    import sys

    try:
        return action()
    except UsageError as err:
        print(f"{prog}: error: {err}" + (f"\n\n{usage}" if usage else ""), file=sys.stderr)
        return 2
    except InputError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 1
    except MemoryError:
        named = subject() if subject else None
        print(f"{prog}: error: {named + ': ' if named else ''}out of memory", file=sys.stderr)
        return 1
    except DeviceError as err:
        print(f"{prog}: device error: {err}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
