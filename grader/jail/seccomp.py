"""The seccomp filter every jailed build and run gets (bubblewrap's `--seccomp FD`): the system
calls that namespaces leave open between jails, or that only widen the kernel's attack surface,
fail with EPERM. Modelled on Docker's default profile; built with libseccomp (bound here with
ctypes: the library is on every Debian/Ubuntu machine, apt depends on it, and the offline GPU
machine has no Python binding), never as hand-written BPF.

A deny list over a default of "allow", not Docker's allow list: the jail already drops every
capability and sets no_new_privs, and the filter's job is the calls that need no privilege yet
cross the jail's walls. What is denied (EPERM, so a program sees a clear error, not a kill):
- kernel keyrings: add_key, keyctl, request_key. Keys are not namespaced and outlive the run:
  one student's program published its distances as a key and a classmate's read them (issue 37).
- other processes' memory and state: ptrace, process_vm_readv, process_vm_writev, kcmp,
  pidfd_getfd, process_madvise (Docker allows ptrace on kernels >= 4.8; a graded program never
  needs it, and LeakSanitizer's exit check, which does, is not part of grading).
- namespaces and mounts: unshare, setns, mount, umount2, pivot_root, the new mount API
  (fsopen, fsconfig, fsmount, fspick, move_mount, open_tree, mount_setattr), and clone with any
  CLONE_NEW* flag: the kernel lets an unprivileged user make a user namespace, in which it is
  root, which opens most of the kernel's privileged code to it. clone3 fails with ENOSYS, as in
  Docker's profile: its flags sit in memory a filter cannot read, and glibc (pthread_create, so
  the CUDA driver's threads too) falls back to clone on ENOSYS.
- kernel surface a CUDA program, nvcc, gcc and make never use: bpf, userfaultfd,
  perf_event_open (also a side channel on other jails' timing), io_uring_setup/enter/register
  (Docker denies them since 2023: a steady source of kernel bugs), fanotify_init (watches files
  that other jails share, such as the inputs).
- the machine's administration (already refused without capabilities; denied so the kernel
  never parses the arguments): kexec_load, kexec_file_load, reboot, init_module, finit_module,
  delete_module, create_module, get_kernel_syms, query_module, swapon, swapoff, acct, quotactl,
  quotactl_fd, lookup_dcookie, open_by_handle_at, name_to_handle_at, clock_settime,
  clock_adjtime, settimeofday, iopl, ioperm, syslog, vhangup, nfsservctl, sysfs, _sysctl,
  uselib, ustat.
- personality, except the values Docker allows (0, 8, 0x20000, 0x20008 and the query
  0xffffffff): the others turn off address randomisation or make data executable.
Allowed on purpose (the CUDA driver uses them): ioctl, mmap, mprotect, madvise, mbind,
get/set_mempolicy, move_pages, sched_*, clone without namespace flags, memfd_create, shm*.

Only the native ABI passes: a 32-bit (int 0x80) or x32 call on x86_64 has other numbers, so a
filter that checks only the native ones would let `add_key` through by those doors; libseccomp
sends every call of an architecture not in the filter (x32 included) to the "bad architecture"
action, which kills the process with SIGSYS (EPERM would leave a 32-bit program unable even to
exit, and it would die of SIGSEGV instead).

The BPF program is exported once per process and reused; each jail reads it from a fresh memfd.
Its profile digest (of the definition below, which `describe` records in every run's
protections) changes whenever the list does.
"""
from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import os
from dataclasses import asdict, dataclass

LIBRARY = "libseccomp.so.2"

KEYRINGS = ("add_key", "keyctl", "request_key")
OTHER_PROCESSES = ("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise")
NAMESPACES_AND_MOUNTS = ("unshare", "setns", "mount", "umount2", "pivot_root", "fsopen", "fsconfig", "fsmount",
                         "fspick", "move_mount", "open_tree", "mount_setattr")
KERNEL_SURFACE = ("bpf", "userfaultfd", "perf_event_open", "io_uring_setup", "io_uring_enter",
                  "io_uring_register", "fanotify_init")
ADMINISTRATION = ("kexec_load", "kexec_file_load", "reboot", "init_module", "finit_module", "delete_module",
                  "create_module", "get_kernel_syms", "query_module", "swapon", "swapoff", "acct", "quotactl",
                  "quotactl_fd", "lookup_dcookie", "open_by_handle_at", "name_to_handle_at", "clock_settime",
                  "clock_adjtime", "settimeofday", "iopl", "ioperm", "syslog", "vhangup", "nfsservctl", "sysfs",
                  "_sysctl", "uselib", "ustat")
DENIED = KEYRINGS + OTHER_PROCESSES + NAMESPACES_AND_MOUNTS + KERNEL_SURFACE + ADMINISTRATION
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET (clone's 0x80 is the exit signal's, not NEWTIME)
CLONE_NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
PERSONALITY_ALLOWED = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)
PERSONALITY_BITS = 32          # the kernel reads personality's argument as an unsigned int

# libseccomp's constants (seccomp.h)
ACT_ALLOW = 0x7FFF0000
ACT_KILL_PROCESS = 0x80000000
ATTR_ACT_BADARCH = 2
ATTR_CTL_OPTIMIZE = 8        # 2: the syscall numbers in a binary tree, not a linear chain (libseccomp >= 2.5)
CMP_MASKED_EQ = 7


def ACT_ERRNO(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


@dataclass(frozen=True)
class Profile:
    """What the filter denies: calls (EPERM), clone's namespace flags (EPERM), clone3 (ENOSYS),
    personality outside its allowed values (EPERM); foreign ABIs killed."""
    denied: tuple[str, ...] = DENIED
    clone_flags: tuple[int, ...] = CLONE_NAMESPACE_FLAGS
    clone3_enosys: bool = True
    personality_allowed: tuple[int, ...] | None = PERSONALITY_ALLOWED
    foreign_abi: str = "kill-process"     # or "allow" (the tests' control only)

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:12]


PROFILE = Profile()
NOTHING = Profile(denied=(), clone_flags=(), clone3_enosys=False, personality_allowed=None,    # the tests' control
                  foreign_abi="allow")
FOREIGN_ABI_ACTIONS = {"kill-process": ACT_KILL_PROCESS, "allow": ACT_ALLOW}


class SeccompError(Exception):
    """libseccomp is missing, too old, or refused the profile."""


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint), ("minor", ctypes.c_uint), ("micro", ctypes.c_uint)]


_lib = None


def _library():
    global _lib
    if _lib is None:
        try:
            lib = ctypes.CDLL(LIBRARY, use_errno=True)
        except OSError as error:
            raise SeccompError(f"libseccomp ({LIBRARY}) cannot be loaded: {error}; install libseccomp2 "
                               "(apt-get install libseccomp2)") from None
        lib.seccomp_init.argtypes = [ctypes.c_uint32]
        lib.seccomp_init.restype = ctypes.c_void_p
        lib.seccomp_release.argtypes = [ctypes.c_void_p]
        lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
        lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
        lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                               ctypes.POINTER(_ArgCmp)]
        lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.seccomp_export_pfc.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.seccomp_version.restype = ctypes.POINTER(_Version)
        _lib = lib
    return _lib


def version() -> str:
    got = _library().seccomp_version().contents
    return f"{got.major}.{got.minor}.{got.micro}"


def unknown_here(profile: Profile = PROFILE) -> list[str]:
    """Denied names this libseccomp does not know for this machine's ABI (left out of its filter;
    x86_64 has no umount or stime, say, and an old library lacks the newest calls)."""
    lib = _library()
    return [name for name in profile.denied if lib.seccomp_syscall_resolve_name(name.encode()) < 0]


def build(profile: Profile = PROFILE, form: str = "bpf") -> bytes:
    """The filter as a BPF program for the kernel (form "bpf"), or libseccomp's readable
    pseudo-code of it ("pfc")."""
    lib = _library()
    ctx = lib.seccomp_init(ACT_ALLOW)
    if not ctx:
        raise SeccompError("libseccomp could not start a filter (seccomp_init failed)")
    try:
        _check(lib.seccomp_attr_set(ctx, ATTR_ACT_BADARCH, FOREIGN_ABI_ACTIONS[profile.foreign_abi]),
               "the bad-architecture action")
        lib.seccomp_attr_set(ctx, ATTR_CTL_OPTIMIZE, 2)       # an older library keeps the chain: same verdicts
        for name in profile.denied:
            number = lib.seccomp_syscall_resolve_name(name.encode())
            if number >= 0:
                _rule(lib, ctx, ACT_ERRNO(errno.EPERM), number, (), name)
        clone = lib.seccomp_syscall_resolve_name(b"clone")
        for flag in profile.clone_flags:     # one rule a flag: any of them set is denied
            _rule(lib, ctx, ACT_ERRNO(errno.EPERM), clone, ((0, CMP_MASKED_EQ, flag, flag),), "clone")
        clone3 = lib.seccomp_syscall_resolve_name(b"clone3")
        if profile.clone3_enosys and clone3 >= 0:
            _rule(lib, ctx, ACT_ERRNO(errno.ENOSYS), clone3, (), "clone3")
        if profile.personality_allowed is not None:
            personality = lib.seccomp_syscall_resolve_name(b"personality")
            for mask, value in cubes_outside(profile.personality_allowed, PERSONALITY_BITS):
                _rule(lib, ctx, ACT_ERRNO(errno.EPERM), personality, ((0, CMP_MASKED_EQ, mask, value),), "personality")
        return _export(lib, ctx, form)
    finally:
        lib.seccomp_release(ctx)


def cubes_outside(allowed: tuple[int, ...], width: int) -> list[tuple[int, int]]:
    """(mask, value) pairs such that x's low `width` bits are none of `allowed` exactly when
    (x & mask) == value for one pair: a rule per pair, since libseccomp takes one comparison per
    argument in a rule (no "x not in {a, b}"). The branches of a binary trie of `allowed`, from
    the top bit down, that hold none of its values."""
    cubes: list[tuple[int, int]] = []

    def walk(values: list[int], bit: int, mask: int, prefix: int) -> None:
        for side in (0, 1) if bit >= 0 else ():
            branch = [v for v in values if (v >> bit) & 1 == side]
            if branch:
                walk(branch, bit - 1, mask | 1 << bit, prefix | side << bit)
            else:
                cubes.append((mask | 1 << bit, prefix | side << bit))

    walk(sorted({v & ((1 << width) - 1) for v in allowed}), width - 1, 0, 0)
    return cubes


def _rule(lib, ctx, action: int, number: int, comparisons: tuple, name: str) -> None:
    array = (_ArgCmp * max(1, len(comparisons)))(*(_ArgCmp(*c) for c in comparisons))
    _check(lib.seccomp_rule_add_array(ctx, action, number, len(comparisons), array), f"the rule for {name}")


def _check(code: int, what: str) -> None:
    if code < 0:
        raise SeccompError(f"libseccomp refused {what}: {os.strerror(-code)}")


def _export(lib, ctx, form: str) -> bytes:
    fd = os.memfd_create("seccomp-export", os.MFD_CLOEXEC)
    try:
        exporter = lib.seccomp_export_bpf if form == "bpf" else lib.seccomp_export_pfc
        _check(exporter(ctx, fd), f"exporting the filter ({form})")
        size = os.lseek(fd, 0, os.SEEK_END)
        return os.pread(fd, size, 0)
    finally:
        os.close(fd)


_program: dict[Profile, bytes] = {}
_problem: list[str] = []


def program(profile: Profile = PROFILE) -> bytes:
    """The BPF program, built once per process."""
    if profile not in _program:
        _program[profile] = build(profile)
    return _program[profile]


def unavailable() -> str:
    """'' when the filter can be built here; else one line saying why (bwrap.unavailable says it)."""
    if not _problem:
        try:
            program()
            _problem.append("")
        except SeccompError as error:
            _problem.append(str(error))
    return _problem[0]


def bwrap_fd(profile: Profile = PROFILE) -> int:
    """A fresh memfd holding the program, at offset 0, inheritable (bwrap reads it to the end and
    closes it); the caller closes its own copy once bwrap has started."""
    fd = os.memfd_create("bwrap-seccomp", 0)
    try:
        data = memoryview(program(profile))
        while data:
            data = data[os.write(fd, data):]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


_described: dict[Profile, dict] = {}


def describe(profile: Profile = PROFILE) -> dict:
    """What a run record says of the filter (a fresh copy: records are edited by their callers)."""
    if profile not in _described:
        _described[profile] = {"profile": profile.digest(), "libseccomp": version(), "denied": len(profile.denied),
                               "unknown_here": unknown_here(profile), "foreign_abi": profile.foreign_abi}
    return json.loads(json.dumps(_described[profile]))
