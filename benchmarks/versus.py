"""opt against the baselines on issue 13's six graphs (item 2), and opt out-of-core against in-core (item 3).

opt's headline is what a user gets (issue 40): the median of the kernel times that fresh
``./sssp`` processes print (computation + filtering; ``benchmarks.fresh``), at least
:data:`FRESH_MIN` processes a graph and up to :data:`FRESH_MAX` as the budget allows. Beside it,
in its own column, the in-process warm median: opt run in this process through the engine,
CUDA-event time, median of 5 after a warm-up, fresh state per run, every run's distances equal
to scipy's Dijkstra exactly. gapbs (delta-stepping on 16 host cores, best Δ of a small set,
"Average Time" of 5 trials) and Gunrock (the same GPU, median of ``process_times`` over 7 runs)
read the same graph, written once per format. scipy is the ``dijkstra`` call alone on one core
(matrix built beforehand). Goals, judged on the fresh-process figures: gapbs/opt >= 5x,
Gunrock/opt >= 3x on every graph, and issue 40's bounds (``benchmarks.fresh_goals``: grid setup
and wall, the road stand-in's printed time) on the same processes' wall and setup, which are
columns of the table too (no process is started for them). The table is rewritten to
``<tables dir>/versus.md`` after every graph (``benchmarks.versus_table``).
"""
from __future__ import annotations

import time

import numpy as np

from .common import median, print_table, ratio, goal_text
from .verdicts import Baseline
from .versus_table import COLUMNS, GAPBS_GOAL, GUNROCK_GOAL, VersusTable, table_row

OUTCORE_GOAL = 2.0
FRESH_MIN, FRESH_MAX = 3, 5  # fresh ./sssp processes a graph: never fewer (reserved), more while the budget allows
# opt -tile N (issue 26, item 1): an extra row on the graphs with locality, tiles asked for
# explicitly (step cap 16), and its goals in ms at full scale (grid weighted, grid unit, road
# stand-in); opt's own row takes tiles by itself on grids (cap 32)
TILE_BENCH = 1024
TILE_GOALS_MS = {"grid-w": 1.7, "grid-u": 2.2, "road": 1.0}

# Δ tried per graph: around the best of the tools README's sweep ({8,32,128} weighted, {1,2,4} unit)
DELTAS_QUICK = {"grid-w": (64, 128, 256), "grid-u": (1, 2, 4), "rmat-w": (8, 16), "rmat-u": (1, 2),
                "road": (2, 4, 8), "lj": (1, 2)}
DELTAS_FULL = {"grid-w": (8, 32, 64, 128, 256, 512), "grid-u": (1, 2, 4, 8), "rmat-w": (4, 8, 16, 32),
               "rmat-u": (1, 2, 4), "road": (1, 2, 4, 8, 16), "lj": (1, 2, 4)}


def scipy_dijkstra(n: int, csr) -> tuple[np.ndarray, float]:
    """Distances (int64, unreachable = the engine's INF) and the time of the Dijkstra call alone,
    on the out-CSR from :func:`benchmarks.graphs.load_csr` (duplicate edges merged to the
    lightest: scipy's matrix would add them up)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import dijkstra
    from sssp_gpu.methods.common import INF

    offsets, heads, weights = csr
    matrix = sp.csr_matrix((weights.astype(np.float64), heads, offsets), shape=(n, n))
    started = time.perf_counter()
    dist = dijkstra(matrix, directed=True, indices=0)
    seconds = time.perf_counter() - started
    out = np.full(n, INF, dtype=np.int64)
    finite = np.isfinite(dist)
    out[finite] = dist[finite].astype(np.int64)
    return out, seconds * 1e3


def mismatches(dist, expected: np.ndarray) -> int:
    """Vertices whose distance differs from the reference (any integer dtype; its max = unreachable)."""
    dist = np.asarray(dist.get() if hasattr(dist, "get") else dist)
    if dist.dtype != expected.dtype:
        wide = dist.astype(expected.dtype)
        wide[dist == np.iinfo(dist.dtype).max] = np.iinfo(expected.dtype).max
        dist = wide
    return int(np.count_nonzero(dist != expected))


def time_opt(graph, sync: str, device, repeats: int, expected: np.ndarray, budget, what: str,
             tile: int = 0) -> dict | None:
    """opt's kernel time (computation + filtering): median of ``repeats`` after a warm-up, each
    checked; ``tile``: opt -tile N (its tiling is built by the warm-up, outside the timing)."""
    from sssp_gpu.engine import solve
    from sssp_gpu.methods.common import Run

    run = Run("opt", sync, False, 1024, 4, tile=tile or None)
    started = time.perf_counter()
    warm = solve(graph, run, device)
    per_run = time.perf_counter() - started
    results = [warm]
    if budget.allows(per_run * repeats, f"{what}: {repeats} timed runs"):
        results = [solve(graph, run, device) for _ in range(repeats)]
    wrong = sum(mismatches(r.dist, expected) for r in results + [warm])
    times = [r.computation_ms + r.filtering_ms for r in results]
    return {"ms": median(times), "min_ms": min(times), "max_ms": max(times), "timed_runs": len(times),
            "rounds": results[0].rounds, "relax_per_edge": results[0].edges_processed / max(graph.m, 1),
            "wrong_vertices": wrong, "notes": list(results[0].notes), "launch": results[0].launch}


def fresh_opt(settings, key: str, budget, what: str) -> dict:
    """opt as users run it: fresh ``./sssp`` processes on the graph's SNAP text (parse cache
    filled by the preparation), :data:`FRESH_MIN` always, up to ``settings.fresh_runs`` while the
    budget allows. Medians over the processes that printed a time: ``ms`` (the printed kernel
    time), ``process_wall_s`` (start to exit, measured here), ``wall_line_s`` and ``setup_s``
    (their ``wall:`` line); each None when no process gave it. The per-process lists beside."""
    from . import graphs
    from .fresh import run_opt

    graph_file = graphs.path(settings.scale, key, "txt")
    output = settings.out_dir / f"{key}.fresh.dist.txt"
    output.parent.mkdir(parents=True, exist_ok=True)
    runs = []
    for index in range(max(settings.fresh_runs, 1)):
        estimate = runs[-1]["wall_s"] if runs else 0.0
        if index >= min(FRESH_MIN, settings.fresh_runs) and not budget.allows(estimate, f"{what}, process {index + 1}"):
            break
        runs.append(run_opt(graph_file, output, timeout=settings.run_timeout))
        if not runs[-1]["ok"]:
            break
    good = [r for r in runs if r["ok"]]

    def stage(name):
        return [r["stages"][name] for r in good if r["stages"] and name in r["stages"]]

    def middle(values):
        return median(values) if values else None

    printed, walls, setups = [r["printed_ms"] for r in good], [r["wall_s"] for r in good], stage("setup")
    return {"ms": middle(printed), "printed_ms": printed, "processes": len(runs),
            "process_wall_s": middle(walls), "process_walls_s": walls, "wall_line_s": middle(stage("total")),
            "setup_s": middle(setups), "setups_s": setups,
            "failed": next((r["detail"] for r in runs if not r["ok"]), "")}


def _check(measurement: dict) -> str:
    return "ok" if measurement["wrong_vertices"] == 0 else f"WRONG ({measurement['wrong_vertices']} vertices)"


def bench(settings, budget, record, device) -> dict:
    """Section (b); returns {graph key: opt incore measurement} for the out-of-core table.

    Every baseline runs (or comes from the cache, marked with its date) whatever the budget
    says: a goal that needs a baseline must never read "met" for want of one."""
    from . import baselines, graphs, tools

    binaries = {"gapbs": tools.find("gapbs"), "Gunrock": tools.find("gunrock")}
    absent = {}
    for name, binary in binaries.items():
        if binary is None:
            absent[name] = "no binary in " + ", ".join(map(str, tools.search_dirs()))
    if binaries["Gunrock"] is not None and not device.is_gpu:
        absent["Gunrock"] = "no GPU here"
    for name, why in absent.items():
        print(f"  {name}: {why}: not measured", flush=True)
    cache = baselines.cache_from_env()
    deltas = DELTAS_QUICK if settings.quick else DELTAS_FULL
    chosen = [spec for spec in graphs.specs(settings.scale) if not settings.graphs or spec.key in settings.graphs]
    header = (f"goals: gapbs/opt >= {GAPBS_GOAL:g}x, Gunrock/opt >= {GUNROCK_GOAL:g}x on every graph "
              f"(gapbs: {settings.threads} threads, {settings.gapbs_format} input; Gunrock: "
              f".mtx input; opt: bsize 1024, kernel time incl. filtering, judged on the median printed by "
              f">= {min(FRESH_MIN, settings.fresh_runs)} fresh ./sssp processes, whose wall (measured outside "
              f"each process, start to exit) and setup (its `wall:` line) are the next columns; the warm column: "
              f"median of {settings.opt_repeats} in this process after a warm-up, every run checked against scipy)")
    table = VersusTable(f"opt incore against gapbs, Gunrock and scipy ({device.timing_label})", settings.scale,
                        [(spec.key, spec.label) for spec in chosen], header, settings.tables_dir)
    measured, failures = {}, 0
    table.publish()  # every graph "not measured yet": a file from the start
    for spec in chosen:
        # loading, scipy and opt's first run: ~60 ns per edge on the GPU machine's host (LiveJournal ~4 s)
        if not budget.allows(graphs.meta(settings.scale, spec.key)["m"] * 6e-8 + 0.3, f"{spec.label}: the whole row"):
            table.add(spec.key, [[spec.label, "not measured (skipped for time)"] + [None] * (len(COLUMNS) - 2)],
                      None, {name: Baseline.missing("row skipped for time") for name in binaries})
            continue
        graph = graphs.load(settings.scale, spec.key)
        expected, scipy_ms = scipy_dijkstra(graph.n, graphs.load_csr(settings.scale, spec.key))
        fresh = fresh_opt(settings, spec.key, budget, f"{spec.label}: opt as a fresh ./sssp")
        if fresh["failed"]:
            table.notes.append(f"{spec.label}: a fresh ./sssp failed: {fresh['failed'][-200:]}")
        opt = time_opt(graph, "incore", device, settings.opt_repeats, expected, budget, f"{spec.label}: opt incore")
        measured[spec.key] = {"graph": graph, "expected": expected, "incore": opt, "label": spec.label}
        failures += opt["wrong_vertices"] > 0
        wsg = graphs.path(settings.scale, spec.key, settings.gapbs_format)
        mtx = graphs.path(settings.scale, spec.key, "mtx")
        runners = {
            "gapbs": (wsg, _gapbs_settings(settings, spec.key),
                      lambda b, f: tools.gapbs_best(b, f, deltas[spec.key], settings.threads, timeout=300)),
            "Gunrock": (mtx, _gunrock_settings(settings), lambda b, f: _gunrock(settings, spec.key, b, f, graph)),
        }
        got = {}
        for name, (graph_file, run_settings, run_tool) in runners.items():
            if name in absent:
                got[name] = Baseline.missing(absent[name])
                continue
            got[name] = _baseline(cache, name, binaries[name], graph_file, device.name, run_settings, run_tool)
            if got[name].ms is None:
                table.notes.append(f"{spec.label}: {name} failed: {got[name].note}")
        gap, gun = got["gapbs"], got["Gunrock"]
        tiled = None
        if spec.key in TILE_GOALS_MS:
            tiled = time_opt(graph, "incore", device, settings.opt_repeats, expected, budget,
                             f"{spec.label}: opt -tile {TILE_BENCH}", tile=TILE_BENCH)
            failures += tiled["wrong_vertices"] > 0
        record("versus", graph=spec.key, label=spec.label, vertices=graph.n, edges=graph.m, device=device.name,
               opt_incore=opt, scipy_ms=scipy_ms, gapbs_ms=gap.ms, gapbs_source=gap.source, gapbs_detail=gap.note,
               gapbs_threads=settings.threads, gapbs_format=settings.gapbs_format, gunrock_ms=gun.ms,
               gunrock_source=gun.source, gunrock_detail=gun.note, opt_tile=tiled, opt_tile_size=TILE_BENCH,
               opt_fresh=fresh)
        row = table_row(spec.label, fresh, opt["ms"], gap, gun, scipy_ms, opt["rounds"],
                        f"{opt['relax_per_edge']:.2f}", _check(opt))
        rows = [row]
        if tiled is not None:  # in-process only: an extra beside opt's own row, judged by none of the goals
            rows.append(table_row(f"{spec.label}, opt -tile {TILE_BENCH}", None, tiled["ms"], gap, gun, scipy_ms,
                                  tiled["rounds"], f"{tiled['relax_per_edge']:.2f}", _check(tiled)))
            table.tile_goals.append(_tile_goal(settings.scale, spec, tiled["ms"], fresh["ms"]))
        table.add(spec.key, rows, fresh, got)
        print(f"  {spec.label}: opt {_ms(fresh['ms'])} ms fresh ({len(fresh['printed_ms'])} processes, wall "
              f"{_s(fresh['process_wall_s'])} s, setup {_s(fresh['setup_s'])} s), {opt['ms']:.3f} ms warm | "
              f"gapbs {gap.cell()} ({row[COLUMNS.index('gapbs/opt')]}) | Gunrock {gun.cell()} "
              f"({row[COLUMNS.index('Gunrock/opt')]}) | scipy {scipy_ms:.1f} ms", flush=True)
        if tiled is not None:
            print(f"  {spec.label}: opt -tile {TILE_BENCH} {tiled['ms']:.3f} ms", flush=True)
    table.finish()
    measured["_failures"] = failures
    return measured


def _tile_goal(scale: str, spec, tiled_ms: float, opt_ms: float | None) -> str:
    """Issue 26's goal for the graph, judged on opt as it runs by default and as users run it
    (its own row's fresh-process figure; it takes tiles by itself where they win), beside the
    explicit -tile row (in-process)."""
    goal = TILE_GOALS_MS[spec.key]
    if opt_ms is None:
        verdict = "unknown (no fresh ./sssp printed a time)"
    else:
        verdict = goal_text(opt_ms, goal, "ms") if scale == "full" else "applies at full scale only"
    return f"{spec.label}: opt {_ms(opt_ms)} ms (fresh ./sssp), -tile {TILE_BENCH} {tiled_ms:.3f} ms; goal {verdict}"


def _ms(value) -> str:
    return "—" if value is None else f"{value:.3f}"


def _s(value) -> str:
    return "—" if value is None else f"{value:.2f}"


def mandatory_seconds(settings, device_is_gpu: bool = True) -> float:
    """What the versus table will take whatever the budget: each row's load, scipy and opt
    (~60 ns per edge on the GPU host), and every baseline not in the cache (by file size)."""
    from . import baselines, graphs, tools

    cache = baselines.cache_from_env()
    deltas = DELTAS_QUICK if settings.quick else DELTAS_FULL
    gpu_name = _gpu_name() if device_is_gpu else ""
    total = 0.0
    for spec in graphs.specs(settings.scale):
        if settings.graphs and spec.key not in settings.graphs:
            continue
        m = graphs.meta(settings.scale, spec.key)["m"]
        total += m * 6e-8 + 0.3 + (settings.opt_repeats + 1) * 0.05
        # the fresh ./sssp processes never skipped: start-up and context ~0.8 s, the cached load ~40 ns an edge
        total += min(FRESH_MIN, settings.fresh_runs) * (0.8 + m * 4e-8)
        if spec.key in TILE_GOALS_MS:  # opt -tile's row: its tiling (~0.2 µs an edge) and runs
            total += m * 2e-7 + (settings.opt_repeats + 1) * 0.05
        wsg = graphs.path(settings.scale, spec.key, settings.gapbs_format)
        mtx = graphs.path(settings.scale, spec.key, "mtx")
        gapbs_bin, gunrock_bin = tools.find("gapbs"), tools.find("gunrock")
        if gapbs_bin is not None:
            if cache.get(baselines.key("gapbs", gapbs_bin, wsg, gpu_name, _gapbs_settings(settings, spec.key))) is None:
                each = wsg.stat().st_size / (0.8e9 if settings.gapbs_format == "wsg" else 0.1e9) + 0.3 + m * 5e-9
                total += each * len(deltas[spec.key])
        if gunrock_bin is not None and device_is_gpu:
            if cache.get(baselines.key("Gunrock", gunrock_bin, mtx, gpu_name, _gunrock_settings(settings))) is None:
                # a CUDA context and the graph built on the GPU (~2 s), its CSR built on the host (~25 ns
                # an edge), and the file parsed at ~60 MB/s unless that was done early (gunrock_early)
                early = settings.early is not None and spec.key in settings.early.held
                total += 2.0 + m * 2.5e-8 + (0.0 if early else mtx.stat().st_size / 60e6)
    return total


def _gapbs_settings(settings, key: str) -> dict:
    """How gapbs is run on one graph: part of its cache key."""
    deltas = DELTAS_QUICK if settings.quick else DELTAS_FULL
    return {"deltas": list(deltas[key]), "threads": settings.threads, "trials": 5, "format": settings.gapbs_format}


def _gunrock_settings(settings) -> dict:
    """How Gunrock is run: part of its cache key."""
    return {"runs": settings.gunrock_runs, "source": 0}


def _gunrock(settings, key: str, binary, mtx, graph):
    """Gunrock on one graph: the process that loaded it during preparation if there is one
    (``benchmarks.gunrock_early``), else a plain run; a plain run too if that process failed,
    with why in its note."""
    from . import tools

    held = settings.early.take(key) if settings.early is not None else None
    early = held.finish(timeout=300) if held is not None else None
    if early is not None and early.ms is not None:
        return early
    plain = tools.gunrock(binary, mtx, settings.gunrock_runs, timeout=300, vertices=graph.n, edges=graph.m)
    if early is not None:
        plain.detail = f"{plain.detail}; run plainly, the early process failed: {early.detail[-120:]}"
    return plain


def _gpu_name() -> str:
    """The GPU's name as the device object gives it, without making a CUDA context here
    (the wall table's ./sssp processes run before this process holds one)."""
    import subprocess
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", "0"],
                              capture_output=True, text=True, timeout=20)
        return done.stdout.strip().splitlines()[0] if done.returncode == 0 and done.stdout.strip() else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def _baseline(cache, name, binary, graph_file, gpu, run_settings, run_tool) -> Baseline:
    """The baseline's time from the cache (marked cached, with its date) or from a fresh run,
    which is then cached; a failed run is not measured, and not cached."""
    from . import baselines

    cache_key = baselines.key(name, binary, graph_file, gpu, run_settings)
    hit = cache.get(cache_key)
    if hit is not None:
        return Baseline(hit.ms, "cached", hit.date)
    outcome = run_tool(binary, graph_file)
    if outcome.ms is None:
        return Baseline.missing(outcome.detail or "no time in its output")
    cache.put(cache_key, outcome.ms, outcome.detail, outcome.runs)
    return Baseline(outcome.ms, "fresh", outcome.detail)


def outcore(settings, budget, record, device, measured: dict) -> int:
    """opt -sync outcore against incore on the six graphs (goal: within 2x)."""
    rows, failures = [], 0
    for key, m in measured.items():
        if key.startswith("_"):
            continue
        from . import graphs
        spec = graphs.spec(settings.scale, key)
        out = time_opt(m["graph"], "outcore", device, settings.opt_repeats, m["expected"], budget,
                       f"{spec.label}: opt outcore")
        failures += out["wrong_vertices"] > 0
        slower = ratio(out["ms"], m["incore"]["ms"])
        record("outcore", graph=key, label=spec.label, device=device.name, incore_ms=m["incore"]["ms"], outcore=out)
        rows.append([spec.label, m["incore"]["ms"], out["ms"], _times(slower), out["rounds"],
                     goal_text(slower, OUTCORE_GOAL, "x"), "ok" if out["wrong_vertices"] == 0 else "WRONG"])
        print(f"  {spec.label}: outcore {out['ms']:.3f} ms, incore {m['incore']['ms']:.3f} ms", flush=True)
    print_table(f"opt outcore against incore ({device.timing_label}, median of {settings.opt_repeats})",
                ["graph", "incore ms", "outcore ms", "outcore/incore", "outcore rounds", "goal", "check"], rows)
    return failures


def _times(value) -> str:
    return "—" if value is None else f"{value:.1f}x"
