// opt's shared pieces: the context every phase reads, the warp-level pushes, the
// phases (expand, bucket fusion, hub chunks, far-pile split, bottom-up rounds) and the
// grid barrier. opt.cu holds the kernels that drive them (see its header comment).
#pragma once
#include "common.cuh"
#include "opt_ctrl.cuh"

#define FULL_MASK 0xffffffffu

// Who shares a phase's work: the whole grid, or (bucket fusion) one block.
struct Team {
    long long warp, warps;
    __device__ static Team grid() {
        return {((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5, ((long long)gridDim.x * blockDim.x) >> 5};
    }
    __device__ static Team block() { return {(long long)(threadIdx.x >> 5), (long long)(blockDim.x >> 5)}; }
};
#define OPT_CHUNK 256  // edges of a hub vertex one warp takes at a time

template <typename D>
struct Ctx {
    const int* row_ptr;
    const int2* adj;     // (destination, weight) sorted by source
    D* dist;
    int* near0;
    int* near1;
    int* far0;
    int* far1;
    int2* chunks;        // (vertex, chunk index)
    int* stamp;
    int* in_far;
    long long* ctrl;
    long long delta;
    int hub_degree;
    // Bottom-up (pull) rounds, equal weights only: in-edges grouped by head, and a per-vertex
    // "in round r's near queue" mark. w0 = 0: never pull.
    int n;
    const int* in_ptr;
    const int* in_src;
    int* fround;
    int w0;
    long long pull_min;  // pull when the near queue holds more vertices than this
    __device__ int* near(int r) const { return (r & 1) ? near1 : near0; }
    __device__ int* far(int f) const { return f ? far1 : far0; }
};

__device__ __forceinline__ long long ldcg64(const long long* p) { return __ldcg(p); }

__device__ __forceinline__ long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return (long long)t;
}

template <typename D>
__device__ __forceinline__ D threshold_after(long long base, long long delta) {
    const long long inf = (long long)Limits<D>::inf;
    if (base >= inf || delta >= inf - base) return Limits<D>::inf;
    return (D)(base + delta);
}

// Lanes with `want` append `item` to q (size counter *size); one atomic per warp.
__device__ __forceinline__ void warp_push(bool want, int item, int* q, long long* size, int lane) {
    const unsigned mask = __ballot_sync(FULL_MASK, want);
    if (mask == 0) return;
    const int leader = __ffs(mask) - 1;
    unsigned long long base = 0;
    if (lane == leader) base = atomicAdd((unsigned long long*)size, (unsigned long long)__popc(mask));
    base = __shfl_sync(FULL_MASK, base, leader);
    if (want) q[base + __popc(mask & lanes_below(lane))] = item;
}

// Warp minimum of `value` over lanes with `want`, folded into *slot with one atomic.
__device__ __forceinline__ void warp_min_into(bool want, long long value, long long* slot, int lane) {
    const unsigned mask = __ballot_sync(FULL_MASK, want);
    if (mask == 0) return;
    long long m = want ? value : 0x7fffffffffffffffLL;
#pragma unroll
    for (int o = 16; o; o >>= 1) {
        const long long other = __shfl_xor_sync(FULL_MASK, m, o);
        m = other < m ? other : m;
    }
    if (lane == 0) atomicMin(slot, m);
}

#define FUSE_CAP 1024  // a block's shared queue for bucket fusion (two of them: 8 KB)
#define FUSE_MAX_PER_WARP 4  // fuse rounds whose near queue has at most this many vertices per warp

// A block's own queue in shared memory (bucket fusion): improvements below T found by this
// block are expanded by it again before the grid barrier, instead of a round later.
struct Local {
    int* q = nullptr;      // where this block appends (nullptr: no fusion)
    int* count = nullptr;  // its counter (may pass cap: the overflow goes to the global queue)
    int cap = 0;
};

// Relax one edge per lane (all lanes call; `active` says whose edge is real), then push the
// improved heads: below the threshold to the next near queue, otherwise to the far pile.
template <typename D>
__device__ __forceinline__ void relax_push(const Ctx<D>& c, bool active, long long edge, D du, D T,
                                           int next_round, int fcur, int lane, long long& edges,
                                           const Local& local = Local(), bool read_first = false) {
    bool to_near = false, to_far = false, beyond = false, to_local = false;
    int v = 0;
    D nd = Limits<D>::inf;
    if (active) {
        const int2 cw = __ldg(&c.adj[edge]);
        v = cw.x;
        nd = saturating_add(du, cw.y);
        ++edges;
        // No plain read of dist[v] before the atomic: most relaxations of a frontier improve
        // their head, so the read would only add an L2 round trip (measured: BENCHMARKS.md).
        // ... except in wide rounds of low-diameter graphs, where most heads are already
        // settled: a plain read then spares most atomics (read_first).
        const D old = (read_first && __ldcg(&c.dist[v]) <= nd) ? nd : atomicMin(&c.dist[v], nd);
        if (nd < old) {
            if (nd < T && local.q) {
                to_local = true;
            } else if (nd < T) {
                to_near = atomicMax(&c.stamp[v], next_round) < next_round;
            } else {
                beyond = true;
                to_far = atomicExch(&c.in_far[v], 1) == 0;
            }
        }
    }
    if (local.q) {  // uniform across the warp: every lane has the same Local
        const unsigned mask = __ballot_sync(FULL_MASK, to_local);
        if (mask) {
            const int leader = __ffs(mask) - 1;
            int base = 0;
            if (lane == leader) base = atomicAdd(local.count, __popc(mask));
            base = __shfl_sync(FULL_MASK, base, leader);
            const int at = base + __popc(mask & lanes_below(lane));
            if (to_local) {
                if (at < local.cap) local.q[at] = v;
                else to_near = atomicMax(&c.stamp[v], next_round) < next_round;  // full: next round
            }
        }
    }
    warp_push(to_near, v, c.near(next_round), &c.ctrl[C_NEAR + next_round % 3], lane);
    warp_push(to_far, v, c.far(fcur), &c.ctrl[C_FAR + fcur], lane);
    warp_min_into(beyond, (long long)nd, &c.ctrl[C_FARMIN + fcur], lane);
}

// Expand round r's near queue: each warp takes 32 vertices, scans their degrees and walks
// their concatenated edge lists 32 at a time (each lane finds its edge's owner by a binary
// search over the scan held in registers). Vertices of degree > hub_degree are cut into
// OPT_CHUNK-edge chunks that the whole grid shares after the barrier.
template <typename D, bool SHARED_QUEUE = false>
__device__ void expand_phase(const Ctx<D>& c, int r, int fcur, D T, long long S, long long& edges,
                             Team team = Team::grid(), const int* q = nullptr, const Local& local = Local()) {
    const int lane = threadIdx.x & 31;
    const long long gwarp = team.warp, nwarps = team.warps;
    if (!SHARED_QUEUE) q = c.near(r);
    // A small queue is spread over every warp (fewer vertices per warp, so each warp's
    // walk over its vertices' edges, the round's critical path, is short).
    const long long spread = (S + nwarps - 1) / nwarps;
    const bool wide = !SHARED_QUEUE && S > 32 * nwarps;  // more vertices than threads
    const int per = spread >= 32 ? 32 : (int)max(1LL, spread);
    if (per == 1) {  // a vertex a warp (thin rounds, bucket fusion's steps): its edges a lane each,
        // with no degree scan and no owner search (their shuffles were on every step's chain)
        for (long long i = gwarp; i < S; i += nwarps) {
            const int u = SHARED_QUEUE ? q[i] : __ldcg(&q[i]);  // one address: a broadcast
            const D du = __ldcg(&c.dist[u]);
            const int beg = __ldg(&c.row_ptr[u]);
            int deg = __ldg(&c.row_ptr[u + 1]) - beg;
            if (deg > c.hub_degree) {
                const int pieces = (deg + OPT_CHUNK - 1) / OPT_CHUNK;
                if (lane == 0) {
                    const unsigned long long at =
                        atomicAdd((unsigned long long*)&c.ctrl[C_CHUNK + r % 3], (unsigned long long)pieces);
                    for (int k = 0; k < pieces; ++k) c.chunks[at + k] = make_int2(u, k);
                }
                deg = 0;
            }
            for (int eb = 0; eb < deg; eb += 32)  // warp-uniform bounds: relax_push needs every lane
                relax_push(c, eb + lane < deg, (long long)beg + eb + lane, du, T, r + 1, fcur, lane, edges, local,
                           wide);
        }
        return;
    }
    for (long long base = gwarp * per; base < S; base += nwarps * per) {
        const long long i = base + lane;
        int deg = 0, beg = 0;
        D du = Limits<D>::inf;
        if (lane < per && i < S) {
            const int u = SHARED_QUEUE ? q[i] : __ldcg(&q[i]);
            du = __ldcg(&c.dist[u]);
            beg = __ldg(&c.row_ptr[u]);
            deg = __ldg(&c.row_ptr[u + 1]) - beg;
            if (deg > c.hub_degree) {
                const int pieces = (deg + OPT_CHUNK - 1) / OPT_CHUNK;
                const unsigned long long at =
                    atomicAdd((unsigned long long*)&c.ctrl[C_CHUNK + r % 3], (unsigned long long)pieces);
                for (int k = 0; k < pieces; ++k) c.chunks[at + k] = make_int2(u, k);
                deg = 0;
            }
        }
        int incl = deg;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const int t = __shfl_up_sync(FULL_MASK, incl, o);
            if (lane >= o) incl += t;
        }
        const int total = __shfl_sync(FULL_MASK, incl, 31);
        const int excl = incl - deg;
        for (int eb = 0; eb < total; eb += 32) {
            const int e = eb + lane;
            int owner = 0;
#pragma unroll
            for (int step = 16; step; step >>= 1) {
                const int ex = __shfl_sync(FULL_MASK, excl, owner + step);
                if (ex <= e) owner += step;
            }
            const D odu = __shfl_sync(FULL_MASK, du, owner);
            const int obeg = __shfl_sync(FULL_MASK, beg, owner);
            const int oex = __shfl_sync(FULL_MASK, excl, owner);
            relax_push(c, e < total, (long long)obeg + (e - oex), odu, T, r + 1, fcur, lane, edges, local, wide);
        }
    }
}

// Bucket fusion: after its share of round r, a block keeps expanding the vertices it
// improved below T (its shared queue) for up to `iterations` block-synchronous steps, then
// queues what is left for round r + 1. Correct for any interleaving: every improved vertex
// is expanded by this block or queued (in place relaxation, as everywhere in opt).
template <typename D>
__device__ void fuse_block(const Ctx<D>& c, int r, int fcur, D T, long long& edges, int* lq0, int* lq1,
                           int* lcount, int cap, int iterations) {
    int* queues[2] = {lq0, lq1};
    int cur = 0;
    for (int it = 0; it < iterations; ++it) {
        __syncthreads();  // the previous step's appends to queues[cur] are done
        const int n = min(lcount[cur], cap);
        __syncthreads();  // everyone has read n before the counter is reused
        if (n == 0) return;
        if (threadIdx.x == 0) {
            lcount[cur] = 0;
            lcount[cur ^ 1] = 0;
        }
        __syncthreads();
        Local next;  // the last step queues globally
        if (it + 1 < iterations) {
            next.q = queues[cur ^ 1];
            next.count = &lcount[cur ^ 1];
            next.cap = cap;
        }
        expand_phase<D, true>(c, r, fcur, T, n, edges, Team::block(), queues[cur], next);
        cur ^= 1;
    }
}

// The hub chunks found in round r: one warp per chunk of OPT_CHUNK edges.
template <typename D>
__device__ void hub_phase(const Ctx<D>& c, int r, int fcur, D T, long long H, long long& edges,
                          Team team = Team::grid()) {
    const int lane = threadIdx.x & 31;
    const long long gwarp = team.warp, nwarps = team.warps;
    for (long long j = gwarp; j < H; j += nwarps) {
        const int2 piece = __ldcg(&c.chunks[j]);
        const int u = piece.x;
        const D du = __ldcg(&c.dist[u]);
        const long long end = __ldg(&c.row_ptr[u + 1]);
        const long long beg = (long long)__ldg(&c.row_ptr[u]) + (long long)piece.y * OPT_CHUNK;
        for (int k = 0; k < OPT_CHUNK; k += 32) {
            const long long e = beg + k + lane;
            relax_push(c, e < end && du != Limits<D>::inf, e, du, T, r + 1, fcur, lane, edges);
        }
    }
}

// Split the far pile `fcur` for round r: entries now below T_old are stale (they were
// pushed to a near queue when they dropped below it); below T_new go to round r's near
// queue; the rest move to the other far pile.
template <typename D>
__device__ void split_phase(const Ctx<D>& c, int r, int fcur, D T_old, D T_new, long long& scanned) {
    const int lane = threadIdx.x & 31;
    const long long gwarp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
    const long long F = ldcg64(&c.ctrl[C_FAR + fcur]);
    const int* fq = c.far(fcur);
    const int other = fcur ^ 1;
    for (long long base = gwarp * 32; base < F; base += nwarps * 32) {
        const long long i = base + lane;
        bool to_near = false, keep = false;
        int v = 0;
        D d = Limits<D>::inf;
        if (i < F) {
            v = __ldcg(&fq[i]);
            d = __ldcg(&c.dist[v]);
            ++scanned;
            if (d < T_new) {
                c.in_far[v] = 0;
                if (d >= T_old) to_near = atomicMax(&c.stamp[v], r) < r;
            } else {
                keep = true;
            }
        }
        warp_push(to_near, v, c.near(r), &c.ctrl[C_NEAR + r % 3], lane);
        warp_push(keep, v, c.far(other), &c.ctrl[C_FAR + other], lane);
        warp_min_into(keep, (long long)d, &c.ctrl[C_FARMIN + other], lane);
    }
}

// Bottom-up rounds (direction-optimizing BFS, for equal weights w0): when round r's near queue
// is wide, most out-edges of it lead to vertices already reached, so instead every vertex
// that a queued vertex could still improve looks through its in-edges for one. mark_phase
// stamps the queue (fround) and finds its least distance; pull_phase then lets each vertex v
// with dist[v] > fmin + w0 take the best queued in-neighbour, stopping at the first that
// gives fmin + w0 (nothing in the queue can give less). A queued vertex lowered during the
// round is queued again for r + 1 (as in top-down rounds), so nothing is missed.
// Only while the queue grows: past the widest round, the unreached vertices left are mostly
// ones nothing reaches, and a bottom-up round would scan all their in-edges for nothing.
template <typename D>
__device__ __forceinline__ bool pull_round(const Ctx<D>& c, long long S, long long S_prev) {
    return c.w0 > 0 && S > c.pull_min && S >= S_prev;
}

template <typename D>
__device__ void mark_phase(const Ctx<D>& c, int r, long long S) {
    const int lane = threadIdx.x & 31;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long nthreads = (long long)gridDim.x * blockDim.x;
    const int* q = c.near(r);
    for (long long base = tid - lane; base < S; base += nthreads) {
        const long long i = base + lane;
        D d = Limits<D>::inf;
        if (i < S) {
            const int u = __ldcg(&q[i]);
            c.fround[u] = r;
            d = __ldcg(&c.dist[u]);
        }
        warp_min_into(i < S, (long long)d, &c.ctrl[C_FMIN + r % 3], lane);
    }
}

template <typename D>
__device__ void pull_phase(const Ctx<D>& c, int r, long long& edges) {
    const int lane = threadIdx.x & 31;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long nthreads = (long long)gridDim.x * blockDim.x;
    const D bound = saturating_add((D)ldcg64(&c.ctrl[C_FMIN + r % 3]), c.w0);
    for (long long base = tid - lane; base < c.n; base += nthreads) {  // whole warps: warp_push
        const long long v = base + lane;
        bool push = false;
        if (v < c.n) {
            const D dv = __ldcg(&c.dist[v]);
            if (dv > bound) {
                D best = dv;
                const int end = __ldg(&c.in_ptr[v + 1]);
                for (int e = __ldg(&c.in_ptr[v]); e < end; ++e) {
                    const int u = __ldg(&c.in_src[e]);
                    ++edges;
                    if (__ldcg(&c.fround[u]) != r) continue;
                    const D cand = saturating_add(__ldcg(&c.dist[u]), c.w0);
                    if (cand < best) {
                        best = cand;
                        if (best <= bound) break;
                    }
                }
                if (best < dv && best < atomicMin(&c.dist[v], best))
                    push = atomicMax(&c.stamp[v], r + 1) < r + 1;
            }
        }
        warp_push(push, (int)v, c.near(r + 1), &c.ctrl[C_NEAR + (r + 1) % 3], lane);
    }
}

// What follows round r's expansion (r_next = r + 1) or a split feeding round r_next.
__device__ __forceinline__ int next_mode(const long long* ctrl, int r_next, int fcur) {
    if (ldcg64(&ctrl[C_NEAR + r_next % 3]) > 0) return MODE_EXPAND;
    if (ldcg64(&ctrl[C_FAR + fcur]) > 0) return MODE_SPLIT;
    return MODE_DONE;
}

__device__ __forceinline__ void flush_stats(long long* ctrl, long long edges, long long scanned) {
#pragma unroll
    for (int o = 16; o; o >>= 1) {
        edges += __shfl_xor_sync(FULL_MASK, edges, o);
        scanned += __shfl_xor_sync(FULL_MASK, scanned, o);
    }
    if ((threadIdx.x & 31) == 0) {
        if (edges) atomicAdd((unsigned long long*)&ctrl[C_EDGES], (unsigned long long)edges);
        if (scanned) atomicAdd((unsigned long long*)&ctrl[C_SCANNED], (unsigned long long)scanned);
    }
}

// Grid barrier on a monotonic counter: all blocks are co-resident (cooperative launch).
__device__ __forceinline__ void grid_barrier(long long* ctrl, unsigned long long& target) {
    target += gridDim.x;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long* counter = (unsigned long long*)&ctrl[C_BARRIER];
        // release: this block's writes (ordered before by __syncthreads) become visible
        // with the arrival; acquire: every other block's writes are visible after the wait
        // (cheaper per round than __threadfence + atomicAdd + a volatile spin; BENCHMARKS.md)
        asm volatile("red.release.gpu.global.add.u64 [%0], %1;" ::"l"(counter), "l"(1ull) : "memory");
        unsigned long long seen;
        do {
            asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(seen) : "l"(counter) : "memory");
        } while (seen < target);
    }
    __syncthreads();
}

#define CTX_PARAMS                                                                             \
    const int *__restrict__ row_ptr, const int2 *__restrict__ adj, D *dist, int *near0,        \
        int *near1, int *far0, int *far1, int2 *chunks, int *stamp, int *in_far, long long *ctrl, \
        long long delta, int hub_degree, int n, const int *__restrict__ in_ptr,                 \
        const int *__restrict__ in_src, int *fround, int w0, long long pull_min
#define CTX_INIT {row_ptr, adj, dist, near0, near1, far0, far1, chunks, stamp, in_far, ctrl, delta, hub_degree, \
                  n, in_ptr, in_src, fround, w0, pull_min}
