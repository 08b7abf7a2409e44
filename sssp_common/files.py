"""File habits every part shares: one safe writer, cache folders, the checkout's root.

Why one writer: the program's output, the reference answers, cached graphs, reports and
orderings must all be whole or absent after a crash, and none may destroy what sits at the
path by accident (``-output /dev/null`` run as root once replaced the machine's /dev/null).
"""
from __future__ import annotations

import errno
import os
import secrets
import shutil
import signal
import stat
import threading
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


# Temporary files that atomic_writer has created and not yet renamed or removed: what a
# signal handler (temporaries_removed_on_signals) deletes before the process exits.
_LIVE_TEMPORARIES: set[str] = set()
INTERRUPTING_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def remove_temporaries() -> None:
    """Delete every temporary file atomic_writer has open, and every temporary folder
    made by temporary_folder (the targets stay as they were)."""
    for temporary in list(_LIVE_TEMPORARIES):
        try:
            if os.path.isdir(temporary) and not os.path.islink(temporary):
                shutil.rmtree(temporary, ignore_errors=True)
            else:
                os.unlink(temporary)
        except OSError:
            pass
        _LIVE_TEMPORARIES.discard(temporary)


def temporary_folder(parent: Path, prefix: str) -> Path:
    """A new folder ``<prefix><8 random hex>`` in parent, registered (before it exists) for
    the signal handler to remove; :func:`forget_temporary` once it is renamed or removed."""
    for _ in range(100):
        folder = os.path.join(parent, f"{prefix}{secrets.token_hex(4)}")
        _LIVE_TEMPORARIES.add(folder)
        try:
            os.mkdir(folder, 0o700)
            return Path(folder)
        except FileExistsError:
            _LIVE_TEMPORARIES.discard(folder)
        except BaseException:
            _LIVE_TEMPORARIES.discard(folder)
            raise
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(parent))


def forget_temporary(path) -> None:
    """It was renamed into place or removed: a signal handler must no longer touch it."""
    _LIVE_TEMPORARIES.discard(str(path))


@contextmanager
def temporaries_removed_on_signals(prog: str):
    """While inside: on SIGTERM, SIGINT or SIGHUP remove the temporaries, say so in one
    line, and exit with 128 + the signal's number (as a shell reports a process a signal
    ended). Without it the default action kills the process with its temporary file on
    disk. The previous handlers come back on leaving (a program's main called in-process).
    Outside the main thread, where handlers cannot be set, it does nothing."""

    def leave(signum, _frame):
        remove_temporaries()
        os.write(2, f"{prog}: interrupted by {signal.Signals(signum).name}\n".encode())
        os._exit(128 + signum)

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.signal(number, leave) for number in INTERRUPTING_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _refuse_unwritable(target: Path) -> None:
    """An existing file the user may not write is refused as open(path, "w") would refuse
    it; replacing it through the folder (which rename allows) would bypass its mode."""
    if not os.access(target, os.W_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(target))


def _keeps_owner(fd: int, existing: os.stat_result) -> bool:
    """Give the temporary the replaced file's owner and group; False where that is not
    allowed (another user's file, a group we are not in)."""
    try:
        made = os.fstat(fd)
        if (made.st_uid, made.st_gid) != (existing.st_uid, existing.st_gid):
            os.fchown(fd, existing.st_uid, existing.st_gid)
        return True
    except PermissionError:
        return False


@contextmanager
def atomic_writer(path, mode: str = "w", *, encoding: str | None = None):
    """Yield a stream that writes ``path`` so that readers see the whole file or none.

    - a regular file (or a new path) is written to a temporary file beside it and renamed
      over it at the end; an existing file keeps its permission bits, a new one gets the
      umask's (``0666 & ~umask``), as ``open()`` would give it;
    - a symlink is followed: its target is replaced, the link stays;
    - anything that is not a regular file (a device, a FIFO, ``/dev/stdout``, a socket) is
      written in place, never replaced;
    - an existing file the user may not write is refused (PermissionError), as ``open()``
      refuses it; one the user may write but whose owner or group the temporary cannot
      take (another user's file), or that sits in a folder the user may not write, is
      written in place, as ``open()`` would;
    - an exception inside the block, or a signal that temporaries_removed_on_signals
      handles, leaves the old file (or nothing) and no temporary file.
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
    if existing is not None:
        _refuse_unwritable(target)
    folder = target.parent if str(target.parent) else Path(".")
    stem = target.name[: max(1, os.pathconf(folder, "PC_NAME_MAX") - _TEMP_EXTRA)] \
        if _has_pathconf(folder) else target.name[:200]
    try:
        fd, temporary = _create_temporary(folder, stem)
    except PermissionError:
        if existing is None:
            raise
        # a file you may write in a folder you may not: open() writes it, so do we, in place
        with open(target, mode, encoding=encoding) as stream:
            yield stream
        return
    try:
        if existing is not None and not _keeps_owner(fd, existing):
            os.close(fd)
            os.unlink(temporary)
            _LIVE_TEMPORARIES.discard(temporary)
            with open(target, mode, encoding=encoding) as stream:
                yield stream
            return
        permissions = stat.S_IMODE(existing.st_mode) if existing is not None else (0o666 & ~_umask())
        os.fchmod(fd, permissions)
        with os.fdopen(fd, mode, encoding=encoding) as stream:
            yield stream
            stream.flush()
        os.replace(temporary, target)
        _LIVE_TEMPORARIES.discard(temporary)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        _LIVE_TEMPORARIES.discard(temporary)
        raise


def _create_temporary(folder: Path, stem: str) -> tuple[int, str]:
    """A new file ``.<stem>.<8 random hex>.tmp`` in ``folder``, named as the caller named the
    folder (tempfile.mkstemp makes it absolute, which needs search permission on every
    folder above, where a relative name from the current folder needs none).

    The name is registered before the file exists: a signal may be delivered to any thread
    and its handler may run between any two steps, and it must never miss a file."""
    for _ in range(100):
        temporary = os.path.join(folder, f".{stem}.{secrets.token_hex(4)}.tmp")
        _LIVE_TEMPORARIES.add(temporary)
        try:
            return os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), temporary
        except FileExistsError:
            _LIVE_TEMPORARIES.discard(temporary)
        except BaseException:
            _LIVE_TEMPORARIES.discard(temporary)
            raise
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(folder))


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


CACHE_KINDS = ("graphs", "reference", "digests", "orderings", "synth", "inputs", "tilings")


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


def write_array_folder(entry: Path, arrays: dict, meta: dict) -> None:
    """A cache entry as a folder of ``<name>.npy`` files and ``meta.json``, whole or absent: written
    in a registered temporary folder beside it and renamed into place (another process's entry
    already there wins). Best effort: a read-only or full cache only costs the next run a rebuild,
    and an interrupted write leaves nothing behind."""
    import json

    import numpy as np

    staging = None
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        staging = temporary_folder(entry.parent, ".tmp-")
        for name, array in arrays.items():
            np.save(staging / f"{name}.npy", array)
        (staging / "meta.json").write_text(json.dumps(meta))
        os.replace(staging, entry)
        forget_temporary(staging)
        staging = None
    except OSError:
        pass
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
            forget_temporary(staging)

