"""The jail's namespaces, observed from inside real jails rather than trusted from bwrap's
options (issue 41, item 2): a jail's /proc/self/ns/* differ from the host's, and two jails
running at once cannot meet through a System V shared memory segment, a POSIX message queue or
an abstract unix socket. Each observation has its control: the same jail with that namespace
dropped (bwrap's option taken out, or the kernel said to lack it) shows the sharing, so every
assertion here is known to bite; and a kernel without an IPC or cgroup namespace makes the run
record say so.

Needs root, bubblewrap and gcc. Without a jail these tests skip on a developer's machine and
FAIL in CI (CI=true), as tests/test_jail.py does.
"""
from __future__ import annotations

import ctypes
import errno
import os
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from grader.jail import bwrap
from grader.jail.runner import run_program
from grader.jail.sandbox import Sandbox

JAILED = Sandbox(user="always")
OBSERVED = ("pid", "mnt", "ipc", "uts", "net", "cgroup")
FLAG_OF = {"pid": "--unshare-pid", "ipc": "--unshare-ipc", "uts": "--unshare-uts", "net": "--unshare-net"}

COMMON = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
static socklen_t abstract(struct sockaddr_un *addr, const char *name) {
    memset(addr, 0, sizeof *addr);
    addr->sun_family = AF_UNIX;
    strncpy(addr->sun_path + 1, name, sizeof addr->sun_path - 2);
    return offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
}
"""
# holder KEY QUEUE SOCKET OUT GATE: makes the three, says so in OUT (whole, by rename), keeps
# them until GATE/open exists (at most 60 s), then removes them
HOLDER = COMMON + r"""
int main(int argc, char **argv) {
    umask(0);
    int shm = shmget((key_t)strtol(argv[1], NULL, 10), 4096, IPC_CREAT | IPC_EXCL | 0666);
    int shm_errno = shm < 0 ? errno : 0;
    mqd_t queue = mq_open(argv[2], O_CREAT | O_EXCL | O_RDWR, 0666, NULL);
    int mq_errno = queue == (mqd_t)-1 ? errno : 0;
    struct sockaddr_un addr;
    socklen_t len = abstract(&addr, argv[3]);
    int sock = socket(AF_UNIX, SOCK_STREAM, 0);
    int sock_errno = (sock < 0 || bind(sock, (struct sockaddr *)&addr, len) || listen(sock, 4)) ? errno : 0;
    char temporary[4096], gate[4096];
    snprintf(temporary, sizeof temporary, "%s.part", argv[4]);
    snprintf(gate, sizeof gate, "%s/open", argv[5]);
    FILE *out = fopen(temporary, "w");
    if (!out) return 2;
    fprintf(out, "shm %d\nmq %d\nsocket %d\n", shm_errno, mq_errno, sock_errno);
    fclose(out);
    rename(temporary, argv[4]);
    for (int i = 0; i < 6000 && access(gate, F_OK) != 0; i++) usleep(10000);
    if (shm >= 0) shmctl(shm, IPC_RMID, NULL);
    if (queue != (mqd_t)-1) { mq_close(queue); mq_unlink(argv[2]); }
    return 0;
}
"""
# seeker KEY QUEUE SOCKET: looks for the holder's three (0: found; else the errno)
SEEKER = COMMON + r"""
int main(int argc, char **argv) {
    int shm = shmget((key_t)strtol(argv[1], NULL, 10), 0, 0);
    printf("shm %d\n", shm < 0 ? errno : 0);
    mqd_t queue = mq_open(argv[2], O_RDONLY);
    printf("mq %d\n", queue == (mqd_t)-1 ? errno : 0);
    struct sockaddr_un addr;
    socklen_t len = abstract(&addr, argv[3]);
    int sock = socket(AF_UNIX, SOCK_STREAM, 0);
    printf("socket %d\n", (sock < 0 || connect(sock, (struct sockaddr *)&addr, len)) ? errno : 0);
    return 0;
}
"""
APART = {"shm": errno.ENOENT, "mq": errno.ENOENT, "socket": errno.ECONNREFUSED}


@pytest.fixture(autouse=True)
def jail():
    why = bwrap.unavailable()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"the jail cannot run on this CI machine: {why}")
        pytest.skip(f"no jail on this machine: {why}")


@pytest.fixture(scope="module")
def programs():
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    folder = Path(tempfile.mkdtemp(prefix="isolation-probes-"))
    folder.chmod(0o755)
    try:
        for name, source in (("holder", HOLDER), ("seeker", SEEKER)):
            (folder / f"{name}.c").write_text(source)
            subprocess.run(["gcc", "-O1", "-o", str(folder / name), str(folder / f"{name}.c"), "-lrt"],
                           check=True, capture_output=True)
        yield {name: str(folder / name) for name in ("holder", "seeker")}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def without(monkeypatch, flag: str) -> None:
    """The control: every jail made from here on lacks bwrap's `flag` (and, for the uts
    namespace, the --hostname that needs it)."""
    real = bwrap.options

    def options(jail, unshare=None):
        args = real(jail, unshare)
        if flag == "--unshare-uts":
            at = args.index("--hostname")
            del args[at:at + 2]
        return [arg for arg in args if arg != flag]
    monkeypatch.setattr(bwrap, "options", options)


def host_namespaces() -> dict[str, str]:
    return {name: os.readlink(f"/proc/self/ns/{name}") for name in OBSERVED if os.path.exists(f"/proc/self/ns/{name}")}


def jail_namespaces() -> tuple[dict[str, str], dict]:
    script = "for n in " + " ".join(OBSERVED) + "; do [ -e /proc/self/ns/$n ] && echo \"$n $(readlink /proc/self/ns/$n)\"; done"
    with run_program(lambda out: ["/bin/sh", "-c", script], 30, sandbox=JAILED) as result:
        assert result.exit_code == 0, result.stderr_tail
        return dict(line.split(" ", 1) for line in result.stdout_head.splitlines()), result.protections


def test_a_jail_has_namespaces_of_its_own():
    host = host_namespaces()
    inside, protections = jail_namespaces()
    assert set(inside) == set(host)
    assert [name for name in ("pid", "mnt", "ipc", "uts", "net") if inside[name] == host[name]] == []
    if "cgroup" in host:
        assert inside["cgroup"] != host["cgroup"]
        assert "cgroup" in protections["jail"]["namespaces"]
    assert not [key for key in protections["not_in_force"] if key.endswith("namespace")]


@pytest.mark.parametrize("name", sorted(FLAG_OF))
def test_the_observation_sees_a_namespace_dropped(monkeypatch, name):
    """The control of the test above: without bwrap's option, the jail's link is the host's."""
    without(monkeypatch, FLAG_OF[name])
    inside, _ = jail_namespaces()
    assert inside[name] == host_namespaces()[name]


def meet(programs) -> tuple[dict[str, int], dict[str, int], dict]:
    """The holder in one jail, and while it holds, the seeker in another: (what the holder
    made, what the seeker found, the seeker's protections); 0 is success, else an errno."""
    token = secrets.token_hex(6)
    key, queue, sock = str(0x5e000000 + secrets.randbelow(1 << 24)), f"/sssp-isolation-{token}", f"sssp-isolation-{token}"
    gate = Path(tempfile.mkdtemp(prefix="isolation-gate-"))
    gate.chmod(0o755)
    ready: list[Path] = []
    held: dict = {}

    def hold():
        def argv(out: Path) -> list[str]:
            ready.append(out)
            return [programs["holder"], key, queue, sock, str(out), str(gate)]
        try:
            with run_program(argv, 90, sandbox=JAILED) as result:
                held["code"], held["stderr"] = result.exit_code, result.stderr_tail
        except BaseException as error:      # re-raised in the test's thread
            held["error"] = error

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        deadline = time.monotonic() + 60
        while not (ready and ready[0].exists()) and holder.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ready and ready[0].exists(), f"the holder never got ready: {held}"
        made = {k: int(v) for k, v in (line.split() for line in ready[0].read_text().splitlines())}
        with run_program(lambda out: [programs["seeker"], key, queue, sock], 30, sandbox=JAILED) as seeker:
            assert seeker.exit_code == 0, seeker.stderr_tail
            found = {k: int(v) for k, v in (line.split() for line in seeker.stdout_head.splitlines())}
            protections = seeker.protections
    finally:
        (gate / "open").touch()
        holder.join(120)
        shutil.rmtree(gate, ignore_errors=True)
        _remove_from_host(int(key), queue)
    if "error" in held:
        raise held["error"]
    assert held.get("code") == 0, held
    return made, found, protections


def _remove_from_host(key: int, queue: str) -> None:
    """What a control's holder made in the host's namespaces, if it is still there."""
    libc = ctypes.CDLL(None, use_errno=True)
    shm = libc.shmget(ctypes.c_int(key), ctypes.c_size_t(0), ctypes.c_int(0))
    if shm >= 0:
        libc.shmctl(shm, 0, None)          # IPC_RMID
    libc.mq_unlink(queue.encode())


def test_two_jails_at_once_share_no_ipc_queue_or_abstract_socket(programs):
    made, found, _ = meet(programs)
    assert made == {"shm": 0, "mq": 0, "socket": 0}
    assert found == APART


def test_without_the_ipc_namespace_jails_share_and_the_record_says_so(programs, monkeypatch):
    """The control for System V memory and POSIX queues, through the path a kernel without IPC
    namespaces takes: the jails then meet, and the run record says that namespace is missing."""
    monkeypatch.setattr(bwrap, "kernel_namespaces", lambda: set(bwrap.NAMESPACES) - {"ipc", "cgroup"})
    made, found, protections = meet(programs)
    assert made == {"shm": 0, "mq": 0, "socket": 0}
    assert found == {"shm": 0, "mq": 0, "socket": errno.ECONNREFUSED}
    assert "ipc" not in protections["jail"]["namespaces"] and "cgroup" not in protections["jail"]["namespaces"]
    assert "System V" in protections["not_in_force"]["ipc namespace"]
    assert "cgroup" in protections["not_in_force"]["cgroup namespace"]


def test_without_the_network_namespace_an_abstract_socket_is_shared(programs, monkeypatch):
    """The control for abstract unix sockets: they belong to the network namespace."""
    without(monkeypatch, "--unshare-net")
    made, found, _ = meet(programs)
    assert made == {"shm": 0, "mq": 0, "socket": 0}
    assert found == {"shm": errno.ENOENT, "mq": errno.ENOENT, "socket": 0}
