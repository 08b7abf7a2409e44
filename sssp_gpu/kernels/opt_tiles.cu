// opt -tile N (issue 26, item 1): tile fixpoints in shared memory, for latency-bound graphs.
//
// The host (sssp_gpu/methods/tiles.py) renumbers the vertices for locality and cuts them into
// tiles of consecutive ids (tile_ptr), at most tile_cap vertices each; every edge is either
// intra-tile (in_ptr/in_head/in_w: heads as 16-bit offsets inside the tile) or boundary
// (out_ptr/out_head/out_w: heads as global ids of another tile).
//
// One persistent cooperative kernel runs the solve in rounds, a grid barrier after each:
// every tile queued for round r is taken by one block. Its distances go to shared memory,
// lowered by what waits in the tile's inboxes (below). With pull_passes > 0 (a tile fits the
// block) the block runs pull passes to the tile's fixpoint below T (tile_fixpoint_pull, below,
// over the intra-tile in-edges pin_*). Otherwise, push steps (tile_fixpoint): its dirty
// vertices below the threshold T start a worklist; steps (one __syncthreads each) relax the
// worklist's intra-tile edges with shared atomicMin until nothing improves below T. Either
// way at most max_steps (what is left stays dirty and the tile is queued again). In the
// write-back, distances go to dist (which only the block of a vertex's tile writes),
// improvements at or above T stay dirty (the far side of near-far), and every vertex expanded
// with its final distance relaxes its boundary edges into the heads' inboxes (atomicMin); an
// improvement there queues the head's tile for round r + 1 (each tile once per round: tstamp),
// whose next activation takes it. So boundary news needs no phase and no barrier of its own.
// When round r's tile queue is empty the threshold moves (a split): every block finds
// min(tpend) over all tiles (tpend[t] <= every dirty distance in tile t), T = min + delta, and
// the tiles with tpend below T are queued for round r. min(tpend) infinite: done.
//
// Mutable global data is read with __ldcg (L2: the grid barrier orders it; L1 is not coherent);
// the graph (never written) with __ldg.
#include "opt_phases.cuh"

// Dynamic shared memory per block (the host sizes it: methods/opt.py, tile_shared_memory):
// tile_cap distances, then 4 flag bytes a vertex (two worklists, pending, expanded), then the
// staged intra-tile edges: tile_cap + 1 offsets, edge_cap weights, edge_cap 16-bit heads.
// A tile whose intra edges fit edge_cap is stepped from shared memory alone (a step was ~1 us
// with its edges read through L1/L2, BENCHMARKS.md); a larger one reads them from global
// memory as before (edge_cap 0: never staged).

__device__ __forceinline__ void queue_tile(int t, int round, int* tstamp, int* q, long long* count) {
    if (atomicMax(&tstamp[t], round) < round) {
        const unsigned long long at = atomicAdd((unsigned long long*)count, 1ull);
        q[at] = t;
    }
}

// The inbox: boundary relaxations from other tiles' blocks land in inbox[v] (atomicMin), never in
// dist, which only the block of v's tile writes, in its write-back. Whoever lowers inbox[v]
// queues v's tile for the next round, so every value there is taken (atomicExch back to INF)
// by an activation of that tile, at its start. A value taken early (the tile was active in the
// same round) leaves that next activation nothing to do.
__device__ __forceinline__ int take_slot(int* slot) { return atomicExch(slot, Limits<int>::inf); }
__device__ __forceinline__ long long take_slot(long long* slot) {
    return (long long)atomicExch((unsigned long long*)slot, (unsigned long long)Limits<long long>::inf);
}

// v's distance at an activation's start: dist[v] lowered by what waits in its inbox; got says
// whether the inbox lowered it (v then needs expanding, as a dirty vertex does).
template <typename D>
__device__ __forceinline__ D take_inbox(D* inbox, int v, D d, bool& got) {
    got = false;
    if (__ldcg(&inbox[v]) == Limits<D>::inf) return d;  // empty now; a later value queues us again
    const D taken = take_slot(&inbox[v]);
    if (taken < d) {
        got = true;
        return taken;
    }
    return d;
}

// Vertex v, expanded with its final distance d in this activation, relaxes its boundary edges
// into the heads' inboxes (in the write-back: no phase of their own, no grid barrier for them).
// dist[h] only falls, so a stale read of it lets through only relaxations that do not improve;
// the inbox's atomicMin decides, and an improvement queues h's tile for round r + 1.
template <typename D>
__device__ __forceinline__ void relax_boundary(int v, D d, const int* __restrict__ out_ptr,
                                               const int* __restrict__ out_head, const int* __restrict__ out_w,
                                               const int* __restrict__ tile_of, const D* dist, D* inbox,
                                               int* tstamp, int* tq_next, long long* ctrl, int r, long long& edges) {
    const int end = __ldg(&out_ptr[v + 1]);
    for (int e = __ldg(&out_ptr[v]); e < end; ++e) {
        const int h = __ldg(&out_head[e]);
        const D nd = saturating_add(d, __ldg(&out_w[e]));
        const int th = __ldg(&tile_of[h]);  // in flight with the reads below
        ++edges;
        if (nd < __ldcg(&dist[h]) && nd < atomicMin(&inbox[h], nd))
            queue_tile(th, r + 1, tstamp, tq_next, &ctrl[C_NEAR + (r + 1) % 3]);
    }
}

// The end of an activation, push steps or pull passes alike (the whole block calls it, after a
// barrier that made *s_min final): the tile's pending bound, its queueing when the cap stopped it
// (requeue), and thread 0's phase times (s_ns[3..5]: this activation's start, end of loads, end of
// steps; s_ns[0..2]: the block's sums; the round's slowest activation in C_TSLOW).
__device__ __forceinline__ void end_activation(int t, int r, bool requeue, int count, long long* tpend, int* tstamp,
                                               int* tq_next, long long* ctrl, const long long* s_min,
                                               long long& steps, long long* s_ns) {
    if (threadIdx.x == 0) {
        tpend[t] = *s_min;  // only the block of tile t writes tpend[t]
        if (requeue) queue_tile(t, r + 1, tstamp, tq_next, &ctrl[C_NEAR + (r + 1) % 3]);
        steps += count;
        const long long done = global_ns();
        s_ns[0] += s_ns[4] - s_ns[3];
        s_ns[1] += s_ns[5] - s_ns[4];
        s_ns[2] += done - s_ns[5];
        atomicMax(&ctrl[C_TSLOW + r % 3], done - s_ns[3]);
    }
    __syncthreads();  // shared memory is reused by the block's next tile
}

#define TILE_PARAMS                                                                              \
    const int *__restrict__ tile_ptr, const int *__restrict__ tile_of, int tiles,                 \
        const int *__restrict__ in_ptr, const unsigned short *__restrict__ in_head,               \
        const int *__restrict__ in_w, const int *__restrict__ out_ptr,                            \
        const int *__restrict__ out_head, const int *__restrict__ out_w, D *dist, int *dirty,     \
        long long *tpend, int *tstamp, int *tq0, int *tq1, D *inbox, long long *ctrl,             \
        long long delta, int tile_cap, int max_steps, int max_rounds, int edge_cap,                   \
        const int *__restrict__ pin_ptr, const unsigned short *__restrict__ pin_tail,             \
        const int *__restrict__ pin_w, int pull_passes

// An activation of tile t in round r by push steps (the whole block calls it; it begins and
// ends block-uniform).
template <typename D>
__device__ __forceinline__ void tile_fixpoint(const int* __restrict__ tile_ptr, const int* __restrict__ in_ptr,
                              const unsigned short* __restrict__ in_head, const int* __restrict__ in_w,
                              const int* __restrict__ out_ptr, D* dist, int* dirty, long long* tpend,
                              int* tstamp, int* tq_next, D* inbox, const int* __restrict__ out_head,
                              const int* __restrict__ out_w, const int* __restrict__ tile_of,
                              long long* ctrl, int t, int r, D T,
                              int max_steps, D* sd, unsigned char* flags, int tile_cap, int* s_ptr,
                              int* s_w, unsigned short* s_head, int edge_cap, long long* s_min,
                              int* s_left, int* s_any, long long& edges, long long& steps,
                              long long* s_ns) {
    // the phase times, on thread 0's clock, kept in shared memory (s_ns[3..5]: this activation's
    // start, end of loads, end of steps; s_ns[0..2]: the block's sums), not in registers
    if (threadIdx.x == 0) s_ns[3] = global_ns();
    const int base = __ldg(&tile_ptr[t]);
    const int len = __ldg(&tile_ptr[t + 1]) - base;
    unsigned char* cur = flags;
    unsigned char* nxt = flags + tile_cap;
    unsigned char* pend = flags + 2 * tile_cap;  // improved at or above T, not expanded since
    unsigned char* expd = flags + 3 * tile_cap;  // expanded in this activation
    bool mine = false;
    for (int i = threadIdx.x; i < len; i += blockDim.x) {
        bool got;
        const D d = take_inbox(inbox, base + i, __ldcg(&dist[base + i]), got);
        const int dv = __ldcg(&dirty[base + i]) | got;
        const bool now = dv != 0 && d < T;
        sd[i] = d;
        cur[i] = now;
        nxt[i] = 0;
        pend[i] = dv != 0 && !now;
        expd[i] = 0;
        if (dv) dirty[base + i] = 0;
        mine |= now;
    }
    // Stage the tile's intra edges (block-uniform: every thread computes the same count).
    const int e0 = __ldg(&in_ptr[base]);
    const int staged_edges = __ldg(&in_ptr[base + len]) - e0;
    const bool staged = staged_edges <= edge_cap;
    const int* ptr = in_ptr + base;      // offsets into head/wgt: global ...
    const unsigned short* head = in_head;
    const int* wgt = in_w;
    if (staged) {                        // ... or shared, from 0
        for (int i = threadIdx.x; i <= len; i += blockDim.x) s_ptr[i] = __ldg(&in_ptr[base + i]) - e0;
        for (int k = threadIdx.x; k < staged_edges; k += blockDim.x) {
            s_head[k] = __ldg(&in_head[e0 + k]);
            s_w[k] = __ldg(&in_w[e0 + k]);
        }
        ptr = s_ptr;
        head = s_head;
        wgt = s_w;
    }
    if (threadIdx.x == 0) {
        *s_min = 0x7fffffffffffffffLL;
        *s_left = 0;
        s_any[0] = 0;
    }
    // a barrier (every load above done) and "does any vertex need expanding?"
    int work = __syncthreads_or(mine);
    if (threadIdx.x == 0) s_ns[4] = global_ns();
    int step = 0;
    // One __syncthreads a step: step k raises s_any[k % 3] when it queues a vertex for step k+1,
    // and everyone reads it after the step's barrier. Thread 0 clears s_any[(k+1) % 3] during
    // step k: its readers read it before the previous barrier, its writers (step k+1) write
    // after this one.
    while (work) {
        if (step == max_steps) break;  // block-uniform: work and step are
        const int slot = step % 3;
        if (threadIdx.x == 0) s_any[(step + 1) % 3] = 0;
        ++step;
        bool queued = false;
        for (int i = threadIdx.x; i < len; i += blockDim.x) {
            if (!cur[i]) continue;
            cur[i] = 0;
            expd[i] = 1;
            pend[i] = 0;
            // sd[i] < T here; other threads may lower it during this step: then they set nxt[i]
            // and it is expanded again next step (any value read is a path length)
            const D du = sd[i];
            const int end = ptr[i + 1];  // shared (staged) or global: never written in the kernel
            for (int e = ptr[i]; e < end; ++e) {
                const int h = head[e];
                const D nd = saturating_add(du, wgt[e]);
                ++edges;
                if (nd < atomicMin(&sd[h], nd)) {
                    if (nd < T) {
                        nxt[h] = 1;
                        queued = true;
                    } else {
                        pend[h] = 1;  // h is not in cur (cur holds only values below T)
                    }
                }
            }
        }
        if (queued) s_any[slot] = 1;  // every writer writes 1
        __syncthreads();  // the step's relaxations are done; cur is all clear again
        unsigned char* swap = cur;
        cur = nxt;
        nxt = swap;
        work = s_any[slot];
    }
    if (threadIdx.x == 0) s_ns[5] = global_ns();
    // write back; dirty what is left (step cap) or pending; the expanded relax their boundary edges
    long long least = 0x7fffffffffffffffLL;
    bool left_any = false;
    for (int i = threadIdx.x; i < len; i += blockDim.x) {
        const int v = base + i;
        const D d = sd[i];
        dist[v] = d;
        const bool left = cur[i] != 0;
        if (left || pend[i]) {
            dirty[v] = 1;
            least = min(least, (long long)d);
        }
        left_any |= left;
        if (expd[i]) relax_boundary(v, d, out_ptr, out_head, out_w, tile_of, dist, inbox, tstamp, tq_next, ctrl, r, edges);
    }
    if (least < 0x7fffffffffffffffLL) atomicMin(s_min, least);
    if (left_any) *s_left = 1;
    __syncthreads();
    end_activation(t, r, *s_left, step, tpend, tstamp, tq_next, ctrl, s_min, steps, s_ns);
}

// An activation by pull passes (pull_passes > 0; tile_cap <= blockDim): thread i owns vertex i of
// the tile and is its distance's only writer. A pass lowers its distance to the least
// sd[u] + w over its intra-tile in-edges from vertices u below T (no atomics; the first
// PULL_REGS in-edges are held in registers for the whole activation). pull_passes passes
// run between block-wide checks with no barrier between them: a neighbour's new value is
// read (volatile) as soon as it is stored, so news travels at least a hop a pass, and stale
// reads are harmless (every value read is a path length). An interval in which nobody stored
// anything proves the fixpoint (every pass of it read final values). Stopped by the cap,
// the vertices stored in the last interval stay dirty (a neighbour may not have read them)
// and the tile is queued again.
#define PULL_REGS 4
template <typename D> struct UnsignedOf;
template <> struct UnsignedOf<int> { typedef unsigned type; };
template <> struct UnsignedOf<long long> { typedef unsigned long long type; };
template <typename D>
__device__ __forceinline__ void tile_fixpoint_pull(const int* __restrict__ tile_ptr, const int* __restrict__ pin_ptr,
                              const unsigned short* __restrict__ pin_tail, const int* __restrict__ pin_w,
                              const int* __restrict__ out_ptr, D* dist, int* dirty, long long* tpend,
                              int* tstamp, int* tq_next, D* inbox, const int* __restrict__ out_head,
                              const int* __restrict__ out_w, const int* __restrict__ tile_of,
                              long long* ctrl, int t, int r, D T,
                              int max_passes, int pull_passes, D* sd, int tile_cap, long long* s_min,
                              long long& edges,
                              long long& steps, long long* s_ns) {
    typedef typename UnsignedOf<D>::type U;
    const int lane = threadIdx.x & 31;
    if (threadIdx.x == 0) s_ns[3] = global_ns();
    const int base = __ldg(&tile_ptr[t]);
    const int len = __ldg(&tile_ptr[t + 1]) - base;
    const int i = threadIdx.x;
    const bool own = i < len;
    D mine = Limits<D>::inf;
    bool was_dirty = false;
    int e0 = 0, e1 = 0;
    D first = Limits<D>::inf;  // dist[v] as loaded: the write-back stores only what is lower
    if (own) {
        first = __ldcg(&dist[base + i]);
        bool got;
        mine = take_inbox(inbox, base + i, first, got);
        const bool marked = __ldcg(&dirty[base + i]) != 0;
        was_dirty = marked || got;
        e0 = __ldg(&pin_ptr[base + i]);
        e1 = __ldg(&pin_ptr[base + i + 1]);
        if (marked) dirty[base + i] = 0;
        sd[i] = mine;
    }
    const int deg = e1 - e0;
    // an absent slot reads sd[tile_cap], an infinite distance no pass takes
    int tail[PULL_REGS], wgt[PULL_REGS];
#pragma unroll
    for (int k = 0; k < PULL_REGS; ++k) {
        tail[k] = k < deg ? __ldg(&pin_tail[e0 + k]) : tile_cap;
        wgt[k] = k < deg ? __ldg(&pin_w[e0 + k]) : 0;
    }
    if (threadIdx.x == 0) {
        *s_min = 0x7fffffffffffffffLL;
        sd[tile_cap] = Limits<D>::inf;  // the flag bytes' room: pull passes use no flags
    }
    int work = __syncthreads_or(was_dirty && mine < T);  // also: every sd[] stored
    if (threadIdx.x == 0) s_ns[4] = global_ns();
    volatile D* vsd = sd;
    int passes = 0;
    bool changed = false;
    while (work) {
        if (passes >= max_passes) break;  // block-uniform
        changed = false;
        for (int p = 0; p < pull_passes; ++p) {
            if (!own) continue;
            // every slot's load first, then selects: no branch waits on a load, no lane diverges.
            // Unsigned sums cannot wrap (both terms < 2^31 or 2^63) and one below best fits D.
            D du[PULL_REGS];
#pragma unroll
            for (int k = 0; k < PULL_REGS; ++k) du[k] = vsd[tail[k]];
            U best = (U)mine;
#pragma unroll
            for (int k = 0; k < PULL_REGS; ++k) {
                const U c = (U)du[k] + (U)wgt[k];
                best = (du[k] < T && c < best) ? c : best;
            }
            for (int e = e0 + PULL_REGS; e < e1; ++e) {
                const D d = vsd[__ldg(&pin_tail[e])];
                const U c = (U)d + (U)__ldg(&pin_w[e]);
                best = (d < T && c < best) ? c : best;
            }
            if (best < (U)mine) {
                mine = (D)best;
                vsd[i] = mine;
                changed = true;
            }
        }
        passes += pull_passes;
        work = __syncthreads_or(changed);
    }
    if (threadIdx.x == 0) s_ns[5] = global_ns();
    // write back: below T, expanded (boundary edges into the inboxes); dirty at or above T, or
    // stored in the last interval of a capped activation
    const bool touched = was_dirty || mine < first;
    const bool left = work && changed;
    const bool pending = touched && !(mine < T);
    if (own) {
        const int v = base + i;
        if (mine < first) dist[v] = mine;
        if (left || pending) dirty[v] = 1;
        if (touched && mine < T)
            relax_boundary(v, mine, out_ptr, out_head, out_w, tile_of, dist, inbox, tstamp, tq_next, ctrl, r, edges);
        edges += (long long)deg * passes;
    }
    warp_min_into(own && (left || pending), (long long)mine, s_min, lane);
    __syncthreads();
    end_activation(t, r, work, passes, tpend, tstamp, tq_next, ctrl, s_min, steps, s_ns);
}

template <typename D>
__global__ void __launch_bounds__(1024, 1) opt_tiles_persistent(TILE_PARAMS) {
    extern __shared__ long long tile_smem[];  // dynamic: the layout at the top of this file
    D* sd = reinterpret_cast<D*>(tile_smem);
    unsigned char* flags = reinterpret_cast<unsigned char*>(tile_smem) + tile_cap * (int)sizeof(D);
    int* s_ptr = reinterpret_cast<int*>(flags + 4 * tile_cap);  // 4-aligned: tile_cap * (sizeof(D) + 4)
    int* s_w = s_ptr + tile_cap + 1;
    unsigned short* s_head = reinterpret_cast<unsigned short*>(s_w + edge_cap);
    __shared__ long long s_min, s_split;
    __shared__ int s_left, s_any[3];
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long nthreads = (long long)gridDim.x * blockDim.x;
    unsigned long long target = 0;
    long long edges = 0, scanned = 0, barriers = 0, splits = 0, split_ns = 0, steps = 0, activations = 0;
    long long critical_ns = 0;  // the leader's: sum over rounds of the slowest activation
    __shared__ long long s_ns[6];
    if (threadIdx.x == 0) s_ns[0] = s_ns[1] = s_ns[2] = 0;  // read and written by thread 0 only
    int r = 0;
    D T = threshold_after<D>(0, delta);
    while (true) {
        int* tq = (r & 1) ? tq1 : tq0;
        int* tq_next = (r & 1) ? tq0 : tq1;
        const long long S = ldcg64(&ctrl[C_NEAR + r % 3]);
        if (S == 0) {  // a split: every block reads the same tpend[] (nobody writes it now)
            const long long t0 = leader ? global_ns() : 0;
            long long least = 0x7fffffffffffffffLL;
            for (int t = threadIdx.x; t < tiles; t += blockDim.x) least = min(least, __ldcg(&tpend[t]));
            if (threadIdx.x == 0) s_split = 0x7fffffffffffffffLL;
            __syncthreads();
            if (least < 0x7fffffffffffffffLL) atomicMin(&s_split, least);
            __syncthreads();
            const long long low = s_split;
            __syncthreads();
            if (low == 0x7fffffffffffffffLL) break;  // grid-uniform: nothing dirty anywhere
            // Every thread decided "split" from the count the queueing below changes: wait until
            // all have read it (else a late block would see the new count and skip the split).
            grid_barrier(ctrl, target);
            T = threshold_after<D>(low, delta);
            for (long long t = tid; t < tiles; t += nthreads)
                if (__ldcg(&tpend[t]) < (long long)T) queue_tile((int)t, r, tstamp, tq, &ctrl[C_NEAR + r % 3]);
            grid_barrier(ctrl, target);
            barriers += 2;
            ++splits;
            scanned += leader ? tiles : 0;
            if (leader) split_ns += global_ns() - t0;
            continue;
        }
        if (leader) ctrl[C_NEAR + (r + 2) % 3] = 0;  // read last in round r - 1, written next in r + 1
        for (long long i = blockIdx.x; i < S; i += gridDim.x) {
            const int t = __ldcg(&tq[i]);
            if (pull_passes > 0)
                tile_fixpoint_pull<D>(tile_ptr, pin_ptr, pin_tail, pin_w, out_ptr, dist, dirty, tpend, tstamp,
                                      tq_next, inbox, out_head, out_w, tile_of, ctrl, t, r, T, max_steps,
                                      pull_passes, sd, tile_cap, &s_min, edges, steps, s_ns);
            else
                tile_fixpoint<D>(tile_ptr, in_ptr, in_head, in_w, out_ptr, dist, dirty, tpend, tstamp, tq_next,
                                 inbox, out_head, out_w, tile_of, ctrl, t, r, T, max_steps, sd, flags, tile_cap,
                                 s_ptr, s_w, s_head, edge_cap, &s_min, &s_left, s_any, edges, steps, s_ns);
        }
        if (leader) activations += S;
        grid_barrier(ctrl, target);
        if (leader) {  // slot r % 3 is written in round r only; (r + 2) % 3 next in round r + 2
            critical_ns += ldcg64(&ctrl[C_TSLOW + r % 3]);
            ctrl[C_TSLOW + (r + 2) % 3] = 0;
        }
        barriers += 1;
        ++r;
        if (r > max_rounds) {
            if (leader) ctrl[C_ERROR] = 1;
            break;  // grid-uniform: every thread counts the same rounds
        }
    }
    flush_stats(ctrl, edges, scanned);
    if (threadIdx.x == 0 && steps) {
        atomicAdd((unsigned long long*)&ctrl[C_TSTEPS], (unsigned long long)steps);
        for (int k = 0; k < 3; ++k) atomicAdd((unsigned long long*)&ctrl[C_TLOAD + k], (unsigned long long)s_ns[k]);
    }
    if (leader) {
        ctrl[C_ROUNDS] = r;
        ctrl[C_SPLITS] = splits;
        ctrl[C_BARRIERS] = barriers;
        ctrl[C_T] = (long long)T;
        ctrl[C_SPLIT_NS] = split_ns;
        ctrl[C_TACTIVE] = activations;
        ctrl[C_TCRIT] = critical_ns;
    }
}
