"""The planted bugs of ``make mutants`` (benchmarks/mutants.py): each replaces one exact piece
of text in one file with a plausible slip, and names the fast test selection that should
catch it. Every ``.cu`` file and header, and the GPU host code (the methods' GPU paths,
the timer, the printed times), has at least one. The three kinds issue 27 found passing
the suite come first.

A mutant must change behaviour: one that computes the same thing (a stable sort for a
stable sort) would only lower the score without saying anything about the tests, except
in CPU_MUTANTS, where one such is kept on purpose to show that "survived" is reported.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str
    old: str
    new: str
    description: str
    tests: tuple[str, ...]   # pytest arguments: files, then optionally "-k", expression


SEMANTICS = ("tests/test_gpu_semantics.py",)
METHODS = ("tests/test_gpu_semantics.py", "tests/test_methods.py", "tests/test_gpu_wide.py", "-k", "not real_graphs")
CLASSICS = ("tests/test_gpu_semantics.py", "tests/test_classics.py", "-k", "not real_graphs")
OPT = ("tests/test_gpu_semantics.py", "tests/test_opt.py", "tests/test_gpu_wide.py")
TILES = ("tests/test_tiles.py", "-k", "gpu")
APSP = ("tests/test_apsp.py", "tests/test_apsp_narrow.py")
PATHS = ("tests/test_paths.py",)

MUTANTS = [
    # -- the three kinds issue 27 found passing every test --------------------------------
    Mutant("bmf-outcore-reads-cur", "sssp_gpu/kernels/bmf.cu",
           "if (base + 32 * k < r.end) { du[k] = distance_prev[u[k]]; dv[k] = distance_prev[v[k]]; }",
           "if (base + 32 * k < r.end) { du[k] = distance_cur[u[k]]; dv[k] = distance_prev[v[k]]; }",
           "bmf out-of-core reads the array it writes (in-core behaviour)", SEMANTICS),
    Mutant("saturating-add-no-clamp", "sssp_gpu/kernels/common.cuh",
           "return du > Limits<D>::inf - (D)w ? Limits<D>::inf : du + (D)w;",
           "return du + (D)w;",
           "the saturating add lost its clamp near INT_MAX", SEMANTICS),
    Mutant("gpu-timer-seconds", "sssp_gpu/timing.py",
           "return float(sum(cupy.cuda.get_elapsed_time(s, e) for s, e in self._pairs))",
           "return float(sum(cupy.cuda.get_elapsed_time(s, e) for s, e in self._pairs)) / 1e3",
           "the GPU timer returns seconds instead of milliseconds", SEMANTICS),
    # -- bmf.cu -----------------------------------------------------------------------------
    Mutant("segscan-reads-cur", "sssp_gpu/kernels/bmf.cu",
           "const D du = distance_prev[src[i]];",
           "const D du = distance_cur[src[i]];",
           "segscan out-of-core reads the array it writes", SEMANTICS),
    Mutant("segscan-ignores-segments", "sssp_gpu/kernels/bmf.cu",
           "if (r.lane >= offset && key[t - offset] == v) other = value[t - offset];",
           "if (r.lane >= offset) other = value[t - offset];",
           "segscan's scan crosses segment boundaries (another destination's minimum)", METHODS),
    Mutant("bmf-incore-never-changed", "sssp_gpu/kernels/bmf.cu",
           "if (temp_dist < distance[v[k]] && atomicMin(&distance[v[k]], temp_dist) > temp_dist) any = 1;",
           "if (temp_dist < distance[v[k]]) atomicMin(&distance[v[k]], temp_dist);",
           "bmf in-core never reports a change (stops after one round)", METHODS),
    Mutant("bmf-incore-stride-skips-step", "sssp_gpu/kernels/bmf.cu",
           "for (long long base = r.beg + r.lane; base < r.end; base += 32 * UNROLL_INCORE) {",
           "for (long long base = r.beg + r.lane; base < r.end; base += 32 * (UNROLL_INCORE + 1)) {",
           "bmf in-core's loop strides past one 32-edge step per group (edges never relaxed)", METHODS),
    # -- common.cuh ---------------------------------------------------------------------------
    Mutant("warp-range-drops-last", "sssp_gpu/kernels/common.cuh",
           "r.end = min(length, r.beg + load);",
           "r.end = min(length, r.beg + load - 1);",
           "each warp's share of the list misses its last edge", METHODS),
    # -- tpe.cu -------------------------------------------------------------------------------
    Mutant("tpe-outcore-reads-cur", "sssp_gpu/kernels/tpe.cu",
           "tpe_relax<D, false>(T, status, src, dst, weight, distance_prev, distance_cur, changed_next, changed);",
           "tpe_relax<D, false>(T, status, src, dst, weight, distance_cur, distance_cur, changed_next, changed);",
           "tpe out-of-core relaxes in place (in-core behaviour)", SEMANTICS),
    Mutant("tpe-gather-lane-offset", "sssp_gpu/kernels/tpe.cu",
           "if (to_process) T[cur_offset + __popc(mask & lanes_below(r.lane))] = (int)i;",
           "if (to_process) T[cur_offset + __popc(mask & ~lanes_below(r.lane)) - 1] = (int)i;",
           "tpe's gather writes a step's edges into T in reverse lane order", METHODS),
    Mutant("tpe-count-misses-a-step", "sssp_gpu/kernels/tpe.cu",
           "for (int k = 0; k < FILTER_UNROLL; ++k) count += __popc(__ballot_sync(0xffffffffu, to_process[k]));",
           "for (int k = 0; k < FILTER_UNROLL - 1; ++k) count += __popc(__ballot_sync(0xffffffffu, to_process[k]));",
           "tpe's count skips one step in four (T too short)", METHODS),
    Mutant("tpe-scan-length-short", "sssp_gpu/kernels/tpe.cu",
           "warp_offset[num_warps] = offset; status[1] = offset; }",
           "warp_offset[num_warps] = offset; status[1] = offset > 0 ? offset - 1 : 0; }",
           "tpe's |T| one short (the last gathered edge never relaxed)", METHODS),
    # -- vbf.cu ---------------------------------------------------------------------------------
    Mutant("vbf-skips-last-edge", "sssp_gpu/kernels/vbf.cu",
           "for (int e = row_ptr[u]; e < end; ++e) {\n        const int2 vw = adj[e];\n        const D candidate = saturating_add(du, vw.y);",
           "for (int e = row_ptr[u]; e < end - 1; ++e) {\n        const int2 vw = adj[e];\n        const D candidate = saturating_add(du, vw.y);",
           "vertex-centric relax skips each vertex's last out-edge", CLASSICS),
    Mutant("vbf-flag-forward-inverted", "sssp_gpu/kernels/vbf.cu",
           "if (next_mask[v]) dist_prev[v] = dist_cur[v];",
           "if (!next_mask[v]) dist_prev[v] = dist_cur[v];",
           "vbf-flag out-of-core copies forward the vertices that did not change", CLASSICS),
    # -- harish.cu --------------------------------------------------------------------------------
    Mutant("harish-commit-narrow-compare", "sssp_gpu/kernels/harish.cu",
           "const Key candidate = key >> shift;\n        if (candidate < (Key)cost[v]) {\n            cost[v] = (D)candidate;",
           "const D candidate = (D)(key >> shift);\n        if (candidate < cost[v]) {\n            cost[v] = candidate;",
           "harish compares a cost plus weight cut to D (wraps negative near INT_MAX)", SEMANTICS),
    Mutant("harish-pred-off-by-one", "sssp_gpu/kernels/harish.cu",
           "pred[v] = (int)(key & low) - 1;",
           "pred[v] = (int)(key & low);",
           "harish records the tail + 1 as predecessor", CLASSICS),
    # -- dijkstra.cu ------------------------------------------------------------------------------
    Mutant("dijkstra-relaxes-settled", "sssp_gpu/kernels/dijkstra.cu",
           "if (vw.x == u || key[vw.x] == SETTLED) continue;",
           "if (vw.x == u) continue;",
           "dijkstra re-keys settled vertices (they are settled again, later)", CLASSICS),
    Mutant("dijkstra-half-warp-min", "sssp_gpu/kernels/dijkstra.cu",
           "for (int offset = 16; offset > 0; offset >>= 1) {",
           "for (int offset = 8; offset > 0; offset >>= 1) {",
           "dijkstra's warp minimum looks at half the warp", CLASSICS),
    # -- apsp.cu ----------------------------------------------------------------------------------
    Mutant("apsp-fw-k-wrong-pivot", "sssp_gpu/kernels/apsp.cu",
           "d[row + j] = add_min(dik, d[(Index)k * N + j], d[row + j]);",
           "d[row + j] = add_min(dik, d[(Index)k * N + i], d[row + j]);",
           "naive Floyd-Warshall reads row k at column i instead of j", APSP),
    Mutant("apsp-batch-no-requeue", "sssp_gpu/kernels/apsp.cu",
           "next_mask[s * n + vw.x] = 1;",
           "next_mask[s * n + u] = 1;",
           "sssp-all queues the tail instead of the improved head", APSP),
    Mutant("apsp-minplus-skips-chunk-tail", "sssp_gpu/kernels/apsp.cu",
           "for (int k = 0; k < KC; ++k) {\n            D a[SUB], b[SUB];",
           "for (int k = 0; k < KC - 1; ++k) {\n            D a[SUB], b[SUB];",
           "the min-plus tiles skip one k of every staged chunk", APSP),
    # -- opt.cu, opt_phases.cuh, opt_ctrl.cuh -------------------------------------------------
    Mutant("opt-far-pile-lost", "sssp_gpu/kernels/opt_phases.cuh",
           "to_far = atomicExch(&c.in_far[v], 1) == 0;",
           "to_far = false;",
           "opt never files an improvement beyond the threshold in the far pile", OPT),
    Mutant("opt-split-drops-threshold-ties", "sssp_gpu/kernels/opt_phases.cuh",
           "if (d >= T_old) to_near = atomicMax(&c.stamp[v], r) < r;",
           "if (d > T_old) to_near = atomicMax(&c.stamp[v], r) < r;",
           "a far-pile split loses vertices exactly at the old threshold", OPT),
    Mutant("opt-warp-push-one-slot", "sssp_gpu/kernels/opt_phases.cuh",
           "if (want) q[base + __popc(mask & lanes_below(lane))] = item;",
           "if (want) q[base + __popc(mask & lanes_below(lane)) / 2] = item;",
           "opt's warp push writes lanes over one another", OPT),
    Mutant("opt-done-is-split", "sssp_gpu/kernels/opt_ctrl.cuh",
           "#define MODE_DONE 2",
           "#define MODE_DONE 1",
           "opt's control block gives 'done' the value of 'split' (it stops at the first split)", OPT),
    Mutant("opt-persistent-rounds-off", "sssp_gpu/kernels/opt.cu",
           "c.ctrl[C_ROUNDS] = r;",
           "c.ctrl[C_ROUNDS] = r + 1;",
           "opt in-core reports one round more than it ran", OPT),
    # -- opt_tiles.cu (opt -tile N) ------------------------------------------------------------
    Mutant("opt-one-vertex-warp-drops-an-edge", "sssp_gpu/kernels/opt_phases.cuh",
           "relax_push(c, eb + lane < deg, (long long)beg + eb + lane",
           "relax_push(c, eb + lane + 1 < deg, (long long)beg + eb + lane",
           "a warp that takes one vertex never relaxes its last edge", OPT),
    Mutant("opt-tiles-pending-forgotten", "sssp_gpu/kernels/opt_tiles.cu",
           "if (left || pend[i]) {",
           "if (left) {",
           "opt -tile forgets a tile's improvements at or above the threshold (never expanded)", TILES),
    Mutant("opt-tiles-boundary-not-queued", "sssp_gpu/kernels/opt_tiles.cu",
           "            queue_tile(th, r + 1, tstamp, tq_next, &ctrl[C_NEAR + (r + 1) % 3]);",
           "            ;",
           "opt -tile's boundary improvements wait in the inbox with their tile never queued", TILES),
    Mutant("opt-tiles-inbox-ignored", "sssp_gpu/kernels/opt_tiles.cu",
           "    if (taken < d) {\n        got = true;",
           "    if (taken < d && false) {\n        got = true;",
           "opt -tile's activations empty the inbox and drop what they take", TILES),
    Mutant("opt-tiles-pull-pending-forgotten", "sssp_gpu/kernels/opt_tiles.cu",
           "if (left || pending) dirty[v] = 1;",
           "if (left) dirty[v] = 1;",
           "opt -tile's pull passes forget improvements at or above the threshold", TILES),
    Mutant("opt-tiles-pull-last-interval-forgotten", "sssp_gpu/kernels/opt_tiles.cu",
           "const bool left = work && changed;",
           "const bool left = false;",
           "a capped pull activation leaves its last interval's news for nobody", TILES),
    Mutant("opt-tiles-pull-inner-news-kept-in", "sssp_gpu/kernels/opt_tiles.cu",
           "        if (touched && mine < T)\n",
           "        if (was_dirty && mine < T)\n",
           "vertices improved by pull passes never relax their boundary edges", TILES),
    Mutant("opt-split-time-microseconds", "sssp_gpu/methods/opt.py",
           "filtering_ms = min(total_ms, ctrl[C_SPLIT_NS] / 1e6)",
           "filtering_ms = min(total_ms, ctrl[C_SPLIT_NS] / 1e3)",
           "opt's split time read in the wrong unit", SEMANTICS),
    # -- GPU host code ------------------------------------------------------------------------------
    Mutant("bmf-host-no-copy-forward", "sssp_gpu/methods/bmf.py",
           "            cupy.copyto(distance_cur, distance_prev)\n",
           "",
           "bmf out-of-core does not copy distance_prev into distance_cur before a round", METHODS),
    Mutant("tpe-host-flags-not-cleared", "sssp_gpu/methods/tpe.py",
           "        changed_next.fill(0)\n",
           "",
           "tpe never clears the next round's changed flags", METHODS),
    Mutant("vbf-host-no-copy-back", "sssp_gpu/methods/vbf.py",
           "            if outcore:\n                cupy.copyto(dist, cur)\n",
           "",
           "vbf out-of-core never copies the round's result back", CLASSICS),
    Mutant("gpu-timer-last-region-only", "sssp_gpu/timing.py",
           "self._pairs.append((start, end))",
           "self._pairs = [(start, end)]",
           "the GPU timer keeps only its last region", SEMANTICS),
    Mutant("printed-times-in-seconds", "sssp_gpu/output.py",
           "{milliseconds(result.computation_ms)} milli-seconds",
           "{milliseconds(result.computation_ms / 1e3)} milli-seconds",
           "the computation line prints seconds", SEMANTICS),
    Mutant("paths-source-not-anchored", "sssp_gpu/paths.py",
           "    anchored[0] = True\n",
           "",
           "derived predecessors (on the GPU with CuPy) never attach zero-weight edges to the source", PATHS),
]

# For checking the harness on a machine without a GPU: numpy fallback mutants, CPU tests.
CPU_SEMANTICS = ("tests/test_gpu_semantics.py",)
CPU_MUTANTS = [
    Mutant("cpu-outcore-in-place", "sssp_gpu/methods/bmf.py",
           'if run.sync == "outcore":\n                dist, improved = relax_cpu.relax_outcore(',
           'if False:\n                dist, improved = relax_cpu.relax_outcore(',
           "bmf's numpy out-of-core rounds relax in place", CPU_SEMANTICS),
    Mutant("cpu-candidates-no-clamp", "sssp_gpu/methods/relax_cpu.py",
           "return finite, np.minimum(wide, inf)",
           "return finite, wide.astype(np.int32).astype(np.int64) if inf == np.iinfo(np.int32).max else wide",
           "the numpy candidates wrap at int32 instead of saturating", CPU_SEMANTICS),
    Mutant("cpu-timer-seconds", "sssp_gpu/timing.py",
           "return self._seconds * 1e3",
           "return self._seconds",
           "the CPU timer returns seconds", CPU_SEMANTICS),
    Mutant("cpu-equivalent-stable-sort", "sssp_gpu/methods/common.py",
           'order = np.argsort(step, kind="stable")',
           'order = np.argsort(step, kind="mergesort")',
           "an equivalent change (mergesort is numpy's stable sort): must survive", CPU_SEMANTICS),
]
