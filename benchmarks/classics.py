"""``make bench-classics``: the seed papers' methods, each time beside the paper's own figure.

    python3 -m benchmarks.classics                # the GPU run (about 2-3 minutes on an H100)
    python3 -m benchmarks.classics --scale ci     # tiny graphs: the whole harness in seconds, CPU or GPU
    python3 -m benchmarks.classics --no-gnutella31

Parts, each printed as a table the moment it finishes:

1. Bodra's Table 1 (Bellman-Ford, one thread per vertex) on a road graph of the DIMACS New
   York graph's size (grader.data.synth's road stand-in, weights 1..1000): vbf, vbf-stride,
   vbf-flag (both syncs), with harish and opt beside them;
2. single-source dijkstra and harish on p2p-Gnutella04;
3. all pairs on p2p-Gnutella04 (the papers' gnutella04): fw, fw-blocked, minplus,
   sssp-all beside Bodra's Tables 2 and 3;
4. fw-blocked at the sizes of Bodra's gnutella25 and gnutella30 (random graphs of those
   sizes: Floyd-Warshall's work depends only on n), p2p-Gnutella24, and p2p-Gnutella31
   (62,586 vertices, a 15.7 GB matrix) where the GPU can hold it.

Every result is checked exact: SSSP against scipy's Dijkstra; all pairs against scipy's
Dijkstra from sampled sources, and the four all-pairs methods against each other
entirely. Times are kernel times (CUDA events), as ./sssp and ./apsp print them. Each
measurement is appended to build/bench/classics.jsonl.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from scipy.sparse.csgraph import dijkstra as scipy_dijkstra  # noqa: E402

from benchmarks.common import ROOT, Budget, Recorder, print_table  # noqa: E402
from report.paper_figures import FIGURES, GNUTELLA04, GOALS, GRAPHS, NY_ROAD  # noqa: E402
from sssp_common.graph import Graph  # noqa: E402
from sssp_common.loader import load_graph  # noqa: E402

RESULTS = ROOT / "build" / "bench" / "classics.jsonl"
SIZES = {"full": {"road": GRAPHS[NY_ROAD][0], "g25": GRAPHS["gnutella25"][0], "g30": GRAPHS["gnutella30"][0],
                  "sample": 24},
         "ci": {"road": 3_000, "g25": 300, "g30": 400, "sample": 8}}
INT64_MAX = np.iinfo(np.int64).max


def data_file(name: str) -> Path | None:
    from grader.data.datasets import default_data_dirs

    for folder in default_data_dirs():
        for candidate in (folder / f"{name}.txt.gz", folder / f"{name}.txt"):
            if candidate.is_file():
                return candidate
    return None


def reference_rows(graph: Graph, rows) -> np.ndarray:
    """scipy's Dijkstra from ``rows`` (one int64 row per source, unreachable = int64 max), the
    lightest of parallel edges. scipy drops explicit zeros, so each weight becomes w * (n + 1) + 1:
    a path's extra (its edge count) stays below n + 1 and floor division recovers the distance.
    Also the all-pairs tests' oracle (tests/test_apsp.py)."""
    keep = graph.src != graph.dst
    order = np.lexsort((graph.w[keep], graph.dst[keep], graph.src[keep]))
    src, dst, w = graph.src[keep][order], graph.dst[keep][order], graph.w[keep][order]
    first = np.ones(src.shape[0], dtype=bool)
    first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
    scale = graph.n + 1
    matrix = sp.csr_matrix((w[first] * float(scale) + 1, (src[first], dst[first])), shape=(graph.n, graph.n))
    dist = np.atleast_2d(scipy_dijkstra(matrix, directed=True, indices=rows))
    out = np.full(dist.shape, INT64_MAX, dtype=np.int64)
    finite = np.isfinite(dist)
    out[finite] = (dist[finite] // scale).astype(np.int64)
    return out


def random_graph(n: int, m: int, seed: int) -> Graph:
    """A Gnutella-like random digraph of n vertices and m unit edges (its shape does not matter to FW)."""
    rng = np.random.default_rng(seed)
    return Graph.from_arrays(rng.integers(0, n, m), rng.integers(0, n, m), None, n=n)


def paper_seconds(ours: str, graph: str) -> list[tuple[str, float]]:
    return [(f.method, f.seconds) for f in FIGURES if f.ours == ours and f.graph == graph]


def goal_note(ours: str, graph: str, seconds: float | None) -> str | None:
    goal = GOALS.get((ours, graph))
    if goal is None or seconds is None:
        return None
    verdict = "met" if seconds <= goal else f"missed by {seconds / goal:.2f}x"
    return f"goal for {ours} on {graph}: <= {goal:g} s on an H100: {verdict} ({seconds:.4f} s)"


class Bench:
    def __init__(self, args, device):
        self.args = args
        self.device = device
        self.sizes = SIZES[args.scale]
        self.record = Recorder(RESULTS, device=device.timing_label, scale=args.scale)
        self.budget = Budget(args.budget)
        self.failures: list[str] = []

    def check(self, what: str, ok: bool) -> str:
        if not ok:
            self.failures.append(what)
        return "exact" if ok else "WRONG"

    # ------------------------------------------------------------------ SSSP
    def sssp_part(self, title: str, graph: Graph, paper_graph: str, runs: list[tuple[str, str]],
                  footer: str = "") -> None:
        from sssp_gpu.engine import solve
        from sssp_gpu.methods.common import Run

        expected = reference_rows(graph, [0])[0]
        rows, notes, fastest = [], [], {}
        for method, sync in runs:
            if not self.budget.allows(5.0, f"{method} {sync} on {title}"):
                continue
            run = Run(method, sync, False, 512, self.grid_blocks(method))
            best = None
            for _ in range(self.args.reps):
                started = time.perf_counter()
                result = solve(graph, run, self.device)
                wall = time.perf_counter() - started
                best = result if best is None or result.computation_ms < best.computation_ms else best
            verdict = self.check(f"{method} {sync} on {title}", bool(np.array_equal(best.dist, expected)))
            papers = paper_seconds(method, paper_graph)
            paper = papers[0][1] if papers else None
            ours_s = best.computation_ms / 1e3
            rows.append([method, sync, grid_label(method, run, graph.n), best.rounds, round(best.computation_ms, 3),
                         round(wall, 3),
                         paper, f"{paper / ours_s:.0f}x" if paper and ours_s else None, verdict])
            self.record("classics-sssp", graph=title, method=method, sync=sync, kernel_ms=best.computation_ms,
                        wall_s=wall, rounds=best.rounds, paper_s=paper, exact=verdict == "exact")
            fastest[method] = min(ours_s, fastest.get(method, ours_s))
        for method, seconds in fastest.items():
            note = goal_note(method, paper_graph, seconds) if self.args.scale == "full" else None
            if note:
                notes.append(note + " (the faster sync)")
        print_table(title, ["method", "sync", "grid", "rounds", "kernel ms", "wall s", "paper s", "speed-up", "check"],
                    rows, notes + [footer or "paper s: Bodra's Table 1 (GeForce GPU, the DIMACS NY graph itself); "
                                             "speed-up = paper / our kernel time."] + self.scale_note())

    # ------------------------------------------------------------------ APSP
    def apsp_part(self, title: str, graph: Graph, paper_graph: str, methods: list[str], cross: bool) -> None:
        from sssp_gpu.allpairs.memory import available_bytes, needed_bytes
        from sssp_gpu.allpairs.methods import solve

        sample = np.random.default_rng(1).choice(graph.n, min(graph.n, self.sizes["sample"]), replace=False)
        sample[0] = 0
        expected = reference_rows(graph, sample)
        rows, notes, first = [], [], None
        for method in methods:
            need, have = needed_bytes(graph, method, self.device.is_gpu), available_bytes(self.device.is_gpu)
            if have is not None and need > have:
                rows.append([method, None, None, None, None, f"skipped: needs {need / 2**30:.1f} GiB, "
                                                             f"{have / 2**30:.1f} GiB free"])
                continue
            if not self.budget.allows(self.estimate(method, graph.n), f"{method} on {title}"):
                continue
            started = time.perf_counter()
            result = solve(graph, method, self.device.is_gpu)
            wall = time.perf_counter() - started
            got = np.concatenate([result.rows(int(r), int(r) + 1, np.int64) for r in sample])
            ok = bool(np.array_equal(got, expected))
            if cross:
                if first is None:
                    first = result
                else:
                    ok &= self.same_matrix(first, result)
            verdict = self.check(f"{method} on {title}", ok)
            seconds = result.computation_ms / 1e3
            for paper_method, paper in paper_seconds(method, paper_graph) or [(None, None)]:
                rows.append([method, result.rounds, round(seconds, 4), round(wall, 2),
                             paper, (f"{paper / seconds:.0f}x vs {paper_method}" if paper else None), verdict])
            self.record("classics-apsp", graph=title, method=method, kernel_s=seconds, wall_s=wall,
                        rounds=result.rounds, exact=ok)
            note = goal_note(method, paper_graph, seconds) if self.args.scale == "full" else None
            if note:
                notes.append(note)
            if first is not result:
                del result
            self.free()
        print_table(title, ["method", "rounds", "kernel s", "wall s", "paper s", "speed-up", "check"], rows,
                    notes + [f"check: {len(sample)} sampled rows against scipy's Dijkstra"
                             + ("; every method's whole matrix equal to the first's" if cross else "")
                             + ". paper s: Bodra's Tables 2-3 (GeForce GPU); speed-up = paper / our kernel time."]
                    + self.scale_note())
        del first
        self.free()

    def grid_blocks(self, method: str) -> int:
        """vbf-stride and vbf-flag run a grid that fills the GPU (4 blocks of 512 per SM), as
        Bodra sizes the stride grid by experiment; the spec's 4 x 512 leaves each thread ~130
        vertices per round. Others: 4 (vbf, harish, dijkstra and opt size their own grids)."""
        if method in ("vbf-stride", "vbf-flag") and self.device.is_gpu:
            import cupy
            return 4 * cupy.cuda.Device().attributes["MultiProcessorCount"]
        return 4

    def scale_note(self) -> list[str]:
        if self.args.scale == "full":
            return []
        return ["scale ci: tiny graphs, so the papers' figures (for the full-size graphs) are not comparable here."]

    def same_matrix(self, a, b) -> bool:
        for (_, block_a), (_, block_b) in zip(a.row_chunks(), b.row_chunks()):
            xp = a._xp()
            if not bool(xp.array_equal(xp.minimum(block_a, a.inf), xp.minimum(block_b, b.inf))):
                return False
        return True

    def estimate(self, method: str, n: int) -> float:
        """Seconds on an H100, from n^3 at the rates measured for each method (generous)."""
        if not self.device.is_gpu:
            return 1.0 if n <= 1000 else 60.0
        cube = (n / 10_876) ** 3
        return {"fw": 6.0, "fw-blocked": 0.5, "minplus": 3.0, "sssp-all": 2.0}[method] * cube + 2.0

    def free(self) -> None:
        if self.device.is_gpu:
            import cupy
            cupy.get_default_memory_pool().free_all_blocks()


def grid_label(method: str, run, n: int) -> str:
    """The grid a method really launched: vbf and harish one thread per vertex, dijkstra and opt their own."""
    if method in ("vbf", "harish"):
        return f"{-(-n // run.bsize)}x{run.bsize}"
    if method in ("dijkstra", "opt"):
        return f"auto x{run.bsize}"
    return f"{run.bcount}x{run.bsize}"


def road_graph(vertices: int) -> Graph:
    from grader.data.synth import ROAD_CA_VERTICES, road_like

    return road_like(scale=vertices / ROAD_CA_VERTICES, seed=0, weights=(1, 1000))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m benchmarks.classics", description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", choices=("full", "ci"), default=None,
                        help="graph sizes (default: full on a GPU, ci on the CPU)")
    parser.add_argument("--budget", type=float, default=170.0, help="seconds for the whole run (default 170)")
    parser.add_argument("--reps", type=int, default=3, help="SSSP repetitions, the fastest kept (default 3)")
    parser.add_argument("--no-gnutella31", action="store_true", help="skip the 15.7 GB all-pairs run")
    args = parser.parse_args(argv)
    from sssp_gpu import kernels
    from sssp_gpu.device import select_device

    device = select_device()
    args.scale = args.scale or ("full" if device.is_gpu else "ci")
    print(f"# bench-classics on {device.timing_label}, scale {args.scale}", flush=True)
    if device.is_gpu:
        kernels.warm_all()  # compile first: kernel times never include it anyway, wall times would
    bench = Bench(args, device)
    sizes = bench.sizes

    road = road_graph(sizes["road"])
    bench.budget.section(0.25)
    bench.sssp_part(f"Table 1: Bellman-Ford on a road graph of NY's size ({road.n:,} vertices, {road.m:,} edges, "
                    "weights 1..1000)", road, NY_ROAD,
                    [(m, s) for m in ("vbf", "vbf-stride", "vbf-flag") for s in ("outcore", "incore")]
                    + [("harish", "incore"), ("opt", "incore")])
    del road

    g04_file = None if args.scale == "ci" else data_file("p2p-Gnutella04")
    if args.scale == "ci":
        g04 = random_graph(250, 1000, 4)
    elif g04_file is None:
        print("p2p-Gnutella04 not found (../shared/data, $SSSP_DATA_DIR, .device-data): using a random graph "
              "of its size", flush=True)
        g04 = random_graph(*GRAPHS[GNUTELLA04][:2], 4)
    else:
        g04 = load_graph(g04_file)
    bench.budget.section(0.3)
    bench.sssp_part(f"Single source on gnutella04 ({g04.n:,} vertices)", g04, GNUTELLA04,
                    [("dijkstra", "incore"), ("harish", "incore"), ("vbf-flag", "incore"), ("opt", "incore")],
                    footer="The papers time no single-source run on gnutella04: for scale (Table 2's all-pairs "
                           "Dijkstra runs this once per source).")
    bench.budget.section(0.55)
    bench.apsp_part(f"Tables 2 and 3: all pairs on gnutella04 ({g04.n:,} vertices)", g04, GNUTELLA04,
                    ["fw-blocked", "fw", "minplus", "sssp-all"], cross=True)

    bench.budget.section(0.75)
    for key, paper_graph, seed in (("g25", "gnutella25", 25), ("g30", "gnutella30", 30)):
        n = sizes[key]
        graph = random_graph(n, int(n * 2.4), seed)
        bench.apsp_part(f"Table 3: fw-blocked on a random graph of {paper_graph}'s size ({n:,} vertices)", graph,
                        paper_graph, ["fw-blocked"], cross=False)
    bench.budget.section(1.0)
    if not args.no_gnutella31 and args.scale == "full":
        g31_file = data_file("p2p-Gnutella31")
        if g31_file is None:
            print("p2p-Gnutella31 not found: skipped", flush=True)
        else:
            g31 = load_graph(g31_file)
            bench.apsp_part(f"All pairs at scale: p2p-Gnutella31 ({g31.n:,} vertices, a "
                            f"{g31.n ** 2 * 4 / 1e9:.1f} GB int32 matrix)", g31, "p2p-Gnutella31", ["fw-blocked"],
                            cross=False)
    print(f"\ntotal {bench.budget.elapsed():.1f} s; results appended to {RESULTS}")
    for skipped in bench.budget.skipped:
        print(f"skipped for time: {skipped}")
    if bench.failures:
        print("WRONG RESULTS: " + "; ".join(bench.failures))
        return 1
    print("every result exact")
    return 0


if __name__ == "__main__":
    sys.exit(main())
