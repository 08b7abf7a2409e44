"""Where one benchmark graph's cold preparation goes, step by step, in this process (issue 26 item 3).

    python3 -m benchmarks.prepare_steps lj            # the LiveJournal stand-in, full size (~25 s, ~6 GB)
    python3 -m benchmarks.prepare_steps road --threads 4

Each step is what ``benchmarks.graphs`` does for the graph's files, timed alone (the harness
runs them in parallel processes): generation, the SNAP texts with their parse-cache entries,
the destination order, Gunrock's ``.mtx``, gapbs's ``.wsg``, scipy's ``.csr.npz``. Files go
to a temporary folder that is removed at the end.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m benchmarks.prepare_steps", description=__doc__.splitlines()[0])
    parser.add_argument("key", help="graph key: grid-w, grid-u, rmat-w, rmat-u, road, lj")
    parser.add_argument("--scale", choices=("ci", "full"), default="full")
    parser.add_argument("--threads", type=int, default=1, help="threads formatting each text file")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="prepare-steps-") as scratch:
        os.environ["SSSP_CACHE_DIR"] = str(Path(scratch) / "cache")
        import numpy as np

        from sssp_common.edgelist import parsed_form, write_edge_list
        from sssp_common.loader import remember_parsed

        from . import formats, graphs
        from .baselines import file_digest

        out = Path(scratch)

        def step(name, work):
            started = time.perf_counter()
            result = work()
            print(f"{name:<44} {time.perf_counter() - started:6.2f} s", flush=True)
            return result

        graph = step("generate", lambda: graphs.generate(graphs.spec(args.scale, args.key)))
        print(f"  {graph.n:,} vertices, {graph.m:,} edges")
        if graphs.spec(args.scale, args.key).kind == "standin":
            for suffix in ("txt", "dst.txt"):
                target = out / f"g.{suffix}"
                ordered = graph if suffix == "txt" else step("destination order", lambda: formats.by_destination(graph))
                step(f"{suffix}: write ({args.threads} threads)",
                     lambda: write_edge_list(target, ordered, header="x", workers=args.threads))
                step(f"{suffix}: parse cache from the arrays", lambda: remember_parsed(target, parsed_form(ordered)))
        step(f"Gunrock .mtx ({args.threads} threads)", lambda: formats.write_mtx(out / "g.mtx", graph, args.threads))
        step("  its digest", lambda: file_digest(out / "g.mtx"))
        step("gapbs .wsg", lambda: formats.write_wsg(out / "g.wsg", graph))
        step("  its digest", lambda: file_digest(out / "g.wsg"))
        step("scipy .csr.npz",
             lambda: np.savez(out / "g.npz", *formats.squished(graph.n, graph.src, graph.dst, graph.w)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
