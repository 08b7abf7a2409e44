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

from sssp_common.edgelist import write_edge_list
from benchmarks.common import median, print_table, record  # noqa: E402
from grader import synth  # noqa: E402
from sssp_common.loader import load_graph  # noqa: E402

# (label, stand-in name, text-parse bar s, cached-load bar s or None)
SIZES = [("roadNet-CA size", "roadNet-CA", 2.0, 0.2), ("soc-LiveJournal1 size", "soc-LiveJournal1", 25.0, None)]


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    rows = []
    with tempfile.TemporaryDirectory(prefix="sssp-bench-") as folder:
        os.environ["SSSP_CACHE_DIR"] = str(Path(folder) / "cache")
        for label, name, bar, cached_bar in SIZES[:1] if quick else SIZES:
            path = Path(folder) / f"{name}.txt"
            graph = synth.standin(name, scale="full")
            started = time.perf_counter()
            write_edge_list(path, graph)
            write_s = time.perf_counter() - started
            del graph
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
            lines = load_graph(path).m
            row = record("load", graph=label, lines=lines, megabytes=round(size_mb, 1), parse_s=parse_s,
                         cached_s=median(cached), bar_s=bar, write_s=write_s)
            verdict = "met" if parse_s < bar else "MISSED"
            if cached_bar is not None:
                verdict += f"; cached {'met' if row['cached_s'] < cached_bar else 'MISSED'} (< {cached_bar:g} s)"
            rows.append([label, f"{lines:,}", f"{size_mb:.0f}", write_s, row["parse_s"], row["cached_s"],
                         f"{bar:g}", verdict])
            path.unlink()
    print_table("Graph loading (seconds)", ["graph", "edges", "MB", "stand-in write s", "text parse s",
                                           "cached load s", "parse bar s", "verdict"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
