"""``make bench-quick`` / ``make bench``: the benchmark tables of issue 13, each printed as it finishes.

    python3 -m benchmarks.run --quick          # headline: wall time per method; opt vs gapbs, Gunrock, scipy
    python3 -m benchmarks.run                  # + opt outcore vs incore, load times, bmf configs, segscan/tpe
    python3 -m benchmarks.run --scale ci       # tiny graphs: the whole harness in seconds, CPU or GPU

Graphs are generated once into build/bench/graphs (in parallel processes) and reused; cold,
the fw table (GPU kernels only, timed by CUDA events) runs while they are prepared, and every
other table waits for them (nothing timed on the host's cores overlaps the preparation). A time
budget (``--budget``, default 115 s quick / 450 s full, counted from the start of preparation,
so a cold run's wait for graphs comes out of it) is split among the tables; an item that would
overrun its table's share is skipped and listed at the end. Every measurement is appended to
build/bench/results.jsonl as it is made, and the versus table is rewritten whole to
build/bench/tables/versus.md after each graph's row (``--results``/``--tables`` move them):
a run cut short keeps what it measured. ``BENCH_SCALE`` (ci|full) sets the default scale.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python3 benchmarks/run.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

from benchmarks.common import RESULTS, ROOT, Budget, Recorder  # noqa: E402
from sssp_common.record import machine, project_commit  # noqa: E402

# (section, cumulative share of the budget it may use up to). fw ~15 s, first: it needs none of
# the benchmark graphs and times only GPU kernels, so it runs while they are prepared. (a) wall
# ~45 s on the H100 host (quick: two runs per method on the road stand-in, one on LiveJournal);
# (b) versus ~15 s with cached baselines, ~30 s without (Gunrock's .mtx parsed early), plus its
# fresh ./sssp processes (issue 40: 3 a graph, ~25 s; up to 5 where the budget allows). versus's
# rows, their first 3 processes and the baselines are never skipped: their expected time is held back from the wall table
# (``_reserve``), so a cold run (graphs, baselines) shortens the wall table instead of
# overrunning the budget.
QUICK = [("fw", 0.15), ("wall", 0.75), ("versus", 1.0)]
FULL = [("fw", 0.04), ("wall", 0.16), ("versus", 0.30), ("outcore", 0.36), ("load", 0.42), ("bmf", 0.48),
        ("breakdown", 1.0)]


@dataclass
class Settings:
    scale: str
    quick: bool
    gapbs_format: str
    threads: int
    out_dir: Path
    graphs: tuple = ()  # graph keys the versus/outcore tables use (empty: all six)
    early: object = None  # gunrock_early.Early: Gunrock processes loading while the graphs are prepared
    tables_dir: Path | None = None  # tables rewritten here as their rows finish (versus.md); None: printed only
    wall_repeats: int = 3
    opt_repeats: int = 5
    fresh_runs: int = 5  # fresh ./sssp processes a graph in the versus table (at least 3 of them)
    kernel_repeats: int = 3
    gunrock_runs: int = 7
    run_timeout: float = 120.0


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="benchmarks.run", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the headline tables (make bench-quick)")
    parser.add_argument("--scale", choices=("ci", "full"), default=os.environ.get("BENCH_SCALE") or "full",
                        help="graph sizes: full (issue 13's) or ci (tiny); default $BENCH_SCALE or full")
    parser.add_argument("--budget", type=float, default=None, metavar="S",
                        help="seconds for the tables, counted from the start of graph preparation "
                             "(default 115 quick, 450 full)")
    parser.add_argument("--only", default="", metavar="A,B", help="sections to run: wall, versus, fw, outcore, "
                                                                  "load, bmf, breakdown (default: all of the mode's)")
    parser.add_argument("--prepare-only", action="store_true", help="make the graphs and stop")
    parser.add_argument("--graphs", default="", metavar="K,L",
                        help="only these graphs in the versus table (keys: grid-w, grid-u, rmat-w, rmat-u, road, lj); "
                             "a targeted run, not the headline")
    parser.add_argument("--gapbs-format", choices=("wsg", "wel"), default="wsg",
                        help="gapbs input: wsg (serialized, read in <1 s; default) or wel (text)")
    parser.add_argument("--threads", type=int, default=min(16, os.cpu_count() or 1), help="gapbs threads (16)")
    parser.add_argument("--results", type=Path, default=RESULTS, help="JSON lines appended here")
    parser.add_argument("--tables", type=Path, default=None, metavar="DIR",
                        help="tables rewritten here as their rows finish (versus.md; default: a tables folder "
                             "beside --results)")
    parser.add_argument("--graphs-dir", type=Path, default=None, help="graph cache (default build/bench/graphs)")
    parser.add_argument("--out-dir", type=Path, default=ROOT / "build" / "bench" / "out",
                        help="where ./sssp's output files go")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    began = time.perf_counter()
    os.environ.setdefault("SSSP_CACHE_DIR", str(ROOT / "build" / "bench" / "cache"))
    from benchmarks import graphs

    if args.graphs_dir is not None:
        graphs.GRAPHS_DIR = args.graphs_dir
    plan = QUICK if args.quick else FULL
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    plan = [(name, share) for name, share in plan if not only or name in only]
    keys = tuple(k.strip() for k in args.graphs.split(",") if k.strip())
    unknown = [k for k in keys if k not in [s.key for s in graphs.specs(args.scale)]]
    if unknown:
        print(f"benchmarks.run: unknown graph key(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    settings = Settings(args.scale, args.quick, args.gapbs_format, args.threads, args.out_dir, keys,
                        tables_dir=args.tables if args.tables is not None else args.results.parent / "tables")
    if args.scale == "ci":
        settings.wall_repeats, settings.opt_repeats, settings.kernel_repeats, settings.fresh_runs = 1, 2, 1, 1
        settings.gunrock_runs, settings.run_timeout = 2, 60.0
    print(f"benchmarks: {'quick' if args.quick else 'full'}, scale {args.scale}, tables: "
          f"{', '.join(name for name, _ in plan)}", flush=True)
    needed = _graphs_needed([name for name, _ in plan], keys, args.scale)
    warming = None if args.prepare_only else _start_warm()
    budget = Budget(args.budget if args.budget is not None else (115.0 if args.quick else 450.0))
    preparation = graphs.start(args.scale, keys=needed, gapbs_format=args.gapbs_format) if needed else None
    if args.prepare_only:
        prepare_s = preparation.wait() if preparation else 0.0
        print(f"graphs in {graphs.folder(args.scale)} ({prepare_s:.1f} s)")
        return 0

    record = Recorder(args.results, commit=project_commit(), machine=machine(), scale=args.scale,
                      quick=args.quick)
    from benchmarks import tools
    print(f"graphs {graphs.folder(args.scale)}; budget {budget.limit_s:.0f} s from now; "
          f"gapbs: {tools.find('gapbs') or 'absent'}; Gunrock: {tools.find('gunrock') or 'absent'}", flush=True)
    waited: dict = {}  # seconds waited for the graphs, then for Gunrock's loads

    if "versus" in [name for name, _ in plan]:
        settings.early = _start_gunrock_early(settings)

    def graphs_ready() -> None:
        """Every later table times host cores or reads the graphs: wait for the preparation
        and for Gunrock's loads that run beside it."""
        if preparation is not None and "graphs" not in waited:
            began_wait = time.perf_counter()
            seconds = preparation.wait()
            waited["graphs"] = time.perf_counter() - began_wait
            print(f"  (waited {waited['graphs']:.1f} s for the graphs, {seconds:.1f} s after preparation began)",
                  flush=True)
        if settings.early is not None and "gunrock" not in waited:
            waited["gunrock"] = settings.early.wait_loaded()
            print(f"  (waited {waited['gunrock']:.1f} s more for Gunrock's loads of "
                  f"{', '.join(settings.early.held) or 'no graph'}; {budget.elapsed():.1f} s of budget used)",
                  flush=True)

    def kernels_ready() -> None:
        """./sssp's and fw's CUDA modules compiled before anything is timed."""
        if warming is not None and warming.returncode is None:
            began_wait = time.perf_counter()
            said, _ = warming.communicate()
            lines = (said or "").strip().splitlines()
            done = time.perf_counter()
            print(f"  {lines[-1] if lines else 'kernels: no output'} (exit {warming.returncode}; done "
                  f"{done - began:.1f} s after the start; waited {done - began_wait:.1f} s)", flush=True)

    try:
        failures = _run_sections(plan, settings, budget, record, graphs_ready, kernels_ready)
    finally:
        if settings.early is not None:  # those the versus table did not take (it did not run, or failed)
            settings.early.close()
        kernels_ready()
        graphs_ready()
    prepare_s = preparation.wait() if preparation else 0.0
    total = time.perf_counter() - began
    print(f"\nbenchmarks done in {total:.1f} s ({prepare_s:.1f} s preparing graphs, {sum(waited.values()):.1f} s "
          f"waited for them and Gunrock's loads; {budget.elapsed():.1f} s of budget used of {budget.limit_s:.0f} s); "
          f"results in {args.results}")
    if budget.skipped:
        print(f"skipped for time ({len(budget.skipped)}):")
        for item in budget.skipped:
            print(f"  - {item}")
    record("summary", total_s=total, prepare_s=prepare_s, waited_s=sum(waited.values()), tables_s=budget.elapsed(),
           budget_s=budget.limit_s,
           skipped=budget.skipped, failures=failures)
    if failures:
        print(f"{failures} measurement(s) gave distances that differ from scipy's", file=sys.stderr)
    return 1 if failures else 0


def _run_sections(plan, settings, budget, record, graphs_ready=lambda: None, kernels_ready=lambda: None) -> int:
    from benchmarks import graphs, load, methods, versus, wall

    measured: dict = {}
    failures = 0
    chosen: list = []

    def device():
        """This process's device, chosen only when an in-process table needs it: the ``./sssp``
        processes of the wall-time table run before this process holds any CUDA context."""
        if not chosen:
            from sssp_gpu.device import select_device
            chosen.append(select_device())
            print(f"device: {chosen[0].timing_label}", flush=True)
        return chosen[0]

    def need_measured(*keys):
        """The graphs a table uses, with scipy's distances: those versus left, else loaded now
        (only these: LiveJournal's load and Dijkstra alone take seconds)."""
        for key in keys:
            if key not in measured:
                spec = graphs.spec(settings.scale, key)
                graph = graphs.load(settings.scale, key)
                expected, _ = versus.scipy_dijkstra(graph.n, graphs.load_csr(settings.scale, key))
                measured[key] = {"graph": graph, "expected": expected, "label": spec.label}
        return measured

    for index, (name, share) in enumerate(plan):
        if name != "fw":  # fw reads the Gnutella files and times GPU kernels (compiling its own module
            kernels_ready()  # if need be, outside its timing): it overlaps the preparation and the warm-up
            graphs_ready()
        budget.section(share, _reserve(plan[index + 1:], settings) if name != "fw" else 0.0)
        print(f"\n=== {name} ({budget.left():.0f} s for this table) ===", flush=True)
        if name == "wall":
            wall.bench(settings, budget, record)
        elif name == "versus":
            measured.update(versus.bench(settings, budget, record, device()))
            failures += measured.pop("_failures", 0)
        elif name == "fw":
            failures += _fw_apart(settings, record) if not chosen else _fw(settings, record, device())
        elif name == "outcore":
            if not any("incore" in m for m in measured.values()):
                print("  (opt incore not measured in this run: outcore needs the versus table first)")
                continue
            failures += versus.outcore(settings, budget, record, device(), measured)
        elif name == "load":
            load.bench(settings, budget, record)
        elif name == "bmf":
            failures += methods.bmf_configs(settings, budget, record, device(), need_measured(*methods.BMF_GRAPHS))
        elif name == "breakdown":
            failures += methods.breakdown(settings, budget, record, device(), need_measured(*methods.BREAKDOWN_GRAPHS))
    return failures


def _start_gunrock_early(settings):
    """Gunrock on each of the versus table's graphs whose time is not cached, started as soon
    as its .mtx is written and held after parsing it (``benchmarks.gunrock_early``); None
    without its binary or a GPU."""
    from benchmarks import baselines, graphs, gunrock_early, tools, versus

    binary = tools.find("gunrock")
    if binary is None or os.environ.get("SSSP_DEVICE", "auto").lower() == "cpu":
        return None
    gpu = versus._gpu_name()
    if not gpu:
        return None
    cache = baselines.cache_from_env()

    def wanted(key: str) -> bool:
        mtx = graphs.path(settings.scale, key, "mtx")
        return cache.get(baselines.key("Gunrock", binary, mtx, gpu, versus._gunrock_settings(settings))) is None

    def size(key: str) -> tuple[int, int]:
        meta = graphs.meta(settings.scale, key)
        return int(meta["n"]), int(meta["m"])

    keys = [s.key for s in graphs.specs(settings.scale) if not settings.graphs or s.key in settings.graphs]
    return gunrock_early.Early(binary, keys, lambda key: graphs.path(settings.scale, key, "mtx"), size, wanted,
                               settings.gunrock_runs)


def _start_warm():
    """``python -m sssp_gpu.warm`` (``make sssp``'s last step: every CUDA module compiled into
    CuPy's kernel cache) in a child process beside the graph preparation, so that no timed run
    compiles; ~1 s of cache hits when ``make sssp`` compiled them already. None on the CPU."""
    import subprocess

    if os.environ.get("SSSP_DEVICE", "auto").lower() == "cpu":
        return None
    return subprocess.Popen([sys.executable, "-m", "sssp_gpu.warm"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _fw(settings, record, device) -> int:
    from benchmarks import fw_dpx
    return fw_dpx.bench(settings, None, record, device)


def _fw_child(settings, record, answer) -> None:
    from sssp_gpu.device import select_device
    device = select_device()
    print(f"device (fw table's process): {device.timing_label}", flush=True)
    answer.send(_fw(settings, record, device))


def _fw_apart(settings, record) -> int:
    """The fw table in a process of its own (spawned: nothing of this one's threads or pool is
    copied), so this process holds no CUDA context while the wall table's ``./sssp`` processes
    run, and the GPU memory fw used is given back when that process ends. A child that dies
    without an answer counts as one failure."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    # settings travel pickled: without the Gunrock processes held for the versus table (their
    # locks and pipes cannot be pickled; on the H100 that stopped the whole bench; fw needs none)
    apart = dataclasses.replace(settings, early=None)
    child = context.Process(target=_fw_child, args=(apart, record, send), name="bench-fw")
    child.start()
    send.close()
    try:
        wrong = receive.recv()
    except EOFError:
        wrong = None
    child.join()
    if wrong is None:
        print(f"  fw table's process ended without a result (exit code {child.exitcode})", flush=True)
        return 1
    return int(wrong)


def _graphs_needed(sections: list[str], keys: tuple, scale: str) -> list[str]:
    """The benchmark graphs the chosen tables read (fw reads the Gnutella files instead)."""
    from benchmarks import graphs

    every = [s.key for s in graphs.specs(scale)]
    needed = set()
    for name in sections:
        if name == "wall":
            needed |= {"road", "lj"}
        elif name in ("versus", "outcore"):
            needed |= set(keys or every)
        elif name != "fw":
            needed |= set(every)
    return [key for key in every if key in needed]


def _reserve(later, settings) -> float:
    """Seconds the later tables' never-skipped parts will need (versus's rows and uncached
    baselines, the fw table)."""
    names = {name for name, _ in later}
    seconds = 0.0
    if "versus" in names:
        from benchmarks import versus
        on_gpu = os.environ.get("SSSP_DEVICE", "auto").lower() != "cpu" and bool(versus._gpu_name())
        seconds += versus.mandatory_seconds(settings, on_gpu)
    if "fw" in names and settings.scale == "full":
        from benchmarks.fw_dpx import FW_SECONDS
        seconds += FW_SECONDS
    return seconds


if __name__ == "__main__":
    sys.exit(main())
