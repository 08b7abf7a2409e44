"""Run one program under test in the sandbox (sandbox.py), in a bubblewrap jail (bwrap.py)
whenever it switches user: own folder on a size-limited tmpfs, scrubbed environment, own uid
when root, limits, and nothing left running afterwards.

Why so careful: the program may hang, fork, print gigabytes, write without end, or try to
reach the grader's files; none of that may stop, swamp or corrupt the sweep. stdout and
stderr go to files the program cannot see (no pipe can fill up); only the head and the tail
of each are read back; the output file is opened without following links and refused past
a size the caller sets (check.py does that).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator

from grader.jail import bwrap, sandbox as sb, uids

STDOUT_HEAD_BYTES = 64 * 1024
STDOUT_TAIL_BYTES = 64 * 1024
STDERR_TAIL_BYTES = 8 * 1024
STDERR_HEAD_BYTES = 4 * 1024     # its first lines: where a program names the cause (`unknown method`)
# Between head and tail only the lines that could carry a figure are kept: a chatty program
# may print its timing lines anywhere (after a self-check's megabytes of "Correct: ..." lines).
MIDDLE_SCAN_BYTES = 256 << 20
MIDDLE_KEEP_BYTES = 64 * 1024
MIDDLE_CHUNK = 1 << 20
_FIGURE_WORDS = (b"time", b"took", b"round", b"edge", b"milli", b"ms")  # searched in lowercased bytes
DEFAULT_FILE_LIMIT = 1 << 30


@dataclass(frozen=True)
class RunResult:
    argv: list[str]
    exit_code: int | None        # None: killed by the timeout (or never started: launch_error)
    stdout_head: str
    stderr_tail: str
    output_path: Path            # may not exist; only valid inside the `with`
    wall_s: float
    timeout_s: float
    stdout_bytes: int = 0
    launch_error: str = ""       # the program could not be started at all
    stdout_tail: str = ""        # the last STDOUT_TAIL_BYTES when stdout was longer than the head
    stdout_middle: str = ""      # lines between head and tail that may carry a figure
    protections: dict = field(default_factory=dict)
    leftovers: int = 0           # descendants still running when the program ended (killed)
    stderr_head: str = ""        # the first STDERR_HEAD_BYTES of stderr, when it was longer than the tail

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None and not self.launch_error

    @property
    def stdout_text(self) -> str:
        """Head, figure lines from the middle, and tail (what the timing lines are looked for in)."""
        parts = [self.stdout_head, self.stdout_middle, self.stdout_tail]
        return "\n".join(part for part in parts if part)


@contextmanager
def run_program(make_argv: Callable[[Path], list[str]], timeout_s: float, *,
                output_name: str = "output.txt", tmp_root: Path | None = None,
                sandbox: sb.Sandbox | None = None, file_limit_bytes: int = DEFAULT_FILE_LIMIT) -> Iterator[RunResult]:
    """Run make_argv(output_path) in a fresh private folder; yield the result; remove everything.

    Use as `with run_program(...) as result: check(result)` so the output file is read
    before it is cleaned away. Without `sandbox` the run is isolated in every way but the
    user (Sandbox(user="never")). A sandbox that switches user runs the program in a bwrap
    jail (grader/jail/bwrap.py): it sees only the system's files, the paths named on its command line
    (read-only) and its own folder, /tmp and /dev/shm, all three on one capped tmpfs.
    """
    base = sandbox or sb.Sandbox(user="never")
    settings = sb.effective(base)
    held = ExitStack()               # a jail's uid slot, held until everything of the run is gone
    top = Path(tempfile.mkdtemp(prefix="run-", dir=tmp_root or sb.session_root()))
    scratch = top / "jail"           # jailed: the capped tmpfs holding work/, tmp/ and shm/
    workdir = scratch / "work"
    mounted = jailed = False
    quota = max(settings.temp_quota_mb << 20, 2 * file_limit_bytes)
    try:
        scratch.mkdir(mode=0o700)
        workdir.mkdir(mode=0o700)
        output_path = workdir / output_name
        argv = make_argv(output_path)
        jailed, why_not_jailed = jail_decision(settings, argv)
        refused = settings.user == "always" and settings.jail and not jailed   # never run it unjailed instead
        quota_note, jail, not_in_jail = "", None, ""
        if jailed:
            drop, why = True, ""
            settings = jail_user(base, held)
            mounted = settings.tmpfs and not sb.mount_tmpfs(scratch, quota, 0, 0)
            jail = _make_jail(top, scratch, argv, settings)
            not_in_jail = interpreter_outside(argv, jail)
        else:
            os.chmod(top, 0o711)
            os.chmod(scratch, 0o711)
            drop, why = (False, "") if refused else \
                sb.should_drop(settings, _program_paths(argv)) if settings.user != "never" else \
                (False, settings.note or "off in the settings")
            if settings.tmpfs and sb.is_root() and not refused:
                quota_note = sb.mount_tmpfs(workdir, quota, settings.uid if drop else 0, settings.gid if drop else 0)
                mounted = not quota_note
            if drop and not mounted:      # no tmpfs here (not root, or no CAP_SYS_ADMIN in a container)
                os.chown(workdir, settings.uid, settings.gid)
        run_env = sb.environment(settings, workdir, drop)
        stdout_file, stderr_file = top / "stdout.log", top / "stderr.log"
        if refused or not_in_jail:
            outcome = sb.Outcome(None, 0.0, not_in_jail or f"not run: it must run in a jail, and {why_not_jailed}",
                                 {"jail": None, "not_in_force": {}})
        else:
            watched = scratch if jailed else workdir
            outcome = sb.launch(argv, workdir, stdout_file, stderr_file, timeout_s, settings,
                                file_limit_bytes=file_limit_bytes, drop_user=drop, env=run_env, why_not_dropped=why,
                                watch_quota=None if mounted or not settings.tmpfs else (watched, quota), jail=jail)
        protections = outcome.protections
        if not jailed:
            protections["not_in_force"]["jail"] = why_not_jailed
        protections["tmpfs_quota_mb"] = (quota >> 20) if mounted else None
        if not mounted:
            protections["not_in_force"]["temp_quota"] = (quota_note or ("needs root" if not sb.is_root() else "off")) + \
                ("; the folder's size is polled every 0.25 s instead" if settings.tmpfs else "")
        stopped = protections.get("quota_exceeded")
        size = stdout_file.stat().st_size if stdout_file.exists() else 0
        head = read_head(stdout_file, STDOUT_HEAD_BYTES)
        tail = read_tail(stdout_file, STDOUT_TAIL_BYTES) if size > STDOUT_HEAD_BYTES else ""
        middle = (read_figure_lines(stdout_file, STDOUT_HEAD_BYTES, size - STDOUT_TAIL_BYTES)
                  if size > STDOUT_HEAD_BYTES + STDOUT_TAIL_BYTES else "")
        yield RunResult(argv=argv, exit_code=outcome.exit_code, stdout_head=head,
                        stderr_tail=outcome.launch_error or read_tail(stderr_file, STDERR_TAIL_BYTES)
                        + (f"\n[grader: {stopped}]" if stopped else ""),
                        output_path=output_path, wall_s=outcome.wall_s, timeout_s=timeout_s,
                        stdout_bytes=size, launch_error=outcome.launch_error, stdout_tail=tail,
                        stdout_middle=middle, stderr_head=_stderr_head(stderr_file),
                        protections=protections, leftovers=outcome.leftovers)
    finally:
        if mounted:
            sb._umount(str(scratch if jailed else workdir))
        shutil.rmtree(top, ignore_errors=True)
        held.close()


def jail_user(base: sb.Sandbox, held: ExitStack) -> sb.Sandbox:
    """The settings with a uid of the jail's own: a slot leased machine-wide (uids.lease) and
    held by `held`, so no other jail on this machine has that uid while this one lives. An MPS
    client runs as its daemon's uid instead: leased by the student's turn (grader.grading.mps_turn)
    for all of that student's runs and their daemon, and for nothing else."""
    if base.mps is not None:
        return replace(base, uid=base.mps.uid, gid=base.mps.gid)
    slot = held.enter_context(uids.lease())
    return replace(base, uid=base.uid + slot, gid=base.gid + slot)


def jail_decision(settings: sb.Sandbox, argv: list[str]) -> tuple[bool, str]:
    """(run this in a jail?, why not). A sandbox that keeps the grader's user (`never`: this
    checkout's own ./sssp) needs none; `jail=False` is --unsafe; `always` (grade) whenever this
    machine can make one, and never without (bwrap.unavailable says why); `auto` (sweep
    --program, a program staff chose) when the jail's uid can also reach the program, else
    outside the jail (the sweep says so on the console)."""
    if settings.user == "never":
        return False, settings.note or "the grader's own program: not jailed"
    if not settings.jail:
        return False, settings.note or "--unsafe: runs are not jailed"
    why = bwrap.unavailable()
    if why:
        return False, why
    if settings.user == "auto":
        blocked = sb.user_can_reach(_program_paths(argv), settings)
        if blocked:
            return False, f"the jail's uid {settings.uid} cannot reach {blocked}"
    return True, ""


def _make_jail(top: Path, scratch: Path, argv: list[str], settings: sb.Sandbox) -> bwrap.Jail:
    jail = make_jail(scratch, top / "etc", settings, own=("work",), read_only=read_only_paths(argv, top),
                     cwd=scratch / "work")
    if settings.mps is None:
        return jail
    # an MPS client: its daemon's pipe and log folders at their own paths, its shm/ on /dev/shm
    return replace(jail, shm=settings.mps.shm, writable=(*jail.writable, *settings.mps.writable))


def make_jail(scratch: Path, etc: Path, settings: sb.Sandbox, *, own: tuple[str, ...], read_only: tuple[str, ...],
              cwd: Path) -> bwrap.Jail:
    """A jail whose writable places are the folders `own` of scratch (bound at their own paths)
    and scratch's tmp/ and shm/ (bound on /tmp and /dev/shm), all owned by the jail's uid and
    nothing else; etc (made here) holds its passwd, group and hosts."""
    for name in (*own, "tmp", "shm"):
        folder = scratch / name
        folder.mkdir(mode=0o700, exist_ok=True)
        os.chown(folder, settings.uid, settings.gid)
    etc.mkdir(mode=0o755, exist_ok=True)
    groups = tuple(sb.gpu_groups())
    bwrap.write_etc(str(etc), settings.uid, settings.gid, groups)
    return bwrap.Jail(settings.uid, settings.gid, str(scratch / "tmp"), str(scratch / "shm"), str(etc), str(cwd),
                      read_only=read_only, writable=tuple(str(scratch / name) for name in own), groups=groups)


SKIP_PREFIXES = ("/proc", "/dev", "/sys")


def read_only_paths(argv: list[str], own: Path) -> tuple[str, ...]:
    """What a jailed command names besides the system and its own folder, bound read-only at
    the same path: the tree of every executable it names (its folder; the install prefix for
    one in a bin/ folder, where a toolkit or interpreter keeps its libraries) and every other
    existing absolute path (its input file, a folder it is given). Parents before children;
    a path inside one already bound is not bound again."""
    found: set[str] = set()
    if argv and "/" not in argv[0]:
        resolved = shutil.which(argv[0], path=sb.SAFE_PATH)
        names = [resolved or argv[0], *argv[1:]]
    else:
        names = list(argv)
    for name in names:
        if not name.startswith("/") or not os.path.lexists(name):
            continue
        path = os.path.normpath(name)
        if _inside(path, str(own)) or bwrap.in_system(path) or path.startswith(SKIP_PREFIXES):
            continue
        if os.path.isfile(path) and os.access(path, os.X_OK):
            path = _tree(path)     # a script's #! interpreter is its author's choice: never bound (interpreter_outside)
        found.add(path)
    kept: list[str] = []
    for path in sorted(found, key=lambda p: (p.count("/"), p)):
        if path != "/" and not any(_inside(path, parent) for parent in kept):
            kept.append(path)
    return tuple(kept)


def interpreter_outside(argv: list[str], jail: bwrap.Jail) -> str:
    """'' unless the program is a script whose #! line names an absolute interpreter the jail
    does not hold (the system's folders, or a path the jail binds); then why it is not run. The
    line is the script's author's (a student's), so the path it names is never bound in."""
    interpreter = (_program_paths(argv[:1])[1:] or [""])[0]
    if not interpreter.startswith("/") or bwrap.in_system(interpreter):
        return ""
    named = os.path.normpath(interpreter)
    if any(_inside(named, held) for held in (*bwrap.TOP_LEVEL, *jail.read_only, *jail.writable)):
        return ""
    return (f"not run: its #! line names {interpreter[:200]!r}, which is not in the jail (the system's /usr, /bin "
            "and /lib, or the program's own folder)")


def _tree(executable: str) -> str:
    """The folder an executable's files live in: its own, or the prefix above a bin/."""
    folder = os.path.dirname(os.path.normpath(executable))
    return os.path.dirname(folder) if os.path.basename(folder) == "bin" else folder


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _program_paths(argv: list[str]) -> list[str]:
    """The program (resolved on PATH) and, for a script, its interpreter."""
    if not argv:
        return []
    first = argv[0] if "/" in argv[0] else (shutil.which(argv[0], path=sb.SAFE_PATH) or argv[0])
    paths = [first]
    try:
        with open(first, "rb") as handle:
            line = handle.readline(256)
        if line.startswith(b"#!"):
            interpreter = line[2:].split()
            if interpreter:
                paths.append(interpreter[0].decode("utf-8", "replace"))
    except OSError:
        pass
    return paths


def read_head(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError:
        return ""
    text = data[:limit].decode("utf-8", errors="replace")
    return text + ("\n[... stdout cut]" if len(data) > limit else "")


def _stderr_head(path: Path) -> str:
    """stderr's first STDERR_HEAD_BYTES, only when the tail does not already hold all of it."""
    try:
        if path.stat().st_size <= STDERR_TAIL_BYTES:
            return ""
        with open(path, "rb") as handle:
            return handle.read(STDERR_HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""


def read_figure_lines(path: Path, start: int, end: int) -> str:
    """The lines of bytes [start, end) that mention a time, rounds or edges: at most
    MIDDLE_SCAN_BYTES read in MIDDLE_CHUNK pieces, at most MIDDLE_KEEP_BYTES kept. Plain
    ``bytes.find`` per word (~1 ms per MB; a regex over every line took 40)."""
    kept: list[bytes] = []
    kept_bytes, carry = 0, b""
    stop = min(end, start + MIDDLE_SCAN_BYTES)
    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            position = start
            while position < stop and kept_bytes < MIDDLE_KEEP_BYTES:
                chunk = handle.read(min(MIDDLE_CHUNK, stop - position))
                if not chunk:
                    break
                position += len(chunk)
                data = carry + chunk
                cut = data.rfind(b"\n") + 1 if position < stop else len(data)
                data, carry = data[:cut], data[cut:][-4096:]  # a line over 4 KiB carries no figure we read
                for line in _lines_with_words(data):
                    kept.append(line[:512])
                    kept_bytes += min(len(line), 512) + 1
                    if kept_bytes >= MIDDLE_KEEP_BYTES:
                        break
    except OSError:
        return ""
    return b"\n".join(kept).decode("utf-8", errors="replace")


def _lines_with_words(data: bytes) -> list[bytes]:
    """The whole lines of ``data`` holding one of _FIGURE_WORDS (any case), in order."""
    lower = data.lower()
    starts = set()
    for word in _FIGURE_WORDS:
        at = lower.find(word)
        while at >= 0:
            line_start = lower.rfind(b"\n", 0, at) + 1
            starts.add(line_start)
            line_end = lower.find(b"\n", at)
            at = lower.find(word, line_end if line_end >= 0 else len(lower))
    lines = []
    for line_start in sorted(starts):
        line_end = data.find(b"\n", line_start)
        lines.append(data[line_start:line_end if line_end >= 0 else len(data)])
    return lines


def read_tail(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - limit))
            data = handle.read(limit)
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    return ("[...] " if size > limit else "") + text
