"""report.cells, report.compare and report.tables: medians, spreads, outliers, the noise rule, the tables."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from report.cells import split_outliers, summarize  # noqa: E402
from report.compare import FASTER, NOISE, TOO_FEW, compare, versus  # noqa: E402
from report.load import measured, to_frame  # noqa: E402
from report.tables import (graphs_table, method_table, outliers_table, overview_tables, status_table,  # noqa: E402
                           time_table, variants)
from report.catalogue import describe_all, load_catalogue  # noqa: E402
from report_fixtures import sweep_rows  # noqa: E402

ROAD = "roadNet-CA~synth"


def runs(values, status="ok"):
    return pd.DataFrame({"status": [status] * len(values), "computation_ms": values,
                         "mismatches": [None] * len(values)})


def cell(*values):
    return summarize(runs(list(values)), "computation_ms")


@pytest.fixture(scope="module")
def gpu():
    return measured(to_frame(sweep_rows(seed=1)))


# ---- cells ---------------------------------------------------------------------------------------

def test_median_and_range_of_the_kept_values():
    c = cell(300.0, 310.0, 305.7)
    assert (c.median, c.low, c.high, c.n_used) == (305.7, 300.0, 310.0, 3)
    assert c.text == "305.7 [300.0–310.0]" and not c.outliers


def test_an_outlier_is_flagged_and_not_used():
    c = cell(10.0, 10.2, 31.0)
    assert c.outliers == (31.0,) and c.n_used == 2
    assert c.median == pytest.approx(10.1) and c.high == 10.2
    assert c.text == "10.10 [10.00–10.20] †"


def test_ordinary_noise_is_not_an_outlier():
    # deviations of 1 and 8%: the MAD of three is the smaller one, the 5% floor keeps the 8% run
    kept, out = split_outliers(np.array([100.0, 101.0, 108.0]))
    assert len(kept) == 3 and not len(out)
    assert not len(split_outliers(np.array([5.0, 50.0]))[1])   # two values: no outlier rule


def test_identical_values_print_no_range():
    assert cell(4.0, 4.0, 4.0).text == "4.000"
    assert cell(13.701, 13.704).spread_text == ""   # equal once formatted


def test_failed_and_mixed_cells_show_words():
    wrong = summarize(pd.DataFrame({"status": ["wrong"], "computation_ms": [777.7], "mismatches": [12]}),
                      "computation_ms")
    assert wrong.state == "failed" and wrong.text == "✗ wrong (12)"
    mixed = summarize(pd.DataFrame({"status": ["ok", "timeout", "ok"], "computation_ms": [5.0, None, 5.2],
                                    "mismatches": [None] * 3}), "computation_ms")
    assert mixed.state == "mixed" and "⚠ timeout 1/3" in mixed.text and not mixed.clean
    assert summarize(None, "computation_ms").text == "—"


# ---- the noise rule ----------------------------------------------------------------------------

def test_apart_ranges_are_called_overlapping_ones_are_noise():
    fast, slow = cell(10.0, 10.2, 10.1), cell(14.0, 14.3, 14.1)
    verdict = compare(fast, slow)
    assert verdict.kind == FASTER and verdict.first_wins and verdict.ratio == pytest.approx(14.1 / 10.1)
    assert compare(slow, fast).kind == FASTER and not compare(slow, fast).first_wins
    assert "1.40× faster" in versus(verdict, "A", fast, "B", slow)
    overlapping = compare(cell(10.0, 12.0, 11.0), cell(11.5, 13.0, 12.0))
    assert overlapping.kind == NOISE
    assert "within noise" in versus(overlapping, "A", cell(10.0, 12.0, 11.0), "B", cell(11.5, 13.0, 12.0))


def test_tiny_gaps_and_single_runs_are_not_called():
    assert compare(cell(10.0, 10.01, 10.02), cell(10.2, 10.21, 10.22)).kind == NOISE   # apart, but 2%
    assert compare(cell(10.0), cell(50.0)).kind == TOO_FEW                             # one repetition


# ---- tables ------------------------------------------------------------------------------------

def test_time_table_has_every_setting_and_both_tpe_stages(gpu):
    table = time_table(gpu, ROAD)
    labels = [label for label, _ in table.rows]
    assert labels[:3] == ["bmf out · given", "bmf out · src", "bmf out · dst"]
    assert "segscan · dst" in labels and "tpe out · src · comp." in labels and "tpe in · src · filt." in labels
    assert table.columns == ["256×8", "384×5", "512×4", "768×2", "1024×2"]
    assert table.breaks and all(0 < b < len(labels) for b in table.breaks)
    busy = table.cell("bmf out · src", "768×2")
    assert len(busy.outliers) == 1 and busy.text.endswith("†")


def test_method_table_speedups_honour_the_noise_rule(gpu):
    table = dict(method_table(gpu, ROAD).rows)
    assert table["bmf out"][2].text == "1 (base)"
    assert table["tpe out"][2].text.endswith("×") and "noise" not in table["tpe out"][2].text
    assert table["opt out"][0].text.startswith(("256×8", "384×5", "512×4", "768×2", "1024×2"))
    assert table["bmf in"][3].text == "350"   # rounds at the best setting


def test_a_method_with_no_correct_setting_says_so(gpu):
    broken = gpu.copy()
    broken.loc[(broken.graph == ROAD) & (broken.method == "segscan"), "status"] = "timeout"
    row = dict(method_table(broken, ROAD).rows)["segscan"]
    assert row[0].state == "failed" and "no setting" in row[0].text


def test_overview_splits_wide_method_lists(gpu):
    extra = []
    for name in ("vbf", "vbf-stride", "vbf-flag", "harish", "dijkstra"):
        part = gpu[gpu.method == "opt"].copy()
        part["method"] = name
        part["variant"] = f"{name} outcore"
        extra.append(part)
    wide = pd.concat([gpu] + extra, ignore_index=True)
    assert [v for v in variants(wide)][-5:] == [f"{n} outcore" for n in ("vbf", "vbf-stride", "vbf-flag", "harish",
                                                                        "dijkstra")]
    tables = overview_tables(wide)
    assert len(tables) == 2 and all(len(t.columns) <= 7 for t in tables)
    assert sum(len(t.columns) for t in tables) == len(variants(wide))


def test_graph_table_discloses_stand_ins_and_their_scale(gpu):
    small = gpu.copy()
    small.loc[small.graph == ROAD, "graph_edges"] = 21_614
    rows = dict(graphs_table(describe_all(small, load_catalogue())).rows)
    vertices, edges, kind, real, scale = (c.text for c in rows[ROAD])
    assert kind.startswith("stand-in") and real.startswith("roadNet-CA: 1,971,281 / 5,533,214")
    assert scale == "1/256 (0.391%)"
    assert rows["p2p-Gnutella04"][2].text == "real file"


def test_status_and_outlier_tables(gpu):
    status = status_table(gpu)
    assert status.columns == ["ok"] and dict(status.rows)[ROAD][0].text == str(len(gpu[gpu.graph == ROAD]))
    outliers = outliers_table(gpu)
    assert len(outliers.rows) >= 1 and outliers.rows[0][1][1].text == "768×2"


def test_warmups_are_not_measured():
    frame = to_frame(sweep_rows(seed=3))
    assert frame["warmup"].sum() > 0 and not (measured(frame)["rep"] < 0).any()
