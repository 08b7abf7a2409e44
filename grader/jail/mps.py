"""One job: an MPS control daemon (`nvidia-cuda-mps-control -d`) for one uid, and nothing of it left after.

Why: a host starts CUDA processes mostly one after another (~0.31 s of context creation each
alone, ~0.14 s as clients of an MPS server: ../shared/DESIGN.md). MPS serves one uid at a time
and every student runs as a uid of their own, so grade --mps gives a student's turn on a GPU
its own daemon, started as that student's leased uid (grader.grading.mps_turn).

What a daemon gets: a folder of the grader's scratch (0711 root; a capped tmpfs where root may
mount one) holding pipe/, log/ and shm/, each 0700 and owned by the uid. The daemon runs in a
mount namespace of its own (bubblewrap, the host's pid namespace: the server must see its
clients' pids) with shm/ on /dev/shm, as the uid, with no groups but the GPU device files', no
capabilities and no_new_privs. A jailed client (grader.jail.runner with Sandbox.mps) gets
CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY at the same paths, both bound read-write,
and the same shm/ on its /dev/shm (MPS clients share POSIX shared memory with their server).

Stopping: `quit` through the control binary itself as the uid (root never writes into a folder
the uid owns), a bounded count of polls for the uid's processes to end, then SIGKILL to the
process groups of what remains and to every process of the uid (reaper.kill_uid), then a last
bounded check that none is left (/proc, zombies reaped). The binary: $GRADER_MPS_CONTROL, then
PATH, then /usr/local/nvidia/bin (where the GPU machines have it).
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from grader.jail import bwrap, reaper, sandbox as sb
from grader.jail.boundary import remove_tree

ENV_VAR = "GRADER_MPS_CONTROL"
BINARY = "nvidia-cuda-mps-control"
NVIDIA_BIN = Path("/usr/local/nvidia/bin")
START_POLLS, STOP_POLLS, CHECK_POLLS = 400, 400, 100      # x POLL_S: bounded by counts
POLL_S = 0.025
COMMAND_TIMEOUT_S = 30
QUOTA_BYTES = 1 << 30          # pipe/, log/ and shm/ together
INODES = 4096
LOG_TAIL = 600
# What CUDA says when an MPS connection or server fails (runtime and driver API names, and the
# words of their messages): a run that printed one of these failed for MPS, not for its code.
ERROR_WORDS = ("cudaErrorMps", "CUDA_ERROR_MPS_", "MPS client", "MPS server", "MPS control daemon",
               "mps server", "mps client")
ERROR_SCAN = 64 * 1024


class MpsError(Exception):
    """A daemon could not be started (one line: why)."""


@dataclass(frozen=True)
class Client:
    """What a jailed MPS client needs (picklable: it travels in the Sandbox to pool workers)."""
    uid: int
    gid: int
    pipe: str
    log: str
    shm: str
    devices: str = ""       # CUDA_VISIBLE_DEVICES for clients ('' : leave the worker's)

    def env(self) -> dict[str, str]:
        env = {"CUDA_MPS_PIPE_DIRECTORY": self.pipe, "CUDA_MPS_LOG_DIRECTORY": self.log}
        return {**env, "CUDA_VISIBLE_DEVICES": self.devices} if self.devices else env

    @property
    def writable(self) -> tuple[str, ...]:
        return (self.pipe, self.log)


def find() -> str | None:
    """The control binary, or None. $GRADER_MPS_CONTROL wins when set (even if wrong: said so)."""
    chosen = os.environ.get(ENV_VAR)
    if chosen:
        return chosen
    return shutil.which(BINARY) or (str(NVIDIA_BIN / BINARY) if os.access(NVIDIA_BIN / BINARY, os.X_OK) else None)


def unavailable() -> str:
    """'' when a daemon can be started here; else one line saying why."""
    binary = find()
    if binary is None:
        return (f"{BINARY} was not found (not on PATH, not in {NVIDIA_BIN}): install the NVIDIA driver's MPS tools "
                f"or set {ENV_VAR} to the binary")
    if not os.path.isfile(binary) or not os.access(binary, os.X_OK):
        return f"{binary} (from ${ENV_VAR} or PATH) is not an executable file"
    if not sb.is_root():
        return "an MPS daemon per student needs the grader to run as root (it runs as each student's uid)"
    return ""


def mps_error(text: str) -> bool:
    """Whether a run's output names an MPS connection or server failure (its first ERROR_SCAN characters)."""
    head = (text or "")[:ERROR_SCAN]
    return any(word in head for word in ERROR_WORDS)


def gpu_uuid(gpu: str | None) -> str:
    """The UUID of GPU index `gpu` ('' when there is none or it cannot be read): the daemon and its
    clients name their device by it (an index would be renumbered for the clients)."""
    if gpu is None:
        return ""
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader", "-i", str(gpu)],
                              capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return ""
    found = done.stdout.strip()
    return found if done.returncode == 0 and found.startswith("GPU-") and "\n" not in found else ""


def uid_processes(uid: int) -> dict[int, str]:
    """pid -> state letter of every process whose real uid is uid (one pass over /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        try:
            if int(fields.get("Uid", "-1").split()[0]) == uid:
                found[int(entry.name)] = fields.get("State", "?").strip()[:1]
        except (ValueError, IndexError):
            continue
    return found


def _state(pid: int, uid: int) -> str:
    """The state letter of process pid if it runs as uid, else ''."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return ""
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    try:
        return fields.get("State", "?").strip()[:1] if int(fields.get("Uid", "-1").split()[0]) == uid else ""
    except (ValueError, IndexError):
        return ""


def _reap(pids) -> None:
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def living(uid: int) -> list[int]:
    """The uid's processes that are not zombies (zombies that came to us are reaped first)."""
    found = uid_processes(uid)
    _reap([pid for pid, state in found.items() if state == "Z"])
    return sorted(pid for pid, state in uid_processes(uid).items() if state != "Z")


def outside_jails(pids) -> list[int]:
    """Those of pids in the grader's own pid namespace: the daemon and its server (a jailed client
    lives in a pid namespace of its own and cannot leave it: seccomp denies setns and unshare)."""
    try:
        mine = os.readlink("/proc/self/ns/pid")
    except OSError:
        return list(pids)
    found = []
    for pid in pids:
        try:
            if os.readlink(f"/proc/{pid}/ns/pid") == mine:
                found.append(pid)
        except OSError:
            continue
    return found


def _has_entries(folder: Path) -> bool:
    try:
        with os.scandir(folder) as entries:
            return any(True for _ in entries)
    except OSError:
        return False


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


class Daemon:
    """A running control daemon for one uid (start() makes one; stop() ends it and checks)."""

    def __init__(self, binary: str, uid: int, gid: int, groups: tuple[int, ...], folder: Path, mounted: bool,
                 devices: str):
        self.binary, self.uid, self.gid, self.groups = binary, uid, gid, groups
        self.folder, self.mounted, self.devices = folder, mounted, devices
        self.pipe, self.log, self.shm = folder / "pipe", folder / "log", folder / "shm"
        self.pids: set[int] = set()
        self.starts = 0

    @property
    def client(self) -> Client:
        return Client(self.uid, self.gid, str(self.pipe), str(self.log), str(self.shm), self.devices)

    def _env(self) -> dict[str, str]:
        env = {"PATH": sb.SAFE_PATH, "HOME": str(self.log), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
               "CUDA_MPS_PIPE_DIRECTORY": str(self.pipe), "CUDA_MPS_LOG_DIRECTORY": str(self.log)}
        return {**env, "CUDA_VISIBLE_DEVICES": self.devices} if self.devices else env

    def _as_uid(self, argv: list[str], namespace: bool) -> list[str]:
        switch = [bwrap.setpriv() or bwrap.SETPRIV[0], f"--reuid={self.uid}", f"--regid={self.gid}",
                  f"--groups={','.join(map(str, self.groups))}" if self.groups else "--clear-groups",
                  "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
        binary = bwrap.find() if namespace else None
        if binary is None:
            return [*switch, *argv]
        # a mount namespace of its own, the host's pid namespace: shm/ is its /dev/shm
        return [binary, "--dev-bind", "/", "/", "--bind", str(self.shm), "/dev/shm", "--", *switch, *argv]

    def start(self) -> None:
        """Start the daemon (or again, after it died): MpsError with why when it does not come up."""
        self.starts += 1
        for name in ("pipe", "log", "shm"):
            folder = self.folder / name
            remove_tree(folder)
            folder.mkdir(mode=0o700)
            os.chown(folder, self.uid, self.gid)
        try:
            done = subprocess.run(self._as_uid([self.binary, "-d"], namespace=True), env=self._env(),
                                  stdin=subprocess.DEVNULL, capture_output=True, timeout=COMMAND_TIMEOUT_S,
                                  start_new_session=True)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise MpsError(f"{self.binary} -d could not be run: {error}") from None
        if done.returncode != 0:
            said = (done.stderr.decode("utf-8", "replace").strip().splitlines() or [""])[-1][:LOG_TAIL]
            raise MpsError(f"{self.binary} -d exited {done.returncode}" + (f": {said}" if said else "")
                           + self._log_said())
        for _ in range(START_POLLS):   # up: something in its pipe folder (its control FIFO), and running
            if _has_entries(self.pipe) and outside_jails(living(self.uid)):
                break
            time.sleep(POLL_S)
        else:
            raise MpsError(f"{self.binary} -d is not running with a pipe in {self.pipe}" + self._log_said())
        # the uid was leased for this turn; what runs as it outside every jail is the daemon's
        self.pids = set(outside_jails(living(self.uid)))

    def alive(self) -> bool:
        """Is a process the daemon started still running? (pids taken at start: a client renaming
        itself cannot pass for it.)"""
        return any(_state(pid, self.uid) not in ("", "Z") for pid in self.pids)   # its pids only: no /proc walk

    def _log_said(self) -> str:
        """The last line of the daemon's control.log (bounded), for an error message."""
        try:
            with open(self.log / "control.log", "rb") as handle:
                handle.seek(max(0, handle.seek(0, os.SEEK_END) - LOG_TAIL))
                lines = handle.read(LOG_TAIL).decode("utf-8", "replace").strip().splitlines()
        except OSError:
            return ""
        return f" (control.log: {lines[-1]})" if lines else ""

    def stop(self, clients_running: bool = False) -> list[int]:
        """quit, bounded polls, then kill what is left; returns what is still alive after all that
        (expected: none). clients_running (a restart in the middle of a turn): only the daemon's
        side (the uid's processes outside every jail) is waited for and killed, not the student's
        runs in flight; otherwise every process of the uid."""
        ours = (lambda: outside_jails(living(self.uid))) if clients_running else (lambda: living(self.uid))
        if self.alive():
            try:
                subprocess.run(self._as_uid([self.binary], namespace=False), env=self._env(), input=b"quit\n",
                               capture_output=True, timeout=COMMAND_TIMEOUT_S, start_new_session=True)
            except (OSError, subprocess.TimeoutExpired):
                pass
            for _ in range(STOP_POLLS):
                if not ours():
                    break
                time.sleep(POLL_S)
        for pid in ours():
            group = _pgid(pid)
            if group is not None and group > 1 and group != os.getpgrp() and not clients_running:
                try:
                    os.killpg(group, signal.SIGKILL)
                except OSError:
                    pass
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if not clients_running:
            reaper.kill_uid(self.uid)
        for _ in range(CHECK_POLLS):
            left = ours()
            if not left:
                return []
            time.sleep(POLL_S)
        return left

    def remove(self) -> None:
        """Its folders gone (the tmpfs unmounted first): only after stop()."""
        if self.mounted:
            sb._umount(str(self.folder))
        remove_tree(self.folder)


_counter = iter(range(1 << 62))


def start(uid: int, gid: int, top: Path, devices: str = "", binary: str | None = None) -> Daemon:
    """A daemon for uid, its folders under top (the grader's scratch). MpsError when it cannot start."""
    binary = binary or find()
    if binary is None:
        raise MpsError(unavailable())
    if living(uid):
        raise MpsError(f"uid {uid} already has processes: its MPS daemon would not be the only thing it runs")
    folder = Path(top) / f"mps-{uid}-{os.getpid()}-{next(_counter)}"
    folder.mkdir(mode=0o711)
    mounted = not sb.mount_tmpfs(folder, QUOTA_BYTES, 0, 0, inodes=INODES) if sb.is_root() else False
    os.chmod(folder, 0o711)
    daemon = Daemon(binary, uid, gid, tuple(sb.gpu_groups()), folder, mounted, devices)
    try:
        daemon.start()
    except BaseException:
        daemon.stop()
        daemon.remove()
        raise
    return daemon
