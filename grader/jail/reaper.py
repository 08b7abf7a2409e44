"""Nothing of a run outlives it: kill its process group, its cgroup (or every process of its
uid), and reap the zombies of orphans that came to the grader as their subreaper."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path


def kill_all(process, group, uid: int | None) -> int:
    """Process group, cgroup, then (the run's own uid, no cgroup) every process of the uid;
    returns how many descendants were still running."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    killed: set[int] = set()
    if group is not None:
        killed = group.kill() - {process.pid}
    elif uid is not None:
        killed = kill_uid(uid)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    leftovers = len(killed)
    if group is not None:
        group.remove()
        killed |= _orphans_of(group)
    _reap(killed)
    return leftovers


def _orphans_of(group) -> set[int]:
    """Zombies that came to us from the run's group (the middle of a double fork): ours to reap."""
    names = [f"/{Path(path).name}" for path in group.paths]
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            if f"\nPPid:\t{os.getpid()}\n" not in status or "\nState:\tZ" not in status:
                continue
            cgroup = (entry / "cgroup").read_text()
        except OSError:
            continue
        if any(name in cgroup for name in names):
            found.add(int(entry.name))
    return found


def _reap(pids: set[int]) -> None:
    """Collect the zombies of killed orphans that came to us (we are their subreaper)."""
    deadline = time.monotonic() + 1.0
    waiting = set(pids)
    while waiting and time.monotonic() < deadline:
        for pid in list(waiting):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:      # not ours (no subreaper): init reaps it
                waiting.discard(pid)
                continue
            if done:
                waiting.discard(pid)
        if waiting:
            time.sleep(0.01)


def kill_uid(uid: int) -> set[int]:
    """SIGKILL every process whose real uid is `uid` (a uid dedicated to this run)."""
    killed: set[int] = set()
    for _ in range(20):
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                for line in (entry / "status").read_text().splitlines():
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == uid:
                            found.append(int(entry.name))
                        break
            except (OSError, ValueError):
                continue
        if not found:
            return killed
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        time.sleep(0.01)
    return killed
