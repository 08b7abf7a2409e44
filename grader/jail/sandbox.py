"""Isolation of every program run and build: who it runs as, what it sees, what it may use,
and that nothing of it outlives the run.

- **the jail**: a run or build that switches user (grade's always; a sweep's `--program` when
  it can) happens in a bubblewrap jail (bwrap.py: its own namespaces, an empty read-only root
  with /usr, its program and input read-only, its folder, /tmp and /dev/shm on one capped
  tmpfs) as a uid leased for that jail alone (uids.py). `jail=False` is `grade --unsafe`: what
  follows, without the jail.
- **user**: when the grader is root, a dedicated unprivileged uid/gid (64123 + a slot, no
  /etc/passwd entry needed, so nothing on the machine is changed) that owns nothing but the
  run's own folder: the references, results and caches (root's, folders 0700) are out of its
  reach, and the inputs and the built program are root's and read-only to it. Outside a jail,
  each grader or worker process claims its own slot (machine-wide) for its whole life.
- **environment**: scrubbed (PATH, HOME and TMPDIR in the run's folder, LANG/LC_ALL C.UTF-8,
  CUDA_VISIBLE_DEVICES/NVIDIA_VISIBLE_DEVICES and the names in ``pass_env`` passed through).
- **network**: a new, empty network namespace (only an unconnected loopback).
- **limits**: RLIMIT_FSIZE (one file), NPROC, NOFILE, CPU, CORE=0; memory by a cgroup limit
  (an address-space limit breaks CUDA, which reserves tens of GiB of address space: RLIMIT_AS
  is only set when ``address_space_gb`` asks, and never below 16 GiB); total temporary space by
  a size-limited tmpfs (the jail's, or one mounted on the run's folder).
- **every descendant killed** after every run, normal exit included: the process group, the
  run's cgroup (a `setsid` grandchild too) and, without cgroups, every process of the uid (in a
  jail, its pid namespace dies with the program too); PR_SET_PDEATHSIG kills the program (or
  bwrap, and with it the jail) if the grader dies, and `cleanup_stale` removes what a killed
  grader left (groups, mounts, folders) when the next one starts.

What took effect is returned per run (`protections`) and goes into the run record.
"""
from __future__ import annotations

import atexit
import ctypes
import json
import multiprocessing.util
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.jail import bwrap, cgroups, reaper, seccomp, uids

JAIL = Path(__file__).with_name("child.py")
DEFAULT_UID = 64123
GIB = 1 << 30
MIB = 1 << 20
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
ALWAYS_PASSED = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")
SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "KEY", "COOKIE", "SESSION")
MS_NOSUID, MS_NODEV, MNT_DETACH = 2, 4, 2
PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True)
class Sandbox:
    """How runs are isolated (picklable: executors send it to workers)."""
    uid: int = DEFAULT_UID
    gid: int = DEFAULT_UID
    user: str = "auto"               # auto: the uid when root if it can reach the program; always; never
    env: str = "scrubbed"            # scrubbed | inherit (the grader's minus secret-looking names)
    pass_env: tuple[str, ...] = ()
    netns: bool = True
    cgroup: bool = True
    tmpfs: bool = True
    temp_quota_mb: int = 1024
    file_size_mb: int = 1024
    nproc: int = 1024
    nofile: int = 1024
    cpu_s: int | None = None         # None: the timeout x max(4, cores) + 10 s
    memory_mb: int = 16384           # cgroup memory limit (0: none)
    address_space_gb: int = 0        # RLIMIT_AS (0: none; at least 16 when set)
    extra_path: tuple[str, ...] = () # folders put before SAFE_PATH (e.g. the CUDA compiler's)
    note: str = ""                   # why the user is not switched, when user = never (recorded)
    jail: bool = True                # a run that switches user does it in a bwrap jail (False: --unsafe)
    mps: object = None               # grader.jail.mps.Client: run as that MPS daemon's client, as its uid

    def with_worker(self, worker: int) -> "Sandbox":
        from dataclasses import replace
        return replace(self, uid=self.uid + worker, gid=self.gid + worker)


SLOTS = uids.SLOTS


def effective(sandbox: "Sandbox") -> "Sandbox":
    """The settings with this process's own uid/gid: its slot, claimed machine-wide (uids.py),
    so concurrent graders and executor workers never share a uid."""
    offset = uids.claimed_slot() if is_root() else 0
    return sandbox.with_worker(offset) if offset else sandbox


@dataclass
class Outcome:
    exit_code: int | None            # None: killed by the timeout or never started
    wall_s: float
    launch_error: str = ""
    protections: dict = field(default_factory=dict)
    leftovers: int = 0               # descendants still alive at the end, killed


def is_root() -> bool:
    return os.geteuid() == 0


# --- the session folder ------------------------------------------------------------

def grader_root(base: Path | None = None) -> Path:
    """/tmp/sssp-grader (0711, the grader's): refused if someone else made it, or made it a link."""
    top = Path(base or tempfile.gettempdir()) / ("sssp-grader" if is_root() else f"sssp-grader-{os.getuid()}")
    top.mkdir(mode=0o711, exist_ok=True)
    info = os.lstat(top)
    if not os.path.isdir(top) or os.path.islink(top) or info.st_uid != os.geteuid():
        raise OSError(f"{top} is not a folder of this user's: refusing to run programs from it")
    os.chmod(top, 0o711)
    return top


def shared_inputs(base: Path | None = None) -> Path:
    """Where runs find their inputs: one stable folder (0755, files 0444), so a program's own
    parse cache keyed by path keeps hitting across grader sessions."""
    folder = grader_root(base) / "inputs"
    folder.mkdir(mode=0o755, exist_ok=True)
    return folder


def session_root(base: Path | None = None) -> Path:
    """A folder of this grader process (0711: the sandbox user may pass, not list), created
    on first use after removing what dead graders left."""
    top = grader_root(base)
    mine = top / f"{os.getpid()}"
    if not mine.is_dir():
        # orphaned descendants (a setsid grandchild) come to us, so their zombies can be reaped
        _lib().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        cleanup_stale(top)
        mine.mkdir(mode=0o711, exist_ok=True)
        os.chmod(mine, 0o711)
        owner = os.getpid()
        atexit.register(lambda: os.getpid() == owner and _remove_session(mine))
        # a pool worker never runs atexit: it leaves by os._exit, after multiprocessing's finalizers
        multiprocessing.util.Finalize(None, end_session, exitpriority=0)
    return mine


def end_session() -> None:
    """Remove this process's session folder now, if it made one: for a process about to
    leave by os._exit (a grader's worker stopped or orphaned), where atexit does not run."""
    mine = Path(tempfile.gettempdir()) / ("sssp-grader" if is_root() else f"sssp-grader-{os.getuid()}") / str(os.getpid())
    if mine.is_dir():
        _remove_session(mine)


def _remove_session(folder: Path) -> None:
    for mount in reversed(mounts_under(folder)):
        _umount(mount)
    shutil.rmtree(folder, ignore_errors=True)


def cleanup_stale(top: Path) -> None:
    """Groups, mounts and folders of graders that died without cleaning up."""
    cgroups.cleanup_stale()
    for folder in top.iterdir() if top.is_dir() else ():
        if folder.name.isdigit() and not cgroups._pid_alive(int(folder.name)):
            _remove_session(folder)


def mounts_under(folder: Path) -> list[str]:
    prefix = str(folder).rstrip("/") + "/"
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return []
    return [line.split()[1] for line in lines if len(line.split()) > 1 and line.split()[1].startswith(prefix)]


_libc = None


def _lib():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def mount_tmpfs(target: Path, size_bytes: int, uid: int, gid: int, inodes: int = 0) -> str:
    """'' on success, else why not. inodes: at most that many files, folders and links (0: tmpfs's default)."""
    options = (f"size={max(size_bytes, MIB)},mode=0700,uid={uid},gid={gid}" + (f",nr_inodes={inodes}" if inodes else "")).encode()
    if _lib().mount(b"tmpfs", str(target).encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options) != 0:
        return os.strerror(ctypes.get_errno())
    return ""


def _umount(target: str) -> None:
    _lib().umount2(str(target).encode(), MNT_DETACH)


# --- who runs it -------------------------------------------------------------------

_reach_memo: dict = {}


def user_can_reach(paths: list[str], sandbox: Sandbox) -> str:
    """'' when the sandbox uid can read (and the first, run) every path; else the first it cannot.
    Probed by running `test` as that uid (permissions, ACLs and every folder on the way count);
    remembered per process."""
    key = (tuple(paths), sandbox.uid, sandbox.gid)
    if key not in _reach_memo:
        _reach_memo[key] = _probe_reach(paths, sandbox)
    return _reach_memo[key]


def _probe_reach(paths: list[str], sandbox: Sandbox) -> str:
    for index, path in enumerate(paths):
        test = "-x" if index == 0 else "-r"
        spec = {"uid": sandbox.uid, "gid": sandbox.gid, "env": {"PATH": SAFE_PATH}}
        done = subprocess.run([sys.executable, "-I", "-S", str(JAIL), json.dumps(spec), "--",
                               "/bin/sh", "-c", f'test {test} "$1"', "_", path],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        if done.returncode != 0:
            return path
    return ""


def environment(sandbox: Sandbox, home: Path, dropped: bool) -> dict[str, str]:
    """Scrubbed; or the grader's own minus secret-looking names where the settings say
    `inherit`, or where a sweep runs a program as the grader's user (user = auto, not dropped:
    a program staff chose, which may need its caches under HOME)."""
    if sandbox.env == "inherit" or (sandbox.user == "auto" and not dropped):
        return {k: v for k, v in os.environ.items() if not any(word in k.upper() for word in SECRET_WORDS)}
    env = {"PATH": ":".join([*sandbox.extra_path, SAFE_PATH]), "HOME": str(home), "TMPDIR": str(home),
           "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    for name in (*ALWAYS_PASSED, *sandbox.pass_env):
        if name in os.environ:
            env[name] = os.environ[name]
    if sandbox.mps is not None:      # the student's MPS daemon: its pipe and log folders (and its devices)
        env.update(sandbox.mps.env())
    return env


def should_drop(sandbox: Sandbox, reach_paths: list[str]) -> tuple[bool, str]:
    """(run as the sandbox uid?, why not). `always` never falls back; `auto` does when the
    uid cannot reach the program (a Python under /root), saying so."""
    if sandbox.user == "never":
        return False, "off in the settings"
    if not is_root():
        return False, "the grader is not root"
    if sandbox.user == "auto":
        blocked = user_can_reach(reach_paths, sandbox)
        if blocked:
            return False, f"the sandbox uid {sandbox.uid} cannot reach {blocked}"
    return True, ""


# --- one run -----------------------------------------------------------------------

_counter = iter(range(1 << 62))


def launch(argv: list[str], workdir: Path, stdout_path: Path, stderr_path: Path, timeout_s: float,
           sandbox: Sandbox, *, file_limit_bytes: int, drop_user: bool, env: dict,
           why_not_dropped: str = "", watch_quota: tuple[Path, int] | None = None,
           jail: bwrap.Jail | None = None) -> Outcome:
    """Run argv in workdir under the sandbox; kill everything it started; say what held.
    With `jail`, argv runs inside that bwrap jail as the jail's uid (child.py still joins the
    cgroups and sets the limits, as root, before it execs bwrap); drop_user is then implied."""
    drop_user = drop_user or jail is not None
    uid = jail.uid if jail is not None else (sandbox.uid if drop_user else None)
    if sandbox.mps is not None and jail is not None:
        uid = None    # the uid is the student's for their turn (their MPS daemon, their other runs): the
                      # jail's pid namespace and the run's cgroup end this run's processes, not the uid's
    protections = {"jail": None, "seccomp": None, "user": None, "netns": False, "cgroup": [], "rlimits": {}, "pdeathsig": False,
                   "env": "scrubbed" if env.get("HOME", "").startswith(str(workdir.parent)) else "inherited",
                   "not_in_force": {}}
    # a backstop behind the wall-clock timeout: every core busy for the whole timeout, and then some
    cpu = sandbox.cpu_s if sandbox.cpu_s is not None else int(timeout_s * max(4, os.cpu_count() or 1) + 10)
    rlimits = {"FSIZE": int(file_limit_bytes), "NOFILE": sandbox.nofile, "CPU": int(cpu), "CORE": 0}
    if drop_user:
        rlimits["NPROC"] = sandbox.nproc     # per uid: only meaningful for a uid of its own
    if sandbox.address_space_gb:
        rlimits["AS"] = max(16, sandbox.address_space_gb) * GIB
    group = None
    if sandbox.cgroup and is_root():
        group = cgroups.RunGroup(f"{os.getpid()}-{next(_counter)}", sandbox.nproc,
                                 sandbox.memory_mb * MIB if sandbox.memory_mb else None)
        protections["not_in_force"].update(group.failed)
        if not group.paths:           # no cgroup here: descendants are found by uid instead
            protections["not_in_force"].setdefault("cgroup", "no writable cgroup hierarchy")
            group = None
    binary = bwrap.find() if jail is not None else None
    if jail is not None and binary is None:       # it was there when the jail was decided on
        if group is not None:
            group.remove()
        raise OSError(f"bubblewrap (bwrap) is gone: {bwrap.INSTALL}")
    inner = bwrap.Started(binary, jail, argv) if jail is not None else None
    read_end, write_end = os.pipe()
    switch = drop_user and jail is None
    spec = {"status_fd": write_end, "env": env, "rlimits": rlimits,
            "netns": bool(sandbox.netns and is_root() and jail is None),
            "cgroups": group.paths if group else [], "uid": sandbox.uid if switch else None,
            "gid": sandbox.gid if switch else None, "groups": gpu_groups() if switch else []}
    command = [sys.executable, "-I", "-S", str(JAIL), json.dumps(spec), "--", *(inner.command if inner else argv)]
    start = time.monotonic()
    try:
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            try:
                process = subprocess.Popen(command, cwd=workdir, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                           env=env, start_new_session=True,
                                           pass_fds=(write_end, *(inner.fds if inner else ())))
            finally:
                os.close(write_end)
                if inner:
                    inner.parent_started()
            report = _read_status(read_end)
            started = report.get("exec_at", start)
            try:
                code = _wait(process, started + timeout_s, watch_quota)
                wall = time.monotonic() - started
            except subprocess.TimeoutExpired:
                wall = time.monotonic() - started
                code = None
            except QuotaExceeded as exceeded:
                wall = time.monotonic() - started
                code = -signal.SIGKILL
                protections["quota_exceeded"] = str(exceeded)
            except BaseException:
                reaper.kill_all(process, group, uid)
                raise
    except BaseException:
        if inner:
            inner.close()
        raise
    finally:
        os.close(read_end)
    leftovers = reaper.kill_all(process, group, uid)
    if code in (126, 127) and "error" in report:
        if inner:
            inner.close()
        return Outcome(None, wall, report["error"], _describe(protections, report, rlimits, drop_user, sandbox, why_not_dropped), leftovers)
    launch_error = ""
    if inner:
        try:
            code, launch_error = bwrap.interpret(code, inner.status(), read_head_text(stderr_path), argv[0] if argv else "")
        finally:
            inner.close()
        _describe_jail(protections, jail, binary, launch_error, inner)
    described = _describe(protections, report, rlimits, drop_user, sandbox, why_not_dropped)
    return Outcome(code, wall, launch_error, described, leftovers)


def read_head_text(path: Path, limit: int = 4096) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


def _describe_jail(protections: dict, jail: bwrap.Jail, binary: str, launch_error: str, inner: bwrap.Started) -> None:
    """What a jail gave, in the record: namespaces (and those this kernel lacks), the seccomp
    profile, the binds, the uid."""
    if launch_error.startswith("the jail could not"):
        protections["not_in_force"]["jail"] = launch_error
        return
    protections["seccomp"] = seccomp.describe()
    for name, why in inner.lacking.items():
        protections["not_in_force"][f"{name} namespace"] = why
    protections["jail"] = {
        "bwrap": bwrap.version(binary), "binary": binary, "namespaces": inner.namespaces,
        "read_only": list(jail.read_only), "writable": list(jail.writable),
        "devices": bwrap.gpu_nodes(), "uid": jail.uid,
    }


class QuotaExceeded(Exception):
    """The run's folder outgrew its quota (watched where no tmpfs could be mounted)."""


def _wait(process, deadline: float, watch_quota: tuple[Path, int] | None) -> int:
    """Wait for the program, woken the moment it exits (a pidfd where the kernel has them:
    Popen.wait's polling sleeps up to 50 ms, which would land in every run's wall time).
    With watch_quota=(folder, bytes), measure the folder every 0.25 s and stop the run when it
    passes the quota (the fallback where no tmpfs can be mounted)."""
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):
        pidfd = None
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise subprocess.TimeoutExpired(process.args, 0)
            step = remaining if watch_quota is None else min(0.25, remaining)
            if pidfd is not None:
                if select.select([pidfd], [], [], step)[0]:
                    return process.wait()
            else:
                try:
                    return process.wait(timeout=step)
                except subprocess.TimeoutExpired:
                    pass
            if watch_quota is not None:
                folder, quota = watch_quota
                used = folder_bytes(folder)
                if used > quota:
                    raise QuotaExceeded(f"temporary files passed {quota >> 20} MiB ({used >> 20} MiB): stopped")
    finally:
        if pidfd is not None:
            os.close(pidfd)


def folder_bytes(folder: Path) -> int:
    """Bytes allocated under folder (st_blocks: a sparse file counts what it uses)."""
    total = 0
    for root, dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    return total


def gpu_groups() -> list[int]:
    """Groups owning GPU device files the sandbox user could not otherwise open (a machine
    with /dev/nvidia* 0660 root:video): kept as supplementary groups, nothing else."""
    found = set()
    for path in Path("/dev").glob("nvidia*"):
        try:
            info = path.stat()
        except OSError:
            continue
        if info.st_mode & 0o006 != 0o006 and info.st_gid != 0:
            found.add(info.st_gid)
    return sorted(found)


def _read_status(fd: int) -> dict:
    data = b""
    while chunk := os.read(fd, 65536):
        data += chunk
    report: dict = {}
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            report.update(json.loads(line))
        except json.JSONDecodeError:
            pass
    return report


def _describe(protections, report, rlimits, drop_user, sandbox, why_not_dropped) -> dict:
    applied = set(report.get("applied", []))
    failed = report.get("failed", {})
    jailed = protections.get("jail")
    if jailed:
        applied |= {"user", "netns"}     # setpriv and bwrap did these, inside the jail
    uid = jailed["uid"] if jailed else sandbox.uid
    protections["user"] = f"uid {uid}" if "user" in applied else f"uid {os.geteuid()} (the grader's)"
    protections["netns"] = "netns" in applied
    protections["cgroup"] = sorted(a.split(":", 1)[1] for a in applied if a.startswith("cgroup:"))
    protections["rlimits"] = {k: v for k, v in rlimits.items() if f"rlimit:{k}" in applied}
    protections["pdeathsig"] = "pdeathsig" in applied
    protections["not_in_force"].update(failed)
    if not drop_user:
        protections["not_in_force"]["user"] = why_not_dropped or "not asked"
    if not protections["netns"] and "netns" not in failed:
        protections["not_in_force"]["netns"] = "needs root" if not is_root() else "off in the settings"
    return protections
