"""The kept ./sssp (sssp_gpu/serve.py, grader/sweep/warm.py) against a fresh process.

A cell in the kept process must leave what a fresh `./sssp` leaves, byte for byte: the same
exit status, output file, -paths file, stderr and stdout (times apart), for every method,
sync and option, and nothing of one cell may reach the next (another graph, a failure, a
file rewritten in place). On the CPU here; `make test-gpu` runs the GPU twin.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import FIGURE1_EDGES, ROOT, random_graph
from grader.sweep import warm
from grader.sweep.cells import PROJECT_SSSP, Cell
from sssp_common.vocabulary import METHODS
from sssp_gpu import serve

TIMES = re.compile(r"(kernel time on .* is )[\d.]+( milli-seconds)")
WALL = re.compile(r"^wall: .*$", re.MULTILINE)


def write_graph(path: Path, graph, weighted: bool = True) -> Path:
    rows = zip(graph.src, graph.dst, graph.w) if weighted else zip(graph.src, graph.dst)
    path.write_text("".join(" ".join(map(str, row)) + "\n" for row in rows))
    return path


@pytest.fixture(scope="module")
def graphs(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("graphs")
    figure1 = folder / "figure1.txt"
    figure1.write_text(FIGURE1_EDGES)
    return [figure1, write_graph(folder / "random.txt", random_graph(7)),
            write_graph(folder / "unit.txt", random_graph(8, max_weight=None), weighted=False)]


def launcher(folder: Path) -> Path:
    """A ./sssp launcher of our own: the tests do not depend on `make sssp` having run."""
    path = folder / "sssp"
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{ROOT / "sssp.py"}" "$@"\n')
    path.chmod(0o755)
    return path


def environment(device: str, folder: Path) -> dict:
    return {**os.environ, "SSSP_DEVICE": device, "SSSP_CACHE_DIR": str(folder / "cache")}


@pytest.fixture(scope="module", params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def kept(request, tmp_path_factory):
    """(server, environment) for one device: one kept process for the module's cells."""
    folder = tmp_path_factory.mktemp(f"kept-{request.param}")
    env = environment(request.param, folder)
    server = warm.Server(launcher(folder), env, folder)
    yield server, env
    server.stop()


def cases(graphs: list[Path], gpu: bool = False) -> list[list[str]]:
    """Every method and sync on the graphs, graphs alternating (a cell after another graph),
    then every method on one graph in a row (what the kept copies serve), opt's knobs, -paths
    and the exits 1 and 2."""
    runs = []
    for method in METHODS:
        for sync in ("outcore", "incore"):
            for number, graph in enumerate(graphs):
                if gpu and number == 0:
                    continue          # a fresh GPU run costs ~1 s: Figure 1 only in the cases below
                bsize, bcount = ((256, 8), (1024, 2), (384, 5))[number]
                runs.append(["-input", str(graph), "-bsize", str(bsize), "-bcount", str(bcount),
                             "-output", "{out}", method, "-sync", sync])
    for graph in graphs:
        runs.append(["-input", str(graph), "-bsize", "512", "-bcount", "4", "-output", "{out}", "bmf",
                     "-sync", "outcore", "-usesmem", "yes"])
    for method in METHODS:   # one graph, cell after cell: its kept copies (host and device) reused
        runs.append(["-input", str(graphs[1]), "-bsize", "768", "-bcount", "2", "-output", "{out}", method,
                     "-sync", "outcore"])
    runs += [["--input", str(graphs[1]), "--bsize", "512", "--bcount", "4", "--output", "{out}",
              "--method", "opt", "--sync", "incore", "-delta", "0", "-fuse", "0"],
             ["-input", str(graphs[2]), "-bsize", "256", "-bcount", "8", "-output", "{out}", "opt",
              "-sync", "outcore", "-delta", "3", "-paths", "{paths}"],
             ["-input", str(graphs[1]), "-bsize", "256", "-bcount", "8", "-output", "{out}", "harish",
              "-sync", "incore", "-paths", "{paths}"],
             ["-input", str(graphs[0]) + ".missing", "-bsize", "256", "-bcount", "8", "-output", "{out}",
              "bmf", "-sync", "incore"],
             ["-input", str(graphs[0]), "-bsize", "100", "-bcount", "8", "-output", "{out}", "bmf", "-sync", "incore"],
             ["-input", str(graphs[0]), "-output", "{out}", "bmf"]]
    return runs


def fill(argv: list[str], folder: Path) -> list[str]:
    return [a.replace("{out}", str(folder / "out.txt")).replace("{paths}", str(folder / "paths.txt")) for a in argv]


def leaves(folder: Path, code, stdout: str, stderr: str) -> dict:
    """What a run left: status, files (bytes), stdout with its times masked, stderr."""
    files = {name: (folder / name).read_bytes() for name in ("out.txt", "paths.txt") if (folder / name).exists()}
    return {"exit": code, "files": files, "stdout": WALL.sub("wall: T", TIMES.sub(r"\1T\2", stdout)),
            "stderr": stderr}


def run_fresh(argv: list[str], folder: Path, env: dict) -> dict:
    folder.mkdir(parents=True)
    done = subprocess.run([sys.executable, str(ROOT / "sssp.py"), *fill(argv, folder)], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)
    return leaves(folder, done.returncode, done.stdout, done.stderr)


def run_kept(server, argv: list[str], folder: Path, timeout_s: float = 300) -> dict:
    folder.mkdir(parents=True)
    code, _ = server.run(fill(argv, folder), folder, folder / "stdout", folder / "stderr", timeout_s)
    return leaves(folder, code, (folder / "stdout").read_text(), (folder / "stderr").read_text())


# On a GPU, in-place relaxation races decide how many rounds and relaxations a run takes, so two
# fresh runs may print different counts: there those lines are compared by their words alone.
RACY = re.compile(r"^(rounds|edges processed|edges scanned by filtering): .*$", re.MULTILINE)


def same_run(fresh: dict, kept_run: dict, gpu: bool) -> None:
    assert kept_run["exit"] == fresh["exit"]
    assert kept_run["files"] == fresh["files"]
    assert kept_run["stderr"] == fresh["stderr"]
    if gpu:
        assert RACY.sub(r"\1: N", kept_run["stdout"]) == RACY.sub(r"\1: N", fresh["stdout"])
    else:
        assert kept_run["stdout"] == fresh["stdout"]


def test_every_method_sync_and_option_leaves_what_a_fresh_process_leaves(kept, graphs, tmp_path):
    server, env = kept
    gpu = env["SSSP_DEVICE"] == "gpu"
    for number, argv in enumerate(cases(graphs, gpu)):
        fresh = run_fresh(argv, tmp_path / f"fresh-{number}", env)
        kept_run = run_kept(server, argv, tmp_path / f"kept-{number}")
        assert fresh["exit"] in (0, 1, 2), fresh
        same_run(fresh, kept_run, gpu)
    assert server.died_with() is None
    assert server.device.startswith("GPU ") if gpu else server.device == "CPU (numpy)"


def test_nothing_leaks_from_a_failure_or_a_file_rewritten_in_place(kept, graphs, tmp_path):
    server, env = kept
    graph = tmp_path / "g.txt"
    graph.write_text(FIGURE1_EDGES)
    argv = ["-input", str(graph), "-bsize", "256", "-bcount", "8", "-output", "{out}", "opt", "-sync", "incore"]
    gpu = env["SSSP_DEVICE"] == "gpu"
    first = run_kept(server, argv, tmp_path / "first")
    same_run(run_fresh(argv, tmp_path / "fresh-first", env), first, gpu)
    assert first["exit"] == 0
    graph.write_text("0 1 1\n1 2 1\n2 3 oops\n")           # the same path, now bad: exit 1 naming the line
    stamp = time.time() + 5
    os.utime(graph, (stamp, stamp))
    bad = run_kept(server, argv, tmp_path / "bad")
    assert bad == run_fresh(argv, tmp_path / "fresh-bad", env) and bad["exit"] == 1   # nothing timed: equal
    assert ":3:" in bad["stderr"]
    graph.write_text("0 1 7\n1 2 1\n0 3 2\n3 1 1\n")        # rewritten again: read again, not the old graph
    os.utime(graph, (stamp + 5, stamp + 5))
    after = run_kept(server, argv, tmp_path / "after")
    same_run(run_fresh(argv, tmp_path / "fresh-after", env), after, gpu)
    assert after["files"]["out.txt"] == b"0:0\n1:3\n2:4\n3:2\n"
    other = ["-input", str(graphs[1])] + argv[2:]           # then another graph, then back
    assert run_kept(server, other, tmp_path / "other")["files"] == run_fresh(other, tmp_path / "fresh-other", env)["files"]
    assert run_kept(server, argv, tmp_path / "back")["files"]["out.txt"] == b"0:0\n1:3\n2:4\n3:2\n"


# --- the server's pieces, in this process -------------------------------------------

def test_an_uncaught_exception_is_a_traceback_status_1_and_a_restart(monkeypatch, tmp_path):
    from sssp_gpu import cli

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in a method")
    monkeypatch.setattr(cli, "main", broken)
    for name, fd in (("stdout", 1), ("stderr", 2)):   # as in the server: the streams write to fds 1 and 2
        monkeypatch.setattr(sys, name, open(fd, "w", closefd=False))
    shelf = serve.Shelf(1 << 20)
    request = {"argv": [], "cwd": str(tmp_path), "stdout": str(tmp_path / "o"), "stderr": str(tmp_path / "e")}
    assert serve.run_cell(request, shelf) == (1, True)
    stderr = (tmp_path / "e").read_text()
    assert "Traceback" in stderr and "RuntimeError: a bug in a method" in stderr
    monkeypatch.setattr(cli, "main", lambda *a, **k: sys.exit("sssp: gave up"))
    assert serve.run_cell(request, shelf) == (1, False)
    assert (tmp_path / "e").read_text() == "sssp: gave up\n"
    monkeypatch.setattr(cli, "main", lambda *a, **k: 3)
    assert serve.run_cell(request, shelf) == (3, True)     # a device error: the context is not trusted again


def test_the_shelf_keeps_graphs_by_identity_within_its_budget(tmp_path):
    from sssp_common.loader import load_graph
    reads = []

    def counting(path):
        reads.append(Path(path).name)
        return load_graph(path, cache=False)
    small = tmp_path / "a.txt"
    small.write_text(FIGURE1_EDGES)
    big = write_graph(tmp_path / "b.txt", random_graph(3))
    shelf = serve.Shelf(budget_bytes=3 * 4 * random_graph(3).m + 12, loader=counting)   # a or b, not both
    first = shelf.load(small)
    assert shelf.load(small) is first and reads == ["a.txt"]
    with pytest.raises(ValueError):
        first.dst[0] = 1                                      # read-only: no cell can change the next one's input
    shelf.load(big)
    assert len(shelf) == 1 and shelf.held_bytes() <= shelf.budget   # a went, least recently used
    shelf.load(small)
    assert reads == ["a.txt", "b.txt", "a.txt"]
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"printf '0 1 5\\n' > {fifo}"])
    assert shelf.load(fifo).n == 2 and writer.wait(10) == 0
    assert reads[-1] == "pipe" and len(shelf) == 1            # a stream is read, never kept


def test_a_cell_past_its_timeout_takes_the_server_with_it(tmp_path):
    env = environment("cpu", tmp_path)
    server = warm.Server(launcher(tmp_path), env, tmp_path)
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)
    argv = ["-input", str(fifo), "-bsize", "256", "-bcount", "8", "-output", str(tmp_path / "o"), "bmf", "-sync", "incore"]
    began = time.monotonic()
    assert server.run(argv, tmp_path, tmp_path / "so", tmp_path / "se", timeout_s=1.0) == (None, True)
    assert time.monotonic() - began < 10 and server.died_with() == -signal.SIGKILL


# --- which programs run warm -------------------------------------------------------

def sweep_like(**changes):
    settings = dict(command="{sssp} -input {input} -output {output} {method}", warm=True, sandbox=None,
                    program_path=None)
    settings.update(changes)
    return SimpleNamespace(**settings)


def cell(program_id: str = "project@abc123") -> Cell:
    return Cell("project", "g", "given", 256, 8, "bmf", "bmf", "no", "incore", 0, program_id)


def test_only_this_checkouts_own_sssp_by_identity_runs_warm(tmp_path):
    assert warm.eligible(sweep_like(), cell(), PROJECT_SSSP) == PROJECT_SSSP.is_file()
    copy = tmp_path / "sssp"
    copy.write_text("#!/bin/sh\n")
    assert not warm.eligible(sweep_like(), cell(), copy)                       # another file called sssp
    assert not warm.eligible(sweep_like(), cell("program@abc"), PROJECT_SSSP)  # labelled project, is not
    assert not warm.eligible(sweep_like(program_path=copy), cell(), PROJECT_SSSP)     # a graded build
    assert not warm.eligible(sweep_like(command=f"{sys.executable} x.py {{input}}"), cell(), PROJECT_SSSP)
    assert not warm.eligible(sweep_like(warm=False), cell(), PROJECT_SSSP)      # --cold
    assert not warm.eligible(sweep_like(sandbox=object()), cell(), PROJECT_SSSP)


@pytest.mark.skipif(not PROJECT_SSSP.is_file(), reason="needs ./sssp (make sssp)")
def test_a_sweep_warm_and_cold_gives_the_same_verdicts(tmp_path, monkeypatch):
    from grader.commands import sweep
    from sssp_common.record import read_rows
    monkeypatch.setenv("SSSP_DEVICE", "cpu")
    config = tmp_path / "s.toml"
    config.write_text(f'name = "w"\ngraphs = ["{ROOT / "tests" / "data" / "figure1.txt"}"]\n'
                      'configs = [[256, 8]]\norderings = ["given", "source"]\nreps = 1\n')
    rows = {}
    for mode in ("warm", "cold"):
        results = tmp_path / f"{mode}.jsonl"
        code = sweep.run(config=config, results=results, quiet=True, cold=mode == "cold",
                         out=open(os.devnull, "w"), err=open(os.devnull, "w"))
        assert code == 0
        rows[mode] = list(read_rows(results))
    assert len(rows["warm"]) == len(rows["cold"]) > 0
    key = ("run_id", "status", "distances", "rounds", "edges_processed", "stdout_format", "output_format")
    assert [[r[k] for k in key] for r in rows["warm"]] == [[r[k] for k in key] for r in rows["cold"]]
    assert all("warm" in r["protections"] for r in rows["warm"])
    assert not any("warm" in r["protections"] for r in rows["cold"])
    assert all(r["startup_s"] is not None for r in rows["warm"] + rows["cold"])
    assert np.median([r["startup_s"] for r in rows["warm"]]) < np.median([r["startup_s"] for r in rows["cold"]])


def test_the_summary_splits_busy_time_into_kernels_start_up_and_checking():
    from grader.sweep.timesplit import time_split
    cold = [{"wall_s": 1.0, "computation_ms": 2.0, "filtering_ms": 0.0, "startup_s": 0.8, "protections": {}}] * 4
    line = time_split(cold, overheads=[0.05] * 4, wall_s=4.5)
    assert "one process per run" in line and "kernels 8 ms (0.2 %" in line
    assert "start-up 3.2 s (76.2 %)" in line and "checking 0.2 s (4.8 %)" in line and "outside the runs 0.3 s" in line
    kept = [{"wall_s": 0.01, "computation_ms": 5.0, "filtering_ms": 1.0, "startup_s": 0.0,
             "protections": {"warm": {"server_start_s": 0.5 if i == 0 else 0.0}}} for i in range(10)]
    line = time_split(kept, overheads=[0.52] + [0.01] * 9, wall_s=0.8)
    assert "10 of 10 runs in a kept ./sssp, 0.5 s to start it" in line
    assert "kernels 60 ms" in line and "60.0 % of the programs'" in line and "start-up 0.5 s" in line
    assert "checking 0.1 s" in line
    assert "unknown" in time_split([{"wall_s": 1.0, "protections": {}}], [0.1], 1.2)
    assert time_split([], [], 1.0) == ""


def test_the_device_thread_guesses_the_method_and_sync_from_either_command_form():
    import importlib.util
    spec = importlib.util.spec_from_file_location("sssp_script", ROOT / "sssp.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)      # not __main__: nothing runs
    guess = script.method_and_sync
    assert guess("-input f -bsize 512 -bcount 4 -output o BMF -sync incore".split()) == ("bmf", "incore")
    assert guess("--input f --bsize 1 --bcount 4 --output o --method opt --sync outcore".split()) == ("opt", "outcore")
    assert guess("-input f -output o -sync incore -usesmem yes vbf-flag -delta 0".split()) == ("vbf-flag", "incore")
    assert guess(["-input", "f"]) == ("", "")
    assert not script._wants_device(["--help"]) and not script._wants_device([]) \
        and not script._wants_device([script.SERVE_FLAG]) and script._wants_device(["-input", "f"])


@pytest.mark.gpu
def test_preloading_a_methods_modules_is_what_its_run_then_uses():
    from sssp_gpu import kernels
    for (family, sync), names in kernels.METHOD_MODULES.items():
        kernels.preload(family, sync or "outcore")
        for name in names:
            assert kernels._module.cache_info().currsize and kernels.module(name) is kernels._module(name)


def test_a_server_that_cannot_start_sends_runs_to_fresh_processes(tmp_path, monkeypatch, capsys):
    from contextlib import contextmanager
    broken = tmp_path / "broken-sssp"
    broken.write_text("#!/bin/sh\necho 'cannot import cupy' >&2\nexit 1\n")
    broken.chmod(0o755)
    keeper = warm.Keeper()
    monkeypatch.setattr(warm, "KEEPER", keeper)
    monkeypatch.setattr(warm, "PROJECT_SSSP", broken)
    fresh_runs = []

    @contextmanager
    def fresh():
        fresh_runs.append(1)
        yield "a fresh run's result"
    sandbox = SimpleNamespace(env="inherit", user="never", extra_path=(), pass_env=())
    with warm.kept_or_fresh(lambda out: ["sssp", "-input", "x"], 5.0, sandbox, fresh) as result:
        assert result == "a fresh run's result"
    assert fresh_runs == [1] and "cannot import cupy" in keeper.broken
    assert "fresh process from here on" in capsys.readouterr().err
    assert not warm.eligible(sweep_like(), cell(), PROJECT_SSSP)      # no second wait for a broken server
    keeper.close()
