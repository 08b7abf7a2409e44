"""Gunrock loading its .mtx while the graphs are prepared (``benchmarks.gunrock_early``), and the
staged binary's input handling. The real binary is used where it is staged: without a GPU it
reads its input, then stops at its first CUDA call, which shows that the file was read. CPU only."""
from __future__ import annotations

import sys
import time
from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks import formats, gunrock_early, tools, versus
from sssp_common.graph import Graph

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="named pipes, fork")

# Reads the graph file to its end (a copy goes to $COPY_TO when set), then writes the metrics JSON.
FAKE = """#!/bin/sh
while [ $# -gt 0 ]; do case $1 in -m) m=$2;; -d) d=$2;; -f) f=$2;; esac; shift; done
{REQUIRE}
cat "$m" > "${COPY_TO:-/dev/null}"
echo '{"num_vertices": 3, "num_edges": 2, "process_times": [4.0, 2.0, 3.0]}' > "$d/$f"
"""


def _fake(tmp_path, require: str = ""):
    binary = tmp_path / "gunrock" / "sssp"
    binary.parent.mkdir()
    binary.write_text(FAKE.replace("{REQUIRE}", require))
    binary.chmod(0o755)
    return binary


def _graph_file(tmp_path, name: str = "g.mtx"):
    rng = np.random.default_rng(3)
    graph = Graph.from_arrays(rng.integers(0, 300, 5_000), rng.integers(0, 300, 5_000), rng.integers(1, 100, 5_000))
    target = tmp_path / name
    formats.write_mtx(target, graph)
    return target, graph


def test_tail_start_is_the_last_line(tmp_path):
    target = tmp_path / "x.mtx"
    target.write_bytes(b"%%banner\n3 3 2\n1 2 5\n2 3 77\n")
    assert target.read_bytes()[gunrock_early.tail_start(target):] == b"2 3 77\n"


def test_held_process_reads_every_byte_but_waits_for_the_last_line(tmp_path, monkeypatch):
    mtx, _ = _graph_file(tmp_path)
    copy = tmp_path / "copy.mtx"
    monkeypatch.setenv("COPY_TO", str(copy))
    held = gunrock_early.Held(_fake(tmp_path), mtx, runs=3)
    try:
        assert held.loaded.wait(30) and held.load_s is not None
        time.sleep(0.3)
        assert held.process.poll() is None  # held: the last line is not there yet
        assert copy.read_bytes() == mtx.read_bytes()[:gunrock_early.tail_start(mtx)]
        outcome = held.finish(timeout=30)
    finally:
        held.close()
    assert outcome.ms == 3.0 and outcome.runs == [4.0, 2.0, 3.0]
    assert copy.read_bytes() == mtx.read_bytes()
    assert not held.scratch.exists()


def test_a_process_that_never_reads_is_reported(tmp_path):
    mtx, _ = _graph_file(tmp_path)
    binary = _fake(tmp_path, require="echo 'no such option' ; exit 3")
    held = gunrock_early.Held(binary, mtx, runs=3)
    assert held.loaded.wait(30)
    outcome = held.finish(timeout=30)
    assert outcome.ms is None and outcome.detail.startswith("exit 3") and "no such option" in outcome.detail


def test_early_starts_each_wanted_graph_once_its_file_exists(tmp_path):
    mtx, _ = _graph_file(tmp_path, "a.mtx")
    files = {"a": mtx, "b": tmp_path / "b.mtx", "cached": mtx}
    early = gunrock_early.Early(_fake(tmp_path), ["a", "b", "cached"], files.get, lambda key: (3, 2),
                                lambda key: key != "cached", runs=3)
    try:
        time.sleep(0.5)
        assert list(early.held) == ["a"]  # b's file is not written yet; cached's time is cached
        _graph_file(tmp_path, "b.mtx")
        assert early.wait_loaded() < 30 and sorted(early.held) == ["a", "b"]
        assert early.take("a").finish(timeout=30).ms == 3.0 and early.take("a") is None
    finally:
        early.close()
    assert early.held == {}


def test_versus_runs_gunrock_plainly_when_its_early_process_failed(tmp_path):
    mtx, graph = _graph_file(tmp_path)
    binary = _fake(tmp_path, require='[ -f "$m" ] || { echo "not a regular file"; exit 4; }')
    early = gunrock_early.Early(binary, ["g"], lambda key: mtx, lambda key: (None, None), lambda key: True, runs=3)
    settings = SimpleNamespace(early=early, gunrock_runs=3)
    try:
        early.wait_loaded()
        outcome = versus._gunrock(settings, "g", binary, mtx, SimpleNamespace(n=3, m=2))
        assert outcome.ms == 3.0 and "the early process failed: exit 4: not a regular file" in outcome.detail
        assert versus._gunrock(settings, "g", binary, mtx, graph).ms is None  # plain run, size checked
    finally:
        early.close()


# ---------------------------------------------------------------- the staged binary itself

REAL = tools.find("gunrock")
needs_real = pytest.mark.skipif(REAL is None, reason="no Gunrock binary staged")
CUDA_STAGE = ("cudaError", "CUDA driver")  # its first CUDA call, after the input is read


def _read_it(outcome) -> bool:
    """Gunrock ran (a GPU here) or stopped at its first CUDA call, after reading its input."""
    return outcome.ms is not None or any(word in outcome.detail for word in CUDA_STAGE)


@needs_real
def test_real_gunrock_reads_our_mtx_plainly_and_held(tmp_path):
    mtx, graph = _graph_file(tmp_path)
    plain = tools.gunrock(REAL, mtx, runs=1, timeout=120, vertices=graph.n, edges=graph.m)
    assert _read_it(plain) and "banner" not in plain.detail, plain.detail
    held = gunrock_early.Held(REAL, mtx, runs=1, vertices=graph.n, edges=graph.m)
    try:
        assert held.loaded.wait(60)
        time.sleep(0.3)
        assert held.process.poll() is None  # waiting for its last line, not in CUDA yet
        outcome = held.finish(timeout=120)
    finally:
        held.close()
    assert _read_it(outcome) and "banner" not in outcome.detail, outcome.detail


@needs_real
def test_real_gunrock_reads_no_binary_csr(tmp_path):
    """What this build does with other input (BENCHMARKS.md, issue 26 item 3): bytes that are not
    Matrix Market stop it at the banner, before any CUDA call, whatever the name (``.csr`` too);
    Matrix Market text named ``.csr`` is parsed, then its binary-CSR branch throws at once."""
    # the removed writer's layout: int32 counts, offsets and heads, float32 weights
    layout = np.array([3, 3, 2, 0, 1, 2, 2, 1, 2], "<i4").tobytes() + np.array([5, 7], "<f4").tobytes()
    for name in ("g.csr", "g.mtx"):
        (tmp_path / name).write_bytes(layout)
        outcome = tools.gunrock(REAL, tmp_path / name, runs=1, timeout=60)
        assert outcome.ms is None and "Could not process Matrix Market banner" in outcome.detail
        assert not _read_it(outcome)
    text, _ = _graph_file(tmp_path, "text.csr")
    outcome = tools.gunrock(REAL, text, runs=1, timeout=60)
    assert outcome.ms is None and "gunrock::error::exception_t" in outcome.detail and not _read_it(outcome)
