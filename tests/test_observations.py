"""report.observations: claims only beyond noise, nothing about ignored knobs, a few per question, stable on a rerun."""
from __future__ import annotations

import gzip
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from report.load import load_results, measured, to_frame  # noqa: E402
from report.observations import TOPIC_ORDER, candidates, claims, flips, observe  # noqa: E402
from report_fixtures import CPU, sweep_rows, write_rows  # noqa: E402

ROAD, P2P = "roadNet-CA~synth", "p2p-Gnutella04"
DATA = ROOT / "tests" / "data"


def frame_of(**options):
    return measured(to_frame(sweep_rows(**options)))


@pytest.fixture(scope="module")
def gpu():
    return frame_of(seed=1)


@pytest.fixture(scope="module")
def gpu_notes(gpu):
    return candidates(gpu)


def texts(notes, graph=ROAD, topic=None):
    return [o.text for o in notes if o.graph == graph and (topic is None or o.topic == topic)]


def test_a_real_effect_is_called_with_its_figures(gpu_notes):
    config = next(o for o in gpu_notes if o.key == ("configuration", "bmf outcore", "destination") and o.graph == ROAD)
    assert config.verdict == "faster" and config.loser == ("256×8",)
    assert set(config.winner) == {"512×4", "768×2"}          # equal in truth: named together as tied
    assert "512×4 and 768×2 (tied) are 1.4" in config.text and "faster than 256×8" in config.text
    # source order: 768×2 has the 3x outlier; it is left out of the median but stops the claim
    busy = next(o for o in gpu_notes if o.key == ("configuration", "bmf outcore", "source") and o.graph == ROAD)
    assert busy.verdict == "noise" and "an outlying repetition overlaps" in busy.text and "tied" not in busy.text
    sync = next(o for o in gpu_notes if o.key == ("sync", "bmf", "source") and o.graph == ROAD)
    assert sync.winner == ("incore",) and "350 rounds against out-of-core's 600" in sync.text


def test_equal_settings_are_within_noise(gpu_notes):
    opt_order = next(o for o in gpu_notes if o.key == ("ordering", "opt outcore") and o.graph == ROAD)
    assert opt_order.verdict == "noise" and "within noise" in opt_order.text
    opt_config = next(o for o in gpu_notes if o.key == ("configuration", "opt incore", "source") and o.graph == ROAD)
    assert opt_config.verdict == "noise" and "block size" in opt_config.text
    assert "-bcount is ignored" in opt_config.text and not re.search(r"\d×\d", opt_config.text)


def test_the_outlier_repetition_is_never_used(gpu_notes):
    busy = [o.text for o in gpu_notes if "768×2" in o.text and "bmf out-of-core" in o.text]
    assert busy and not any(re.search(r"\b8\d\d\.\d ms", t) for t in busy)   # the 3x run (~880 ms)
    assert any("1 repetition(s) were outliers" in t for t in texts(gpu_notes, topic="failures"))


def test_failed_settings_are_named_not_compared():
    rows = sweep_rows(seed=1)
    for row in rows:
        if row["graph"] == ROAD and row["method"] == "segscan":
            row.update(status="wrong", computation_ms=777.7, mismatches=12)
    notes = candidates(measured(to_frame(rows)))
    assert not any("777.7" in o.text for o in notes)
    assert not any(o.topic == "segscan" and o.graph == ROAD for o in notes)
    left = texts(notes, topic="failures")
    assert any("left out of every comparison" in t and "segscan" in t and "15 wrong" in t for t in left)


def test_one_repetition_claims_nothing():
    notes = candidates(frame_of(seed=1, reps=1, outlier=False))
    timed = [o for o in notes if o.topic != "work"]     # work is a count over configurations, not a time
    assert timed and not [o for o in timed if o.verdict == "faster"]
    assert any("cannot be told apart" in o.text for o in notes)


def test_cpu_fallback_makes_no_claim_about_ignored_knobs():
    notes = candidates(frame_of(seed=1, device=CPU))
    topics = {o.topic for o in notes}
    assert "configuration" not in topics and "segscan" not in topics
    assert not any(o.key[:2] == ("sync", "opt") for o in notes)
    assert not any(o.key == ("opt", "opt incore") for o in notes)
    assert any(o.topic == "device" and "numpy CPU fallback" in o.text for o in notes)


def test_a_few_per_question_in_the_spec_order(gpu):
    shown = observe(gpu)
    for graph in (ROAD, P2P):
        mine = [o for o in shown if o.graph == graph]
        assert 5 <= len(mine) <= 16
        order = [TOPIC_ORDER.index(o.topic) for o in mine]
        assert order == sorted(order)
        for topic in {o.topic for o in mine}:
            group = [o for o in mine if o.topic == topic]
            assert [o.rank for o in group] == sorted(o.rank for o in group)   # strongest first


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_no_claim_flips_between_two_runs_of_one_sweep(seed):
    first, second = candidates(frame_of(seed=seed)), candidates(frame_of(seed=seed + 100))
    assert flips(first, second) == [] and flips(second, first) == []
    a, b = claims(first), claims(second)
    assert len(set(a) & set(b)) >= 0.9 * max(len(a), len(b))


def test_flips_are_detected():
    first = candidates(frame_of(seed=1))
    swapped = sweep_rows(seed=2)
    for row in swapped:            # make in-core slower than out-of-core: a contradiction
        if row["method"] == "bmf" and row["sync"] == "incore":
            row["computation_ms"] *= 4
    found = flips(first, candidates(measured(to_frame(swapped))))
    assert any("'sync', 'bmf'" in line for line in found)


def test_two_real_cpu_sweeps_do_not_contradict_each_other(tmp_path):
    """Two runs of the default sweep (configs/sweep.toml) on a busy 2-core CPU machine."""
    frames = []
    for name in ("results-cpu-rerun-a.jsonl.gz", "results-cpu-rerun-b.jsonl.gz"):
        plain = tmp_path / name.removesuffix(".gz")
        plain.write_bytes(gzip.decompress((DATA / name).read_bytes()))
        frames.append(measured(load_results([plain])))
    first, second = candidates(frames[0]), candidates(frames[1])
    assert claims(first) and flips(first, second) == [] and flips(second, first) == []
    assert not any(o.topic == "configuration" for o in first + second)


def test_fixture_writer_round_trips(tmp_path):
    path = write_rows(tmp_path / "r.jsonl", sweep_rows(seed=9, reps=1, warmup=False))
    assert len(load_results([path])) == 2 * 13 * 5
