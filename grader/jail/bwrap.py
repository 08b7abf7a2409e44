"""The jail every untrusted build and run gets: a bubblewrap (`bwrap`) sandbox.

What is in a jail, and nothing else:
- new pid, mount, uts, network, and (where the kernel has them) ipc and cgroup namespaces: the
  program sees its own processes only, no network, no other program's System V memory or POSIX
  queues; a kernel without one of the last two makes the run record say so (`lacking`);
- a seccomp filter (seccomp.py, Docker's default profile as a deny list, handed to bwrap on a
  memfd with --seccomp) over the calls namespaces leave open: kernel keyrings, ptrace, bpf,
  mount, unshare, clone with namespace flags, ...; no filter, no jail (`unavailable`);
- an empty root (read-only) with read-only binds of /usr (compilers, libraries, /usr/local/cuda),
  the top-level /bin, /sbin, /lib* (links on a merged-/usr system), /etc/ld.so.cache and a few
  /etc files a compiler needs (alternatives, ld.so.conf), plus a minimal /etc/passwd and
  /etc/group naming the jail's user (no shadow, no other accounts);
- its own /proc and a minimal /dev (null, zero, random, tty...), the /dev/nvidia* nodes when
  the machine has them;
- the paths its caller names: read-only (its program tree, its input) or writable (its own
  working folder, on a size-capped tmpfs the caller mounted), each at its own host path, so
  the command line needs no rewriting;
- /tmp and /dev/shm: folders of that same capped tmpfs, so all it can write is capped at once.

bwrap runs as root without a user namespace (root needs none, and the program then has a real,
machine-wide uid of its own); it execs `setpriv`, which switches to the jail's uid/gid, keeps
only the GPU device groups, clears every capability (bounding set too) and sets no_new_privs
before it execs the program. bwrap's own options go through a memfd (--args), so the jail's
pid 1 shows no paths in its command line.

Lookup of the binary: $GRADER_BWRAP, then PATH, then .device-tools/bwrap/bwrap in this checkout
(where ../shared/hooks/stage-device-data puts the Debian binary for the offline GPU machine).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.jail import seccomp
from sssp_common.files import REPO_ROOT

ENV_VAR = "GRADER_BWRAP"
CARRIED = REPO_ROOT / ".device-tools" / "bwrap" / "bwrap"
INSTALL = ("install bubblewrap (apt-get install bubblewrap), or copy ../shared/tools/bwrap/bwrap to this "
           f"machine and set {ENV_VAR} to it (or put it on PATH)")
SYSTEM = "/usr"
TOP_LEVEL = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime")
SETPRIV = ("/usr/bin/setpriv", "/bin/setpriv")
NAMESPACES = ("pid", "mount", "ipc", "uts", "net", "cgroup")
NS_FILES = {"pid": "pid", "mount": "mnt", "ipc": "ipc", "uts": "uts", "net": "net", "cgroup": "cgroup"}
MAY_LACK = {"ipc": "this kernel has no IPC namespace: jails share System V IPC objects and POSIX message queues",
            "cgroup": "this kernel has no cgroup namespace: the jail sees the machine's cgroup paths"}
HOME_IN_JAIL = "/tmp"


@dataclass(frozen=True)
class Jail:
    """One jail: who runs in it, and which host paths it holds besides the system's."""
    uid: int
    gid: int
    tmp: str                       # host folder bound on /tmp (on the capped tmpfs)
    shm: str                       # host folder bound on /dev/shm (same tmpfs)
    etc: str                       # host folder holding the jail's passwd, group and hosts
    cwd: str
    read_only: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()
    groups: tuple[int, ...] = ()   # supplementary groups: the GPU device files' only


def find() -> str | None:
    """The bwrap to use, or None. $GRADER_BWRAP wins when set (even if wrong: said so)."""
    chosen = os.environ.get(ENV_VAR)
    if chosen:
        return chosen
    on_path = shutil.which("bwrap")
    if on_path:
        return on_path
    return str(CARRIED) if os.access(CARRIED, os.X_OK) else None


def setpriv() -> str | None:
    return next((path for path in SETPRIV if os.access(path, os.X_OK)), None)


_problem: dict[str, str] = {}


def unavailable() -> str:
    """'' when this machine can make jails; else one line saying why and how to fix it.
    Found out once per process by making a real jail and running /bin/true in it."""
    binary = find()
    key = binary or ""
    if key not in _problem:
        _problem[key] = _why_not(binary)
    return _problem[key]


def _why_not(binary: str | None) -> str:
    if os.geteuid() != 0:
        return "the jail needs the grader to run as root (it gives every student a uid of its own)"
    if binary is None:
        return f"bubblewrap (bwrap) was not found: {INSTALL}"
    if not os.access(binary, os.X_OK):
        return f"{binary} (from ${ENV_VAR} or PATH) is not an executable: {INSTALL}"
    if setpriv() is None:
        return "setpriv (util-linux) was not found in /usr/bin: the jail needs it to switch to the student's uid"
    if why := seccomp.unavailable():
        return f"the jail's seccomp filter cannot be built: {why}"
    with tempfile.TemporaryDirectory(prefix="sssp-jail-probe-") as folder:
        for name in ("tmp", "shm", "etc"):
            os.mkdir(os.path.join(folder, name), 0o700)
        write_etc(os.path.join(folder, "etc"), 65534, 65534, ())
        jail = Jail(65534, 65534, os.path.join(folder, "tmp"), os.path.join(folder, "shm"),
                    os.path.join(folder, "etc"), "/")
        started = Started(binary, jail, ["/bin/true"])
        try:
            done = subprocess.run(started.command, stdin=subprocess.DEVNULL, capture_output=True, timeout=60,
                                  pass_fds=started.fds)
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"{binary} could not be run: {error}; {INSTALL}"
        finally:
            started.close()
    if done.returncode != 0:
        said = (done.stderr.decode("utf-8", "replace").strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return f"{binary} cannot make a jail on this machine ({said})"
    return ""


_versions: dict[str, str] = {}


def version(binary: str) -> str:
    if binary not in _versions:
        try:
            text = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.TimeoutExpired):
            text = ""
        _versions[binary] = text.strip() or "bwrap"
    return _versions[binary]


def write_etc(folder: str, uid: int, gid: int, groups: tuple[int, ...]) -> None:
    """The jail's /etc/passwd, /etc/group and /etc/hosts: root (whose files the jail can read)
    and the student, named so that tools which look their user up (whoami, some compilers) work."""
    passwd = f"root:x:0:0:root:/root:/usr/sbin/nologin\nstudent:x:{uid}:{gid}:student:{HOME_IN_JAIL}:/bin/sh\n"
    group = f"root:x:0:\nstudent:x:{gid}:\n" + "".join(f"device{g}:x:{g}:student\n" for g in groups if g != gid)
    for name, text in (("passwd", passwd), ("group", group), ("hosts", "127.0.0.1\tlocalhost\n::1\tlocalhost\n")):
        path = os.path.join(folder, name)
        with open(path, "w") as handle:
            handle.write(text)
        os.chmod(path, 0o644)


def toolkits_outside_usr() -> list[str]:
    """Where /usr/local/cuda* links lead when that is outside /usr (e.g. /opt/cuda-12.4): the
    link is in the jail with /usr, so its target must be too."""
    found = set()
    for link in Path("/usr/local").glob("cuda*"):
        real = os.path.realpath(link)
        if link.is_symlink() and os.path.isdir(real) and not in_system(real):
            found.add(real)
    return sorted(found)


def gpu_nodes() -> list[str]:
    return sorted(str(path) for path in Path("/dev").glob("nvidia*"))


def in_system(path: str) -> bool:
    """True when the jail already holds path read-only (under /usr or a top-level link to it)."""
    real = os.path.realpath(path)
    return real == SYSTEM or real.startswith(SYSTEM + "/")


def kernel_namespaces() -> set[str]:
    """Which of NAMESPACES this kernel has (bwrap's --unshare-cgroup-try asks the same way)."""
    return {name for name in NAMESPACES if os.path.exists(f"/proc/self/ns/{NS_FILES[name]}")}


def namespaces() -> list[str]:
    """The namespaces a jail gets here: bwrap cannot make one without pid, mount, uts and net."""
    have = kernel_namespaces()
    return [name for name in NAMESPACES if name in have or name not in MAY_LACK]


def lacking() -> dict[str, str]:
    """{namespace: what that means} for those this kernel lacks, for the run record."""
    have = kernel_namespaces()
    return {name: why for name, why in MAY_LACK.items() if name not in have}


def options(jail: Jail, unshare: list[str] | None = None) -> list[str]:
    """bwrap's options for this jail (the order matters: /tmp before what lies below it);
    `unshare`: the namespaces (default: `namespaces()`)."""
    unshare = namespaces() if unshare is None else unshare
    ipc = ["--unshare-ipc"] if "ipc" in unshare else []
    cgroup = ["--unshare-cgroup-try"] if "cgroup" in unshare else []
    args = ["--unshare-pid", *ipc, "--unshare-uts", "--unshare-net", *cgroup,
            "--die-with-parent", "--new-session", "--hostname", "jail", "--ro-bind", SYSTEM, SYSTEM]
    for top in TOP_LEVEL:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for toolkit in toolkits_outside_usr():
        args += [*_parents(toolkit), "--ro-bind", toolkit, toolkit]
    args += ["--dir", "/etc"]
    for name in ETC_FILES:
        if os.path.lexists(f"/etc/{name}"):
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    for name in ("passwd", "group", "hosts"):
        args += ["--ro-bind", os.path.join(jail.etc, name), f"/etc/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev"]
    for node in gpu_nodes():
        args += ["--dev-bind", node, node]
    args += ["--bind", jail.tmp, "/tmp", "--bind", jail.shm, "/dev/shm"]
    for kind, paths in (("--ro-bind", jail.read_only), ("--bind", jail.writable)):
        for path in paths:
            args += [*_parents(path), kind, path, path]
    return args + ["--remount-ro", "/", "--chdir", jail.cwd]


def _parents(path: str) -> list[str]:
    """--dir for the folder a bind lands in: bwrap 0.8 would make missing parents 0700 root,
    which the jail's user could not pass; --dir makes them (and theirs) 0755."""
    parent = os.path.dirname(path.rstrip("/"))
    return [] if parent in ("", "/") or in_system(parent) else ["--dir", parent]


def user_switch(jail: Jail) -> list[str]:
    """setpriv: the jail's uid/gid, the device groups only, no capabilities, no_new_privs."""
    groups = [f"--groups={','.join(str(g) for g in jail.groups)}"] if jail.groups else ["--clear-groups"]
    return [setpriv() or SETPRIV[0], f"--reuid={jail.uid}", f"--regid={jail.gid}", *groups,
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]


class Started:
    """The parent's side of one jail: bwrap's options in a memfd, the seccomp filter in another
    (bwrap reads both to the end and closes them), and a pipe for its status ({"child-pid": ...}
    once the jail is set up, {"exit-code": ...} at the end)."""

    def __init__(self, binary: str, jail: Jail, argv: list[str]):
        self._open: set[int] = set()
        try:
            self.seccomp_fd = seccomp.bwrap_fd()
            self._open.add(self.seccomp_fd)
            self.args_fd = os.memfd_create("bwrap-args", 0)
            self._open.add(self.args_fd)
            self.namespaces, self.lacking = namespaces(), lacking()     # what the run record says
            os.write(self.args_fd, b"".join(arg.encode() + b"\0" for arg in options(jail, self.namespaces)))
            os.lseek(self.args_fd, 0, os.SEEK_SET)
            self.status_read, self.status_write = os.pipe()
            self._open |= {self.status_write, self.status_read}
        except BaseException:
            self.close()
            raise
        self.fds = (self.args_fd, self.seccomp_fd, self.status_write)
        self.command = [binary, "--args", str(self.args_fd), "--seccomp", str(self.seccomp_fd),
                        "--json-status-fd", str(self.status_write), "--", *user_switch(jail), *argv]

    def parent_started(self) -> None:
        """Drop the parent's copies of what only bwrap needs (the status pipe then ends with bwrap).
        Each descriptor is closed once: a number closed twice may by then name another file."""
        for fd in self.fds:
            self._close(fd)

    def status(self) -> dict:
        """What bwrap said; read without blocking (call after the run ended)."""
        if self.status_read not in self._open:
            return {}
        os.set_blocking(self.status_read, False)
        data = b""
        try:
            while chunk := os.read(self.status_read, 65536):
                data += chunk
        except BlockingIOError:
            pass
        found: dict = {}
        for piece in data.decode("utf-8", "replace").replace("}", "}\n").splitlines():
            try:
                found.update(json.loads(piece))
            except json.JSONDecodeError:
                pass
        return found

    def close(self) -> None:
        for fd in list(self._open):
            self._close(fd)

    def _close(self, fd: int) -> None:
        if fd in self._open:
            self._open.discard(fd)
            try:
                os.close(fd)
            except OSError:
                pass


def interpret(code: int | None, status: dict, stderr_head: str, program: str) -> tuple[int | None, str]:
    """(the program's exit code as the grader records it, launch error or '') from bwrap's.

    - no "child-pid": the jail was never set up (bwrap said why on stderr);
    - setpriv's own failure ("setpriv: failed to execute X: ..."): the program never started;
    - 128+N: bwrap (like a shell) folds "killed by signal N" into that exit code; it is read back
      as -N, so a program that itself exits with 128+N reads as killed by N (either way a crash).
    """
    if code is None or code < 0:       # the timeout, or bwrap itself killed (the quota watch, a kill)
        return code, ""
    if "child-pid" not in status:
        said = [line for line in stderr_head.splitlines() if line.startswith("bwrap:")]
        return None, "the jail could not be set up: " + (said[-1] if said else f"bwrap exit code {code}")
    first = stderr_head.splitlines()[0] if stderr_head.strip() else ""
    if first.startswith("setpriv: ") and code in (1, 126, 127):
        if first.startswith("setpriv: failed to execute "):
            what = first[len("setpriv: failed to execute "):]
            return None, f"cannot start {what}" if what.startswith(program) else f"cannot start {program}: {what}"
        return None, f"the jail could not switch to the student's uid: {first}"
    code = status.get("exit-code", code)
    if isinstance(code, int) and 128 < code <= 128 + 64:
        return -(code - 128), ""
    return code, ""
