"""Which unprivileged uid a jail runs as: a slot (uid = 64123 + slot) claimed MACHINE-WIDE and
held while the jail lives (`lease`), so no two jails on the machine ever share a uid: not two
students of one grader (--jobs runs several at once), not two graders. Runs outside a jail
(--unsafe) keep one slot per grader or executor process for its whole life (`claimed_slot`).

Why machine-wide: two graders started with different TMPDIRs once took their slot locks from
two different folders, both got uid 64123, and a student of one could kill a student of the
other. The locks now live in one fixed, root-owned folder (/run/sssp-grader/slots, else
/var/lock/sssp-grader/slots), whatever TMPDIR says. A slot is an flock on the file SLOT: the
kernel drops it when the process dies, so a killed grader never leaks its uid.
"""
from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

SLOTS = 256
LOCK_HOMES = (Path("/run/sssp-grader"), Path("/var/lock/sssp-grader"))

_held: tuple[int, int, int] | None = None     # (pid, slot, lock fd) this process holds


_folders: dict[tuple[Path, ...], Path] = {}


def slot_folder(homes: tuple[Path, ...] = LOCK_HOMES) -> Path:
    """The first home that is (or can be made) a root-owned 0700 folder, not a link; its slots/."""
    if homes not in _folders:
        _folders[homes] = _make_slot_folder(homes)
    return _folders[homes]


def _make_slot_folder(homes: tuple[Path, ...]) -> Path:
    problems = []
    for home in homes:
        try:
            home.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = os.lstat(home)
            if not os.path.isdir(home) or os.path.islink(home) or info.st_uid != os.geteuid():
                problems.append(f"{home} is not a folder of this user's")
                continue
            os.chmod(home, 0o700)
            slots = home / "slots"
            slots.mkdir(mode=0o700, exist_ok=True)
            if os.path.islink(slots) or os.lstat(slots).st_uid != os.geteuid():
                problems.append(f"{slots} is not a folder of this user's")
                continue
            return slots
        except OSError as error:
            problems.append(f"{home}: {error.strerror or error}")
    raise OSError("no folder for the grader's uid slots: " + "; ".join(problems))


def claimed_slot(homes: tuple[Path, ...] = LOCK_HOMES) -> int:
    """This process's slot (claimed on first use, the lowest free one). A forked child claims
    its own: a lock held by the parent's descriptor is the parent's."""
    global _held
    if _held is not None and _held[0] == os.getpid():
        return _held[1]
    index, fd = _claim(slot_folder(homes))
    _held = (os.getpid(), index, fd)
    return index


@contextmanager
def lease(homes: tuple[Path, ...] = LOCK_HOMES) -> Iterator[int]:
    """A slot of its own for one jail, given back when the block ends (its processes are dead
    by then, and its only writable places, its tmpfs, are gone: the next holder inherits nothing)."""
    index, fd = _claim(slot_folder(homes))
    try:
        yield index
    finally:
        os.close(fd)


def _claim(folder: Path) -> tuple[int, int]:
    """The lowest free slot and its locked descriptor. flock belongs to the open file: a slot
    this very process holds through another descriptor is busy too."""
    for index in range(SLOTS):
        fd = os.open(folder / str(index), os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        return index, fd
    raise OSError(f"all {SLOTS} grader uids are in use on this machine")


def holding() -> bool:
    return _held is not None and _held[0] == os.getpid()
