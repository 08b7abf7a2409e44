"""The jail's seccomp filter (grader/jail/seccomp.py): C programs compiled here call what the
filter denies from inside real jails and get EPERM (ENOSYS for clone3, SIGSYS for a foreign
ABI); issue 37's kernel-keyring copier, graded beside its giver, learns nothing and leaves
nothing in the host's keyrings; gcc, make and threads still work under the filter.

Each attack also runs once with the filter emptied (`no_filter`: the same jail, a filter that
denies nothing) and is seen to work there, so every assertion here is known to bite.

Needs root, bubblewrap and gcc. Without a jail these tests skip on a developer's machine and
FAIL in CI (CI=true), as tests/test_jail.py does.
"""
from __future__ import annotations

import ctypes
import errno
import io
import os
import platform
import random
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from grader.jail import bwrap, sandbox, seccomp
from grader.jail.runner import run_program
from grader.jail.sandbox import Sandbox

JAILED = Sandbox(user="always")
X86_64 = platform.machine() == "x86_64"

PROBE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/keyctl.h>

static void *nothing(void *arg) { return arg; }

static long forked(long pid) { if (pid == 0) _exit(0); if (pid > 0) waitpid(pid, NULL, 0); return pid > 0 ? 0 : -1; }

static long int80(long nr, long a, long b, long c) {   /* the i386 ABI's door, open to a 64-bit process */
#ifdef __x86_64__
    long ret;
    __asm__ volatile ("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
    if (ret < 0) { errno = -ret; return -1; }
    return ret;
#else
    errno = ENOSYS; return -1;
#endif
}

static long call(const char *name) {
    if (!strcmp(name, "add_key")) return syscall(SYS_add_key, "user", "sssp-probe", "x", 1, KEY_SPEC_PROCESS_KEYRING);
    if (!strcmp(name, "keyctl")) return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 1);
    if (!strcmp(name, "request_key")) return syscall(SYS_request_key, "user", "sssp-probe", NULL, 0);
    if (!strcmp(name, "ptrace")) return ptrace(PTRACE_TRACEME, 0, NULL, NULL);
    if (!strcmp(name, "process_vm_readv")) return syscall(SYS_process_vm_readv, getpid(), NULL, 0, NULL, 0, 0);
    if (!strcmp(name, "unshare")) return unshare(0);
    if (!strcmp(name, "unshare_user")) return unshare(CLONE_NEWUSER);
    if (!strcmp(name, "clone_newuser")) return forked(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0));
    if (!strcmp(name, "clone3")) return syscall(SYS_clone3, NULL, 0);
    if (!strcmp(name, "mount")) return syscall(SYS_mount, NULL, NULL, NULL, 0, NULL);
    if (!strcmp(name, "umount2")) return syscall(SYS_umount2, NULL, 0);
    if (!strcmp(name, "setns")) return syscall(SYS_setns, -1, 0);
    if (!strcmp(name, "bpf")) return syscall(SYS_bpf, -1, NULL, 0);
    if (!strcmp(name, "userfaultfd")) return syscall(SYS_userfaultfd, 0);
    if (!strcmp(name, "perf_event_open")) return syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0);
    if (!strcmp(name, "personality_noaslr")) return personality(ADDR_NO_RANDOMIZE);
    if (!strcmp(name, "personality_query")) return personality(0xffffffff);
    if (!strcmp(name, "personality_linux")) return personality(PER_LINUX);
    if (!strcmp(name, "fork")) return forked(fork());
    if (!strcmp(name, "pthread")) {
        pthread_t thread;
        int rc = pthread_create(&thread, NULL, nothing, NULL);
        if (rc) { errno = rc; return -1; }
        return pthread_join(thread, NULL);
    }
    if (!strcmp(name, "int80_keyctl")) return int80(288, KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 1);
    if (!strcmp(name, "x32_keyctl")) return syscall(0x40000000 | SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 1);
    errno = EDOM; return -1;
}

int main(int argc, char **argv) {     /* each call in a child of its own: no call changes the next one's world */
    for (int i = 1; i < argc; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            errno = 0;
            long rc = call(argv[i]);
            printf("%s %d\n", argv[i], rc < 0 ? errno : 0);    /* 0: it worked; else the errno */
            fflush(stdout);
            _exit(0);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) < 0) return 1;
        if (WIFSIGNALED(status)) printf("%s -%d\n", argv[i], WTERMSIG(status));   /* killed by that signal */
    }
    return 0;
}
"""

# issue 37's attack: the giver publishes its distances as a key anyone may read; the copier,
# another jail and another uid, finds it in /proc/keys and reads it
GIVER = r"""
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/keyctl.h>
int main(int argc, char **argv) {
    const char *distances = "0 7 3 9 12";
    long id = syscall(SYS_add_key, "user", argv[1], distances, strlen(distances), KEY_SPEC_USER_KEYRING);
    if (id < 0) { printf("add_key %d\n", errno); return 0; }
    long rc = syscall(SYS_keyctl, KEYCTL_SETPERM, id, 0x3f3f3f3f);
    printf("published %ld %d\n", id, rc < 0 ? errno : 0);
    return 0;
}
"""
COPIER = r"""
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/keyctl.h>
int main(int argc, char **argv) {
    long own = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0);
    printf("keyctl %d\n", own < 0 ? errno : 0);
    FILE *keys = fopen("/proc/keys", "r");
    char line[512];
    while (keys && fgets(line, sizeof line, keys)) {
        if (!strstr(line, argv[1])) continue;
        long id = strtol(line, NULL, 16);
        char copied[256] = {0};
        long got = syscall(SYS_keyctl, KEYCTL_READ, id, copied, sizeof copied - 1);
        if (got < 0) printf("read %d\n", errno); else printf("copied %s\n", copied);
        return 0;
    }
    printf("not found\n");
    return 0;
}
"""


@pytest.fixture
def jail():
    why = bwrap.unavailable()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"the jail cannot run on this CI machine: {why}")
        pytest.skip(f"no jail on this machine: {why}")
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")


@pytest.fixture(scope="module")
def programs():
    """The C programs above, compiled into a folder every jail's uid may pass (0755 in /tmp)."""
    folder = Path(tempfile.mkdtemp(prefix="seccomp-probes-"))
    folder.chmod(0o755)
    built = {}
    try:
        for name, source in (("probe", PROBE), ("giver", GIVER), ("copier", COPIER)):
            (folder / f"{name}.c").write_text(source)
            if shutil.which("gcc"):
                subprocess.run(["gcc", "-O1", "-pthread", "-o", str(folder / name), str(folder / f"{name}.c")],
                               check=True, capture_output=True)
            built[name] = str(folder / name)
        yield built
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def no_filter(monkeypatch):
    """The control: the same jail, with a filter that denies nothing."""
    empty = seccomp.build(seccomp.NOTHING)
    monkeypatch.setattr(seccomp, "program", lambda profile=seccomp.PROFILE: empty)


def probe(programs, *calls: str) -> tuple[int | None, dict[str, int], dict]:
    """(exit code, {call: errno or 0}, protections) of one jailed run of the probe."""
    with run_program(lambda out: [programs["probe"], *calls], 30, sandbox=JAILED) as result:
        said = dict(line.split() for line in result.stdout_head.splitlines() if line.count(" ") == 1)
        assert not result.launch_error, result.launch_error
        return result.exit_code, {k: int(v) for k, v in said.items()}, result.protections


DENIED_HERE = {"add_key": errno.EPERM, "keyctl": errno.EPERM, "request_key": errno.EPERM, "ptrace": errno.EPERM,
               "process_vm_readv": errno.EPERM, "unshare": errno.EPERM, "unshare_user": errno.EPERM,
               "clone_newuser": errno.EPERM, "clone3": errno.ENOSYS, "mount": errno.EPERM, "umount2": errno.EPERM,
               "setns": errno.EPERM, "bpf": errno.EPERM, "userfaultfd": errno.EPERM, "perf_event_open": errno.EPERM,
               "personality_noaslr": errno.EPERM}
ALLOWED_HERE = ("personality_query", "personality_linux", "fork", "pthread")


def test_denied_calls_fail_with_eperm_in_the_jail_and_the_record_names_the_profile(jail, programs):
    code, said, protections = probe(programs, *DENIED_HERE, *ALLOWED_HERE)
    assert code == 0
    assert {call: said.get(call) for call in DENIED_HERE} == DENIED_HERE
    assert {call: said.get(call) for call in ALLOWED_HERE} == dict.fromkeys(ALLOWED_HERE, 0)
    assert protections["seccomp"]["profile"] == seccomp.PROFILE.digest()
    assert protections["seccomp"]["denied"] == len(seccomp.DENIED)


# what the kernel itself may refuse an unprivileged process, by a host's sysctl (unprivileged
# user namespaces, bpf, userfaultfd): the control cannot count on those to get through
KERNEL_MAY_REFUSE = {"unshare_user", "clone_newuser", "bpf", "userfaultfd"}


def test_without_the_filter_the_same_calls_get_through(jail, programs, no_filter):
    """The control: what the filter alone stops. Without it the kernel lets an unprivileged
    process trace itself, read its own memory, unshare nothing, use its keyrings and change its
    personality, and answers mount, umount2, setns, clone3, ... with their own argument errors."""
    code, said, _ = probe(programs, *DENIED_HERE, *ALLOWED_HERE)
    assert code == 0
    for call in ("ptrace", "process_vm_readv", "unshare", "keyctl", "add_key", "personality_noaslr"):
        assert said[call] == 0, (call, said)
    assert said["mount"] == said["umount2"] == errno.EFAULT and said["setns"] == errno.EBADF
    assert said["clone3"] == errno.EINVAL and said["request_key"] == errno.ENOKEY
    assert [call for call, denied in DENIED_HERE.items() if call not in KERNEL_MAY_REFUSE and said[call] == denied] == []
    assert {call: said[call] for call in ALLOWED_HERE} == dict.fromkeys(ALLOWED_HERE, 0)


@pytest.mark.skipif(not X86_64, reason="the i386 and x32 doors are x86_64's")
def test_the_32_bit_and_x32_doors_are_shut(jail, programs):
    """keyctl by int 0x80 (i386's number 288) or with the x32 bit: the process is killed (SIGSYS),
    never let through under another number."""
    code, said, _ = probe(programs, "int80_keyctl", "x32_keyctl")
    assert code == 0 and said == {"int80_keyctl": -signal.SIGSYS, "x32_keyctl": -signal.SIGSYS}


@pytest.mark.skipif(not X86_64, reason="the i386 and x32 doors are x86_64's")
def test_without_the_filter_the_32_bit_door_is_not_killed(jail, programs, no_filter):
    """The control: the same calls, no filter: answered (a key id, or ENOSYS where this kernel
    has no i386/x32 emulation), never SIGSYS."""
    code, said, _ = probe(programs, "int80_keyctl", "x32_keyctl")
    assert code == 0 and said["int80_keyctl"] in (0, errno.ENOSYS) and said["x32_keyctl"] in (0, errno.ENOSYS), said


def host_keys() -> tuple[str, dict[int, int]]:
    """What the host's keyrings show the test (root): /proc/keys, and /proc/key-users by uid
    (every uid's count of keys, whoever may view them)."""
    keys = Path("/proc/keys").read_text() if Path("/proc/keys").exists() else ""
    users = {}
    for line in (Path("/proc/key-users").read_text().splitlines() if Path("/proc/key-users").exists() else []):
        uid, _, rest = line.partition(":")          # usage nkeys/nikeys qnkeys/maxkeys qnbytes/maxbytes
        users[int(uid)] = int(rest.split()[1].split("/")[0])
    return keys, users


def keyring_attack(programs, description: str) -> tuple[str, str, list[int]]:
    """Issue 37's attack: the giver (one jail, one uid) publishes its distances as a key anyone
    may read; then the copier (another jail, another uid: the giver's uid slot is still held)
    looks for it. (giver's stdout, copier's stdout, the two uids)."""
    with run_program(lambda out: [programs["giver"], description], 30, sandbox=JAILED) as giver:
        with run_program(lambda out: [programs["copier"], description], 30, sandbox=JAILED) as copier:
            assert giver.exit_code == copier.exit_code == 0, (giver.stderr_tail, copier.stderr_tail)
            uids = [int(run.protections["user"].split()[1]) for run in (giver, copier)]
            return giver.stdout_head, copier.stdout_head, uids


def invalidate(description: str) -> None:
    """Take the attack's key out of the host's keyrings if it got there (the key lets anyone)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for line in host_keys()[0].splitlines():
        if description in line:                                        # KEYCTL_INVALIDATE
            libc.syscall(ctypes.c_long(250 if X86_64 else 219), ctypes.c_long(21), ctypes.c_long(int(line.split()[0], 16)))
    for _ in range(100):            # the kernel's key collector runs in the background
        if description not in host_keys()[0]:
            return
        time.sleep(0.1)


def test_a_key_published_by_one_student_is_never_read_by_another(jail, programs):
    keys_before, users_before = host_keys()
    description = f"sssp-distances-{secrets.token_hex(6)}"
    try:
        giver, copier, uids = keyring_attack(programs, description)
        keys_after, users_after = host_keys()
    finally:
        invalidate(description)
    assert uids[0] != uids[1]
    assert giver.split() == ["add_key", str(errno.EPERM)]
    assert copier.splitlines() == [f"keyctl {errno.EPERM}", "not found"]
    assert description not in keys_after and keys_after.count("\n") <= keys_before.count("\n")
    # no key of either uid came to be (a control's keys may still be on their way out)
    assert all(users_after.get(uid, 0) <= users_before.get(uid, 0) for uid in uids), (users_before, users_after)


def test_without_the_filter_the_copier_reads_the_key(jail, programs, no_filter):
    """The control: the attack works with the filter emptied, and leaves the key in the host's
    keyrings after both jails are gone (it is invalidated here)."""
    description = f"sssp-distances-{secrets.token_hex(6)}"
    try:
        giver, copier, uids = keyring_attack(programs, description)
        outlived = description in host_keys()[0]
    finally:
        invalidate(description)
    assert giver.startswith("published ") and giver.split()[2] == "0"
    assert copier.splitlines() == ["keyctl 0", "copied 0 7 3 9 12"]
    assert outlived and description not in host_keys()[0]


def test_make_and_gcc_build_under_the_filter(jail, tmp_path):
    """A build (grader.grading.build, the graded builds' path): make and gcc run under the
    filter (its log shows the filter in force) and the program built runs under it too."""
    from grader.grading.build import BuildOptions, build
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "sssp.c").write_text('#include <stdio.h>\nint main(void) { puts("built and ran"); return 0; }\n')
    (tree / "Makefile").write_text("sssp: sssp.c\n\tgrep Seccomp: /proc/self/status\n\tgcc -O2 -o sssp sssp.c\n"
                                   "clean:\n\trm -f sssp\n")
    area = sandbox.session_root() / f"build-seccomp-{os.getpid()}"
    area.mkdir(mode=0o711)
    try:
        result = build(tree, area, BuildOptions(timeout_s=120), JAILED)
        assert result.built, result.log
        assert "Seccomp:\t2" in result.log
        assert result.protections["seccomp"]["profile"] == seccomp.PROFILE.digest()
        with run_program(lambda out: [str(result.program)], 30, sandbox=JAILED) as ran:
            assert ran.exit_code == 0 and ran.stdout_head == "built and ran\n", ran.stderr_tail
            assert ran.protections["seccomp"]["profile"] == seccomp.PROFILE.digest()
    finally:
        shutil.rmtree(area, ignore_errors=True)


def test_no_libseccomp_no_jail_and_grade_refuses_in_one_line(tmp_path, monkeypatch):
    """libseccomp missing: bwrap.unavailable says so (the one place), so grade refuses with one
    line naming the library and --unsafe, and grades nothing."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_jail import attacker, jail_config
    from grader.commands import grade
    if os.geteuid() != 0 or bwrap.find() is None:
        pytest.skip("the jail's other needs (root, bwrap) come first")
    for name, value in (("LIBRARY", "libseccomp-not-here.so.9"), ("_lib", None), ("_problem", []), ("_program", {})):
        monkeypatch.setattr(seccomp, name, value)
    monkeypatch.setattr(bwrap, "_problem", {})
    why = bwrap.unavailable()
    assert "libseccomp" in why and "seccomp filter" in why
    subs = attacker(tmp_path / "subs", "nothing")
    err = io.StringIO()
    assert grade.run([subs], out=tmp_path / "out", config=jail_config(tmp_path), quiet=True, methods=["tpe"],
                     shrink=False, err=err) == 2
    said = err.getvalue().strip().splitlines()
    assert len(said) == 1 and "libseccomp" in said[0] and "--unsafe" in said[0]
    assert not (tmp_path / "out" / "nothing").exists()


def test_cubes_outside_cover_exactly_what_is_not_allowed():
    """The personality rule's pieces: x matches a (mask, value) pair iff its low bits are not
    one of the allowed values; checked on every 8-bit value, and around the real set."""
    rng = random.Random(5)
    for _ in range(50):
        allowed = tuple(rng.sample(range(256), rng.randint(0, 6)))
        cubes = seccomp.cubes_outside(allowed, 8)
        for x in range(256):
            assert any(x & mask == value for mask, value in cubes) == (x not in allowed), (allowed, x)
    cubes = seccomp.cubes_outside(seccomp.PERSONALITY_ALLOWED, 32)
    samples = [*seccomp.PERSONALITY_ALLOWED, 0x0040000, 0x0400000, 1, 7, 9, 0x20001, 0xFFFFFFFE, 0x1_0000_0000,
               *(rng.getrandbits(32) for _ in range(2000))]
    for x in samples:
        low = x & 0xFFFFFFFF       # the kernel reads an unsigned int
        assert any(x & mask == value for mask, value in cubes) == (low not in seccomp.PERSONALITY_ALLOWED), hex(x)


def test_the_profile_digest_follows_the_list():
    assert seccomp.PROFILE.digest() == seccomp.Profile().digest()
    assert seccomp.Profile(denied=seccomp.DENIED[1:]).digest() != seccomp.PROFILE.digest()
    assert seccomp.Profile(clone3_enosys=False).digest() != seccomp.PROFILE.digest()
    for required in ("add_key", "keyctl", "request_key", "ptrace", "process_vm_readv", "process_vm_writev", "bpf",
                     "userfaultfd", "perf_event_open", "mount", "umount2", "unshare", "setns", "pivot_root",
                     "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
                     "open_by_handle_at"):
        assert required in seccomp.DENIED
    for needed_by_cuda in ("ioctl", "mmap", "mprotect", "madvise", "mbind", "clone", "memfd_create", "sched_yield",
                           "sched_setaffinity", "shmget", "get_mempolicy", "set_mempolicy"):
        assert needed_by_cuda not in seccomp.DENIED


CUDA_PROBE = r"""
#include <cstdio>
__global__ void answer(int *out) { out[threadIdx.x] = 40 + threadIdx.x; }
int main() {
    int *device = nullptr, host[3] = {0, 0, 0};
    if (cudaMalloc(&device, sizeof host) != cudaSuccess) { std::puts("cudaMalloc failed"); return 1; }
    answer<<<1, 3>>>(device);
    cudaError_t status = cudaMemcpy(host, device, sizeof host, cudaMemcpyDeviceToHost);
    std::printf("cuda %s %d %d %d\n", cudaGetErrorString(status), host[0], host[1], host[2]);
    return status == cudaSuccess ? 0 : 1;
}
"""


@pytest.mark.gpu
def test_nvcc_and_a_cuda_program_work_under_the_filter(jail, tmp_path):
    """On the GPU machine: nvcc builds in the jail under the filter (its log shows the filter in
    force), and the CUDA program it built allocates, launches and copies back under it too."""
    from grader.grading.build import BuildOptions, build
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc):
        pytest.fail("nvcc is not on this GPU machine")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "probe.cu").write_text(CUDA_PROBE)
    (tree / "Makefile").write_text("sssp: probe.cu\n\tgrep Seccomp: /proc/self/status\n\tnvcc -o sssp probe.cu\n"
                                   "clean:\n\trm -f sssp\n")
    area = sandbox.session_root() / f"build-seccomp-cuda-{os.getpid()}"
    area.mkdir(mode=0o711)
    try:
        result = build(tree, area, BuildOptions(nvcc=nvcc, timeout_s=300), JAILED)
        assert result.built, result.log
        assert "Seccomp:\t2" in result.log and result.protections["seccomp"]["profile"] == seccomp.PROFILE.digest()
        with run_program(lambda out: [str(result.program)], 120, sandbox=JAILED) as ran:
            assert ran.exit_code == 0 and ran.stdout_head == "cuda no error 40 41 42\n", (ran.stdout_head, ran.stderr_tail)
            assert any(d.startswith("/dev/nvidia") for d in ran.protections["jail"]["devices"])
            assert ran.protections["seccomp"]["profile"] == seccomp.PROFILE.digest()
    finally:
        shutil.rmtree(area, ignore_errors=True)
