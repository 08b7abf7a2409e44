"""The privilege boundary: which of the grader's steps on what a submission supplied run as
root, which as the student, and how the two meet.

As the student (`run_as`): every step that parses, unpacks or copies a student's bytes (their
upload; their built tree). It runs in a forked child (not a fresh interpreter: the grader's
own may live where the student's uid cannot read, e.g. under /root) that closes every
descriptor but those it is handed, then setgroups([]), setresgid, setresuid to a uid leased
machine-wide from grader.jail.uids, PR_SET_NO_NEW_PRIVS, and limits: address space (its memory
is bounded whatever a header claims), CPU, file size, no new processes. It touches only
modules the grader imported before the fork and writes its answer to a pipe with os.write (no
lock another grader thread may hold at the fork). It works only relative to the descriptors
(the upload, the folder to fill, the tree to copy), never following a link.

As root, and why (each step never follows a link, never chmods through one, and walks by
descriptors, lstat only):
- opening the upload staff named (O_NOFOLLOW, a regular file or refused): the student's uid
  may not read the staff's download folder. For a submission that is a folder, root reads it
  (`stream_folder`: descriptor-relative, regular files, folders and links as links; a special
  file refused) into a tar stream the student's side unpacks: root writes nothing from it;
- making the empty folders the student's side fills, and giving them to that uid;
- taking a filled tree back (`own_tree`: top-down, each entry opened O_NOFOLLOW and changed
  through its descriptor, links lchown'ed only): once a folder is root's, nothing of the uid
  can rename what lies in it, so the tree root later reads (its digest, the build's copy, the
  report) is the one that was checked, frozen;
- removing the grader's work folders (`remove_tree`): descriptor-relative, one descriptor at a
  time, links unlinked and never followed, no chmod at all as root (root needs none);
- reading the frozen tree afterwards (outside this module): its digest (grader.sweep.identity),
  its copy into the build's folder (grader.grading.build, links kept as links), the report's
  PDF found in it (parsed in a limited child, grader.grading.reportpdf), the similarity step's
  sources. Safe because the tree is root's and was checked: files, folders, and links that
  resolve inside it only, within the size and count caps.
A grader that is not root (or a build that keeps the grader's user: --unsafe without a sandbox
user) runs the same child as itself: the descriptor rules still hold, the uid change cannot.
"""
from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import stat
import tarfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from grader.jail import uids

ANSWER_CAP = 1 << 20
NO_FOLLOW_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
DEPTH_MAX = 64
PR_SET_NO_NEW_PRIVS = 38
PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


class Refusal(Exception):
    """What the student's side refused (one line), or why it could not say."""


@contextmanager
def student_ids(base_uid: int) -> Iterator[tuple[int, int] | None]:
    """A (uid, gid) leased for this step alone (base + a machine-wide slot); None when the
    grader is not root (then nothing can be dropped: the child runs as the grader's user)."""
    if os.geteuid() != 0:
        yield None
        return
    with uids.lease() as slot:
        yield base_uid + slot, base_uid + slot


def run_as(ids: tuple[int, int] | None, task: Callable[[dict], dict], request: dict, fds: tuple[int, ...] = (),
           feed=None, memory_mb: int = 512, cpu_s: int = 120, file_bytes: int = 1 << 30,
           timeout_s: float = 600.0) -> tuple[dict, int]:
    """task(request) in a forked child as ids (see the module's docstring), keeping only the
    descriptors fds (and, with feed, the read end of a pipe that feed(writer) fills from a
    thread here: request["feed_fd"]). task returns {"ok": ...} or {"refused": line}.
    Returns (the ok answer, how far the child's peak resident memory rose above what it had
    after the fork, in bytes); Refusal on its refusal, its death or its timeout."""
    answer_read, answer_write = os.pipe()
    feed_read, feed_write = os.pipe() if feed else (-1, -1)
    pid = os.fork()
    if pid == 0:          # the child: nothing here may return into the grader's code
        code = 70
        try:
            request = {**request, "feed_fd": feed_read} if feed else request
            _become(ids, {answer_write, *fds, *([feed_read] if feed else [])}, memory_mb, cpu_s, file_bytes)
            start = _status_kib("VmRSS")
            try:
                answer = task(request)
            except BaseException as error:   # noqa: BLE001 - said in one line, never a traceback
                answer = {"refused": f"the unpacking child failed ({type(error).__name__}: {str(error)[:300]})"}
            grew = max(0, _status_kib("VmHWM") - start) << 10   # its peak above what it started with
            said = json.dumps({**answer, "grew": grew}).encode()
            while said:
                said = said[os.write(answer_write, said[:65536]):]
            code = 0
        finally:
            os._exit(code)
    os.close(answer_write)
    fed: list[BaseException] = []
    feeder = None
    if feed:
        os.close(feed_read)
        writer = os.fdopen(feed_write, "wb")
        feeder = threading.Thread(target=_feed, args=(feed, writer, fed), daemon=True)
        feeder.start()
    late = threading.Event()
    timer = threading.Timer(timeout_s, lambda: (late.set(), _kill(pid)))
    timer.start()
    try:
        said = _read_capped(answer_read, ANSWER_CAP)
        _, status = os.waitpid(pid, 0)
    finally:
        timer.cancel()
        os.close(answer_read)
    if feeder:
        feeder.join()
    if fed and isinstance(fed[0], Refusal):
        raise fed[0]
    try:
        answer = json.loads(said)
    except ValueError:
        how = f"stopped after {timeout_s:g} s" if late.is_set() else \
            f"exit status {os.waitstatus_to_exitcode(status)}"
        raise Refusal(f"the unpacking child ended without an answer ({how})") from None
    if "refused" in answer:
        raise Refusal(answer["refused"])
    return answer["ok"], answer["grew"]


def _become(ids, keep: set[int], memory_mb: int, cpu_s: int, file_bytes: int) -> None:
    """In the forked child: every other descriptor closed; no groups, the student's gid and
    uid (real, effective, saved: root is gone for good, and with it every capability; the
    kernel also makes the process undumpable, so the uid's other processes cannot ptrace it);
    no_new_privs; limits on address space (above what the fork inherited), CPU, file size,
    descriptors and processes."""
    for name in os.listdir("/proc/self/fd"):
        if int(name) not in keep:
            try:
                os.close(int(name))
            except OSError:
                pass
    if ids is not None:
        os.setgroups([])
        os.setresgid(ids[1], ids[1], ids[1])
        os.setresuid(ids[0], ids[0], ids[0])
        if os.getuid() == 0 or os.geteuid() == 0 or os.getgroups():
            raise SystemExit("root was not dropped")
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)    # after the uid change, which clears it
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise SystemExit("no_new_privs could not be set")
    address = (_status_kib("VmSize") << 10) + (memory_mb << 20)
    for limit, value in ((resource.RLIMIT_AS, address), (resource.RLIMIT_CPU, cpu_s),
                         (resource.RLIMIT_FSIZE, file_bytes), (resource.RLIMIT_NPROC, 0), (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(limit, (value, value))


def _status_kib(key: str) -> int:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _read_capped(fd: int, cap: int) -> bytes:
    data = b""
    while chunk := os.read(fd, 65536):
        if len(data) < cap:
            data += chunk
    return data[:cap]


def _feed(feed, writer, errors: list) -> None:
    try:
        feed(writer)
    except BrokenPipeError:
        pass                          # the child stopped reading: it says why
    except (Refusal, OSError, tarfile.TarError) as error:
        errors.append(error if isinstance(error, Refusal) else Refusal(str(error)))
    finally:
        try:
            writer.close()
        except OSError:
            pass


def open_upload(path: Path) -> int:
    """The upload staff named, opened without following a link; a regular file or Refusal."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise Refusal(f"{path.name!r} cannot be opened ({error.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Refusal(f"{path.name!r} is not a regular file")
    return fd


def open_folder(path: Path) -> int:
    return os.open(path, NO_FOLLOW_DIR)


def stream_folder(path: Path, writer, max_files: int, max_bytes: int) -> None:
    """A folder staff named, written as a tar to writer: read by descriptors (each folder
    opened O_NOFOLLOW from its parent's), files opened O_NOFOLLOW|O_NONBLOCK and checked
    regular, links as links; stops with Refusal past max_files entries or max_bytes."""
    archive = tarfile.open(fileobj=writer, mode="w|", format=tarfile.PAX_FORMAT)
    counted = [0, 0]
    top = open_folder(path)
    try:
        _stream(top, "", 0, archive, counted, max_files, max_bytes)
    finally:
        os.close(top)
    archive.close()


def _stream(fd: int, rel: str, depth: int, archive, counted: list, max_files: int, max_bytes: int) -> None:
    if depth > DEPTH_MAX:
        raise Refusal(f"{rel!r} is more than {DEPTH_MAX} folders deep")
    for entry in sorted(os.scandir(fd), key=lambda e: e.name):
        name = f"{rel}/{entry.name}" if rel else entry.name
        info = entry.stat(follow_symlinks=False)
        counted[0] += 1
        if counted[0] > max_files:
            raise Refusal(f"more than {max_files} files (at {name!r})")
        member = tarfile.TarInfo(name)
        member.mtime = int(info.st_mtime)
        if stat.S_ISLNK(info.st_mode):
            member.type, member.linkname = tarfile.SYMTYPE, os.readlink(entry.name, dir_fd=fd)
            archive.addfile(member)
        elif stat.S_ISDIR(info.st_mode):
            member.type, member.mode = tarfile.DIRTYPE, 0o755
            archive.addfile(member)
            inner = os.open(entry.name, NO_FOLLOW_DIR, dir_fd=fd)
            try:
                _stream(inner, name, depth + 1, archive, counted, max_files, max_bytes)
            finally:
                os.close(inner)
        elif stat.S_ISREG(info.st_mode):
            counted[1] += info.st_size
            if counted[1] > max_bytes:
                raise Refusal(f"more than {max_bytes >> 20} MiB unpacked (at {name!r})")
            opened = os.open(entry.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
            with os.fdopen(opened, "rb") as handle:
                now = os.fstat(handle.fileno())
                if not stat.S_ISREG(now.st_mode) or now.st_size != info.st_size:
                    raise Refusal(f"{name!r} changed while it was read")
                member.size, member.mode = info.st_size, 0o755 if info.st_mode & 0o111 else 0o644
                archive.addfile(member, handle)
        else:
            raise Refusal(f"{name!r} is a device, FIFO or other special file")


def own_tree(path: Path, uid: int, gid: int, read_only: bool = False) -> None:
    """Give a tree to uid:gid (read-only: no write bits; folders 0555), top-down: each folder is
    changed before what it holds is listed, so once it is root's its entries stay put. Every
    entry is opened O_NOFOLLOW and changed through its descriptor; a link is lchown'ed only."""
    top = open_folder(path)
    try:
        _own(top, uid, gid, read_only)
        queue = [""]
        while queue:
            rel = queue.pop()
            folder = os.open(rel, NO_FOLLOW_DIR, dir_fd=top) if rel else os.dup(top)
            try:
                for entry in os.scandir(folder):
                    name = f"{rel}/{entry.name}" if rel else entry.name
                    if entry.is_symlink():
                        os.chown(entry.name, uid, gid, dir_fd=folder, follow_symlinks=False)
                        continue
                    try:
                        fd = os.open(entry.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                                     dir_fd=folder)
                    except OSError:
                        continue             # a FIFO without reader and the like: not ours to open
                    try:
                        if _own(fd, uid, gid, read_only):
                            queue.append(name)
                    finally:
                        os.close(fd)
            finally:
                os.close(folder)
    finally:
        os.close(top)


def _own(fd: int, uid: int, gid: int, read_only: bool) -> bool:
    """chown/chmod one entry by descriptor; True when it is a folder."""
    info = os.fstat(fd)
    if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
        return False
    if os.geteuid() == 0:
        os.fchown(fd, uid, gid)
    if read_only:
        runs = stat.S_ISDIR(info.st_mode) or info.st_mode & 0o111
        os.fchmod(fd, 0o555 if runs else 0o444)
    return stat.S_ISDIR(info.st_mode)


def remove_tree(path: Path) -> None:
    """Remove path and everything under it without following a single link: descriptor
    relative, one folder descriptor open at a time (depth costs no descriptors), each step back
    up through '..' checked to be the folder it came from. Root changes no mode; another user
    makes a folder it owns 0700 (through /proc/self/fd, never a path) before emptying it."""
    path = Path(path)
    try:
        parent = os.open(path.parent, NO_FOLLOW_DIR)
    except OSError:
        return
    try:
        try:
            info = os.lstat(path.name, dir_fd=parent)
        except FileNotFoundError:
            return
        if not stat.S_ISDIR(info.st_mode):
            os.unlink(path.name, dir_fd=parent)
            return
        _empty(parent, path.name)
        os.rmdir(path.name, dir_fd=parent)
    except OSError:
        pass                          # what could not be removed stays (the next session's cleanup)
    finally:
        os.close(parent)


def _empty(parent: int, name: str) -> None:
    current = _enter(parent, name)
    stack = [(name, os.fstat(parent), _subfolders(current))]   # (folder's name, its parent's stat, to do)
    try:
        while stack:
            _, _, todo = stack[-1]
            if todo:
                child = todo.pop()
                try:
                    inner = _enter(current, child)
                except OSError:
                    continue
                stack.append((child, os.fstat(current), _subfolders(inner)))
                os.close(current)
                current = inner
                continue
            done, above, _ = stack.pop()
            if not stack:
                break
            up = os.open("..", NO_FOLLOW_DIR, dir_fd=current)
            now = os.fstat(up)
            if (now.st_dev, now.st_ino) != (above.st_dev, above.st_ino):
                os.close(up)
                raise OSError(f"{done!r} moved while it was removed")
            os.close(current)
            current = up
            try:
                os.rmdir(done, dir_fd=current)
            except OSError:
                pass
    finally:
        os.close(current)


def _enter(parent: int, name: str) -> int:
    """A folder opened without following a link; made 0700 first when we are not root."""
    if os.geteuid() != 0:
        handle = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
        try:
            os.chmod(f"/proc/self/fd/{handle}", 0o700)
        except OSError:
            pass
        finally:
            os.close(handle)
    return os.open(name, NO_FOLLOW_DIR, dir_fd=parent)


def _subfolders(fd: int) -> list[str]:
    """Unlink every non-folder (links included: unlinked, never followed); the folders left."""
    folders = []
    for entry in list(os.scandir(fd)):
        if entry.is_dir(follow_symlinks=False):
            folders.append(entry.name)
        else:
            try:
                os.unlink(entry.name, dir_fd=fd)
            except OSError:
                pass
    return folders
