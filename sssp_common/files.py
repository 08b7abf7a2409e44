"""File habits every part shares: one safe writer, cache folders, the checkout's root.

Why one writer: the program's output, the reference answers, cached graphs, reports and
orderings must all be whole or absent after a crash, and none may destroy what sits at the
path by accident (``-output /dev/null`` run as root once replaced the machine's /dev/null).
"""
from __future__ import annotations

import os
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

# A temporary name is ".<stem>.<random>.tmp"; the stem is cut so the whole stays inside NAME_MAX.
_TEMP_EXTRA = len("..tmp") + 8 + 1


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _resolve_target(path: Path) -> Path:
    """Where the bytes go: a symlink's final target (the link itself is kept)."""
    try:
        return Path(os.path.realpath(path)) if path.is_symlink() else path
    except OSError:
        return path


@contextmanager
def atomic_writer(path, mode: str = "w", *, encoding: str | None = None):
    """Yield a stream that writes ``path`` so that readers see the whole file or none.

    - a regular file (or a new path) is written to a temporary file beside it and renamed
      over it at the end; an existing file keeps its permission bits, a new one gets the
      umask's (``0666 & ~umask``), as ``open()`` would give it;
    - a symlink is followed: its target is replaced, the link stays;
    - anything that is not a regular file (a device, a FIFO, ``/dev/stdout``, a socket) is
      written in place, never replaced;
    - an exception inside the block leaves the old file (or nothing) and no temporary file.
    """
    if "b" not in mode and encoding is None:
        encoding = "utf-8"
    target = _resolve_target(Path(path))
    try:
        existing = target.stat()
    except FileNotFoundError:
        existing = None
    except OSError:
        existing = None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        with open(target, mode, encoding=encoding) as stream:
            yield stream
        return
    folder = target.parent if str(target.parent) else Path(".")
    stem = target.name[: max(1, os.pathconf(folder, "PC_NAME_MAX") - _TEMP_EXTRA)] \
        if _has_pathconf(folder) else target.name[:200]
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{stem}.", suffix=".tmp")
    try:
        permissions = stat.S_IMODE(existing.st_mode) if existing is not None else (0o666 & ~_umask())
        os.fchmod(fd, permissions)
        with os.fdopen(fd, mode, encoding=encoding) as stream:
            yield stream
            stream.flush()
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def _has_pathconf(folder: Path) -> bool:
    try:
        os.pathconf(folder, "PC_NAME_MAX")
        return True
    except (OSError, ValueError):
        return False


def write_text_atomically(path, text: str) -> None:
    with atomic_writer(path) as stream:
        stream.write(text)


def same_file(a, b) -> bool:
    """True when two paths name one existing file (the output must never be the input)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


CACHE_KINDS = ("graphs", "reference", "digests", "orderings", "synth", "inputs")


def cache_dir(kind: str) -> Path:
    """One folder per kind of cache under one root: ``$SSSP_CACHE_DIR/<kind>``, else
    ``$XDG_CACHE_HOME/sssp-gpu/<kind>`` (``~/.cache/sssp-gpu/<kind>``)."""
    if kind not in CACHE_KINDS:
        raise ValueError(f"unknown cache kind {kind!r}")
    explicit = os.environ.get("SSSP_CACHE_DIR")
    if explicit:
        return Path(explicit) / kind
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sssp-gpu" / kind
