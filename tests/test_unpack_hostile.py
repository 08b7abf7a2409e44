"""Hostile uploads and builds, each graded beside a correct control through `grade.run`: nothing
outside the unpack and work folders is created or changed (a canary tree, snapshotted by mode,
owner and content), the control keeps its score, the attacker scores nothing it would not
alone, the class ends with a gradebook. Memory and sizes are asserted in bytes and entries.

The defences (grader/jail/boundary.py, grader/grading/student_files.py): unpacking and copying
as a leased uid in a forked child, links created last and resolved beneath the folder, tar
streamed one header at a time, the built tree measured before it is copied, cleaning by
descriptors, a #! interpreter never bound into the jail, --out apart from the submissions.
"""
from __future__ import annotations

import csv
import gzip
import hashlib
import io
import os
import shutil
import stat
import struct
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

from grader.commands import grade
from grader.grading import built_tree
from grader.grading.build import BuildOptions, keep_built_tree
from grader.grading.submission import Limits, Refused, Submission, unpack_into
from grader.jail import boundary, sandbox

sys.path.insert(0, str(Path(__file__).parent))
from test_grade import FIXTURES, config, needs_cc, results, rows_of, submission  # noqa: E402

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="dropping to a student's uid needs root")
SPEC_FILES = {"Makefile": (FIXTURES / "spec_ok" / "Makefile").read_bytes(),
              "sssp.c": (FIXTURES / "_src" / "sssp.c").read_bytes()}


# --- the canary: what must not change -----------------------------------------------------

@pytest.fixture
def canary():
    """A tree a student's uid can reach (/tmp/canary-*, 0755; never under root's 0700 pytest
    folder, which would stop the uid by itself and hide a broken link rule): open/ (0777: only
    the link rules keep a student's files out), closed/ (0700, root's: only root could write
    there), a tools/ tree an interpreter could be in, with a secret."""
    top = Path(tempfile.mkdtemp(prefix="canary-", dir="/tmp"))
    for name, mode in (("", 0o755), ("open", 0o777), ("closed", 0o700), ("tools", 0o755), ("tools/bin", 0o755)):
        (top / name).mkdir(exist_ok=True)
        os.chmod(top / name, mode)
    (top / "closed" / "secret.txt").write_text("closed secret\n")
    os.chmod(top / "closed" / "secret.txt", 0o600)
    (top / "tools" / "secret.txt").write_text("TOOLS-SECRET-4711\n")
    shutil.copy("/bin/sh", top / "tools" / "bin" / "sh")
    yield top
    boundary.remove_tree(top)


def snapshot(top: Path) -> dict:
    """Every entry under top (top too): mode, owner, and content or link text (lstat only)."""
    found = {}
    for folder, dirs, files in os.walk(top):
        for name in ["", *dirs, *files]:
            path = Path(folder) / name
            info = os.lstat(path)
            body = os.readlink(path) if stat.S_ISLNK(info.st_mode) else \
                hashlib.sha256(path.read_bytes()).hexdigest() if stat.S_ISREG(info.st_mode) else ""
            found[str(path.relative_to(top))] = (info.st_mode, info.st_uid, info.st_gid, body)
    return found


# --- archives -------------------------------------------------------------------------------

def tar_of(path: Path, members: list[tuple], fmt=tarfile.GNU_FORMAT) -> Path:
    """members: (name, bytes) files, (name, None, target) symlinks, (name,) folders."""
    with tarfile.open(path, "w:gz", format=fmt, encoding="utf-8", errors="surrogateescape") as archive:
        for member in members:
            info = tarfile.TarInfo(member[0])
            if len(member) == 3:
                info.type, info.linkname = tarfile.SYMTYPE, member[2]
                archive.addfile(info)
            elif len(member) == 1:
                info.type = tarfile.DIRTYPE
                archive.addfile(info)
            else:
                info.size, info.mode = len(member[1]), 0o644
                archive.addfile(info, io.BytesIO(member[1]))
    return path


def zip_of(path: Path, members: list[tuple]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for member in members:
            info = zipfile.ZipInfo(member[0])
            if len(member) == 3:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
                archive.writestr(info, member[2])
            else:
                info.external_attr = (stat.S_IFREG | 0o644) << 16
                archive.writestr(info, member[1])
    return path


def patch_zip(path: Path, local: int, central: int, change) -> Path:
    """change(old) for a 2-byte field of every member's local and central header: zipfile
    writes neither encrypted members nor Deflate64, but a student's zip tool does."""
    data = bytearray(path.read_bytes())
    for signature, offset in ((b"PK\x03\x04", local), (b"PK\x01\x02", central)):
        at = data.find(signature)
        while at >= 0:
            old = struct.unpack("<H", data[at + offset:at + offset + 2])[0]
            data[at + offset:at + offset + 2] = struct.pack("<H", change(old))
            at = data.find(signature, at + 4)
    path.write_bytes(bytes(data))
    return path


def set_zip_method(path: Path, method: int) -> Path:
    return patch_zip(path, 8, 10, lambda _: method)


def set_zip_encrypted(path: Path) -> Path:
    return patch_zip(path, 6, 8, lambda flags: flags | 0x1)


def spec_members(prefix: str = "") -> list[tuple]:
    return [(prefix + name, body) for name, body in SPEC_FILES.items()]


def climbing_links(levels: int, nested: bool) -> list[tuple]:
    """Links whose texts each stay inside on their own, but which, followed in order, climb
    `levels` folders above the unpack folder. nested (the issue's): l0 -> '.', l0/l1 -> '..',
    l0/l1/l2 -> '..', ... (each made through the ones before); flat: l0 -> '.', l1 -> 'l0/..',
    l2 -> 'l1/..', ... (all in the unpack folder itself)."""
    if nested:
        names = ["/".join(f"l{i}" for i in range(k + 1)) for k in range(levels + 1)]
        return [(name, None, "." if k == 0 else "..") for k, name in enumerate(names)]
    return [("l0", None, ".")] + [(f"l{k}", None, f"l{k - 1}/..") for k in range(1, levels + 2)]


def unpack_folder(student: str) -> Path:
    """Where grade unpacks a student (grader.grading.student: work/<student>/unpacked)."""
    return sandbox.session_root() / "grade" / student / "unpacked"


def chain_upload(kind: str, path: Path, student: str, canary: Path, nested: bool) -> Path:
    """The issue's attack: links reaching '/', then files written through them into the
    canary's open and closed folders, beside a full, correct submission."""
    links = climbing_links(len(unpack_folder(student).parts) - 1, nested)
    through = [(f"{links[-1][0]}{canary}/{where}/pwned-{student}", b"pwned\n") for where in ("open", "closed")]
    members = spec_members() + links + through
    return zip_of(path, members) if kind == "zip" else tar_of(path, members)


def header_bomb(path: Path, headers: int) -> Path:
    """One folder's tar header, `headers` times (a 4 MB .tgz of 2,000,000 costs ~900 MB read with getmembers())."""
    block = tarfile.TarInfo("d/")
    block.type = tarfile.DIRTYPE
    path.write_bytes(gzip.compress(block.tobuf(tarfile.GNU_FORMAT) * headers + b"\0" * 1024, compresslevel=1))
    return path


# --- the class of hostile uploads -------------------------------------------------------------

@needs_cc
def test_a_class_of_hostile_uploads_is_graded_and_nothing_outside_changes(tmp_path, capsys, canary):
    before = snapshot(canary)
    subs = tmp_path / "subs"
    submission(subs, "spec_ok", "control")
    for kind, suffix in (("zip", ".zip"), ("tar", ".tgz")):
        chain_upload(kind, subs / f"{kind}chain{suffix}", f"{kind}chain", canary, nested=True)
        chain_upload(kind, subs / f"{kind}flat{suffix}", f"{kind}flat", canary, nested=False)
    zip_of(subs / "sidelink.zip", spec_members() + [("y", None, "."), ("x", None, "y/..")])
    set_zip_encrypted(zip_of(subs / "locked.zip", spec_members()))
    set_zip_method(zip_of(subs / "deflate64.zip", spec_members()), 9)
    tar_of(subs / "latin1.tgz", spec_members() + [("caf\udce9.txt", b"latin-1 name\n")])
    inner = tar_of(tmp_path / "sssp_gpu.tgz", spec_members("sssp_gpu/"))
    zip_of(subs / "beside.zip", [("docs/README", b"see the package\n"), ("sssp_gpu.tgz", inner.read_bytes())])
    whole = tar_of(tmp_path / "whole.tgz", spec_members() + [("pad.bin", os.urandom(50000))]).read_bytes()
    (subs / "cut.tgz").write_bytes(whole[: len(whole) // 2])
    header_bomb(subs / "headers.tgz", 100000)
    (subs / "smithjane_12345_67890_sssp_gpu.tgz").write_bytes(b"an early, broken upload")
    tar_of(subs / "smithjane_12345_67899_sssp_gpu.tgz", spec_members("sssp_gpu/"))
    out = tmp_path / "out"
    code = grade.run([subs], out=out, config=config(tmp_path), quiet=True, methods=["tpe"])
    said = capsys.readouterr()
    assert code == grade.REFUSED, said.err
    assert snapshot(canary) == before                       # nothing outside created or changed
    assert not list(tmp_path.rglob("pwned-*"))
    book = {row["student"]: row for row in csv.DictReader((out / "gradebook.csv").open())}
    assert set(book) == {"control", "zipchain", "tarchain", "zipflat", "tarflat", "sidelink", "locked", "deflate64", "latin1", "beside",
                         "cut", "headers", "smithjane_12345"}
    assert results(out, "control")["score"] == 60
    refusals = {"zipchain": "link 'l0'", "tarchain": "link 'l0'", "zipflat": "has the name of another member",
                "tarflat": "has the name of another member", "sidelink": "leads outside the submission",
                "locked": "encrypted (password-protected)", "deflate64": "unsupported compression (Deflate64)",
                "cut": "truncated or damaged", "headers": "more than 20000 files"}
    for student, why in refusals.items():
        data = results(out, student)
        assert data["score"] == 0 and why in data["output"], (student, data["output"])
        assert rows_of(out, student) == []                  # refused: nothing built, nothing run
    latin1 = results(out, "latin1")
    assert latin1["score"] == 60 and "renamed, each bad byte as %XX (e.g. 'caf%E9.txt')" in latin1["output"]
    assert results(out, "beside")["score"] == 60
    jane = results(out, "smithjane_12345")
    assert jane["score"] == 60 and "graded the latest, smithjane_12345_67899_sssp_gpu.tgz" in jane["output"]


def test_a_tar_is_read_one_header_at_a_time(tmp_path):
    """40,000 headers, allowed here, unpack in the memory of a few: the child's peak above the
    grader's stays under 4 MiB (keeping each TarInfo, as getmembers() does, measured 15.8 MB
    on the same archive), and the count is exact."""
    bomb = header_bomb(tmp_path / "headers.tgz", 40000)
    unpacked = unpack_into(Submission("x", bomb, "tar"), tmp_path / "x", Limits(max_files=10**6))
    assert unpacked.files == 40000 and unpacked.bytes == 0
    assert unpacked.peak_bytes < 4 << 20, unpacked.peak_bytes
    with pytest.raises(Refused, match="more than 1000 files"):
        unpack_into(Submission("y", bomb, "tar"), tmp_path / "y", Limits(max_files=1000))


def test_a_zip_directory_is_counted_before_zipfile_reads_it(tmp_path):
    path = zip_of(tmp_path / "many.zip", [(f"f{i}", b"") for i in range(50)])
    with pytest.raises(Refused, match=r"more than 20 files \(the zip's directory lists 50\)"):
        unpack_into(Submission("x", path, "zip"), tmp_path / "x", Limits(max_files=20))


def test_unpacking_is_done_by_the_students_uid_and_handed_back_to_root(tmp_path):
    """Files come out root's (frozen), and within one second per student on this machine:
    the time is printed (`pytest -s tests/test_unpack_hostile.py -k uid`), never asserted."""
    upload = tar_of(tmp_path / "sub.tgz", spec_members("sssp_gpu/") + [("sssp_gpu/big.bin", os.urandom(4 << 20))])
    began = time.monotonic()
    unpacked = unpack_into(Submission("x", upload, "tar"), tmp_path / "x")
    print(f"unpacking a 4 MiB .tgz of 3 files as the student's uid: {time.monotonic() - began:.3f} s")
    assert unpacked.top.name == "sssp_gpu" and unpacked.makefile and unpacked.files == 3
    assert unpacked.bytes == sum(map(len, SPEC_FILES.values())) + (4 << 20)      # each byte counted once
    assert {os.lstat(p).st_uid for p in (tmp_path / "x").rglob("*")} == {0}
    # the child really is the student: it cannot read a root-only file handed by name
    secret = tmp_path / "secret"
    secret.mkdir(mode=0o700)
    probe = lambda request: {"ok": [os.getuid(), os.getgroups(), _can_read(str(secret))]}
    with boundary.student_ids(sandbox.DEFAULT_UID) as ids:
        assert ids is not None and ids[0] >= sandbox.DEFAULT_UID
        (uid, groups, readable), _ = boundary.run_as(ids, probe, {})
    assert uid == ids[0] and groups == [] and readable is False


def _can_read(path: str) -> bool:
    try:
        os.listdir(path)
        return True
    except OSError:
        return False


def test_the_built_tree_is_measured_before_anything_is_copied(tmp_path):
    src, dest = tmp_path / "src", tmp_path / "dest"
    src.mkdir()
    dest.mkdir()
    (src / "a_first.txt").write_text("would be copied first\n")
    with open(src / "sparse.bin", "wb") as handle:
        handle.truncate(1 << 30)                      # 1 GiB apparent, nothing on disk
    caps = {"files": 100, "inodes": 100, "bytes": 256 << 20}
    fds = (boundary.open_folder(src), boundary.open_folder(dest))
    try:
        with pytest.raises(boundary.Refusal, match=r"more than 256 MiB \(sizes as they appear: sparse files too\)"):
            boundary.run_as(None, built_tree.serve, {"task": "copy_tree", "src_fd": fds[0], "dest_fd": fds[1],
                                                        "caps": caps}, fds)
    finally:
        for fd in fds:
            os.close(fd)
    assert list(dest.iterdir()) == []                 # refused before a single byte was copied
    os.unlink(src / "sparse.bin")
    for number in range(150):
        (src / f"f{number}").touch()
    keep = tmp_path / "keep"
    line = keep_built_tree(src, keep, BuildOptions(keep_max_files=100), None)
    assert line == "built, but not kept: the built tree holds more than 100 files: not copied" and not keep.exists()
    assert keep_built_tree(src, keep, BuildOptions(), None) == ""
    assert len(list(keep.iterdir())) == 151 and stat.S_IMODE(keep.stat().st_mode) == 0o555


def test_cleaning_never_follows_a_link_nor_chmods_through_one(tmp_path, canary):
    before = snapshot(canary)
    work = tmp_path / "work"
    (work / "tree").mkdir(parents=True)
    os.symlink(canary / "closed", work / "tree" / "to_closed")
    os.symlink(canary / "closed" / "secret.txt", work / "tree" / "to_secret")
    os.chmod(work / "tree", 0o555)
    deep = os.open(work, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(3000):                             # deeper than any path: removed without a descriptor per level
        os.mkdir("d", dir_fd=deep)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=deep)
        os.close(deep)
        deep = inner
    os.close(deep)
    boundary.remove_tree(work)
    assert not work.exists() and snapshot(canary) == before


@needs_cc
def test_hostile_builds_change_nothing_outside_and_caps_fail_only_their_build(tmp_path, capsys, canary):
    before = snapshot(canary)
    subs = tmp_path / "subs"
    submission(subs, "spec_ok", "control")
    build_and = {
        "linker": f"ln -s {canary}/closed leak; ln -s {canary}/closed/secret.txt leak2",
        "sparse": "truncate -s 1G big.bin",
        "many": "mkdir many; cd many; seq 25000 | xargs touch",
    }
    for student, extra in build_and.items():
        folder = submission(subs, "spec_ok", student)
        text = (folder / "Makefile").read_text().replace("-o sssp sssp.c", f"-o sssp sssp.c\n\t{extra}")
        (folder / "Makefile").write_text(text)
    shebang = submission(subs, "spec_ok", "shebang")
    (shebang / "Makefile").write_text(f"sssp:\n\tprintf '#!{canary}/tools/bin/sh\\ncat {canary}/tools/secret.txt\\n'"
                                      " > sssp; chmod +x sssp\n\nclean:\n\trm -f sssp\n")
    out = tmp_path / "out"
    code = grade.run([subs], out=out, config=config(tmp_path), quiet=True, methods=["tpe"])
    capsys.readouterr()
    assert code == 0
    assert snapshot(canary) == before                 # the 0700 folder behind the build's link kept its mode
    assert results(out, "control")["score"] == 60 and results(out, "linker")["score"] == 60
    for student, why in (("sparse", "more than 256 MiB (sizes as they appear: sparse files too)"),
                         ("many", "more than 20000 files")):
        data = results(out, student)
        assert data["score"] == 0 and why in data["tests"][0]["output"], data["tests"][0]["output"]
    runs = rows_of(out, "shebang")
    assert runs and all("which is not in the jail" in r["detail"] for r in runs), runs[0]["detail"]
    leaked = [p for p in out.rglob("*") if p.is_file() and b"TOOLS-SECRET-4711" in p.read_bytes()]
    assert leaked == []


@needs_cc
def test_out_inside_a_submission_or_a_submission_inside_out_is_refused(tmp_path, capsys):
    folder = submission(tmp_path / "subs", "spec_ok", "alice")
    before = snapshot(folder)
    settings = dict(config=config(tmp_path), quiet=True, methods=["tpe"])
    assert grade.run([folder], out=folder / "graded", **settings) == 2
    assert grade.run([folder], out=folder, **settings) == 2
    assert grade.run([tmp_path / "subs"], out=tmp_path / "subs", **settings) == 2
    out = tmp_path / "out"
    inside = submission(out, "spec_ok", "bob")
    assert grade.run([inside], out=out, **settings) == 2
    err = capsys.readouterr().err
    assert "is inside" in err and "choose a" in err
    assert snapshot(folder) == before and not (out / "gradebook.csv").exists()


def test_the_builds_tmpfs_caps_inodes(tmp_path):
    """The build's tmpfs is mounted with nr_inodes (BuildOptions.tmpfs_inodes): past it, creating
    a file fails inside the build, before anything reaches the host's disk."""
    folder = tmp_path / "fs"
    folder.mkdir()
    assert sandbox.mount_tmpfs(folder, 1 << 20, 0, 0, inodes=50) == ""
    try:
        made = 0
        with pytest.raises(OSError) as error:
            for made in range(100):
                (folder / f"f{made}").touch()
        assert error.value.errno == 28 and made < 50            # ENOSPC: out of inodes, not of bytes
    finally:
        sandbox._umount(str(folder))
