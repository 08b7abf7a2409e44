"""grader grade end to end on the CPU: fixture submissions (small C programs with real Makefiles,
tests/fixtures/submissions/) get the right verdicts and scores; hostile ones change nothing
outside their run; unsafe archives are refused; a changed submission runs again; one grader per
results file. Small graphs and short timeouts keep the module well under a minute."""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

from grader.jail import cgroups, sandbox
from grader.commands import grade
from grader.sweep.store import LockedResults
from grader.grading.submission import Limits, Refused, Submission, unpack
from sssp_common.record import read_rows

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "submissions"
FAKE_NVCC = ROOT / "tests" / "fixtures" / "fake-nvcc"
FIGURE1 = ROOT / "tests" / "data" / "figure1.txt"
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox user, cgroups and tmpfs need root")
needs_cc = pytest.mark.skipif(shutil.which("cc") is None or shutil.which("make") is None, reason="needs cc and make")


def tiny_graph(folder: Path, seed: int = 3, n: int = 40, m: int = 160) -> Path:
    rng = np.random.default_rng(seed)
    src, dst, w = rng.integers(0, n - 5, m), rng.integers(0, n, m), rng.integers(1, 20, m)
    path = folder / "tiny.txt"
    # 41..45 unreachable from 0 (45 -> 44 only): n = 46
    path.write_text("# tiny\n" + "".join(f"{u}\t{v}\t{x}\n" for u, v, x in zip(src, dst, w)) + "45\t44\t1\n")
    return path


def config(folder: Path, timeout: float = 5.0) -> Path:
    """Figure 1 and a 40-vertex graph; bmf (3 orderings x 2 syncs) and tpe (2 syncs): 16 runs."""
    path = folder / "grading.toml"
    path.write_text(f"""
graphs = [{json.dumps(str(FIGURE1))}, {json.dumps(str(tiny_graph(folder)))}]
configs = [[256, 8]]
timeout_s = {timeout}
[program]
command = "{{sssp}} --input {{input}} --bsize {{bsize}} --bcount {{bcount}} --output {{output}} --method {{method}} --sync {{sync}}"
sentinels = [1073741824, 2147483647]
[methods.bmf]
[methods.tpe]
orderings = ["source"]
[grading]
rubric = {json.dumps(str(ROOT / "configs" / "rubric.toml"))}
build_timeout_s = 60
[grading.counterexamples]        # tests/test_shrink_programs.py covers them: here, as little as can be
floor_s = 0
floor_runs = 0
search_graphs = 0
""")
    return path


def submission(folder: Path, name: str, as_name: str | None = None) -> Path:
    """A fixture submission: its Makefile plus the shared C source."""
    target = folder / (as_name or name)
    shutil.copytree(FIXTURES / name, target)
    shutil.copy(FIXTURES / "_src" / "sssp.c", target / "sssp.c")
    return target


def results(out: Path, student: str) -> dict:
    return json.loads((out / student / "results.json").read_text())


def scores_by_name(data: dict) -> dict:
    return {t["name"]: t for t in data["tests"]}


def rows_of(out: Path, student: str) -> list[dict]:
    return [r for r in read_rows(out / "runs.jsonl") if r["program"] == student]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@needs_cc
def test_a_class_gets_the_right_verdicts_and_scores(tmp_path, capsys):
    subs = tmp_path / "subs"
    for name in ("spec_ok", "real_formats", "wrong_one", "crash_some", "old_makefile"):
        submission(subs, name)
    out = tmp_path / "graded"
    code = grade.run([subs], out=out, config=config(tmp_path), quiet=True, nvcc=str(FAKE_NVCC), arch="sm_90")
    printed = capsys.readouterr().out
    assert code == 0, printed
    # right answers in the spec's formats: the whole code part (60 of 100; the report's 40 is staff's)
    assert results(out, "spec_ok")["score"] == 60 and results(out, "spec_ok")["max_score"] == 100
    spec_rows = rows_of(out, "spec_ok")
    assert len(spec_rows) == 16 and {r["status"] for r in spec_rows} == {"ok"}
    assert {r["output_format"] for r in spec_rows} == {"ok"} and {r["stdout_format"] for r in spec_rows} == {"ok"}
    assert all(r["times_source"]["computation"] == "spec" and r["computation_ms"] == 0.25 for r in spec_rows)
    # right answers in real submissions' formats: distances ok, formats recorded, times recovered
    real = rows_of(out, "real_formats")
    assert {r["status"] for r in real} == {"ok"} and {r["distances"] for r in real} == {"ok"}
    tiny_row = next(r for r in real if r["graph"] == "tiny")
    assert "a space after ':' ('v: d')" in tiny_row["output_deviations"]
    assert any("1073741824" in d for d in tiny_row["output_deviations"])
    assert tiny_row["times_source"]["computation"] == "recovered:took" and tiny_row["computation_ms"] == 0.5
    assert any(p.startswith("no filtering line (expected 'The total filtering") for p in tiny_row["stdout_problems"])
    real_tests = scores_by_name(results(out, "real_formats"))
    assert real_tests["make clean removes ./sssp"]["score"] == 0           # its clean keeps ./sssp
    assert real_tests["Timing lines on stdout (the spec's two lines)"]["score"] == 0
    # output format: the space after ':' and the sentinel cost nothing (the spec is silent on both)
    assert real_tests["Output file format (<vertex>:<distance> lines from 0:0, in order)"]["score"] == 7
    assert results(out, "real_formats")["score"] == pytest.approx(60 - 5 - 7)
    # exactly one wrong vertex on the larger graph
    wrong = [r for r in rows_of(out, "wrong_one") if r["graph"] == "tiny"]
    assert {r["status"] for r in wrong} == {"wrong"} and {r["mismatches"] for r in wrong} == {1}
    assert "1 of 46 vertices differ" in wrong[0]["detail"]
    # half its runs right: half the correctness, and format and timing only for those runs
    assert results(out, "wrong_one")["score"] == pytest.approx(60 - 18 - 3.5 - 3.5)
    # exit code 1 with a right file: a crash, and the record says the distances were right
    crash = rows_of(out, "crash_some")
    small = next(r for r in crash if r["graph"] == "figure1")
    assert small["status"] == "crash" and small["file_distances"] == "ok" and "distances were right" in small["detail"]
    assert small["exit_code"] == 1
    assert {r["detail"].split(";")[0] for r in crash if r["graph"] == "tiny"} == {"killed by SIGSEGV"}
    assert results(out, "crash_some")["score"] == 10                      # no right distance: build and clean
    # an old Makefile: built with --nvcc/--arch, recorded
    old = json.loads((out / "old_makefile" / "build.json").read_text())
    assert old["built"] and len(old["rewrites"]) == 2 and "-arch=sm_90" in old["rewrites"][1]
    assert results(out, "old_makefile")["score"] == 60
    assert rows_of(out, "old_makefile")[0]["build_options"] == {"nvcc": str(FAKE_NVCC), "arch": "sm_90"}
    # Gradescope shape, gradebook, leaderboard, page
    data = results(out, "spec_ok")
    assert set(data["tests"][0]) == {"name", "score", "max_score", "output", "visibility"}
    book = list(csv.DictReader(io.StringIO((out / "gradebook.csv").read_text())))
    assert {row["student"] for row in book} == {"spec_ok", "real_formats", "wrong_one", "crash_some", "old_makefile"}
    board = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())))
    assert "crash_some" not in {row["student"] for row in board}
    assert "wrong_one" not in {row["student"] for row in board if row["graph"] == "tiny"}
    page = (out / "wrong_one" / "index.html").read_text()
    assert "1 of 46 vertices differ" in page and "$ make sssp" in page and "<script" not in page
    assert "spec_ok" in printed and "60 / 100" in printed


def test_unsafe_archives_are_refused(tmp_path):
    def tar_with(name: str, member: tarfile.TarInfo, data: bytes = b"") -> Path:
        path = tmp_path / name
        with tarfile.open(path, "w:gz") as archive:
            makefile = tarfile.TarInfo("sssp_gpu/Makefile")
            makefile.size = 4
            archive.addfile(makefile, io.BytesIO(b"all:"))
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data) if data else None)
        return path

    climbing = tarfile.TarInfo("../evil.txt")
    absolute = tarfile.TarInfo("/tmp/evil.txt")
    link_out = tarfile.TarInfo("sssp_gpu/passwd")
    link_out.type, link_out.linkname = tarfile.SYMTYPE, "/etc/passwd"
    link_up = tarfile.TarInfo("sssp_gpu/up")
    link_up.type, link_up.linkname = tarfile.SYMTYPE, "../../outside"
    fifo = tarfile.TarInfo("sssp_gpu/pipe")
    fifo.type = tarfile.FIFOTYPE
    device = tarfile.TarInfo("sssp_gpu/disk")
    device.type = tarfile.BLKTYPE
    cases = {"climb.tgz": (climbing, b"x", "'..'"), "abs.tgz": (absolute, b"x", "absolute"),
             "link.tgz": (link_out, b"", "absolute path"), "up.tgz": (link_up, b"", "outside"),
             "fifo.tgz": (fifo, b"", "special"), "dev.tgz": (device, b"", "special")}
    for name, (member, data, why) in cases.items():
        path = tar_with(name, member, data)
        with pytest.raises(Refused, match=why):
            unpack(Submission(name, path, "tar"), tmp_path / "x" / name)
        assert not (tmp_path / "evil.txt").exists() and not Path("/tmp/evil.txt").exists()
    zipped = tmp_path / "abs.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("Makefile", "all:")
        archive.writestr("../../escape.txt", "x")
    with pytest.raises(Refused, match="'..'"):
        unpack(Submission("abs", zipped, "zip"), tmp_path / "x" / "zip")
    many = tmp_path / "many.zip"
    with zipfile.ZipFile(many, "w") as archive:
        for number in range(30):
            archive.writestr(f"f{number}.txt", "x" * 100)
    with pytest.raises(Refused, match="more than 20 files"):
        unpack(Submission("many", many, "zip"), tmp_path / "x" / "many", Limits(max_files=20))
    with pytest.raises(Refused, match="MiB"):
        unpack(Submission("many", many, "zip"), tmp_path / "x" / "big", Limits(max_bytes=1000))
    # a folder with a link pointing outside is refused as well
    folder = tmp_path / "linked"
    folder.mkdir()
    (folder / "Makefile").write_text("all:\n")
    os.symlink(tmp_path / "climb.tgz", folder / "outside")
    with pytest.raises(Refused, match="absolute"):
        unpack(Submission("linked", folder, "dir"), tmp_path / "x" / "linked")


@needs_cc
def test_archives_grade_by_name_and_refused_ones_score_zero(tmp_path, capsys):
    subs = tmp_path / "subs"
    subs.mkdir()
    source = submission(tmp_path, "spec_ok")
    with tarfile.open(subs / "alice.tgz", "w:gz") as archive:
        archive.add(source, arcname="sssp_gpu")
    with tarfile.open(subs / "mallory.tar.gz", "w:gz") as archive:
        archive.add(source, arcname="sssp_gpu")
        evil = tarfile.TarInfo("../../evil")
        evil.size = 1
        archive.addfile(evil, io.BytesIO(b"x"))
    out = tmp_path / "out"
    assert grade.run([subs], out=out, config=config(tmp_path), quiet=True, methods=["tpe"]) == grade.REFUSED
    assert results(out, "alice")["score"] == 60
    refused = results(out, "mallory")
    assert refused["score"] == 0 and "refused" in refused["output"] and "'..'" in refused["output"]
    assert refused["max_score"] == results(out, "alice")["max_score"] == 100   # the same maximum for everyone
    assert not (tmp_path / "evil").exists()
    capsys.readouterr()


@needs_cc
def test_an_old_makefile_without_the_compatibility_options_does_not_build(tmp_path, capsys):
    out = tmp_path / "out"
    # the only submission did not build: graded (scored 0), and the exit status says so (EXIT_STATUS)
    assert grade.run([submission(tmp_path / "subs", "old_makefile")], out=out, config=config(tmp_path),
                     quiet=True, methods=["tpe"]) == 1
    assert "not one of 1 submissions built: check the machine" in capsys.readouterr().err
    data = results(out, "old_makefile")
    assert data["score"] == 0 and "did not produce an executable ./sssp" in data["tests"][0]["output"]
    assert "/usr/local/cuda-8.0/bin/nvcc" in (out / "old_makefile" / "build.log").read_text()
    assert read_rows(out / "runs.jsonl") == []
    capsys.readouterr()


@needs_cc
def test_a_changed_submission_runs_again_and_an_unchanged_one_does_not(tmp_path, capsys):
    folder = submission(tmp_path / "subs", "spec_ok", "bob")
    out = tmp_path / "out"
    settings = dict(out=out, config=config(tmp_path), quiet=True, methods=["tpe"])
    assert grade.run([folder], **settings) == 0
    first = read_rows(out / "runs.jsonl")
    assert len(first) == 4
    assert grade.run([folder], **settings) == 0
    assert len(read_rows(out / "runs.jsonl")) == 4                       # resumed: nothing to do
    with open(folder / "sssp.c", "a") as source:
        source.write("/* changed */\n")
    assert grade.run([folder], **settings) == 0
    rows = read_rows(out / "runs.jsonl")
    assert len(rows) == 8 and len({r["program_id"] for r in rows}) == 2   # never credited with the old runs
    assert len({r["run_id"] for r in rows}) == 8
    capsys.readouterr()


def test_a_second_grader_on_the_same_results_exits_2(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    holder = LockedResults(out / "runs.jsonl")
    try:
        done = subprocess.run([sys.executable, "-m", "grader", "grade", str(FIXTURES / "spec_ok"), "--out", str(out),
                               "--config", str(config(tmp_path))], cwd=ROOT, capture_output=True, text=True, timeout=60)
    finally:
        holder.close()
    assert done.returncode == 2 and "in use by another grader" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    results_file = tmp_path / "sweep.jsonl"
    holder = LockedResults(results_file)
    try:
        swept = subprocess.run([sys.executable, "-m", "grader", "sweep", "--results", str(results_file), "-q",
                                "--program", "/bin/true {input} {output}"],
                               cwd=ROOT, capture_output=True, text=True, timeout=60)
    finally:
        holder.close()
    assert swept.returncode == 2 and swept.stderr.startswith("grader sweep: ") and "in use by another grader" in swept.stderr
    assert read_rows(results_file) == []


def test_grade_help_lists_the_compatibility_options():
    done = subprocess.run([sys.executable, "-m", "grader", "grade", "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and "--nvcc" in done.stdout and "--arch" in done.stdout and "--graphs" in done.stdout
    words = " ".join(done.stdout.split())
    assert "(default configs/grading.toml)" in words and "configs/rubric-gate.toml" in words
    assert "exit status: 0 every submission graded, whatever its score; 1 graded, but not one submission" in words
    assert "--lms {canvas,moodle}" in words and "--roster FILE" in words


def _cgroup_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return ""


def uid_processes(uid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            line = next((l for l in status.splitlines() if l.startswith("Uid:")), "")
            state = next((l.split()[1] for l in status.splitlines() if l.startswith("State:")), "Z")
            if line and int(line.split()[1]) == uid and state not in ("Z", "X"):   # a zombie is dead
                found.append(int(entry.name))
    return found


@ROOT_ONLY
@needs_cc
def test_hostile_submissions_change_nothing_outside_their_run(tmp_path, capsys, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("SSSP_CACHE_DIR", str(cache))
    earlier = tmp_path / "earlier"
    settings = dict(config=config(tmp_path, timeout=2.0), quiet=True, methods=["tpe"])
    assert grade.run([submission(tmp_path / "a", "spec_ok")], out=earlier, **settings) == 0
    references = sorted((cache / "reference").rglob("*.npy"))
    exposed = sorted(sandbox.shared_inputs().glob("*.spec1.txt"))   # the runs' inputs (other tools' come and go)
    protected = [*references, earlier / "runs.jsonl", *sorted((cache / "inputs").iterdir()), *exposed]
    assert references and exposed
    before = {path: digest(path) for path in protected}
    modes = {path: path.stat().st_mode for path in protected}
    subs = tmp_path / "subs"
    for name in ("hostile", "hang_setsid", "flood"):
        submission(subs, name)
    (subs / "hostile" / "targets.txt").write_text("".join(f"{p}\n" for p in protected))
    out = tmp_path / "out"
    assert grade.run([subs], out=out, **settings) == 0
    # every attack failed (the program exits 42 if one worked), and nothing changed
    hostile = rows_of(out, "hostile")
    assert {r["status"] for r in hostile} == {"ok"}, hostile[0]["detail"]
    assert {path: digest(path) for path in protected} == before
    assert {path: path.stat().st_mode for path in protected} == modes
    uids = {int(r["protections"]["user"].split()[1]) for r in hostile}     # each run's jail has its own
    assert all(sandbox.DEFAULT_UID <= uid < sandbox.DEFAULT_UID + sandbox.SLOTS for uid in uids)
    assert all(r["protections"]["jail"] and r["protections"]["netns"] for r in hostile)
    # the hang: a timeout, its setsid grandchild killed too. In the jail's pid namespace the kernel
    # kills the grandchild with the namespace's first process, sometimes before the reaper counts
    # it (under load), so the count may be 0: what must hold is that none survives (checked below).
    hang = rows_of(out, "hang_setsid")
    assert {r["status"] for r in hang} == {"timeout"}
    assert all(r["killed_descendants"] >= 1 or "pid" in r["protections"]["jail"]["namespaces"] for r in hang)
    # the flood: stopped by the file-size limit, a crash; the grade went on
    flood = rows_of(out, "flood")
    assert {r["status"] for r in flood} == {"crash"} and "SIGXFSZ" in flood[0]["detail"]
    mine = f"/sssp-grader/{os.getpid()}-"      # other graders on this machine may use the uid at the same time
    assert [pid for uid in uids for pid in uid_processes(uid) if mine in _cgroup_of(pid)] == []
    assert [d for base in cgroups.hierarchies().values() if base.is_dir()
            for d in base.iterdir() if d.name.startswith(f"{os.getpid()}-")] == []
    assert sandbox.mounts_under(sandbox.session_root()) == []
    capsys.readouterr()


CUDA_FIXTURE = FIXTURES / "cuda_ok"


@pytest.mark.gpu
def test_a_cuda_submission_is_graded_end_to_end(tmp_path, capsys):
    """On the GPU machine: the small CUDA C++ fixture builds with nvcc and is right everywhere,
    built and run in the jail (bwrap from PATH, $GRADER_BWRAP or .device-tools/bwrap/bwrap) with
    the /dev/nvidia* nodes bound: without a jail, grade refuses and this fails."""
    if shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").exists():
        pytest.fail("nvcc is not on this GPU machine")
    out = tmp_path / "out"
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"    # wherever it is, the build uses it
    assert grade.run([CUDA_FIXTURE], out=out, config=config(tmp_path, timeout=60), quiet=True, nvcc=nvcc) == 0
    data = results(out, "cuda_ok")
    print(json.dumps({"score": data["score"], "tests": [(t["name"], t["score"], t["max_score"]) for t in data["tests"]]}))
    rows = rows_of(out, "cuda_ok")
    assert {r["status"] for r in rows} == {"ok"}, [r["detail"] for r in rows if r["status"] != "ok"][:3]
    assert {r["stdout_format"] for r in rows} == {"ok"} and data["score"] == 60   # the code part; the report is staff's
    assert all(r["device"] and "CPU" not in r["device"] for r in rows)
    jails = [r["protections"]["jail"] for r in rows]
    assert all(jail and any(d.startswith("/dev/nvidia") for d in jail["devices"]) for jail in jails), jails[:1]
    assert all(not {"jail", "user", "netns"} & set(r["protections"]["not_in_force"]) for r in rows), \
        rows[0]["protections"]["not_in_force"]
    assert json.loads((out / "cuda_ok" / "build.json").read_text())["protections"]["jail"]
