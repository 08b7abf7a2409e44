"""The last step before a program under test starts: run as `python -I -S jail.py SPEC -- ARGV...`.

Why a separate small process rather than a ``preexec_fn``: the grader may run cells from
threads (executors), and Python forbids nontrivial work between fork and exec there. This
script imports only the standard library, applies the sandbox (SPEC is JSON, see
grader/sandbox.py), reports on fd STATUS_FD what took effect, and execs the program, so the
program's pid, process group and session are this process's.

Order matters: cgroups are joined and the network namespace made while still root; the
limits are set next; the user is dropped; the parent-death signal is set last because a
change of credentials clears it.
"""
import ctypes
import json
import os
import resource
import signal
import sys
import time

CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
LIMITS = {"FSIZE": resource.RLIMIT_FSIZE, "NPROC": resource.RLIMIT_NPROC, "NOFILE": resource.RLIMIT_NOFILE,
          "CPU": resource.RLIMIT_CPU, "AS": resource.RLIMIT_AS, "CORE": resource.RLIMIT_CORE}


def main(argv):
    spec = json.loads(argv[1])
    program = argv[3:]
    status_fd = spec.get("status_fd")
    if status_fd is not None:
        os.set_inheritable(status_fd, False)    # closed by a successful exec: the grader reads to EOF
    report = {"applied": [], "failed": {}}
    libc = ctypes.CDLL(None, use_errno=True)

    for path in spec.get("cgroups", []):
        try:
            with open(os.path.join(path, "cgroup.procs"), "w") as handle:
                handle.write(str(os.getpid()))
            report["applied"].append("cgroup:" + path)
        except OSError as error:
            report["failed"]["cgroup:" + path] = str(error)
    if spec.get("netns"):
        if libc.unshare(CLONE_NEWNET) == 0:
            report["applied"].append("netns")
        else:
            report["failed"]["netns"] = os.strerror(ctypes.get_errno())
    for name, value in spec.get("rlimits", {}).items():
        try:
            resource.setrlimit(LIMITS[name], (value, value))
            report["applied"].append("rlimit:" + name)
        except (OSError, ValueError) as error:
            report["failed"]["rlimit:" + name] = str(error)
    executable = _resolve(program[0], spec["env"].get("PATH", ""))
    uid, gid = spec.get("uid"), spec.get("gid")
    if uid is not None:
        try:
            os.setgroups(spec.get("groups", []))   # only GPU device groups, if any
            os.setgid(gid)
            os.setuid(uid)
            report["applied"].append("user")
        except OSError as error:
            # never run as root what was meant to run as the sandbox user
            _finish(status_fd, {**report, "error": f"cannot switch to uid {uid}: {error}"})
            os._exit(126)
    os.umask(spec.get("umask", 0o022))
    parent = os.getppid()
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
        report["applied"].append("pdeathsig")
    if os.getppid() != parent:       # the grader died before the signal was armed
        os._exit(125)
    for name in ("SIGPIPE", "SIGXFSZ", "SIGXFZ"):   # Python ignores these; the program must not inherit that
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    report["exec_at"] = time.monotonic()
    if status_fd is not None:
        os.write(status_fd, (json.dumps(report) + "\n").encode())
    try:
        os.execve(executable, program, spec["env"])
    except OSError as error:
        _finish(status_fd, {"error": f"cannot start {program[0]}: {error.strerror or error}"})
        os._exit(127)


def _resolve(name, path):
    """The program on PATH, looked up now: after the user is dropped Python may not import
    anything more (its library can be in a folder that user cannot read)."""
    if "/" in name:
        return name
    for folder in path.split(":"):
        candidate = os.path.join(folder or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return name


def _finish(status_fd, report):
    if status_fd is not None:
        try:
            os.write(status_fd, (json.dumps(report) + "\n").encode())
        except OSError:
            pass


if __name__ == "__main__":
    main(sys.argv)
