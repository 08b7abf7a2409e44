"""What the grader does with the bytes a student supplied, done AS THAT STUDENT (never root):
unpacking an upload (tar, zip, one file, or a folder streamed as a tar); the built tree's copy
is grader.grading.built_tree, on the same terms. grader.jail.boundary.run_as
calls `serve` in a forked child that is the student's leased uid (no groups, no_new_privs, no
capabilities, an address-space limit); it is given open descriptors (the upload, the folder to
fill, the tree to copy) and works only relative to them. Standard library only.

Rules, whatever the archive says:
- names: relative, no `..`, at most NAME_MAX characters and DEPTH_MAX deep; names that are not
  UTF-8 are escaped (each bad byte as %XX) and a note says so;
- only files, folders and links; tar members also pass tarfile's `data` filter;
- links are created LAST (hard links, then symbolic ones, each in a folder opened component by
  component with O_NOFOLLOW): while files are written there is no link to write through; then
  every link is resolved step by step beneath the folder and one that leads out refuses the
  whole upload (a chain `a -> .`, `a/b -> ..` whose texts each stay inside is caught here);
- tar is read as a stream, one header at a time (never getmembers()): member count, total
  bytes and every name are checked as they come, so 2,000,000 headers cost one header's memory;
- zip: its directory's entry count and size are read from the end record before zipfile
  parses it; encrypted members and compression methods zipfile lacks (Deflate64) are refused
  by name; bytes are counted as they are written (stated sizes may lie).

Protocol: `serve(request)` (the unpacking) returns {"ok": {...}} or {"refused": "one line"}.
"""
from __future__ import annotations

import bz2      # noqa: F401 - everything the child may need is imported here, before the fork:
import encodings.cp437  # noqa: F401 - as the student's uid it may not read the grader's library
import gzip     # noqa: F401
import lzma
import os
import stat
import struct
import tarfile
import zipfile
import zlib

NAME_MAX = 1024        # characters in a member's whole name (keeps every path under PATH_MAX)
DEPTH_MAX = 64         # folders deep
LINK_HOPS = 40         # links followed while resolving one, as the kernel's ELOOP
ARCHIVES = (".tar.gz", ".tgz", ".tar", ".zip")
MAKEFILES = ("Makefile", "makefile", "GNUmakefile")
ZIP_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate", zipfile.ZIP_BZIP2: "bzip2",
               zipfile.ZIP_LZMA: "lzma"}
ZIP_METHOD_NAMES = {9: "Deflate64", 6: "implode", 1: "shrink", 93: "zstd", 95: "xz", 98: "PPMd", 99: "AES"}
PACKAGE_DIR = ".package"
CHUNK = 1 << 20


class Refused(Exception):
    """The upload cannot be unpacked safely; one line says which member and why."""


# --- names -------------------------------------------------------------------------------

def safe_name(name: str) -> str:
    """A member name as a relative path inside the folder, or Refused."""
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise Refused(f"member {name!r} has an absolute path")
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise Refused(f"member {name!r} climbs out with '..'")
    if len(name) > NAME_MAX or len(parts) > DEPTH_MAX:
        raise Refused(f"member {name[:80]!r}... has a name longer than {NAME_MAX} characters or deeper than {DEPTH_MAX}")
    return "/".join(parts)


def check_link_text(name: str, target: str) -> None:
    """A link's own text: relative, and lexically inside (the chain is checked after creation)."""
    if target.startswith("/"):
        raise Refused(f"link {name!r} points to an absolute path {target!r}")
    depth = name.count("/")
    for part in target.split("/"):
        depth += -1 if part == ".." else 0 if part in ("", ".") else 1
        if depth < 0:
            raise Refused(f"link {name!r} points outside the submission ({target!r})")


def escaped(name: str) -> str:
    """Undecodable bytes (surrogate escapes) as %XX, so every name is valid UTF-8."""
    return "".join(f"%{ord(ch) - 0xDC00:02X}" if 0xDC80 <= ord(ch) <= 0xDCFF else ch for ch in name)


def zip_name(info: zipfile.ZipInfo) -> str:
    """A zip member's name: UTF-8 when flagged or when its bytes are UTF-8, else escaped."""
    if info.flag_bits & 0x800:
        return info.filename
    raw = info.orig_filename.encode("cp437", "replace")
    return escaped(raw.decode("utf-8", "surrogateescape"))


# --- the budget --------------------------------------------------------------------------

class Budget:
    def __init__(self, max_files: int, max_bytes: int):
        self.max_files, self.max_bytes, self.files, self.bytes = max_files, max_bytes, 0, 0

    def member(self, name: str, stated: int = 0) -> None:
        """One more member; its stated size is checked now, its real bytes counted as written."""
        self.files += 1
        if self.files > self.max_files:
            raise Refused(f"more than {self.max_files} files (at {name!r})")
        if self.bytes + max(0, stated) > self.max_bytes:
            raise Refused(f"more than {self.max_bytes >> 20} MiB unpacked (at {name!r})")

    def grow(self, size: int, name: str) -> None:
        self.bytes += size
        if self.bytes > self.max_bytes:
            raise Refused(f"more than {self.max_bytes >> 20} MiB unpacked (at {name!r})")


# --- writing beneath one folder ------------------------------------------------------------

class Folder:
    """Everything created relative to one open folder. While files are written there are no
    links in it, so a name relative to it reaches only what it names; links come last."""

    def __init__(self, fd: int, budget: Budget):
        self.fd, self.budget, self.dirs = fd, budget, {""}
        self.symlinks: list[tuple[str, str]] = []
        self.hardlinks: list[tuple[str, str]] = []
        self.renamed: list[str] = []

    def mkdirs(self, rel: str) -> None:
        parts = rel.split("/") if rel else []
        for end in range(1, len(parts) + 1):
            prefix = "/".join(parts[:end])
            if prefix in self.dirs:
                continue
            try:
                os.mkdir(prefix, 0o755, dir_fd=self.fd)
            except FileExistsError:
                if not stat.S_ISDIR(os.lstat(prefix, dir_fd=self.fd).st_mode):
                    raise Refused(f"member {prefix!r} is both a file and a folder") from None
            self.dirs.add(prefix)

    def write(self, rel: str, stream, executable: bool, shown: str) -> None:
        self.mkdirs(rel.rpartition("/")[0])
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(rel, flags, 0o600, dir_fd=self.fd)
        except FileExistsError:       # the same name twice (tar appends): the later one wins
            if not stat.S_ISREG(os.lstat(rel, dir_fd=self.fd).st_mode):
                raise Refused(f"member {shown!r} is both a folder and a file") from None
            os.unlink(rel, dir_fd=self.fd)
            fd = os.open(rel, flags, 0o600, dir_fd=self.fd)
        with open(fd, "wb") as out:
            while chunk := stream.read(CHUNK):
                self.budget.grow(len(chunk), shown)     # real bytes: stated sizes may lie
                out.write(chunk)
            os.fchmod(out.fileno(), 0o755 if executable else 0o644)

    def make_links(self) -> None:
        """Hard links first (no symbolic link exists yet to lead them astray), then symbolic
        ones, each in its folder opened step by step without following; then every link is
        resolved beneath the folder: one leading out refuses the upload."""
        for rel, target in self.hardlinks:
            if not stat.S_ISREG(os.lstat(target, dir_fd=self.fd).st_mode):
                raise Refused(f"hard link {rel!r} to {target!r}, which is not a file of the submission")
            self.mkdirs(rel.rpartition("/")[0])
            os.link(target, rel, src_dir_fd=self.fd, dst_dir_fd=self.fd, follow_symlinks=False)
        for rel, target in self.symlinks:
            folder, _, base = rel.rpartition("/")
            self.mkdirs(folder)
            parent = self.open_beneath(folder)
            try:
                os.symlink(target, base, dir_fd=parent)
            except FileExistsError:
                raise Refused(f"link {rel!r} has the name of another member") from None
            finally:
                if parent != self.fd:
                    os.close(parent)
        for rel, target in self.symlinks:
            if not resolves_beneath(self.fd, rel):
                raise Refused(f"link {rel!r} -> {target!r} leads outside the submission through other links")

    def open_beneath(self, rel: str) -> int:
        """The folder rel, opened one component at a time, never through a link."""
        fd = self.fd
        for part in [p for p in rel.split("/") if p]:
            try:
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except OSError as error:
                raise Refused(f"cannot create a link inside {rel!r}: {os.strerror(error.errno)} "
                              "(a link on the way?)") from None
            finally:
                if fd != self.fd:
                    os.close(fd)
            fd = nxt
        return fd


def resolves_beneath(root_fd: int, rel: str) -> bool:
    """Does rel (a link), followed as the kernel would, stay beneath root? Step by step:
    components already resolved are real folders, so lstat relative to root is exact."""
    pending, resolved, hops = [p for p in rel.split("/") if p], [], 0
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not resolved:
                return False
            resolved.pop()
            continue
        here = "/".join(resolved + [part])
        try:
            info = os.lstat(here, dir_fd=root_fd)
        except OSError:
            return True                # missing: the kernel stops here, nothing beyond is reached
        if stat.S_ISLNK(info.st_mode):
            hops += 1
            if hops > LINK_HOPS:
                return True            # a loop: ELOOP, never outside
            target = os.readlink(here, dir_fd=root_fd)
            if target.startswith("/"):
                return False
            pending = target.split("/") + pending
        else:
            resolved.append(part)
    return True


# --- the archive kinds ----------------------------------------------------------------------

def untar(stream, folder: Folder, where: str = "") -> None:
    """A tar (any compression) read as a stream: one header at a time, checked as it comes."""
    try:
        archive = tarfile.open(fileobj=stream, mode="r|*", encoding="utf-8", errors="surrogateescape")
    except (tarfile.TarError, EOFError, OSError) as error:
        raise Refused(f"not a readable tar archive{where}: {error}") from None
    with archive:
        try:
            for member in archive:
                archive.members = []    # the stream's list of members would grow with each header
                _tar_member(archive, member, folder)
        except tarfile.FilterError as error:
            raise Refused(f"tarfile's data filter refused it: {escaped(str(error))}") from None
        except (tarfile.TarError, EOFError, *decompression_errors()) as error:
            raise Refused(f"a truncated or damaged tar archive{where} ({type(error).__name__}: {error})") from None


def decompression_errors() -> tuple:
    """What a damaged compressed stream raises (never our own OSErrors: those say what they are)."""
    return (zlib.error, lzma.LZMAError)


def _tar_member(archive: tarfile.TarFile, member: tarfile.TarInfo, folder: Folder) -> None:
    shown = escaped(member.name)
    rel = safe_name(shown)
    if shown != member.name:
        folder.renamed.append(shown)
    if member.issym():
        check_link_text(rel, member.linkname)
    elif member.islnk():
        safe_name(member.linkname)
    elif not (member.isfile() or member.isdir()):
        raise Refused(f"member {shown!r} is a device, FIFO or other special file")
    folder.budget.member(shown, member.size if member.isfile() else 0)
    tarfile.data_filter(member, "/nonexistent-root")   # tarfile's own rules, on the names alone
    if rel == "":
        return
    if member.isdir():
        folder.mkdirs(rel)
    elif member.issym():
        folder.symlinks.append((rel, member.linkname))
    elif member.islnk():
        folder.hardlinks.append((rel, safe_name(escaped(member.linkname))))
    else:
        data = archive.extractfile(member)
        folder.write(rel, data, bool(member.mode & 0o111), shown)


def zip_end_record(handle) -> tuple[int, int]:
    """(entries, central directory bytes) from the end record, before zipfile reads the directory."""
    size = handle.seek(0, os.SEEK_END)
    handle.seek(max(0, size - 65557))
    tail = handle.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        raise Refused("not a readable zip archive (no end record: truncated or damaged)")
    _, _, _, _, entries, cd_size, _, _ = struct.unpack("<4s4H2LH", tail[at:at + 22])
    if (entries == 0xFFFF or cd_size == 0xFFFFFFFF) and at >= 20 and tail[at - 20:at - 16] == b"PK\x06\x07":
        offset = struct.unpack("<4sLQL", tail[at - 20:at])[2]
        handle.seek(offset)
        record = handle.read(56)
        if len(record) == 56 and record[:4] == b"PK\x06\x06":
            entries, cd_size = struct.unpack("<4sQ2H2L4Q", record)[6], struct.unpack("<4sQ2H2L4Q", record)[8]
    handle.seek(0)
    return entries, cd_size


def unzip(handle, folder: Folder, where: str = "") -> None:
    entries, cd_size = zip_end_record(handle)
    if entries > folder.budget.max_files or cd_size > folder.budget.max_files * 2048:
        raise Refused(f"more than {folder.budget.max_files} files (the zip's directory lists {entries})")
    try:
        archive = zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as error:
        raise Refused(f"not a readable zip archive{where}: {error}") from None
    with archive:
        for info in archive.infolist():
            shown = zip_name(info)
            rel = safe_name(shown)
            if shown != info.filename:
                folder.renamed.append(shown)
            if info.flag_bits & 0x1:
                raise Refused(f"an encrypted (password-protected) zip{where}: member {shown!r}; "
                              "upload it without a password")
            if info.compress_type not in ZIP_METHODS:
                method = ZIP_METHOD_NAMES.get(info.compress_type, f"method {info.compress_type}")
                raise Refused(f"member {shown!r} uses an unsupported compression ({method}); "
                              "zip it again with standard Deflate")
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if kind not in (0, stat.S_IFREG, stat.S_IFDIR, stat.S_IFLNK):   # 0: no type recorded (a file)
                raise Refused(f"member {shown!r} is a device, FIFO or other special file")
            folder.budget.member(shown)
            if rel == "":
                continue
            try:
                if kind == stat.S_IFLNK:
                    target = _read_capped(archive, info, 4096).decode("utf-8", "surrogateescape")
                    check_link_text(rel, target)
                    folder.symlinks.append((rel, escaped(target)))
                elif info.is_dir() or kind == stat.S_IFDIR:
                    folder.mkdirs(rel)
                else:
                    with archive.open(info) as stream:
                        folder.write(rel, stream, bool(mode & 0o111), shown)
            except (zipfile.BadZipFile, EOFError, *decompression_errors()) as error:
                raise Refused(f"a truncated or damaged zip archive{where} at {shown!r} "
                              f"({type(error).__name__}: {error})") from None
            except NotImplementedError as error:
                raise Refused(f"member {shown!r}: {error}") from None


def _read_capped(archive: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int) -> bytes:
    with archive.open(info) as stream:
        return stream.read(cap)


# --- what was unpacked --------------------------------------------------------------------

def archive_kind(name: str) -> str | None:
    lower = name.lower()
    return "zip" if lower.endswith(".zip") else "tar" if lower.endswith(ARCHIVES) else None


def entries(fd: int, rel: str) -> list[tuple[str, int]]:
    """(name, lstat mode) of a folder's entries, never following a link."""
    target = os.open(rel or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
    try:
        return sorted((e.name, e.stat(follow_symlinks=False).st_mode) for e in os.scandir(target))
    finally:
        os.close(target)


def has_makefile(fd: int, rel: str) -> bool:
    """A Makefile at rel: a file, or a link (every link was checked to resolve inside) to one."""
    for name, mode in entries(fd, rel):
        if name in MAKEFILES and (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            try:
                if stat.S_ISREG(os.stat(f"{rel}/{name}" if rel else name, dir_fd=fd).st_mode):
                    return True
            except OSError:
                continue
    return False


def top_folder(fd: int, rel: str = "") -> str:
    """The folder with the Makefile: rel, or its only subfolder (archives of `sssp_gpu/`)."""
    if has_makefile(fd, rel):
        return rel
    children = [(n, m) for n, m in entries(fd, rel) if not n.startswith(".") and n != "__MACOSX"]
    if len(children) == 1 and stat.S_ISDIR(children[0][1]):
        return f"{rel}/{children[0][0]}" if rel else children[0][0]
    return rel


def what_was_found(fd: int, rel: str, cap: int = 100000) -> str:
    """One line for a tree with no Makefile at its top: what is there instead (lstat only)."""
    top = [(n, m) for n, m in entries(fd, rel) if n != PACKAGE_DIR]
    names = [n + ("/" if stat.S_ISDIR(m) else "") for n, m in top]
    shown = ", ".join(names[:12]) + (f", ... ({len(names) - 12} more)" if len(names) > 12 else "")
    line = f"no Makefile at the top of the submission; found {shown or 'nothing'}"
    queue, seen, deeper = [(rel, 0)], 0, None
    while queue and deeper is None and seen < cap:     # breadth first: the shallowest Makefile
        folder, depth = queue.pop(0)
        for name, mode in entries(fd, folder):
            seen += 1
            path = f"{folder}/{name}" if folder else name
            if name in MAKEFILES and stat.S_ISREG(mode) and folder != rel:
                deeper = path[len(rel) + 1:] if rel else path
                break
            if stat.S_ISDIR(mode) and name != PACKAGE_DIR and depth < DEPTH_MAX:
                queue.append((path, depth + 1))
    if deeper:
        line += f"; a Makefile at {deeper} (the spec: the grader runs make sssp at the top)"
    return line


def only_package(fd: int, rel: str) -> str | None:
    """The one archive at the top of a tree with no Makefile (reports and READMEs beside it)."""
    if has_makefile(fd, rel):
        return None
    found = [n for n, m in entries(fd, rel) if archive_kind(n) and stat.S_ISREG(m)]
    return (f"{rel}/{found[0]}" if rel else found[0]) if len(found) == 1 else None


# --- the tasks ------------------------------------------------------------------------------

def unpack(request: dict) -> dict:
    """Fill the folder (fd) from the upload (fd, or stdin for a folder streamed as a tar)."""
    dest = request["dest_fd"]
    budget = Budget(request["max_files"], request["max_bytes"])
    folder = Folder(dest, budget)
    kind = request["kind"]
    source = os.fdopen(request["feed_fd"] if kind == "dir" else request["source_fd"], "rb", closefd=False)
    if kind in ("tar", "dir"):
        untar(source, folder)
    elif kind == "zip":
        unzip(source, folder)
    else:
        folder.budget.member(request["name"])
        folder.write(safe_name(escaped(request["name"])), source, False, request["name"])
    folder.make_links()
    notes = _renamed_note(folder.renamed)
    top = top_folder(dest)
    inner = only_package(dest, top)
    if inner is not None:      # an upload that wraps the package (Gradescope and LMS zips do)
        os.mkdir(PACKAGE_DIR, 0o755, dir_fd=dest)
        nested_fd = os.open(PACKAGE_DIR, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dest)
        nested = Folder(nested_fd, budget)
        inner_fd = os.open(inner, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dest)
        where = f" (inside {inner.rpartition('/')[2]!r})"
        with os.fdopen(inner_fd, "rb") as handle:
            (untar if archive_kind(inner) == "tar" else unzip)(handle, nested, where)
        nested.make_links()
        notes += _renamed_note(nested.renamed)
        inner_top = top_folder(nested_fd)
        top = PACKAGE_DIR + ("/" + inner_top if inner_top else "")
    makefile = has_makefile(dest, top)
    return {"top": top, "makefile": makefile, "found": "" if makefile else what_was_found(dest, top),
            "notes": notes, "files": budget.files, "bytes": budget.bytes, "uid": os.geteuid()}   # who unpacked


def _renamed_note(renamed: list[str]) -> list[str]:
    if not renamed:
        return []
    return [f"{len(renamed)} file name(s) were not UTF-8 and were renamed, each bad byte as %XX "
            f"(e.g. {renamed[0]!r})"]


def serving(task):
    """task(request) as the entry grader.jail.boundary.run_as calls in the student's child:
    {"ok": answer} or {"refused": one line}, never an exception."""
    def serve(request: dict) -> dict:
        try:
            return {"ok": task(request)}
        except Refused as error:
            return {"refused": escaped(str(error))}
        except MemoryError:
            return {"refused": f"reading it needs more than {request.get('memory_mb', '?')} MiB of memory"}
        except RecursionError:
            return {"refused": "it is nested too deeply to read"}
        except OSError as error:
            where = f": {error.filename!r}" if error.filename else ""
            return {"refused": escaped(f"{error.strerror or error}{where}")}
    return serve


serve = serving(unpack)
