"""The benchmark harness on the CPU: its parsers, file formats, time budget, and one whole run on tiny graphs."""
from __future__ import annotations

import json
import stat
import sys

import numpy as np
import pytest

from benchmarks import formats, run, tools, wall
from benchmarks.common import Budget, goal_text
from sssp_common.graph import Graph


def test_parse_wall_reads_every_stage_in_order():
    stdout = ("The total computation kernel time on GPU X is 1.500 milli-seconds\n"
              "wall: total 0.712 s (start-up 0.301, load 0.020, device 0.150, setup 0.040, kernels 0.002, "
              "output 0.120)\nrounds: 3\n")
    stages = wall.parse_wall(stdout)
    assert list(stages) == ["total", "start-up", "load", "device", "setup", "kernels", "output"]
    assert stages["total"] == pytest.approx(0.712) and stages["output"] == pytest.approx(0.120)


def test_parse_wall_absent_line_gives_none():
    assert wall.parse_wall("rounds: 3\nwall clock: fine\n") is None


def _executable(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_find_prefers_the_first_folder_holding_the_binary(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    _executable(second / "gapbs" / "sssp", "#!/bin/sh\n")
    assert tools.find("gapbs", [first, second]) == second / "gapbs" / "sssp"
    _executable(first / "gapbs" / "sssp", "#!/bin/sh\n")
    assert tools.find("gapbs", [first, second]) == first / "gapbs" / "sssp"
    assert tools.find("gunrock", [first, second]) is None


def test_search_dirs_put_the_environment_first(tmp_path):
    dirs = tools.search_dirs({"SSSP_TOOLS_DIR": str(tmp_path)})
    assert dirs[0] == tmp_path and dirs[1].name == ".device-tools"


def test_gapbs_best_keeps_the_fastest_delta(tmp_path):
    # the fake takes (10 - delta) / 100 seconds, so the largest delta is fastest
    fake = _executable(tmp_path / "gapbs", "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = -d ] && d=$2; shift; done\n"
                                          "echo \"Average Time:        0.0$((10 - d))\"\n")
    best = tools.gapbs_best(fake, tmp_path / "g.wsg", (1, 2, 4), threads=1)
    assert best.ms == pytest.approx(60.0) and best.detail == "Δ=4"
    assert [r["ms"] for r in best.runs] == pytest.approx([90.0, 80.0, 60.0])


def test_gapbs_failure_is_reported_not_raised(tmp_path):
    fake = _executable(tmp_path / "gapbs", "#!/bin/sh\necho 'Couldn't open file' ; exit 2\n")
    outcome = tools.gapbs(fake, tmp_path / "missing.wsg", 1, threads=1)
    assert outcome.ms is None and outcome.detail.startswith("exit 2")


def test_gunrock_median_of_process_times(tmp_path):
    script = ("#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = -d ] && d=$2; [ \"$1\" = -f ] && f=$2; shift; done\n"
              "echo '{\"params\": {\"x\": 1}, \"stats\": {\"process_times\": [5.0, 1.0, 3.0]}}' > \"$d/$f\"\n")
    fake = _executable(tmp_path / "gunrock", script)
    outcome = tools.gunrock(fake, tmp_path / "g.mtx", runs=3)
    assert outcome.ms == pytest.approx(3.0) and outcome.runs == [5.0, 1.0, 3.0]


def _small_graph() -> Graph:
    # 0->1 twice (weights 7 and 3), a self-loop on 2, 1->2, 2->0
    return Graph.from_arrays([0, 0, 2, 1, 2], [1, 1, 2, 2, 0], [7, 3, 5, 4, 9])


def test_wsg_holds_gapbs_squished_graph(tmp_path):
    target = tmp_path / "g.wsg"
    formats.write_wsg(target, _small_graph())
    data = target.read_bytes()
    assert data[0] == 1  # directed
    edges, nodes = np.frombuffer(data[1:17], dtype=np.int64)
    assert (edges, nodes) == (3, 3)  # duplicate merged, self-loop dropped
    at = 17
    offsets = np.frombuffer(data[at:at + 8 * 4], dtype=np.int64)
    at += 32
    pairs = np.frombuffer(data[at:at + 8 * 3], dtype=np.int32).reshape(3, 2)
    at += 24
    assert offsets.tolist() == [0, 1, 2, 3]
    assert pairs.tolist() == [[1, 3], [2, 4], [0, 9]]  # the lighter 0->1 kept
    in_offsets = np.frombuffer(data[at:at + 32], dtype=np.int64)
    in_pairs = np.frombuffer(data[at + 32:], dtype=np.int32).reshape(3, 2)
    assert in_offsets.tolist() == [0, 1, 2, 3] and in_pairs.tolist() == [[2, 9], [0, 3], [1, 4]]


def test_mtx_is_one_based_general_and_wel_has_no_comments(tmp_path):
    graph = _small_graph()
    formats.write_mtx(tmp_path / "g.mtx", graph)
    lines = (tmp_path / "g.mtx").read_text().splitlines()
    assert lines[0] == "%%MatrixMarket matrix coordinate integer general"
    assert lines[1] == "3 3 5" and lines[2] == "1 2 7"
    formats.write_wel(tmp_path / "g.wel", graph)
    assert (tmp_path / "g.wel").read_text().splitlines() == ["0 1 7", "0 1 3", "2 2 5", "1 2 4", "2 0 9"]


def test_budget_skips_what_would_overrun_and_lists_it():
    now = [0.0]
    budget = Budget(100, clock=lambda: now[0])
    budget.section(0.5)
    assert budget.allows(40, "a")
    now[0] = 30.0
    assert not budget.allows(40, "b")
    budget.section(1.0)  # the next table inherits what the first left
    assert budget.allows(40, "b")
    assert len(budget.skipped) == 1 and budget.skipped[0].startswith("b ")


def test_a_reserve_for_later_never_skipped_work_shortens_a_table():
    now = [0.0]
    budget = Budget(100, clock=lambda: now[0])
    budget.section(0.6, reserve_s=70)  # the baselines after this table need 70 s: it gets 30
    assert budget.left() == 30
    budget.section(0.6, reserve_s=10)  # cached baselines: the share decides
    assert budget.left() == 60


def test_goal_text():
    assert goal_text(0.8, 1.0, "s").startswith("met")
    assert goal_text(2.5, 1.0, "s").startswith("missed by 2.50x")
    assert goal_text(6.0, 5, "x", at_most=False).startswith("met")
    assert goal_text(2.5, 5, "x", at_most=False).startswith("missed by 2.00x")


def test_whole_harness_on_tiny_graphs(tmp_path, monkeypatch, capfd):
    """``make bench`` at ci scale on the CPU: every table, gapbs faked, Gunrock skipped (no GPU);
    capfd: the fw table runs in a process of its own."""
    tools_dir = tmp_path / "tools"
    _executable(tools_dir / "gapbs" / "sssp", "#!/bin/sh\necho 'Average Time:        0.0042'\n")
    _executable(tools_dir / "gunrock" / "sssp", "#!/bin/sh\nexit 1\n")
    monkeypatch.setenv("SSSP_DEVICE", "cpu")
    monkeypatch.setenv("SSSP_TOOLS_DIR", str(tools_dir))
    monkeypatch.setenv("SSSP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SSSP_BASELINE_CACHE", str(tmp_path / "baselines.json"))
    results = tmp_path / "results.jsonl"
    argv = ["--scale", "ci", "--graphs-dir", str(tmp_path / "graphs"), "--results", str(results),
            "--out-dir", str(tmp_path / "out"), "--threads", "1"]
    assert run.main(argv) == 0
    out = capfd.readouterr().out
    for title in ("./sssp end to end on the road stand-in", "opt incore against gapbs, Gunrock and scipy",
                  "opt outcore against incore", "Loading ./sssp's input", "bmf per configuration",
                  "bmf / segscan / tpe", "fw-blocked as ./apsp runs it"):
        assert title in out
    assert "Gunrock: no GPU here" in out
    # no Gunrock time: its goal is unknown, never met; gapbs ran fresh and was cached
    assert "Gunrock/opt >= 3x: unknown: " in out and "not measured (no GPU here)" in out
    assert "gapbs/opt >= 5x: m" in out and "(cached 20" not in out  # met or missed: every graph measured
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    sections = [r["section"] for r in rows]
    assert sections.count("wall") == 14 and sections.count("versus") == 6 and sections[-1] == "summary"
    assert all(r["wall_s"] is not None and not r["failed"] for r in rows if r["section"] == "wall")
    versus = [r for r in rows if r["section"] == "versus"]
    assert all(r["opt_incore"]["wrong_vertices"] == 0 and r["gapbs_ms"] == pytest.approx(4.2) for r in versus)
    # opt as users run it: a real fresh ./sssp a graph at ci scale, its printed time read
    assert all(len(r["opt_fresh"]["printed_ms"]) == 1 and r["opt_fresh"]["ms"] > 0 for r in versus)
    assert rows[-1]["failures"] == 0
    # a second run finds every graph in the cache
    assert run.main(argv + ["--only", "versus"]) == 0  # (--quick tries other Δ: a different cache key)
    again = capfd.readouterr().out
    assert "preparing graphs in" not in again
    # ... and every gapbs time in the cache, each marked with the date it was measured
    assert again.count("4.20 (cached 20") >= 6 and "gapbs times cached from earlier runs" in again


@pytest.mark.skipif(sys.platform != "linux", reason="fork-based preparation")
def test_prepared_files_are_reused(tmp_path, monkeypatch):
    from benchmarks import graphs

    monkeypatch.setenv("SSSP_CACHE_DIR", str(tmp_path / "cache"))
    messages = []
    graphs.prepare("ci", keys=["grid-w"], root=tmp_path, workers=1, log=lambda *a, **k: messages.append(a[0]))
    made = graphs.path("ci", "grid-w", "wsg", tmp_path)
    assert made.is_file() and graphs.path("ci", "grid-w", "mtx", tmp_path).is_file()
    stamp = made.stat().st_mtime_ns
    messages.clear()
    graphs.prepare("ci", keys=["grid-w"], root=tmp_path, workers=1, log=lambda *a, **k: messages.append(a[0]))
    assert messages == [] and made.stat().st_mtime_ns == stamp
    assert graphs.load("ci", "grid-w", tmp_path).m == 2 * 2 * 24 * 23


def test_scipy_reference_keeps_the_lightest_duplicate():
    from benchmarks import versus
    from sssp_gpu.methods.common import INF

    graph = Graph.from_arrays([0, 0, 2, 1, 2], [1, 1, 2, 2, 0], [7, 3, 5, 4, 9], n=4)
    dist, ms = versus.scipy_dijkstra(graph.n, formats.squished(graph.n, graph.src, graph.dst, graph.w))
    assert dist.tolist() == [0, 3, 7, INF] and ms >= 0


def test_a_spent_budget_skips_tables_and_says_what(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SSSP_DEVICE", "cpu")
    monkeypatch.setenv("SSSP_TOOLS_DIR", str(tmp_path / "no-tools"))
    monkeypatch.setenv("SSSP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SSSP_BASELINE_CACHE", "off")
    monkeypatch.setattr(tools, "search_dirs", lambda env=None: [tmp_path / "no-tools"])
    argv = ["--quick", "--scale", "ci", "--budget", "0", "--graphs-dir", str(tmp_path / "graphs"),
            "--results", str(tmp_path / "r.jsonl"), "--out-dir", str(tmp_path / "out")]
    assert run.main(argv) == 0
    out = capsys.readouterr().out
    assert "gapbs: no binary" in out
    assert "gapbs/opt >= 5x: unknown: " in out and "met on" not in out.split("gapbs/opt >= 5x")[1].split("\n")[0]
    assert "skipped for time (" in out and "LiveJournal stand-in, unit: the whole row" in out
    summary = json.loads((tmp_path / "r.jsonl").read_text().splitlines()[-1])
    assert summary["section"] == "summary" and len(summary["skipped"]) >= 14 + 6


def test_mismatches_accepts_a_narrower_dtype():
    from benchmarks.versus import mismatches
    from sssp_gpu.methods.common import INF

    expected = np.array([0, 5, INF], dtype=np.int64)
    assert mismatches(np.array([0, 5, np.iinfo(np.int32).max], dtype=np.int32), expected) == 0
    assert mismatches(np.array([0, 4, 7], dtype=np.int64), expected) == 2


def test_sweep_speed_compares_verdicts_and_counts_moved_rounds_apart(capsys):
    from benchmarks.sweep_speed import same_verdicts

    def row(rep, method="bmf", sync="incore", status="ok", distances="abc", rounds=5):
        return {"graph": "g", "ordering": "given", "method": method, "sync": sync, "bsize": 256, "bcount": 8,
                "rep": rep, "status": status, "distances": distances, "rounds": rounds}

    warm = [row(0), row(1), row(2, method="opt"), row(3)]
    cold = [row(0), row(1, rounds=6), row(2, method="opt", distances="xyz"), row(9)]
    assert same_verdicts(warm, cold) == "2 of 3 same (rounds differ on 1: bmf incore)"
    assert "warm and cold differ on g given opt incore 256 8 2" in capsys.readouterr().err
    assert same_verdicts(warm, warm) == "4 of 4 same"


def test_context_starts_runs_an_mps_daemon_of_its_own_and_stops_it(tmp_path, monkeypatch):
    """A fake nvidia-cuda-mps-control records its calls: started with -d and the setting's own
    pipe and log folders, stopped with "quit" on its input, even when the setting fails."""
    from benchmarks import context_starts

    calls = tmp_path / "calls"
    fake = tmp_path / "bin" / "nvidia-cuda-mps-control"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho "$* pipe=$CUDA_MPS_PIPE_DIRECTORY log=$CUDA_MPS_LOG_DIRECTORY input=$(cat)" >> '
                    f'{calls}\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    with pytest.raises(RuntimeError):
        with context_starts.mps_daemon(tmp_path / "mps") as env:
            assert env == {"CUDA_MPS_PIPE_DIRECTORY": str(tmp_path / "mps" / "pipe"),
                           "CUDA_MPS_LOG_DIRECTORY": str(tmp_path / "mps" / "log")}
            assert (tmp_path / "mps" / "pipe").is_dir()
            raise RuntimeError("a setting that fails")
    started, stopped = calls.read_text().splitlines()
    assert started.startswith("-d pipe=") and str(tmp_path / "mps" / "pipe") in started
    assert stopped.endswith("input=quit") and f"log={tmp_path / 'mps' / 'log'}" in stopped


def test_first_solve_runs_every_mode_on_tiny_grids(tmp_path, monkeypatch, capsys):
    """benchmarks/first_solve.py at ci scale on the CPU: a priming process and one process per
    mode for both grids, each printed time read; the in-process first and warm solves."""
    from benchmarks import first_solve

    monkeypatch.setenv("SSSP_DEVICE", "cpu")
    monkeypatch.setenv("SSSP_CACHE_DIR", str(tmp_path / "cache"))  # restored after main sets its own
    monkeypatch.setattr(first_solve, "FOLDER", tmp_path / "first")
    report_file = tmp_path / "first.json"
    assert first_solve.main(["--scale", "ci", "--runs", "1", "--warm", "2", "--json", str(report_file)]) == 0
    saved = json.loads(report_file.read_text())
    assert saved["failures"] == [] and set(saved["report"]) == {"grid-w", "grid-u"}
    for row in saved["report"].values():
        assert row["prime"]["ok"] and row["prime"]["printed_ms"] > 0
        assert set(row["fresh"]) == {"./sssp", "no first launch", "second solve"}  # no GPU to keep busy
        assert all(len(runs) == 1 and runs[0]["ok"] and runs[0]["printed_ms"] > 0 for runs in row["fresh"].values())
        assert len(row["in_process"]["warm_ms"]) == 2 and row["in_process"]["first_ms"] > 0
    out = capsys.readouterr().out
    assert out.count("warm median") == 2 and "./sssp           x1:" in out
