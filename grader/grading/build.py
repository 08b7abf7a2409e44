"""Build a submission the way the spec says the grader will: `make clean`, then `make sssp`,
in a fresh copy, in its own jail (grader.jail.bwrap), with a timeout, the log kept; then check that `./sssp`
exists and that `make clean` removes it.

The built tree is copied (before that last `make clean`) to a folder the grader owns, which
the runs read but cannot change: a program cannot leave state for its next run. Opt-in
compatibility for old packages, recorded in the results: `--nvcc PATH` rewrites hard-coded
nvcc paths in Makefiles, `--arch sm_XX` rewrites `-arch`/`-gencode`/`-code` flags (nvcc 12+
refuses sm_30).
"""
from __future__ import annotations

import os
import re
import secrets
import shutil
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from grader.grading import built_tree
from grader.jail import boundary, bwrap, sandbox as sb
from grader.jail.runner import jail_decision, jail_user, make_jail, read_head, read_tail

LOG_HEAD, LOG_TAIL = 48 * 1024, 48 * 1024
MAKEFILE_NAMES = re.compile(r"^(?:GNUmakefile|[Mm]akefile|.*\.mk)$")
# The nvcc word: `nvcc`, or a path ending in `/nvcc`, not inside a longer word. Found by
# replace_nvcc in one pass (a regex for it, tried at every '/', was quadratic in a line's length).
_PATH_RUN = re.compile(r"[^\s:=;'\"()]+")   # the characters a path before `nvcc` may hold
_BEFORE_WORD = frozenset("./-")               # with \w: what may not come just before the word or path
_ARCH = re.compile(r"(?:-arch|--gpu-architecture)(?:=|[ \t]+)[\"']?[\w,.]+[\"']?")
_GENCODE = re.compile(r"(?:-gencode|--generate-code)(?:=|[ \t]+)[\"']?arch=[\w,.=\"\\]+[\"']?")
_CODE = re.compile(r"(?<![\w-])(?:-code|--gpu-code)(?:=|[ \t]+)[\"']?[\w,.]+[\"']?")


@dataclass(frozen=True)
class BuildOptions:
    nvcc: str | None = None
    arch: str | None = None
    timeout_s: float = 300.0
    clean_timeout_s: float = 60.0
    quota_mb: int = 4096
    tmpfs_inodes: int = 100000     # the build's tmpfs: files, folders and links it may hold at once
    keep_max_mb: int = 256         # the built tree the grader keeps: apparent size (sparse files in full),
    keep_max_files: int = 20000    # files,
    keep_max_inodes: int = 40000   # and files, folders and links; checked before anything is copied

    def recorded(self) -> dict:
        return {"nvcc": self.nvcc, "arch": self.arch}


@dataclass
class BuildResult:
    built: bool
    cleaned: bool | None            # None: not built, so not tried
    program: Path | None            # the grader's read-only copy of the built ./sssp
    log: str
    detail: str
    rewrites: list[str] = field(default_factory=list)
    seconds: float = 0.0
    protections: dict = field(default_factory=dict)


MAKEFILE_MAX_BYTES = 4 << 20       # a Makefile larger than this is left as it is (said so), never read whole


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_" or char in _BEFORE_WORD


def _finds(line: str, word: str, start: int, end: int) -> list[int]:
    found, at = [], line.find(word, start, end)
    while at >= 0:
        found.append(at)
        at = line.find(word, at + 1, end)
    return found


def replace_nvcc(line: str, replace: Callable[[str], str]) -> str:
    r"""Each nvcc word in line replaced by replace(word): `nvcc` that no word character precedes,
    or a path from a '/' that none precedes through the last `/nvcc` of its run of path
    characters (`/opt/nvcc/bin/nvcc` whole), never followed by a word character. What the
    regex `(?<![\w./-])(?:/[^\s:=;'"()]*/)?nvcc(?![\w.-])` matched, found in one pass: each
    '/' and `nvcc` of the line is looked at a fixed number of times (the regex, tried at
    every '/', was quadratic in the line's length)."""
    out, done = [], 0
    for run in _PATH_RUN.finditer(line):
        start, end = run.span()
        if line.find("nvcc", start, end) < 0:
            continue
        ends = [at for at in _finds(line, "nvcc", start, end)
                if at + 4 >= len(line) or line[at + 4] == "/" or not _word_char(line[at + 4])]
        after_slash = [at for at in ends if at > start and line[at - 1] == "/"]
        bare = [at for at in ends if at == 0 or not _word_char(line[at - 1])]
        slashes = [at for at in _finds(line, "/", start, end) if at == 0 or not _word_char(line[at - 1])]
        last = after_slash[-1] if after_slash else -1
        floor, i, j = start, 0, 0
        while True:
            while i < len(slashes) and slashes[i] < floor:
                i += 1
            while j < len(bare) and bare[j] < floor:
                j += 1
            path = slashes[i] if i < len(slashes) and last >= slashes[i] + 2 else None
            word = bare[j] if j < len(bare) else None
            if path is None and word is None:
                break
            begins, stop = (path, last + 4) if word is None or (path is not None and path < word) else (word, word + 4)
            out += [line[done:begins], replace(line[begins:stop])]
            done = floor = stop
    return "".join(out) + line[done:] if out else line


def rewrite_makefiles(tree: Path, options: BuildOptions) -> list[str]:
    """Apply --nvcc/--arch to every Makefile under tree; one line per change."""
    if not options.nvcc and not options.arch:
        return []
    return edit_makefiles(tree, lambda line: _rewrite_line(line, options),
                          lambda where, old, new: f"{where}: {old.strip()!r} -> {new.strip()!r}")


def edit_makefiles(tree: Path, edit: Callable[[str], str], describe: Callable[[str, str, str], str]) -> list[str]:
    """edit(line) on every line of every Makefile under tree (links and odd files left alone),
    each file rewritten in place when a line changed; describe(FILE:LINE, old, new) per change."""
    changes = []
    for path in sorted(tree.rglob("*")):
        if not MAKEFILE_NAMES.match(path.name) or path.is_symlink() or not path.is_file():
            continue
        size = path.stat().st_size
        if size > MAKEFILE_MAX_BYTES:
            changes.append(f"{path.relative_to(tree)}: left as it is ({size} bytes, more than the "
                           f"{MAKEFILE_MAX_BYTES} a Makefile is read up to)")
            continue
        lines = path.read_text(encoding="utf-8", errors="surrogateescape").split("\n")
        changed = False
        for number, line in enumerate(lines, 1):
            new = edit(line)
            if new != line:
                changes.append(describe(f"{path.relative_to(tree)}:{number}", line, new))
                lines[number - 1], changed = new, True
        if changed:
            path.write_text("\n".join(lines), encoding="utf-8", errors="surrogateescape")
    return changes


def _rewrite_line(line: str, options: BuildOptions) -> str:
    if line.lstrip().startswith("#"):
        return line
    if options.nvcc:
        line = replace_nvcc(line, lambda word: options.nvcc)
    if options.arch:
        marker = "\0ARCH\0"
        line = _GENCODE.sub(marker, line)
        line = _ARCH.sub(marker, line)
        line = _CODE.sub("", line)
        if marker in line:
            first = line.index(marker)
            line = line[:first] + f"-arch={options.arch}" + line[first:].replace(marker, "")
    return line


def build(tree: Path, area: Path, options: BuildOptions, sandbox: sb.Sandbox) -> BuildResult:
    """Build a copy of tree inside area (a fresh folder of the grader's). In a jail
    (grader.jail.bwrap) whenever the sandbox switches user: the build sees the system, its own
    copy of the sources, its home, /tmp and /dev/shm (one capped tmpfs) and the compiler named by
    --nvcc, and nothing else; never built unjailed instead (--unsafe aside)."""
    began = time.monotonic()
    base, sandbox = sandbox, sb.effective(sandbox)
    jailed, why_not_jailed = jail_decision(sandbox, ["/bin/sh"])
    if sandbox.user == "always" and sandbox.jail and not jailed:
        return BuildResult(False, None, None, "", f"not built: the build must run in a jail, and {why_not_jailed}",
                           seconds=time.monotonic() - began,
                           protections={"jail": None, "not_in_force": {"jail": why_not_jailed}})
    with ExitStack() as held:    # a jailed build's uid slot: one uid for its three make steps
        if jailed:
            sandbox = jail_user(base, held)
        return _build(tree, area, options, sandbox, jailed, why_not_jailed, began)


def _build(tree: Path, area: Path, options: BuildOptions, sandbox: sb.Sandbox, jailed: bool, why_not_jailed: str,
           began: float) -> BuildResult:
    drop, why = (True, "") if jailed else sb.should_drop(sandbox, ["/bin/sh"])
    uid, gid = (sandbox.uid, sandbox.gid) if drop else (os.geteuid(), os.getegid())
    root = area / "build"
    root.mkdir(mode=0o711)
    mounted = sb.is_root() and sandbox.tmpfs and not sb.mount_tmpfs(root, options.quota_mb << 20,
                                                                    0 if jailed else uid, 0 if jailed else gid,
                                                                    inodes=options.tmpfs_inodes)
    try:
        os.chmod(root, 0o700 if mounted or jailed else 0o711)
        if not mounted and not jailed:
            os.chown(root, uid, gid)
        src, home = root / "src", root / "home"
        shutil.copytree(tree, src, symlinks=True)
        changes = rewrite_makefiles(src, options)
        home.mkdir()
        jail = None
        if jailed:
            jail = make_jail(root, area / "etc", sandbox, own=("src", "home"), read_only=_toolchain(options), cwd=src)
            _chown_tree(src, uid, gid)
        else:
            _chown_tree(root, uid, gid)
        extra = tuple(p for p in ({str(Path(options.nvcc).parent)} if options.nvcc and "/" in options.nvcc else set())
                      | ({"/usr/local/cuda/bin"} if Path("/usr/local/cuda/bin").is_dir() else set()))
        settings = _replace(sandbox, extra_path=extra + sandbox.extra_path)
        env = sb.environment(_replace(settings, user="always"), home, drop)
        logs, protections = [], {}
        for step, limit in (("make clean", options.clean_timeout_s), ("make sssp", options.timeout_s)):
            text, code, protections = _make(step, src, area, limit, settings, env, drop, why, jail)
            logs.append(f"$ {step}\n{text}" + ("" if code == 0 else f"\n[{step}: {_how(code, limit)}]\n"))
        if not jailed:
            protections.setdefault("not_in_force", {})["jail"] = why_not_jailed
        program = src / "sssp"
        target = program.resolve()   # a link is fine if it stays inside the tree
        built = target.is_file() and os.access(target, os.X_OK) and target.is_relative_to(src.resolve())
        if not built:
            detail = "make sssp did not produce an executable ./sssp" + (f" ({_how(code, options.timeout_s)})" if code else "")
            return BuildResult(False, None, None, "\n".join(logs), detail, changes, time.monotonic() - began, protections)
        keep = area / f"program-{secrets.token_hex(8)}"   # unguessable, and outside every other jail
        refused = keep_built_tree(src, keep, options, (uid, gid) if drop and sb.is_root() else None)
        if refused:
            logs.append(f"[grader: {refused}]")
            return BuildResult(False, None, None, "\n".join(logs), refused, changes, time.monotonic() - began,
                               protections)
        os.chmod(area, 0o711)
        text, code, _ = _make("make clean", src, area, options.clean_timeout_s, settings, env, drop, why, jail)
        logs.append(f"$ make clean\n{text}")
        cleaned = not os.path.lexists(program)
        detail = "" if cleaned else "make clean left ./sssp behind"
        return BuildResult(True, cleaned, keep / "sssp", "\n".join(logs), detail, changes,
                           time.monotonic() - began, protections)
    finally:
        if mounted:
            sb._umount(str(root))
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(area / "etc", ignore_errors=True)


def keep_built_tree(src: Path, keep: Path, options: BuildOptions, ids: tuple[int, int] | None) -> str:
    """Copy the built tree to keep, a folder the grader then owns read-only: measured against the
    caps first (apparent size, so a sparse file counts in full; files; files, folders and links),
    then copied, both as the build's uid (grader.jail.boundary: descriptors, no link followed;
    FIFOs, sockets and devices left behind). '' when kept, else one line for the student."""
    keep.mkdir(mode=0o700)
    if ids:
        os.chown(keep, *ids)
    caps = {"files": options.keep_max_files, "inodes": options.keep_max_inodes, "bytes": options.keep_max_mb << 20}
    fds = (boundary.open_folder(src), boundary.open_folder(keep))
    try:
        boundary.run_as(ids, built_tree.serve, {"task": "copy_tree", "src_fd": fds[0], "dest_fd": fds[1],
                                                   "caps": caps}, fds, memory_mb=256, file_bytes=caps["bytes"] + 1)
    except boundary.Refusal as error:
        boundary.remove_tree(keep)
        return f"built, but not kept: {error}"
    finally:
        for fd in fds:
            os.close(fd)
    boundary.own_tree(keep, 0 if sb.is_root() else os.geteuid(), 0 if sb.is_root() else os.getegid(), read_only=True)
    return ""


def _toolchain(options: BuildOptions) -> tuple[str, ...]:
    """What a jailed build sees beyond /usr: the compiler --nvcc names (its toolkit when it sits
    in a bin/ folder, else that one file), if it lies outside /usr."""
    if not options.nvcc or "/" not in options.nvcc:
        return ()
    path = os.path.abspath(options.nvcc)
    if bwrap.in_system(path) or not os.path.exists(path):
        return ()
    folder = os.path.dirname(path)
    return (os.path.dirname(folder),) if os.path.basename(folder) == "bin" else (path,)


def _make(step: str, src: Path, area: Path, timeout_s: float, settings, env, drop: bool, why: str, jail=None):
    log, err = area / "make.log", area / "make.err"
    outcome = sb.launch(["/bin/sh", "-c", f"exec {step} 2>&1"], src, log, err, timeout_s, settings,
                        file_limit_bytes=1 << 30, drop_user=drop, env=env, why_not_dropped=why, jail=jail)
    size = log.stat().st_size if log.exists() else 0
    text = read_head(log, LOG_HEAD) + (("\n" + read_tail(log, LOG_TAIL)) if size > LOG_HEAD else "")
    text += read_tail(err, 4096)
    if outcome.launch_error:
        text += f"\n{outcome.launch_error}"
    return text, (outcome.exit_code if not outcome.launch_error else 127), outcome.protections


def _how(code, limit) -> str:
    return f"timed out after {limit:g} s" if code is None else f"exit code {code}"


def _chown_tree(root: Path, uid: int, gid: int, read_only: bool = False) -> None:
    if not sb.is_root() and not read_only:
        return
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = os.path.join(folder, name)
            if sb.is_root():
                os.lchown(path, uid, gid)
            if read_only and not os.path.islink(path):
                mode = os.lstat(path).st_mode
                os.chmod(path, (mode & 0o555) | 0o444 | (0o111 if mode & 0o111 or os.path.isdir(path) else 0))
    if sb.is_root():
        os.lchown(root, uid, gid)
    if read_only:
        os.chmod(root, 0o555)


def _replace(settings, **changes):
    from dataclasses import replace
    return replace(settings, **changes)
