"""The jail (grader/jail/bwrap.py), attacked the way issue 22 attacked the grader: every fixture
under tests/fixtures/jail/ really tries its attack, and each test asserts that the attack had no
effect and earned no correctness credit (no attacker scores above `nothing`, a submission that
does no work at all). Grading here does not shrink failures to small graphs (`shrink=False`):
those reruns take the same jailed path, and would only multiply the attackers' runs. One control test shows the collusion attack working without the jail
(--unsafe), so the fixtures are known to bite.

Needs root and bubblewrap: `make test` installs bubblewrap where it can. Without a jail these
tests skip on a developer's machine and FAIL in CI (CI=true): CI always tests the real jail.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_grade import FIXTURES as SUBMISSIONS, config, needs_cc, results, rows_of  # noqa: E402

from grader.commands import grade  # noqa: E402
from grader.jail import bwrap, sandbox, uids  # noqa: E402
from grader.jail.runner import run_program  # noqa: E402
from grader.jail.sandbox import Sandbox  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ATTACKS = ROOT / "tests" / "fixtures" / "jail"
JAILED = Sandbox(user="always")


@pytest.fixture(autouse=True)
def a_jail():
    """Every test here needs a real jail: skipped without one, except in CI, where that fails."""
    why = bwrap.unavailable()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"the jail cannot run on this CI machine: {why}")
        pytest.skip(f"no jail on this machine: {why}")


def attacker(folder: Path, name: str, as_name: str | None = None, targets: list[Path] = ()) -> Path:
    """A fixture submission (its Makefile and script; the C source where it answers right), and
    targets.txt naming what the test lets it know (the grader's --out folder)."""
    target = folder / (as_name or name)
    shutil.copytree(ATTACKS / name, target)
    if "sssp.c" in (target / "Makefile").read_text():
        shutil.copy(SUBMISSIONS / "_src" / "sssp.c", target / "sssp.c")
    (target / "targets.txt").write_text("".join(f"{path}\n" for path in targets))
    return target


def jail_config(folder: Path, timeout: float = 5.0) -> Path:
    """test_grade's matrix (figure 1 and a 40-vertex graph) with a 16 MiB temporary-space cap."""
    path = config(folder, timeout)
    path.write_text(path.read_text() + "[grading.sandbox]\ntemp_quota_mb = 16\n")
    return path


def leftovers_on_host(patterns: list[str]) -> list[Path]:
    """Files an attacker may have left in the machine's shared places."""
    places = {Path("/tmp"), Path("/dev/shm"), Path("/var/tmp"), Path("/run"), Path(tempfile.gettempdir())}
    return [path for place in places if place.is_dir() for pattern in patterns for path in place.glob(pattern)]


def no_credit(out: Path, student: str, baseline: float) -> None:
    rows = rows_of(out, student)
    assert rows and not [r for r in rows if r["status"] == "ok" or r["distances"] == "ok"], \
        [(r["status"], r["distances"]) for r in rows]
    assert results(out, student)["score"] <= baseline


@needs_cc
def test_a_class_of_attackers_gets_no_credit_and_learns_nothing(tmp_path, capsys):
    """Collusion through /tmp and /dev/shm, reading a classmate's 0600 file, running a classmate's
    build found through /proc and the output folder, printing classmates' scores, filling the
    disk: all in one class, graded after a classmate who answers right."""
    out = tmp_path / "out"
    subs = tmp_path / "subs"
    attacker(subs, "giver", "a_giver")
    attacker(subs, "copier", "b_copier")
    attacker(subs, "thief", "c_thief", targets=[out])
    attacker(subs, "scorer", "d_scorer", targets=[out])
    attacker(subs, "hog", "e_hog")
    attacker(subs, "nothing", "f_nothing")
    before = set(leftovers_on_host(["answers-*", "giver-secret", "hog-fill-*"]))
    assert grade.run([subs], out=out, config=jail_config(tmp_path), quiet=True, methods=["tpe"], shrink=False) == 0
    giver = rows_of(out, "a_giver")
    assert {r["status"] for r in giver} == {"ok"}, [r["detail"] for r in giver]
    assert all(r["protections"]["jail"] and not r["protections"]["not_in_force"] for r in giver)
    baseline = results(out, "f_nothing")["score"]
    assert baseline < results(out, "a_giver")["score"]
    for student in ("b_copier", "c_thief", "d_scorer", "e_hog"):
        no_credit(out, student, baseline)
    feedback = {student: (out / student / "results.json").read_text() + (out / student / "index.html").read_text()
                for student in ("b_copier", "c_thief", "d_scorer")}
    assert "giver-private-secret-7731" not in feedback["b_copier"]          # a classmate's 0600 file
    assert "BEHAVIOUR" not in feedback["c_thief"]                            # a classmate's sources
    for student in ("c_thief", "d_scorer"):                                  # classmates' names and scores
        assert "a_giver" not in feedback[student] and "f_nothing" not in feedback[student]
    # nothing left on the machine; the class files private while grading and after (--share none)
    assert set(leftovers_on_host(["answers-*", "giver-secret", "hog-fill-*"])) == before
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    assert {stat.S_IMODE(p.stat().st_mode) for p in out.rglob("*") if p.is_file()} == {0o600}
    assert {stat.S_IMODE(p.stat().st_mode) for p in out.rglob("*") if p.is_dir()} == {0o700}
    capsys.readouterr()


@needs_cc
def test_without_the_jail_the_copier_does_get_credit(tmp_path, capsys):
    """The control: --unsafe (no jail, one sandbox uid for the whole class), the copier with no
    algorithm gets the giver's answers through /tmp: the fixture's attack is real."""
    subs = tmp_path / "subs"
    attacker(subs, "giver", "a_giver")
    attacker(subs, "copier", "b_copier")
    before = set(leftovers_on_host(["answers-*", "giver-secret"]))
    out = tmp_path / "out"
    try:
        assert grade.run([subs], out=out, config=jail_config(tmp_path), quiet=True, methods=["tpe"], shrink=False, unsafe=True) == 0
    finally:
        for path in set(leftovers_on_host(["answers-*", "giver-secret"])) - before:
            path.unlink()
    copier = rows_of(out, "b_copier")
    assert {r["status"] for r in copier} == {"ok"}
    assert all(r["protections"]["not_in_force"]["jail"].startswith("--unsafe") for r in copier)
    assert "--unsafe" in capsys.readouterr().err


def test_a_hog_fills_only_its_own_capped_tmpfs():
    """Gigabytes asked for in /tmp, /dev/shm, /var/tmp, /run, /dev and /: 16 MiB in all (the cap
    of the one tmpfs its folder, /tmp and /dev/shm share), nothing anywhere else, nothing left."""
    script = (ATTACKS / "hog" / "sssp.sh").read_text()
    with run_program(lambda out: ["/bin/sh", "-c", script], 60, sandbox=Sandbox(user="always", temp_quota_mb=16),
                     file_limit_bytes=8 << 20) as result:
        took = {line.split()[1]: int(line.split()[2]) for line in result.stdout_head.splitlines() if line.startswith("hog ")}
        quota = result.protections["tmpfs_quota_mb"]
    assert quota == 16 and set(took) == {"/tmp", "/dev/shm", "/var/tmp", "/run", "/dev", "/"}
    assert 0 < took["/tmp"] + took["/dev/shm"] <= quota
    assert took["/var/tmp"] == took["/run"] == took["/dev"] == took["/"] == 0
    assert leftovers_on_host(["hog-fill-*"]) == []


def test_a_jailed_program_sees_only_itself():
    """Other processes (a marker started here), the checkout, the caches, the grader's folders:
    none of it is in the jail; its /etc names only root and the student."""
    marker = subprocess.Popen(["/bin/sh", "-c", "sleep 300", "jail-marker-5151"])
    try:
        script = f"""
            for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < "$f"; echo; done
            echo "processes $(ls -d /proc/[0-9]* | wc -l)"
            for p in {ROOT} {Path.home()} /home /var /etc/shadow {sandbox.shared_inputs()}; do
              [ -e "$p" ] && echo "visible $p"
            done
            echo "session: $(ls -A {sandbox.session_root()})"
            cut -d: -f1 /etc/passwd | tr '\\n' ' '; echo
            """
        with run_program(lambda out: ["/bin/sh", "-c", textwrap.dedent(script)], 20, sandbox=JAILED) as result:
            seen = result.stdout_head
    finally:
        marker.kill()
        marker.wait()
    assert result.exit_code == 0, result.stderr_tail
    assert "jail-marker-5151" not in seen and "pytest" not in seen
    assert int(seen.rsplit("processes ", 1)[1].split()[0]) <= 6      # bwrap's pid 1, the shell, its pipeline
    assert [line for line in seen.splitlines() if line.startswith("visible")] == []
    # the grader's session folder holds only the way down to this run's own folder (mount points)
    listed = seen.split("session: ")[-1].splitlines()[0].split()
    assert len(listed) == 1 and listed[0].startswith("run-")
    assert "root student" in seen


def test_signals_launch_errors_and_descendants_in_the_jail():
    with run_program(lambda out: ["/bin/sh", "-c", "kill -SEGV $$"], 10, sandbox=JAILED) as result:
        assert result.exit_code == -signal.SIGSEGV and not result.launch_error
    with run_program(lambda out: ["/nonexistent/sssp"], 10, sandbox=JAILED) as result:
        assert result.exit_code is None and result.launch_error.startswith("cannot start /nonexistent/sssp")
    with run_program(lambda out: ["/bin/sh", "-c", f"setsid sleep 300 & echo ok > {out}"], 10, sandbox=JAILED) as result:
        assert result.exit_code == 0 and result.output_path.read_text() == "ok\n"
        uid = int(result.protections["user"].split()[1])
    time.sleep(0.2)
    assert [pid for pid in _processes_of(uid) if "sleep" in _cmdline(pid)] == []   # the pid namespace took it


def test_the_jail_dies_with_the_grader():
    """A grader killed with SIGKILL: bwrap dies with it (parent-death signal) and its pid
    namespace, setsid grandchildren included, with bwrap: nothing waits for the next grader."""
    code = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from grader.jail.runner import run_program
from grader.jail.sandbox import Sandbox
with run_program(lambda out: ['/bin/sh', '-c', 'setsid sleep 301 & sleep 302'], 600, sandbox=Sandbox(user='always')):
    pass
"""
    grader = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 30
        jailed: list[int] = []
        while time.monotonic() < deadline and len(jailed) < 2:
            jailed = [pid for pid in _all_pids() if _cmdline(pid) in ("sleep 301", "sleep 302")
                      and f"/sssp-grader/{grader.pid}-" in _cgroup(pid)]
            time.sleep(0.05)
        assert len(jailed) == 2, "the jailed program did not start"
    finally:
        grader.kill()
        grader.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(pid) for pid in jailed):
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in jailed)


def test_a_killer_in_one_grader_cannot_touch_another_graders_student(tmp_path):
    """Two graders with different TMPDIRs at once: one grades a student that answers after 2 s,
    the other a student that SIGKILLs everything it can for 3 s. Each jail has a uid of its own,
    leased machine-wide, and sees only its own processes: the first student's runs are all right."""
    if shutil.which("cc") is None or shutil.which("make") is None:
        pytest.skip("needs cc and make")
    conf = jail_config(tmp_path, timeout=15.0)
    graders = {}
    for name in ("victim", "killer"):
        temp = tmp_path / f"tmp-{name}"
        temp.mkdir()
        student = attacker(tmp_path / f"subs-{name}", name)
        env = {**os.environ, "TMPDIR": str(temp)}
        graders[name] = subprocess.Popen(
            [sys.executable, "-m", "grader", "grade", str(student), "--out", str(tmp_path / f"out-{name}"),
             "--config", str(conf), "--methods", "tpe", "-q", "--no-shrink"], cwd=ROOT, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done = {name: process.communicate(timeout=240) for name, process in graders.items()}
    assert graders["victim"].returncode == 0, done["victim"][1]
    victim = rows_of(tmp_path / "out-victim", "victim")
    assert len(victim) == 4 and {r["status"] for r in victim} == {"ok"}, [r["detail"] for r in victim]
    killer = rows_of(tmp_path / "out-killer", "killer")
    assert killer and not [r for r in killer if r["status"] == "ok"]


def test_uid_slots_are_machine_wide_not_per_tmpdir(tmp_path):
    code = ("import sys, time; sys.path.insert(0, %r); from grader.jail import uids; "
            "print(uids.claimed_slot(), uids.slot_folder(), flush=True); time.sleep(30)" % str(ROOT))
    holders = []
    try:
        for name in ("one", "two"):
            temp = tmp_path / name
            temp.mkdir()
            holders.append(subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "TMPDIR": str(temp)},
                                            stdout=subprocess.PIPE, text=True))
        said = [holder.stdout.readline().split() for holder in holders]
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()
    assert said[0][0] != said[1][0]
    assert said[0][1] == said[1][1] and not said[0][1].startswith(str(tmp_path))
    with uids.lease() as first, uids.lease() as second:
        assert first != second


@needs_cc
def test_grade_refuses_without_a_jail_and_unsafe_says_so(tmp_path, monkeypatch, capsys):
    subs = attacker(tmp_path / "subs", "nothing")
    monkeypatch.setenv("GRADER_BWRAP", str(tmp_path / "no-such-bwrap"))
    err = io.StringIO()
    assert grade.run([subs], out=tmp_path / "out", config=jail_config(tmp_path), quiet=True, methods=["tpe"], shrink=False,
                     err=err) == 2
    said = err.getvalue().strip().splitlines()
    assert len(said) == 1 and "apt-get install bubblewrap" in said[0] and "--unsafe" in said[0]
    assert not (tmp_path / "out" / "nothing").exists()
    out = tmp_path / "unsafe"
    assert grade.run([subs], out=out, config=jail_config(tmp_path), quiet=True, methods=["tpe"], shrink=False, unsafe=True,
                     share="group") == 1      # 1: graded, and not one run right (it has no algorithm)
    rows = rows_of(out, "nothing")
    assert rows and all(r["protections"]["jail"] is None and "--unsafe" in r["protections"]["not_in_force"]["jail"]
                        for r in rows)
    assert "--unsafe" in json.loads((out / "nothing" / "build.json").read_text())["protections"]["not_in_force"]["jail"]
    assert stat.S_IMODE(out.stat().st_mode) == 0o750                    # --share group, at the end
    assert {stat.S_IMODE(p.stat().st_mode) for p in out.rglob("*") if p.is_file()} == {0o640}
    capsys.readouterr()


def _all_pids() -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _cgroup(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _processes_of(uid: int) -> list[int]:
    found = []
    for pid in _all_pids():
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        line = next((l for l in status.splitlines() if l.startswith("Uid:")), "")
        if line and int(line.split()[1]) == uid and _alive(pid):
            found.append(pid)
    return found


def test_sweep_says_when_its_program_runs_outside_the_jail(tmp_path):
    """`sweep --program`: a program the jail's uid can reach runs jailed, silently; one in a folder
    only root may enter runs outside the jail, and the sweep says so once on the console and in
    every row."""
    from grader.commands import sweep
    figure1 = ROOT / "tests" / "data" / "figure1.txt"
    reachable = Path(tempfile.mkdtemp(prefix="jail-sweep-"))      # /tmp/...: every folder on the way passable
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    try:
        reachable.chmod(0o755)
        for folder in (reachable, private):
            (folder / "prog.sh").write_text("#!/bin/sh\nexit 3\n")
            (folder / "prog.sh").chmod(0o755)
        said = {}
        for name, folder in (("reachable", reachable), ("private", private)):
            config = tmp_path / f"{name}.toml"
            config.write_text(f"""
graphs = [{json.dumps(str(figure1))}]
configs = [[256, 8]]
orderings = ["given"]
timeout_s = 5
[program]
label = "{name}"
command = "{folder}/prog.sh {{input}} {{output}}"
[methods.bmf]
syncs = ["outcore"]
""")
            err = io.StringIO()
            assert sweep.run(config=config, results=tmp_path / f"{name}.jsonl", quiet=True, err=err, out=io.StringIO(),
                             shrink=False) == 1
            said[name] = (err.getvalue(), [json.loads(line) for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()])
    finally:
        shutil.rmtree(reachable, ignore_errors=True)
    text, rows = said["reachable"]
    assert "outside the jail" not in text and all(r["protections"]["jail"] for r in rows)
    text, rows = said["private"]
    assert text.count("the program runs outside the jail") == 1 and "cannot reach" in text
    assert rows and all("cannot reach" in r["protections"]["not_in_force"]["jail"] for r in rows)


def test_a_jailed_build_writes_only_its_own_copy_and_a_fifo_it_leaves_is_not_copied(tmp_path):
    """The build's jail: it can write its copy of the sources and nothing of the submission's
    original tree or the grader's area; a FIFO it leaves behind would hang the copy of the built
    tree, so it is not copied."""
    from grader.grading.build import BuildOptions, build
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "Makefile").write_text(
        "sssp:\n\tprintf '#!/bin/sh\\nexit 0\\n' > sssp; chmod +x sssp; mkfifo pipe\n"
        f"\ttouch {tree}/escaped {tmp_path}/escaped 2>/dev/null || true\n"
        "clean:\n\trm -f sssp\n")
    area = sandbox.session_root() / f"build-test-{os.getpid()}"
    area.mkdir(mode=0o711)
    try:
        result = build(tree, area, BuildOptions(timeout_s=60), JAILED)
        assert result.built and result.cleaned, result.log
        assert sorted(os.listdir(result.program.parent)) == ["Makefile", "sssp"]
        assert result.protections["jail"] and not result.protections["not_in_force"].get("jail")
    finally:
        shutil.rmtree(area, ignore_errors=True)
    assert not (tree / "escaped").exists() and not (tmp_path / "escaped").exists()
