"""The program as users run it: both command-line forms, the output file, every refusal."""
from __future__ import annotations

import os
import re
import resource
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import FIGURE1_DIST, FIGURE1_EDGES, ROOT

TIMING = "The total {} kernel time on CPU (numpy) is "
# docs/CONTRACTS.md: the spec's two lines, exactly, on either device
SPEC_LINE = r"The total (computation|filtering) kernel time on (GPU .+|CPU \(numpy\)) is (0|\d+\.\d{3}) milli-seconds"
WALL_LINE = (r"wall: total (\d+\.\d{3}) s \(start-up (\d+\.\d{3}), load (\d+\.\d{3}), device (\d+\.\d{3}), "
             r"setup (\d+\.\d{3}), kernels (\d+\.\d{3}), output (\d+\.\d{3})\)")


def sssp(*args, cwd=None, device="cpu", input=None, limit_bytes=None, timeout=120):
    env = dict(os.environ, SSSP_DEVICE=device)

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    return subprocess.run([sys.executable, str(ROOT / "sssp.py"), *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout, input=input,
                          preexec_fn=limit if limit_bytes else None)


def distances(path: Path) -> list[str]:
    return path.read_text().splitlines()


FIG1_LINES = [f"{v}:{d}" for v, d in enumerate(FIGURE1_DIST)]


@pytest.mark.parametrize("method,sync", [("bmf", "outcore"), ("bmf", "incore"), ("tpe", "outcore"), ("tpe", "incore")])
def test_spec_form(figure1_file, tmp_path, method, sync):
    out = tmp_path / "out.txt"
    done = sssp("-input", figure1_file, "-bsize", 512, "-bcount", 4, "-output", out, method, "-sync", sync)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(TIMING.format("computation")) and lines[0].endswith(" milli-seconds")
    assert lines[1].startswith(TIMING.format("filtering")) and lines[1].endswith(" milli-seconds")
    assert "rounds: 5" in lines
    assert distances(out) == FIG1_LINES


def test_course_form_any_order_and_segscan(figure1_file, tmp_path):
    out = tmp_path / "out.txt"
    done = sssp("--sync", "outcore", "--usesmem", "yes", "--method", "bmf", "--output", out,
                "--bcount", 8, "-bsize", 256, "--input", figure1_file)
    assert done.returncode == 0, done.stderr
    assert distances(out) == FIG1_LINES
    assert "not sorted by destination" in done.stderr


def test_spec_timing_line_format_exactly(figure1_file, tmp_path):
    done = sssp("-input", figure1_file, "-bsize", 256, "-bcount", 8, "-output", tmp_path / "o", "bmf", "-sync", "outcore")
    import re
    assert re.fullmatch(r"The total computation kernel time on CPU \(numpy\) is \d+\.\d{3} milli-seconds",
                        done.stdout.splitlines()[0])
    assert done.stdout.splitlines()[1] == "The total filtering kernel time on CPU (numpy) is 0 milli-seconds"


def test_unreachable_vertices_are_inf(tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text("0 1 3\n2 3 1\n")
    out = tmp_path / "out.txt"
    assert sssp("-input", graph, "-bsize", 32, "-bcount", 1, "-output", out, "tpe", "-sync", "incore").returncode == 0
    assert distances(out) == ["0:0", "1:3", "2:INF", "3:INF"]


def test_vertex_zero_absent_warns_and_still_writes(tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text("1 2 3\n")
    out = tmp_path / "out.txt"
    done = sssp("-input", graph, "-bsize", 32, "-bcount", 1, "-output", out, "bmf", "-sync", "outcore")
    assert done.returncode == 0 and "vertex 0" in done.stderr
    assert distances(out) == ["0:0", "1:INF", "2:INF"]


@pytest.mark.parametrize("args,message", [
    ([], "usage"),
    (["-input", "g"], "missing"),
    (["-input", "g", "-bsize", 512, "-bcount", 4, "-output", "o", "nosuch", "-sync", "incore"], "unknown method"),
    (["-input", "g", "-bsize", 500, "-bcount", 4, "-output", "o", "bmf", "-sync", "incore"], "multiple of 32"),
    (["-input", "g", "-bsize", 2048, "-bcount", 4, "-output", "o", "bmf", "-sync", "incore"], "multiple of 32"),
    (["-input", "g", "-bsize", 512, "-bcount", 0, "-output", "o", "bmf", "-sync", "incore"], "-bcount"),
    (["-input", "g", "-bsize", "x", "-bcount", 4, "-output", "o", "bmf", "-sync", "incore"], "integer"),
    (["-input", "g", "-bsize", 512, "-bcount", 4, "-output", "o", "bmf", "-sync", "halfcore"], "-sync"),
    (["-input", "g", "-bsize", 512, "-bcount", 4, "-output", "o", "bmf", "tpe", "-sync", "incore"], "second method"),
    (["-input", "g", "-bsize", 512, "-bcount", 4, "-output", "o", "bmf", "-sync", "incore", "-colour", "red"], "unknown option"),
    (["-input", "g", "-bsize", 512, "-bcount", 4, "-output", "o", "tpe", "-sync", "outcore", "-usesmem", "yes"], "bmf only"),
    (["-input", "g", "-bsize", 512, "-bcount", 4, "-output", "o", "bmf", "-sync", "incore", "-usesmem", "yes"], "out-of-core only"),
    (["-input", "g", "-bsize", 512, "-bcount", 4, "-output", "o", "bmf", "-sync", "incore", "-usesmem", "maybe"], "yes or no"),
    (["-input", "g", "-bsize", 512, "-bcount", 4, "-output", "o", "bmf", "-sync", "incore", "-paths", "./o"], "same file"),
])
def test_bad_command_lines_exit_2_with_usage(args, message):
    done = sssp(*args)
    assert done.returncode == 2
    assert message in done.stderr and "usage:" in done.stderr
    assert "Traceback" not in done.stderr


def test_help_goes_to_stdout():
    done = sssp("--help")
    assert done.returncode == 0 and "usage:" in done.stdout and "-usesmem" in done.stdout


@pytest.mark.parametrize("content,message", [
    (None, "no such file"),
    ("0 1\n0 x\n", ":2: not an integer"),
    ("", "no edges"),
    ("0 1 -3\n", ":1: negative weight"),
])
def test_bad_input_files_exit_1_and_write_nothing(tmp_path, content, message):
    graph = tmp_path / "g.txt"
    if content is not None:
        graph.write_text(content)
    out = tmp_path / "out.txt"
    done = sssp("-input", graph, "-bsize", 512, "-bcount", 4, "-output", out, "bmf", "-sync", "incore")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and message in done.stderr and str(graph) in done.stderr
    assert not out.exists() and list(tmp_path.glob(".out.txt*")) == []


def test_unwritable_output_is_a_clear_error(figure1_file, tmp_path):
    done = sssp("-input", figure1_file, "-bsize", 512, "-bcount", 4, "-output", tmp_path / "no" / "out.txt",
                "bmf", "-sync", "incore")
    assert done.returncode == 1 and "cannot write" in done.stderr and "Traceback" not in done.stderr


def test_make_sssp_launcher_runs_both_forms(figure1_file, tmp_path):
    """The executable `make sssp` produces (built here if absent)."""
    launcher = ROOT / "sssp"
    if not launcher.exists():
        subprocess.run(["make", "-C", str(ROOT), "sssp"], check=True, capture_output=True, timeout=300)
    out = tmp_path / "out.txt"
    env = dict(os.environ, SSSP_DEVICE="cpu")
    done = subprocess.run([str(launcher), "-input", str(figure1_file), "-bsize", "512", "-bcount", "4",
                           "-output", str(out), "bmf", "-sync", "incore"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert distances(out) == FIG1_LINES


def run_figure1(tmp_path, *extra, method="opt", device="cpu"):
    graph = tmp_path / "g.txt"
    graph.write_text(FIGURE1_EDGES)
    out = tmp_path / "out.txt"
    return sssp("-input", graph, "-bsize", 256, "-bcount", 8, "-output", out, method, "-sync", "incore", *extra,
                device=device), out


def test_every_line_of_stdout_follows_the_contract(tmp_path):
    done, out = run_figure1(tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert all(re.fullmatch(SPEC_LINE, line) for line in lines[:2]), lines[:2]
    assert "on CPU (numpy)" in lines[0]
    assert all(re.fullmatch(r"[a-z][a-z -]*: .+", line) for line in lines[2:]), lines[2:]
    wall = re.fullmatch(WALL_LINE, lines[-1])
    assert wall, lines[-1]
    total, *stages = map(float, wall.groups())
    assert 0 < sum(stages) <= total + 0.002 and stages[0] > 0


@pytest.mark.gpu
def test_gpu_run_says_gpu_and_its_name(tmp_path):
    """./sssp itself under SSSP_DEVICE=gpu: the spec's lines name the GPU (make test-gpu)."""
    for method in ("bmf", "tpe", "opt"):
        done, out = run_figure1(tmp_path, method=method, device="gpu")
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        for line in lines[:2]:
            match = re.fullmatch(SPEC_LINE, line)
            assert match and match.group(2).startswith("GPU ") and len(match.group(2)) > 4, line
        assert re.fullmatch(WALL_LINE, lines[-1])
        assert distances(out) == FIG1_LINES


@pytest.mark.parametrize("flags", [("-delta", 3, "-fuse", 0), ("--delta", 0, "--fuse", 8), ("-fuse", 1),
                                   ("-tile", 32), ("--tile", 1000, "-delta", 3), ("-tile", 0)])
def test_opt_knobs_on_the_command_line(tmp_path, flags):
    done, out = run_figure1(tmp_path, *flags)
    assert done.returncode == 0, done.stderr
    assert distances(out) == FIG1_LINES
    if "-delta" in flags:
        assert "delta 3," in done.stdout
    if "--delta" in flags:
        assert "delta unbounded" in done.stdout
    tiled = any(flag.endswith("tile") for flag in map(str, flags)) and flags[-1] != 0
    assert ("tiles: 1 of <= " in done.stdout) == tiled


@pytest.mark.parametrize("extra,message", [
    (("-delta", 3), "opt only"), (("-fuse", 4), "opt only"), (("-tile", 64), "opt only"),
])
def test_opt_knobs_are_refused_for_other_methods(tmp_path, extra, message):
    done, out = run_figure1(tmp_path, *extra, method="bmf")
    assert done.returncode == 2 and message in done.stderr and "usage:" in done.stderr
    assert not out.exists()


@pytest.mark.parametrize("extra,message", [
    (("-delta", -1), ">= 0"), (("-delta", "x"), "integer"), (("-fuse", 70000), "-fuse"), (("-delta",), "needs a value"),
    (("-tile", 5000), "-tile"), (("--tile", 16), "-tile"),
])
def test_bad_opt_knobs_exit_2(tmp_path, extra, message):
    done, _ = run_figure1(tmp_path, *extra)
    assert done.returncode == 2 and message in done.stderr


def test_output_that_is_the_input_is_refused(tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text(FIGURE1_EDGES)
    link = tmp_path / "link.txt"
    link.symlink_to(graph)
    for target in (graph, link):
        done = sssp("-input", graph, "-bsize", 256, "-bcount", 8, "-output", target, "bmf", "-sync", "incore")
        assert done.returncode == 1 and done.stderr.count("\n") == 1 and "is the input" in done.stderr
        assert graph.read_text() == FIGURE1_EDGES


def test_output_modes_follow_the_file_or_the_umask(tmp_path):
    done, out = run_figure1(tmp_path)
    assert done.returncode == 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask
    os.chmod(out, 0o640)
    run_figure1(tmp_path)
    assert stat.S_IMODE(out.stat().st_mode) == 0o640


def test_output_to_a_fifo_is_written_in_place(tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text(FIGURE1_EDGES)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got = []

    def reader():
        with open(fifo, "rb") as stream:
            got.append(stream.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    done = sssp("-input", graph, "-bsize", 256, "-bcount", 8, "-output", fifo, "tpe", "-sync", "outcore")
    thread.join(10)
    assert done.returncode == 0, done.stderr
    assert got == [("\n".join(FIG1_LINES) + "\n").encode()] and stat.S_ISFIFO(fifo.lstat().st_mode)


def test_input_from_a_pipe_on_stdin(tmp_path):
    out = tmp_path / "out.txt"
    done = sssp("-input", "/dev/stdin", "-bsize", 256, "-bcount", 8, "-output", out, "bmf", "-sync", "outcore",
                input=FIGURE1_EDGES)
    assert done.returncode == 0, done.stderr
    assert distances(out) == FIG1_LINES


def test_a_methods_value_error_is_an_input_error_not_usage(tmp_path, monkeypatch, capsys):
    """Only a bad command line exits 2; a method refusing a graph is exit 1, one line."""
    from sssp_gpu import cli, engine

    def refuse(graph, run, device):
        raise ValueError("distances do not fit")

    monkeypatch.setattr(engine, "solve", refuse)
    monkeypatch.setenv("SSSP_DEVICE", "cpu")
    graph = tmp_path / "g.txt"
    graph.write_text(FIGURE1_EDGES)
    code = cli.main(["-input", str(graph), "-bsize", "256", "-bcount", "8", "-output", str(tmp_path / "o"),
                     "bmf", "-sync", "incore"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "distances do not fit" in err and str(graph) in err


def test_huge_vertex_id_is_refused_up_front_with_the_size(tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text("0 1 5\n1 2147483646 7\n")
    out = tmp_path / "out.txt"
    done = sssp("-input", graph, "-bsize", 256, "-bcount", 8, "-output", out, "bmf", "-sync", "outcore",
                limit_bytes=4_000_000_000)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "2,147,483,647 vertices" in done.stderr and "GiB" in done.stderr and not out.exists()


@pytest.mark.slow
def test_hundred_million_vertices_fit_in_4_gb(tmp_path):
    """A 3-edge file naming vertex 99,999,999: 100M output lines under `ulimit -v 4000000`.
    (~40 s on a loaded 2-core machine, most of it formatting the lines.)"""
    graph = tmp_path / "g.txt"
    graph.write_text("0 1 5\n1 99999999 7\n5 6 1\n")
    out = tmp_path / "out.txt"
    done = sssp("-input", graph, "-bsize", 256, "-bcount", 8, "-output", out, "bmf", "-sync", "outcore",
                limit_bytes=4_000_000_000, timeout=600)
    assert done.returncode == 0, done.stderr
    size = out.stat().st_size
    with open(out, "rb") as stream:
        head = stream.read(20)
        stream.seek(size - 40)
        tail = stream.read()
    assert head.startswith(b"0:0\n1:5\n2:INF\n")
    assert tail.endswith(b"\n99999998:INF\n99999999:12\n")
    # every distance is INF but three (0, 5 and 12): the size is exact
    id_digits = 1 + sum(9 * 10 ** (k - 1) * k for k in range(1, 9))  # 0..99,999,999
    assert size == id_digits + 2 * 10**8 + 3 * (10**8 - 3) + len("0" "5" "12")
