"""One control group per run: every descendant of the program is found and killed, even a
`setsid` grandchild that left the process group, and processes and memory are capped.

cgroup v2 (pure, or the `unified` half of a hybrid host) gives `cgroup.kill`; cgroup v1's
`pids` and `memory` hierarchies give the caps where v2 does not have those controllers
enabled. Everything is best effort: what could be set up is returned in `applied`, what
could not in `failed`, and the run record says which (a machine without cgroups still gets
the process-group kill and, with the dedicated user, the kill-by-uid sweep).

Groups live in `<hierarchy>/<grader's own cgroup>/sssp-grader/<grader pid>-<n>`, so a
grader killed without cleaning up is recognised by the next one (`cleanup_stale`).
"""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

BASE = "sssp-grader"
MOUNTS = Path("/proc/self/mounts")
V1_CONTROLLERS = ("pids", "memory")


def _own_paths() -> dict[str, str]:
    """controller (or '' for v2) -> this process's cgroup path, from /proc/self/cgroup."""
    paths = {}
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for name in (controllers.split(",") if controllers else [""]):
                paths[name] = path
    except (OSError, ValueError):
        pass
    return paths


def hierarchies() -> dict[str, Path]:
    """'v2' and/or v1 controller names -> the base folder our groups go in (absent: not available)."""
    own = _own_paths()
    found: dict[str, Path] = {}
    try:
        mounts = MOUNTS.read_text().splitlines()
    except OSError:
        return found
    for line in mounts:
        parts = line.split()
        if len(parts) < 4:
            continue
        where, kind, options = parts[1], parts[2], parts[3].split(",")
        if kind == "cgroup2" and "" in own and "v2" not in found:
            found["v2"] = Path(where) / own[""].lstrip("/") / BASE
        elif kind == "cgroup":
            for controller in V1_CONTROLLERS:
                if controller in options and controller in own:
                    found[controller] = Path(where) / own[controller].lstrip("/") / BASE
    return found


class RunGroup:
    """The cgroups of one run; `paths` is what the jail joins."""

    def __init__(self, name: str, pids_max: int | None, memory_bytes: int | None):
        self.paths: list[str] = []
        self.applied: list[str] = []
        self.failed: dict[str, str] = {}
        self._kill_file: Path | None = None
        for kind, base in hierarchies().items():
            folder = base / name
            try:
                base.mkdir(exist_ok=True)
                if kind == "v2":
                    _enable_v2_controllers(base)
                folder.mkdir()
            except OSError as error:
                self.failed[f"cgroup-{kind}"] = error.strerror or str(error)
                continue
            self.paths.append(str(folder))
            if kind == "v2" and (folder / "cgroup.kill").exists():
                self._kill_file = folder / "cgroup.kill"
                self.applied.append("cgroup-kill")
            limits = {"pids.max": pids_max,
                      "memory.max": memory_bytes if kind == "v2" else None,
                      "memory.limit_in_bytes": memory_bytes if kind == "memory" else None}
            for key, value in limits.items():
                if value and (folder / key).exists():
                    try:
                        (folder / key).write_text(str(int(value)))
                        self.applied.append(key)
                    except OSError as error:
                        self.failed[key] = error.strerror or str(error)

    def pids(self) -> set[int]:
        found = set()
        for path in self.paths:
            try:
                found.update(int(p) for p in Path(path, "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                pass
        return found

    def kill(self, deadline_s: float = 5.0) -> set[int]:
        """SIGKILL everything in the group until it is empty; returns the pids that were still there."""
        seen: set[int] = set()
        end = time.monotonic() + deadline_s
        while True:
            alive = self.pids()
            if not alive:
                return seen
            seen |= alive
            if self._kill_file is not None:
                try:
                    self._kill_file.write_text("1")
                except OSError:
                    pass
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if time.monotonic() > end:
                return seen
            time.sleep(0.01)

    def remove(self) -> None:
        self.kill()
        for path in self.paths:
            for _ in range(50):
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _enable_v2_controllers(base: Path) -> None:
    """Ask for pids and memory below our base (refused where the parent holds processes: fine)."""
    for folder in (base.parent, base):
        try:
            available = (folder / "cgroup.controllers").read_text().split()
            wanted = " ".join(f"+{c}" for c in ("pids", "memory") if c in available)
            if wanted:
                (folder / "cgroup.subtree_control").write_text(wanted)
        except OSError:
            pass


def cleanup_stale(alive=None) -> int:
    """Kill and remove the groups of graders that are gone (named `<pid>-...`); how many."""
    alive = alive or _pid_alive
    removed = 0
    for base in hierarchies().values():
        try:
            entries = list(base.iterdir())
        except OSError:
            continue
        for folder in entries:
            owner = folder.name.split("-", 1)[0]
            if not folder.is_dir() or not owner.isdigit() or alive(int(owner)):
                continue
            group = RunGroup.__new__(RunGroup)
            group.paths, group.applied, group.failed = [str(folder)], [], {}
            kill_file = folder / "cgroup.kill"
            group._kill_file = kill_file if kill_file.exists() else None
            group.remove()
            removed += 1
    return removed


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
