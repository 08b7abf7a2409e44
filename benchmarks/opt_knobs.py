"""opt over bucket widths and fusion depths on the issue-13 graphs (GPU), every run checked.

    python -m benchmarks.opt_knobs --graphs grid-w,rmat-w --deltas 512,2048,0 --fuse 8,64
    python -m benchmarks.opt_knobs --graphs grid-u,grid-w,road,rmat-w,lj --syncs incore --tiles 512,1024,2048

Prints one line per (graph, sync, delta, fuse, tile): the median of 5 timed solves after a
warm-up (CUDA events, computation + filtering), rounds, relaxations per edge and mismatching
vertices against scipy. Delta 0 is unbounded; the first row of each graph is the default rule.
``--tiles`` adds rows with tile fixpoints (``-tile N``; every ``--deltas`` width and every
``--fuse`` depth, which caps a tile activation's steps, is also run with every tile size); the
tiling is built once per graph and size, outside the timing.
BENCHMARKS.md's "Bucket width" and bottom-up tables came from it.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

import numpy as np  # noqa: E402

from benchmarks import graphs  # noqa: E402


def _ints(text: str) -> list[int]:
    return [int(item) for item in text.split(",") if item.strip()]


def main(argv: list[str] | None = None) -> int:
    from reference import distances_for_graph
    from sssp_gpu.device import select_device
    from sssp_gpu.engine import solve
    from sssp_gpu.methods.common import INF, Run

    parser = argparse.ArgumentParser(prog="python -m benchmarks.opt_knobs", description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", default="grid-w,grid-u,rmat-w,road", help="keys of benchmarks/graphs.py")
    parser.add_argument("--deltas", type=_ints, default=[], help="bucket widths besides the default rule")
    parser.add_argument("--fuse", type=_ints, default=[], help="fusion depths besides the default")
    parser.add_argument("--scale", choices=("ci", "full"), default="full")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pull-shares", type=_ints, default=[],
                        help="bottom-up rounds when the queue holds > n / SHARE vertices: shares besides "
                             "the default (sssp_gpu.methods.opt.PULL_SHARE; equal weights only)")
    parser.add_argument("--syncs", default="incore,outcore", help="which drivers to time")
    parser.add_argument("--bsize", type=int, default=1024, help="threads per block (opt sizes the grid itself)")
    parser.add_argument("--tiles", type=_ints, default=[],
                        help="opt -tile sizes besides the default (off); 0 in the list is off")
    parser.add_argument("--stage-kb", type=_ints, default=[],
                        help="with --tiles: shared memory for a tile's staged intra edges, in KB, besides "
                             "the default (sssp_gpu.methods.opt.TILE_STAGE_BYTES); 0: read from global")
    parser.add_argument("--pull-passes", type=_ints, default=[],
                        help="with --tiles: tile steps as pull passes, this many between checks, besides "
                             "the default (sssp_gpu.methods.opt.TILE_PULL_PASSES); 0: push steps")
    parser.add_argument("--model", action="store_true",
                        help="no timing: the tile scheme's rounds, splits and local steps from the numpy "
                             "model (tiles.solve_cpu) for each --tiles size x --fuse cap, any machine")
    args = parser.parse_args(argv)
    if args.model:
        return _model(args)
    from sssp_gpu.methods import opt
    device = select_device()
    print(f"device {device.name}", flush=True)
    wrong_total = 0
    for key in args.graphs.split(","):
        started = time.perf_counter()
        try:  # prepared by benchmarks.run (build/bench/graphs) when it ran first
            graph = graphs.load(args.scale, key)
        except FileNotFoundError:
            graph = graphs.generate(graphs.spec(args.scale, key))
        expected = distances_for_graph(graph)
        expected = np.where(expected < 0, INF, expected)
        print(f"\n{key}: n={graph.n} m={graph.m} (generated and solved by scipy in "
              f"{time.perf_counter() - started:.1f} s)", flush=True)
        default_share, default_stage, default_passes = opt.PULL_SHARE, opt.TILE_STAGE_BYTES, opt.TILE_PULL_PASSES
        stages = [default_stage] + [kb * 1024 for kb in args.stage_kb if kb * 1024 != default_stage]
        passes = [default_passes] + [k for k in args.pull_passes if k != default_passes]
        plain = (default_stage, default_passes)
        settings = ([(None, None, default_share, 0, plain)]
                    + [(delta, None, default_share, 0, plain) for delta in args.deltas]
                    + [(None, fuse, default_share, 0, plain) for fuse in args.fuse]
                    + [(None, None, share, 0, plain) for share in args.pull_shares]
                    + [(delta, fuse, default_share, tile, (stage, k)) for tile in args.tiles if tile
                       for delta in [None] + args.deltas for fuse in [None] + args.fuse for stage in stages
                       for k in passes])
        for sync in args.syncs.split(","):
            for delta, fuse, share, tile, (stage, k) in settings:
                opt.PULL_SHARE = share  # read when a solve builds its device state
                opt.TILE_STAGE_BYTES = stage  # read when a tile solve sizes its shared memory
                opt.TILE_PULL_PASSES = k  # read when a tile solve launches
                run = Run("opt", sync, False, args.bsize, 4, delta=delta, fuse=fuse, tile=tile)
                solve(graph, run, device)
                results = [solve(graph, run, device) for _ in range(args.repeats)]
                wrong = sum(int(np.count_nonzero(r.dist != expected)) for r in results)
                wrong_total += wrong
                ms = statistics.median(r.computation_ms + r.filtering_ms for r in results)
                print(f"  {sync:7s} delta={str(delta):5s} fuse={str(fuse):4s} pull=n/{share:<4d} tile={tile:<4d} "
                      f"stage={stage // 1024 if tile else '-'!s:>3s}K passes={k if tile else '-'!s:>2s} {ms:8.3f} ms "
                      f"rounds={results[0].rounds:5d} relax/edge={results[0].edges_processed / graph.m:.2f} "
                      f"wrong={wrong} | {'; '.join(results[0].notes)}", flush=True)
        opt.PULL_SHARE, opt.TILE_STAGE_BYTES, opt.TILE_PULL_PASSES = default_share, default_stage, default_passes
    return 1 if wrong_total else 0


# The bound of BENCHMARKS.md (issue 26): ~8 µs a round (two barriers, a tile's load and
# write-back, phase B's L2 atomics), ~0.35 µs a shared-memory step, ~8 µs a split. Guesses until
# the GPU measures them; the counts are exact for the model's lockstep order.
ROUND_US, STEP_US, SPLIT_US = 8.0, 0.35, 8.0


def _model(args) -> int:
    from sssp_gpu.methods import opt, tiles
    from sssp_gpu.methods.common import Run

    for key in args.graphs.split(","):
        try:
            graph = graphs.load(args.scale, key)
        except FileNotFoundError:
            graph = graphs.generate(graphs.spec(args.scale, key))
        print(f"\n{key}: n={graph.n} m={graph.m}", flush=True)
        for size in [t for t in args.tiles if t] or [1024]:
            tiling = tiles.build(graph, size)
            for delta in [None] + args.deltas:
                width = opt.choose_delta(graph, Run("opt", delta=delta), on_gpu=True, tiled=True)
                for fuse in [None] + args.fuse:
                    _, st = tiles.solve_cpu(tiling, width, tiles.step_cap(size, fuse))
                    ms = (st.rounds * ROUND_US + st.steps * STEP_US + st.splits * SPLIT_US) / 1e3
                    print(f"  tile={size:<4d} delta={str(delta):5s} cap={tiles.step_cap(size, fuse):<5d} "
                          f"rounds={st.rounds:5d} splits={st.splits:4d} steps={st.steps:6d} "
                          f"activations={st.activations:6d} relax/edge={st.relaxed / max(graph.m, 1):.2f} "
                          f"model {ms:.2f} ms | {tiling.how}, {tiling.intra_share:.0%} of edges inside tiles",
                          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
