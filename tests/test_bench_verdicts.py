"""The benchmark goal verdicts and the baseline cache (CPU): a goal is "met" only when every
graph's baseline was measured (fresh or cached, cached ones named with their date)."""
from __future__ import annotations

import json
import os

from benchmarks import baselines
from benchmarks.verdicts import Baseline, ratio_cell, verdict


def test_met_only_when_every_graph_is_measured():
    rows = [("grid", 1.0, Baseline(9.0)), ("road", 2.0, Baseline(12.0))]
    line = verdict("gapbs", 5, rows)
    assert line == "gapbs/opt >= 5x: met on every graph (2 of 2)"


def test_a_missing_baseline_makes_the_goal_unknown_not_met():
    rows = [("grid", 1.0, Baseline(9.0)), ("LiveJournal", 3.0, Baseline.missing("skipped for time"))]
    line = verdict("Gunrock", 3, rows)
    assert "met on every" not in line
    assert line.startswith("Gunrock/opt >= 3x: unknown: LiveJournal (Gunrock not measured: skipped for time)")
    assert line.endswith("met on the other 1")


def test_a_measured_miss_is_missed_even_beside_an_unknown():
    rows = [("grid", 1.0, Baseline(2.0)), ("lj", None, Baseline(5.0)), ("road", 1.0, Baseline.missing("no GPU"))]
    line = verdict("Gunrock", 3, rows)
    assert line.startswith("Gunrock/opt >= 3x: missed on grid (2.0x); unknown on lj (opt not measured); "
                           "road (Gunrock not measured: no GPU)")


def test_all_unknown_lists_graphs_by_reason():
    rows = [(g, 1.0, Baseline.missing("no GPU here")) for g in ("a", "b")] + [("c", 1.0, Baseline.missing("x"))]
    assert verdict("Gunrock", 3, rows) == ("Gunrock/opt >= 3x: unknown: a, b (Gunrock not measured: no GPU here); "
                                           "c (Gunrock not measured: x)")


def test_cached_baselines_count_but_are_named_with_their_date():
    rows = [("grid", 1.0, Baseline(9.0, "cached", "2026-11-20")), ("road", 1.0, Baseline(6.0))]
    line = verdict("gapbs", 5, rows)
    assert line.startswith("gapbs/opt >= 5x: met on every graph (2 of 2)")
    assert "cached from earlier runs: grid 2026-11-20" in line and "road" not in line.split("[")[1]


def test_no_rows_is_unknown():
    assert verdict("gapbs", 5, []) == "gapbs/opt >= 5x: unknown (no graph measured)"


def test_cells_say_not_measured_and_cached():
    assert Baseline.missing("no GPU here").cell() == "not measured (no GPU here)"
    assert Baseline(8.712, "cached", "2026-11-20").cell() == "8.71 (cached 2026-11-20)"
    assert Baseline(8.712, "fresh", "Δ=64").cell() == "8.71 (Δ=64)"
    assert ratio_cell(Baseline.missing("x"), 1.0) == "unknown"
    assert ratio_cell(Baseline(6.0), 2.0) == "3.0x"


def test_cache_key_follows_binary_graph_gpu_and_settings(tmp_path):
    binary, graph = tmp_path / "sssp", tmp_path / "g.mtx"
    binary.write_bytes(b"\x7fELF one")
    graph.write_text("1 2 3\n")
    first = baselines.key("Gunrock", binary, graph, "H100", {"runs": 7})
    assert first == baselines.key("Gunrock", binary, graph, "H100", {"runs": 7})
    assert first != baselines.key("Gunrock", binary, graph, "H200", {"runs": 7})
    assert first != baselines.key("Gunrock", binary, graph, "H100", {"runs": 3})
    binary.write_bytes(b"\x7fELF two")
    os.utime(binary, ns=(1, 1))  # a new size/mtime stamp: the digest is taken again
    assert first != baselines.key("Gunrock", binary, graph, "H100", {"runs": 7})


def test_digest_sidecar_is_reused_only_while_the_file_is_unchanged(tmp_path):
    target = tmp_path / "g.wsg"
    target.write_bytes(b"abc")
    digest = baselines.file_digest(target)
    assert (tmp_path / "g.wsg.sha256").read_text().split()[1] == digest
    target.write_bytes(b"abcd")
    assert baselines.file_digest(target) != digest


def test_cache_round_trip_and_damaged_file(tmp_path):
    path = tmp_path / "b.json"
    cache = baselines.Cache(path)
    assert cache.get("k") is None
    cache.put("k", 4.2, "Δ=2", [{"delta": 2, "ms": 4.2}], now=lambda: 0)
    hit = baselines.Cache(path).get("k")
    assert hit.ms == 4.2 and hit.date == "1970-01-01"
    path.write_text("{not json")
    assert baselines.Cache(path).get("k") is None


def test_cache_off_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("SSSP_BASELINE_CACHE", "off")
    cache = baselines.cache_from_env(tmp_path / "never.json")
    cache.put("k", 1.0, "", None)
    assert not (tmp_path / "never.json").exists()
    monkeypatch.setenv("SSSP_BASELINE_CACHE", str(tmp_path / "mine.json"))
    baselines.cache_from_env().put("k", 1.0, "", None)
    assert json.loads((tmp_path / "mine.json").read_text())["k"]["ms"] == 1.0


def test_issue_26_goals_are_judged_on_opt_as_it_runs_and_say_by_how_much():
    from types import SimpleNamespace

    from benchmarks import versus

    road = SimpleNamespace(key="road", label="road stand-in, unit")
    grid = SimpleNamespace(key="grid-w", label="grid 700², weights 1..100")
    assert versus._tile_goal("full", road, 2.889, 1.627) == \
        "road stand-in, unit: opt 1.627 ms (fresh ./sssp), -tile 1024 2.889 ms; goal missed by 1.63x (<= 1 ms)"
    assert versus._tile_goal("full", grid, 1.305, 1.202).endswith("goal met (<= 1.7 ms)")
    assert versus._tile_goal("ci", grid, 1.305, 1.202).endswith("goal applies at full scale only")
    # no fresh process printed a time: unknown, never met
    assert versus._tile_goal("full", grid, 1.305, None).endswith("goal unknown (no fresh ./sssp printed a time)")
