"""grader sweep end to end on the CPU: the project's ./sssp all ok, every failure mode recorded,
an interrupted sweep resumed with no row lost or doubled, the command line."""
from __future__ import annotations

import io
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from grader.commands import sweep
from grader.progress import Progress
from grader.jail.runner import run_program
from sssp_common.record import read_rows

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "tests" / "programs"
FIGURE1 = ROOT / "tests" / "data" / "figure1.txt"


@pytest.fixture(autouse=True)
def _cpu_and_private_caches(tmp_path, monkeypatch):
    """Subprocesses inherit this environment: CPU fallback, caches under tmp_path."""
    monkeypatch.setenv("SSSP_DEVICE", "cpu")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


def tiny_graph(tmp_path: Path, seed: int = 3, n: int = 40, m: int = 160) -> Path:
    """A random weighted graph with some vertices unreachable from 0."""
    rng = np.random.default_rng(seed)
    src, dst, w = rng.integers(0, n - 5, m), rng.integers(0, n, m), rng.integers(1, 20, m)
    path = tmp_path / "tiny.txt"
    path.write_text("# tiny\n" + "".join(f"{u}\t{v}\t{x}\n" for u, v, x in zip(src, dst, w)))
    return path


def write_config(tmp_path: Path, body: str, name: str = "t") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(body)
    return path


def toml_list(items) -> str:
    return "[" + ", ".join(json.dumps(str(i)) for i in items) + "]"


def test_small_sweep_with_the_project_program_is_all_ok(tmp_path, capsys):
    if not (ROOT / "sssp").exists():
        pytest.skip("run `make sssp` first")
    graphs = [FIGURE1, tiny_graph(tmp_path)]
    # every method on the given order (the pairings are data: widened here so no ordering files are needed)
    config = write_config(tmp_path, f"""
graphs = {toml_list(graphs)}
configs = [[256, 8]]
orderings = ["given"]
timeout_s = 60
[methods.bmf]
orderings = ["given"]
[methods.segscan]
orderings = ["given"]
[methods.tpe]
orderings = ["given"]
[methods.opt]
orderings = ["given"]
""")
    results = tmp_path / "r.jsonl"
    code = sweep.run(config=config, results=results, quiet=True)
    out = capsys.readouterr().out
    rows = read_rows(results)
    assert code == 0, out
    assert len(rows) == 2 * 7 and {r["status"] for r in rows} == {"ok"}
    assert {r["graph"] for r in rows} == {"figure1", "tiny"}
    row = rows[0]
    assert row["device"] == "CPU (numpy)" and row["graph_vertices"] == 6 and row["graph_edges"] == 7
    assert row["rounds"] == 5 and row["computation_ms"] is not None and row["wall_s"] > 0
    assert {"machine", "commit", "started_at", "command", "run_id"} <= set(row)
    assert "harness overhead" in out and "python -m grader report" in out
    # the harness's own time per run: well under 0.3 s
    overhead = float(out.split("harness overhead")[1].split("median")[1].split("ms")[0])
    assert overhead < 300


def test_all_orderings_with_the_catalogue(tmp_path, capsys):
    assert (ROOT / "sssp").exists(), "run `make sssp` first (make test does)"
    config = write_config(tmp_path, f"""
graphs = {toml_list([tiny_graph(tmp_path)])}
configs = [[512, 4]]
methods = ["bmf", "segscan", "tpe"]
""")
    code = sweep.run(config=config, results=tmp_path / "r.jsonl", quiet=True, cache_dir=tmp_path / "cache")
    rows = read_rows(tmp_path / "r.jsonl")
    assert code == 0, capsys.readouterr().out
    assert len(rows) == 6 + 1 + 2 and {r["ordering"] for r in rows} == {"given", "source", "destination"}


# the status is the distance verdict: no timing lines is a stdout-format problem, not a wrong answer
BEHAVIOURS = {"ok": "ok", "wrong": "wrong", "crash": "crash", "hang": "timeout", "chatty": "ok",
              "nofile": "no_output", "notiming": "ok"}


def stand_in_config(tmp_path: Path, graphs, configs="[[256, 8]]", methods=BEHAVIOURS, timeout=2.0, name="t") -> Path:
    template = f"{{python}} {shlex.quote(str(PROGRAMS))}/{{method}}.py --input {{input}} --output {{output}} --sync {{sync}}"
    tables = "".join(f'[methods.{m}]\norderings = ["given"]\nsyncs = ["outcore"]\n' for m in methods)
    return write_config(tmp_path, f"""
graphs = {toml_list(graphs)}
configs = {configs}
orderings = ["given"]
timeout_s = {timeout}
[program]
label = "stand-ins"
command = {json.dumps(template)}
{tables}""", name=name)


def test_every_failure_mode_is_recorded_and_the_sweep_goes_on(tmp_path, capsys):
    config = stand_in_config(tmp_path, [FIGURE1, tiny_graph(tmp_path)])
    results = tmp_path / "r.jsonl"
    code = sweep.run(config=config, results=results, quiet=True)
    out = capsys.readouterr().out
    assert code == 1
    rows = read_rows(results)
    assert len(rows) == 2 * len(BEHAVIOURS)
    for row in rows:
        assert row["status"] == BEHAVIOURS[row["method"]], row
    by = {(r["graph"], r["method"]): r for r in rows}
    assert by["tiny", "wrong"]["mismatches"] > 0 and "expected" in by["tiny", "wrong"]["detail"]
    assert "exit code 3" in by["figure1", "crash"]["detail"] and "device failed" in by["figure1", "crash"]["detail"]
    assert by["figure1", "hang"]["wall_s"] < 10 and "killed after 2 s" in by["figure1", "hang"]["detail"]
    assert by["figure1", "ok"]["device"] == "Fake Device"
    assert by["figure1", "notiming"]["stdout_format"] == "deviates" and by["figure1", "ok"]["stdout_format"] == "ok"
    # 5 MiB of stdout neither swamps the results file nor the memory of the sweep
    assert results.stat().st_size < 100_000
    assert "not ok" in out and "timeout" in out


def test_the_timeout_kills_the_whole_process_group(tmp_path):
    pid_file = tmp_path / "child.pid"
    began = time.perf_counter()
    with run_program(lambda out: ["sh", "-c", f"sleep 30 & echo $! > {pid_file}; wait"], timeout_s=0.5) as result:
        assert result.timed_out
    assert time.perf_counter() - began < 5
    child = int(pid_file.read_text())
    time.sleep(0.2)
    assert not alive(child)
    assert not result.output_path.parent.exists()   # the temp folder is gone


def alive(pid: int) -> bool:
    """Running or sleeping; a zombie (killed, waiting for a reaper that may never come) is dead."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def grader_command(*args) -> list[str]:
    return [sys.executable, "-m", "grader", *map(str, args)]


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_then_resume_loses_and_doubles_nothing(tmp_path, stop):
    config = stand_in_config(tmp_path, [FIGURE1, tiny_graph(tmp_path)],
                             configs="[[256, 8], [384, 5], [512, 4], [768, 2], [1024, 2]]",
                             methods={"ok": "ok"}, timeout=30)
    results = tmp_path / "r.jsonl"
    env = {**os.environ, "FAKE_SLEEP": "0.3", "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(grader_command("sweep", "--config", config, "--results", results),
                               cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(read_rows(results, warn=None)) < 3:
        time.sleep(0.05)
    process.send_signal(stop)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert f"interrupted; results so far are in {results}; rerun to resume" in stderr
    first = read_rows(results)
    assert 3 <= len(first) < 10
    rerun = subprocess.run(grader_command("sweep", "--config", config, "--results", results, "-q"),
                           cwd=ROOT, env={**env, "FAKE_SLEEP": "0"}, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    rows = read_rows(results)
    ids = [r["run_id"] for r in rows]
    assert len(ids) == len(set(ids)) == 10   # every cell exactly once
    assert [r["run_id"] for r in rows[:len(first)]] == [r["run_id"] for r in first]
    # --force appends new rows; --rerun-failed with everything ok runs nothing
    again = subprocess.run(grader_command("sweep", "--config", config, "--results", results, "-q", "--rerun-failed"),
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and len(read_rows(results)) == 10


def test_force_and_rerun_failed(tmp_path, capsys):
    config = stand_in_config(tmp_path, [FIGURE1], methods={"ok": "ok", "crash": "crash"})
    results = tmp_path / "r.jsonl"
    assert sweep.run(config=config, results=results, quiet=True) == 1
    assert len(read_rows(results)) == 2
    assert sweep.run(config=config, results=results, quiet=True) == 1          # nothing to run
    assert len(read_rows(results)) == 2
    assert sweep.run(config=config, results=results, quiet=True, rerun_failed=True) == 1
    rows = read_rows(results)
    assert [r["method"] for r in rows] == ["ok", "crash", "crash"]
    assert sweep.run(config=config, results=results, quiet=True, force=True) == 1
    assert len(read_rows(results)) == 5
    capsys.readouterr()


def test_a_missing_graph_stops_the_sweep_before_anything_runs(tmp_path, capsys):
    config = stand_in_config(tmp_path, [FIGURE1, tmp_path / "absent.txt"], methods={"ok": "ok"})
    assert sweep.run(config=config, results=tmp_path / "r.jsonl", quiet=True) == 2
    captured = capsys.readouterr()
    assert f"key 'graphs': no such file: {tmp_path / 'absent.txt'}" in captured.err
    assert captured.err.count("\n") == 1 and not (tmp_path / "r.jsonl").exists()


def test_command_line_help_dry_run_and_errors(tmp_path):
    began = time.perf_counter()
    helped = subprocess.run(grader_command("--help"), cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "sweep" in helped.stdout and "examples" in helped.stdout
    assert time.perf_counter() - began < 10
    sweep_help = subprocess.run(grader_command("sweep", "--help"), cwd=ROOT, capture_output=True, text=True)
    assert "--rerun-failed" in sweep_help.stdout
    config = stand_in_config(tmp_path, [FIGURE1])
    dry = subprocess.run(grader_command("sweep", "--config", config, "--results", tmp_path / "r.jsonl", "--dry-run"),
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert dry.returncode == 0 and "7 cells" in dry.stdout and "todo" in dry.stdout
    assert not (tmp_path / "r.jsonl").exists()
    default = subprocess.run(grader_command("sweep", "--dry-run", "--results", tmp_path / "d.jsonl"),
                             cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert default.returncode == 0 and "cells in sweep 'sweep'" in default.stdout
    bad = subprocess.run(grader_command("sweep", "--config", tmp_path / "nope.toml"), cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "nope.toml" in bad.stderr and "Traceback" not in bad.stderr
    bad_scale = subprocess.run(grader_command("sweep", "--config", config, "--scale", "huge", "--dry-run"),
                               cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad_scale.returncode == 2 and "--scale" in bad_scale.stderr and len(bad_scale.stderr.splitlines()) == 1


def test_progress_on_a_terminal_in_a_log_and_quiet():
    term = io.StringIO()
    with Progress(3, stream=term, tty=True) as bar:
        bar.update(0, label="graph-a 256x8 bmf")
        bar.update(1, label="graph-a 256x8 bmf", status="ok")
        bar.update(1, label="graph-b 512x4 tpe", status="crash")
        bar.write("grader sweep: skipped graph-c")
        bar.update(1, label="graph-b 512x4 tpe", status="ok")
    drawn = term.getvalue()
    last = drawn.rsplit("\r", 1)[-1]
    assert "3/3" in last and "1 crash" in last and "graph-b 512x4 tpe" in last       # count, failures, cell
    assert "grader sweep: skipped graph-c\n" in drawn and drawn.endswith("\n")
    assert "<" in drawn and "?" in drawn.split("\r")[1]       # tqdm's elapsed<ETA, unknown before a rate
    downloaded = io.StringIO()
    with Progress(2048, unit="bytes", stream=downloaded, tty=True, label="x.gz", initial=1024) as bar:
        bar.update(1024)
    assert "2.00k/2.00k" in downloaded.getvalue().rsplit("\r", 1)[-1]
    for stream, kwargs in ((io.StringIO(), {"tty": False}), (io.StringIO(), {"tty": True, "quiet": True})):
        with Progress(2, stream=stream, **kwargs) as bar:      # a log or -q: nothing at all
            bar.update(2, status="wrong")
        assert stream.getvalue() == "" and bar.not_ok == {"wrong": 1}
