"""Load times: text parse and cached load, for generated graphs of roadNet-CA and LiveJournal size.

Issue 2's bar: roadNet-CA size (5.5M lines) parsed in < 2 s, LiveJournal size (69M lines)
in < 25 s, a cached roadNet-CA-size load in < 0.2 s. ``--quick`` skips LiveJournal size.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import median, print_table, record  # noqa: E402
from grader import synth  # noqa: E402
from sssp_gpu.loader import load_graph  # noqa: E402

SIZES = [("roadNet-CA size", "road_like", 2.0), ("soc-LiveJournal1 size", "livejournal", 25.0)]


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    rows = []
    with tempfile.TemporaryDirectory(prefix="sssp-bench-") as folder:
        os.environ["SSSP_CACHE_DIR"] = str(Path(folder) / "cache")
        for label, name, bar in SIZES[:1] if quick else SIZES:
            path = Path(folder) / f"{name}.txt"
            graph = synth.standin(name, scale="full")
            synth.write_edge_list(path, graph)
            size_mb = path.stat().st_size / 1e6
            started = time.perf_counter()
            load_graph(path, cache=False)
            parse_s = time.perf_counter() - started
            load_graph(path)  # fills the cache
            cached = []
            for _ in range(5):
                started = time.perf_counter()
                load_graph(path)
                cached.append(time.perf_counter() - started)
            row = record("load", graph=label, lines=graph.m, megabytes=round(size_mb, 1), parse_s=parse_s,
                         cached_s=median(cached), bar_s=bar)
            rows.append([label, f"{graph.m:,}", f"{size_mb:.0f}", row["parse_s"], row["cached_s"],
                         f"{bar:g}", "met" if parse_s < bar else "MISSED"])
            path.unlink()
    print_table("Graph loading (seconds)", ["graph", "lines", "MB", "text parse s", "cached load s",
                                           "bar s", "parse bar"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
