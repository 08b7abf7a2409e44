"""The program as users run it: both command-line forms, the output file, every refusal."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIGURE1_DIST, ROOT

TIMING = "The total {} kernel time on CPU (numpy) is "


def sssp(*args, cwd=None):
    env = dict(os.environ, SSSP_DEVICE="cpu")
    return subprocess.run([sys.executable, str(ROOT / "sssp.py"), *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


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
